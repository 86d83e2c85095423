"""shared.db: created whole or not at all, never recreated over, fails closed when unreadable."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from git_memzoi.errors import StateError
from git_memzoi.index import shared_db


def test_reader_never_sees_a_half_created_database(tmp_path: Path) -> None:
    for attempt in range(30):
        path = tmp_path / f"try{attempt}" / "shared.db"
        path.parent.mkdir()
        seen: list[str] = []
        stop = threading.Event()

        def reader() -> None:
            while not stop.is_set():
                if not path.exists():
                    continue
                try:
                    shared_db.connect(path, readonly=True).close()
                except StateError as exc:
                    seen.append(exc.message)
                    return

        thread = threading.Thread(target=reader)
        thread.start()
        shared_db.connect(path).close()
        stop.set()
        thread.join()
        assert seen == []
        assert not [p.name for p in path.parent.iterdir() if p.name.startswith(".shared-db-")]


def test_two_creators_end_with_one_schema(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    errors: list[BaseException] = []

    def create() -> None:
        try:
            conn = shared_db.connect(path)
            with shared_db.transaction(conn):
                shared_db.append_event(conn, "test", ["x"])
            conn.close()
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=create) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    conn = shared_db.connect(path, readonly=True)
    assert conn.execute("SELECT count(*) FROM events").fetchone()[0] == 6


def test_corrupt_or_foreign_database_fails_closed_and_is_left_alone(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database" * 100)
    with pytest.raises(StateError, match="garbage.db: shared.db is unreadable"):
        shared_db.connect(garbage)
    assert garbage.read_bytes() == b"not a database" * 100
    foreign = tmp_path / "foreign.db"
    sqlite3.connect(foreign).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(StateError, match="no memzoi schema version"):
        shared_db.connect(foreign)
    future = tmp_path / "future.db"
    conn = sqlite3.connect(future)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(StateError, match="schema version 99"):
        shared_db.connect(future)
    with pytest.raises(StateError, match="does not exist"):
        shared_db.connect(tmp_path / "absent.db", readonly=True)
    assert not (tmp_path / "absent.db").exists()


def test_version_1_database_is_migrated_in_place_and_keeps_its_rows(tmp_path: Path) -> None:
    """A shared.db made before proposals remembered their target blob gains the column; nothing is lost."""
    path = tmp_path / "shared.db"
    old = sqlite3.connect(path)
    for statement in shared_db._SCHEMA.replace(
            "    affected_ids  TEXT,                      -- JSON list of affected record IDs\n"
            "    target_blob   TEXT                       -- supersede/tombstone: the target's blob OID when proposed\n",
            "    affected_ids  TEXT\n").split(";"):
        if statement.strip():
            old.execute(statement)
    assert "target_blob" not in old.execute("SELECT sql FROM sqlite_master WHERE name = 'proposals'").fetchone()[0]
    old.execute("INSERT INTO proposals (id, state, packet, body_digest, file_id, created_at, updated_at) "
                "VALUES ('p1', 'validated', 'text', 'd', NULL, 't', 't')")
    old.execute("PRAGMA user_version = 1")
    old.commit()
    old.close()
    conn = shared_db.connect(path, readonly=True)  # a reader upgrades it too
    assert conn.execute("PRAGMA user_version").fetchone()[0] == shared_db.SCHEMA_VERSION == 2
    assert conn.execute("SELECT id, state, target_blob FROM proposals").fetchall() == [("p1", "validated", None)]
    conn.close()
    again = shared_db.connect(path)
    assert again.execute("SELECT count(*) FROM proposals").fetchone()[0] == 1
    again.close()
