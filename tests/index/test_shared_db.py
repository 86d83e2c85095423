"""shared.db: created whole or not at all, never recreated over, fails closed when unreadable."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from git_memzoi.errors import StateError
from git_memzoi.index import shared_db
from git_memzoi.index.sweep import file_stat_signature


def test_reader_never_sees_a_half_created_database(tmp_path: Path) -> None:
    for attempt in range(30):
        path = tmp_path / f"try{attempt}" / "shared.db"
        path.parent.mkdir()
        seen: list[str] = []
        stop = threading.Event()

        def reader(path: Path, stop: threading.Event, seen: list[str]) -> None:
            while not stop.is_set():
                if not path.exists():
                    continue
                try:
                    shared_db.connect(path, readonly=True).close()
                except StateError as exc:
                    seen.append(exc.message)
                    return

        thread = threading.Thread(target=reader, args=(path, stop, seen))
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
        except BaseException as exc:  # noqa: BLE001  (the test asserts that no thread failed)
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
    with pytest.raises(StateError, match=r"garbage\.db: shared\.db is unreadable"):
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
        "    affected_ids  TEXT\n",
    ).split(";"):
        if statement.strip():
            old.execute(statement)
    assert "target_blob" not in old.execute("SELECT sql FROM sqlite_master WHERE name = 'proposals'").fetchone()[0]
    old.execute(
        "INSERT INTO proposals (id, state, packet, body_digest, file_id, created_at, updated_at) "
        "VALUES ('p1', 'validated', 'text', 'd', NULL, 't', 't')"
    )
    old.execute("PRAGMA user_version = 1")
    old.commit()
    old.close()
    conn = shared_db.connect(path, readonly=True)  # a reader upgrades it too
    assert conn.execute("PRAGMA user_version").fetchone()[0] == shared_db.SCHEMA_VERSION == 3
    assert conn.execute("SELECT id, state, target_blob FROM proposals").fetchall() == [("p1", "validated", None)]
    conn.close()
    again = shared_db.connect(path)
    assert again.execute("SELECT count(*) FROM proposals").fetchone()[0] == 1
    again.close()


def _settled(path: Path) -> list[int]:
    """Make shared.db and its WAL look an hour old (stats that young are never kept); their stats."""
    for name in (path, Path(f"{path}-wal")):
        if name.exists():
            then = name.stat().st_mtime_ns - 3600 * 10**9
            os.utime(name, ns=(then, then))
    stats = file_stat_signature(str(path), time.time_ns())
    assert stats is not None
    return stats


def test_integrity_check_runs_again_only_when_the_files_stats_move(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    conn = shared_db.connect(path)
    with shared_db.transaction(conn):
        for n in range(60):  # several pages, so a corrupt one can sit in the middle
            shared_db.append_event(conn, "filler", [f"id-{n}"], {"text": "x" * 400})
    conn.close()
    page, pages = (
        sqlite3.connect(path).execute(f"PRAGMA {name}").fetchone()[0] for name in ("page_size", "page_count")
    )
    shared_db.connect(path, readonly=True).close()  # the first read may make the WAL, which moves the stats
    stats = _settled(path)
    shared_db.connect(path, readonly=True).close()
    assert json.loads(Path(f"{path}{shared_db.CHECKED_SUFFIX}").read_text()) == stats

    # a page damaged behind the stats' back (same size, inode and times): nothing looks again
    before = path.stat()
    with open(path, "r+b") as handle:
        handle.seek(page * (pages - 1) + 16)  # the last page holds events (the first ones are empty tables)
        handle.write(b"\xa5" * (page - 32))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert file_stat_signature(str(path)) == stats
    shared_db.connect(path, readonly=True).close()
    # once the stats move (any write does), the check runs and fails closed
    _settled(path)
    with pytest.raises(StateError, match=r"shared\.db is unreadable: integrity check"):
        shared_db.connect(path, readonly=True)
    with pytest.raises(StateError, match="integrity check"):
        shared_db.connect(path)
