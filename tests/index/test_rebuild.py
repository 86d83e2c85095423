"""rebuild: incremental by stat and blob OID, atomic replace, parse cache, problems, shared.db safety."""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from datetime import UTC
from pathlib import Path

import pytest

from git_memzoi.errors import StateError
from git_memzoi.index import index_db, shared_db
from git_memzoi.index.rebuild import InvalidRecords, open_index, rebuild
from git_memzoi.runtime.workspace import Workspace
from support import ROOT, Repo, interop_dir, run_cli
from support.recall import add_record, add_runtime_record, record_text, tree_snapshot


def ws() -> Workspace:
    return Workspace.open()


def index_ids(workspace: Workspace) -> set[str]:
    conn = open_index(workspace, refresh=False)
    try:
        return {row[0] for row in conn.execute("SELECT record_id FROM records")}
    finally:
        conn.close()


def build_id(path: Path) -> str:
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT value FROM meta WHERE key = 'build_id'").fetchone()[0]
    finally:
        conn.close()


@pytest.fixture
def interop(repo: Repo) -> Repo:
    shutil.copytree(interop_dir() / ".memzoi" / "records", repo.path / ".memzoi" / "records", dirs_exist_ok=True)
    repo.commit("interop records")
    return repo


def test_interop_records_index_unchanged_and_nothing_written_under_memzoi(interop: Repo) -> None:
    before = tree_snapshot(interop.path / ".memzoi")
    report = rebuild(ws())
    assert (report.records, report.parsed, report.problems) == (35, 35, [])
    assert report.changed
    assert len(index_ids(ws())) == 35
    run_cli("search", "retention")
    run_cli("rebuild", "--full")
    assert tree_snapshot(interop.path / ".memzoi") == before
    conn = open_index(ws())
    docs = dict(conn.execute("SELECT path, document FROM records").fetchall())
    conn.close()
    for path, text in docs.items():
        assert (interop.path / path).read_text(encoding="utf-8") == text


def test_noop_rebuild_parses_nothing_and_installs_nothing(interop: Repo) -> None:
    rebuild(ws())
    first = build_id(ws().layout.index_db)
    again = rebuild(ws())
    assert (again.parsed, again.cached, again.reused, again.removed, again.changed) == (0, 0, 35, 0, False)
    assert build_id(ws().layout.index_db) == first


def test_incremental_touch_edit_add_delete(repo: Repo) -> None:
    for n in range(5):
        add_record(repo, f"semantic/r{n}", f"r{n}")
    repo.commit("records")
    rebuild(ws())
    target = repo.path / ".memzoi/records/semantic/r1.md"
    os.utime(target, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    touched = rebuild(ws())
    assert (touched.parsed, touched.cached, touched.reused) == (0, 0, 5)  # same blob OID: not parsed again
    add_record(repo, "semantic/r2", "r2", body="Edited in place.")
    edited = rebuild(ws())
    assert (edited.parsed, edited.reused, edited.removed) == (1, 4, 0)
    (repo.path / ".memzoi/records/semantic/r3.md").unlink()
    add_record(repo, "semantic/new", "brand-new")
    changed = rebuild(ws())
    assert (changed.parsed, changed.removed, changed.records) == (1, 1, 5)
    assert index_ids(ws()) == {"r0", "r1", "r2", "r4", "brand-new"}


def test_full_rebuild_parses_everything(interop: Repo) -> None:
    rebuild(ws())
    full = rebuild(ws(), full=True)
    assert (full.parsed, full.cached, full.reused, full.changed) == (35, 0, 0, True)


def test_invalid_files_reported_and_skipped_strict_is_fatal(repo: Repo) -> None:
    add_record(repo, "good", "good-one")
    repo.write(".memzoi/records/bad.md", record_text("bad-one").replace("status: active", "status: current"))
    repo.write(".memzoi/records/Bad_Name.md", record_text("bad-name"))
    result = run_cli("rebuild")
    assert ".memzoi/records/bad.md:" in result.stderr and "status-alias" in result.stderr
    assert ".memzoi/records/Bad_Name.md:1: concept-id" in result.stderr
    assert index_ids(ws()) == {"good-one"}
    data = run_cli("rebuild", "--json").json()
    codes = sorted(p["code"] for p in data["problems"])
    assert codes == ["concept-id", "status-alias"]
    bad_line = next(p for p in data["problems"] if p["code"] == "status-alias")["line"]
    assert repo.path.joinpath(".memzoi/records/bad.md").read_text().splitlines()[bad_line - 1].startswith("status:")
    before = ws().layout.index_db.read_bytes()
    add_record(repo, "another", "another-one")
    strict = run_cli("rebuild", "--strict", expect=1)
    assert "status-alias" in strict.stderr
    assert ws().layout.index_db.read_bytes() == before
    with pytest.raises(InvalidRecords):
        rebuild(ws(), strict=True)


def test_duplicate_ids_first_path_wins_until_it_goes(repo: Repo) -> None:
    add_record(repo, "a/first", "same-id", title="First")
    add_record(repo, "b/second", "same-id", title="Second")
    report = rebuild(ws())
    assert [(p.path, p.code) for p in report.problems] == [(".memzoi/records/b/second.md", "id-duplicate")]
    assert report.problems[0].line == 2
    conn = open_index(ws())
    assert conn.execute("SELECT path FROM records").fetchall() == [(".memzoi/records/a/first.md",)]
    conn.close()
    (repo.path / ".memzoi/records/a/first.md").unlink()
    after = rebuild(ws())
    assert after.problems == []
    conn = open_index(ws())
    assert conn.execute("SELECT path, title FROM records").fetchall() == [(".memzoi/records/b/second.md", "Second")]
    conn.close()


def test_symlinked_record_is_a_problem(repo: Repo, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text(record_text("linked"))
    (repo.path / ".memzoi/records/linked.md").symlink_to(outside)
    report = rebuild(ws())
    assert [(p.path, p.code) for p in report.problems] == [(".memzoi/records/linked.md", "symlink")]
    assert index_ids(ws()) == set()


def test_fresh_linked_worktree_rebuilds_from_cache(interop: Repo, tmp_path: Path) -> None:
    rebuild(ws())
    linked = interop.add_worktree("feature", tmp_path / "feature")
    other = Workspace.open(linked.path)
    assert other.layout.index_db != ws().layout.index_db
    report = rebuild(other)
    assert report.parsed == 0 and report.records == 35 and report.changed
    # and from the parse cache alone, when no sibling index is there to start from
    ws().layout.index_db.unlink()
    other.layout.index_db.unlink()
    cached = rebuild(other)
    assert (cached.parsed, cached.cached, cached.seeded_from) == (0, 35, None)


def test_stale_index_refreshes_on_read(repo: Repo) -> None:
    add_record(repo, "one", "one", body="The quokka lives here.")
    assert [h["record_id"] for h in run_cli("search", "quokka", "--json").json()["hits"]] == ["one"]
    add_record(repo, "two", "two", body="Another quokka arrives.")
    assert len(run_cli("search", "quokka", "--json").json()["hits"]) == 2
    # edited in place (no folder change): the stat sweep sees it
    path = repo.path / ".memzoi/records/one.md"
    with open(path, "r+", encoding="utf-8") as handle:
        text = handle.read().replace("quokka", "wombat")
        handle.seek(0)
        handle.write(text)
        handle.truncate()
    assert [h["record_id"] for h in run_cli("search", "quokka", "--json").json()["hits"]] == ["two"]
    path.unlink()
    assert run_cli("search", "wombat", "--json").json()["hits"] == []


def test_runtime_rows_are_mirrored_on_the_next_read(repo: Repo) -> None:
    add_record(repo, "shared-one", "shared-one", body="Shared kiwi knowledge.")
    assert len(run_cli("search", "kiwi", "--json").json()["hits"]) == 1
    conn = shared_db.connect(ws().layout.shared_db)
    add_runtime_record(
        conn, "loc-kiwi", "local", "local.add", body="Local kiwi note.", visibility="private", scope="local"
    )
    conn.close()
    assert len(run_cli("search", "kiwi", "--json").json()["hits"]) == 1
    hits = run_cli("search", "kiwi", "--include-local", "--json").json()["hits"]
    assert {(h["record_id"], h["store"]) for h in hits} == {("shared-one", "repo"), ("loc-kiwi", "local")}
    local = next(h for h in hits if h["store"] == "local")
    assert local["citation"]["path"] == "shared.db:local/loc-kiwi"


def test_read_path_without_shared_db_never_creates_it(repo: Repo) -> None:
    add_record(repo, "one", "one")
    run_cli("search", "body")
    run_cli("rebuild")
    assert not ws().layout.shared_db.exists()


def test_corrupt_shared_db_refuses_rebuild_and_reads_fail_closed(repo: Repo) -> None:
    add_record(repo, "one", "one", body="Alpaca.")
    conn = shared_db.connect(ws().layout.shared_db)
    conn.close()
    run_cli("rebuild")
    layout = ws().layout
    index_before = layout.index_db.read_bytes()
    layout.shared_db.write_bytes(b"this is not a database" * 200)
    shared_before = layout.shared_db.read_bytes()
    add_record(repo, "two", "two")
    result = run_cli("rebuild", expect=3)
    assert "shared.db" in result.stderr
    assert layout.index_db.read_bytes() == index_before
    assert layout.shared_db.read_bytes() == shared_before
    search = run_cli("search", "alpaca", expect=3)
    assert "shared.db" in search.stderr
    with pytest.raises(StateError):
        rebuild(ws())
    assert layout.shared_db.read_bytes() == shared_before
    assert layout.index_db.read_bytes() == index_before


def test_damaged_index_is_rebuilt(repo: Repo) -> None:
    add_record(repo, "one", "one", body="Narwhal.")
    run_cli("rebuild")
    ws().layout.index_db.write_bytes(b"garbage" * 100)
    assert len(run_cli("search", "narwhal", "--json").json()["hits"]) == 1


KILLER = """
import sys, time
from git_memzoi.index.rebuild import rebuild
from git_memzoi.runtime.workspace import Workspace
stop_at = sys.argv[1]
calls = []
def progress(done, total):
    calls.append(done)
    if (stop_at == "parse" and len(calls) == 1) or (stop_at == "install" and done == total):
        print("STOP", flush=True)
        time.sleep(120)
rebuild(Workspace.open(), full=True, progress=progress)
"""


@pytest.mark.crash
@pytest.mark.parametrize("stop_at", ["parse", "install"])
def test_rebuild_killed_half_way_leaves_old_index_serving(repo: Repo, stop_at: str) -> None:
    for n in range(30):
        add_record(repo, f"r/{n:02d}", f"rec-{n:02d}", body=f"Original body {n} about otters.")
    rebuild(ws())
    index = ws().layout.index_db
    before = index.read_bytes()
    for n in range(30):
        add_record(repo, f"r/{n:02d}", f"rec-{n:02d}", body=f"Changed body {n} about beavers.")
    proc = subprocess.Popen(
        [sys.executable, "-c", KILLER, stop_at],
        cwd=repo.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ | {"PYTHONPATH": str(ROOT)},
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "STOP", proc.stderr.read() if proc.stderr else ""
        assert len(list(index.parent.glob("index.db.tmp-*"))) == 1  # the new index, half written
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    assert index.read_bytes() == before
    conn = open_index(ws(), refresh=False)
    assert conn.execute("SELECT count(*) FROM records_fts WHERE records_fts MATCH 'otters'").fetchone()[0] == 30
    conn.close()
    report = rebuild(ws())
    assert report.changed and report.records == 30
    assert list(index.parent.glob("index.db.tmp-*")) == []
    assert len(run_cli("search", "beavers", "--limit", "50", "--json").json()["hits"]) == 30


def test_progress_bar_only_on_a_terminal(repo: Repo) -> None:
    for n in range(210):
        add_record(repo, f"bulk/{n:03d}", f"bulk-{n:03d}")
    result = run_cli("rebuild")
    assert "indexing records" not in result.stderr
    assert result.stderr.count("\n") == 1 and "210 records" in result.stderr
    calls: list[tuple[int, int]] = []
    rebuild(ws(), full=True, progress=lambda done, total: calls.append((done, total)))
    assert len(calls) >= 3 and calls[-1][0] == calls[-1][1] == 210
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)


def test_lease_hours_change_recomputes_session_boundaries(repo: Repo) -> None:
    from datetime import datetime

    from git_memzoi.runtime import clock

    add_record(repo, "s/one", "sess-one", lane="session", type="checkpoint", body="Session about lemurs.")
    clock.set_now(datetime(2026, 1, 1, 10, tzinfo=UTC))
    assert len(run_cli("search", "lemurs", "--json").json()["hits"]) == 1
    repo.write(".memzoi/config.toml", "[retention]\nsession_lease_hours = 6\n")
    assert run_cli("search", "lemurs", "--json").json()["hits"] == []
    decision = run_cli("expiry", "sess-one", "--json").json()
    assert (decision["boundary"], decision["boundary_kind"]) == ("2026-01-01T06:00:00Z", "lease")


def test_parallel_parse_gives_the_same_index(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    from git_memzoi.index import rows as index_rows

    for n in range(24):
        add_record(repo, f"p/{n:02d}", f"par-{n:02d}", tags=[f"t{n}"], applies_to=[f"src/m{n % 3}/**"])
    repo.write(".memzoi/records/p/broken.md", "---\nid: [unclosed\n---\nbody\n")

    def dump() -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
        conn = open_index(ws(), refresh=False)
        try:
            rows = conn.execute(
                "SELECT path, record_id, title, body, tags_json, applies_json, boundary, document "
                "FROM records ORDER BY path"
            ).fetchall()
            bad = conn.execute("SELECT path, problems FROM invalid ORDER BY path").fetchall()
        finally:
            conn.close()
        return rows, bad

    monkeypatch.setattr(index_rows, "PARALLEL_MIN", 10**9)
    rebuild(ws(), full=True)
    sequential = dump()
    monkeypatch.setattr(index_rows, "PARALLEL_MIN", 5)
    monkeypatch.setattr(index_rows, "CHUNK", 4)
    report = rebuild(ws(), full=True)
    assert report.parsed == 25 and [p.code for p in report.problems] == ["yaml-syntax"]
    assert dump() == sequential
    assert len(sequential[0]) == 24


def test_every_read_sees_an_in_place_edit_of_a_large_tree_at_once(repo: Repo) -> None:
    """No read trusts an earlier sweep: an edit that changes no folder, keeps the size and puts the
    mtime back is in the answer of the very next read, right after a rebuild of a large tree."""
    for n in range(520):
        add_record(repo, f"big/{n:03d}", f"big-{n:03d}", body=f"Record {n:03d} about herons.")
    # the files and folders are "racy" (just written) until a sweep sees them settled; make them old
    past = 1_600_000_000_000_000_000
    for path in (repo.path / ".memzoi/records/big").iterdir():
        os.utime(path, ns=(past, past))
    for folder in (repo.path / ".memzoi", repo.path / ".memzoi/records", repo.path / ".memzoi/records/big"):
        os.utime(folder, ns=(past, past))
    rebuild(ws())
    assert len(run_cli("search", "--json", "herons", "--limit", "600").json()["hits"]) == 520
    target = repo.path / ".memzoi/records/big/000.md"
    text = target.read_text()
    target.write_text(text.replace("herons", "egrets"))  # same size
    os.utime(target, ns=(past, past))
    assert [h["record_id"] for h in run_cli("search", "--json", "egrets").json()["hits"]] == ["big-000"]


def test_progress_bar_on_a_terminal(repo: Repo) -> None:
    import pty

    from support import memzoi_exe

    for n in range(210):
        add_record(repo, f"bulk/{n:03d}", f"bulk-{n:03d}")
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(
            [memzoi_exe(), "rebuild", "--full"], cwd=repo.path, stdout=subprocess.PIPE, stderr=follower, timeout=120
        )
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                data = os.read(leader, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
    finally:
        if follower != -1:
            os.close(follower)
        os.close(leader)
    assert proc.returncode == 0
    shown = b"".join(chunks).decode()
    assert "indexing records" in shown and "210 records" in shown
    assert proc.stdout == b""


def test_record_row_names_every_column_of_the_records_table(interop: Repo) -> None:
    """RecordRow is the one description of a records row: the table holds exactly its fields (and
    the virtual `body`), and a row read back by them has the body FTS indexed."""
    from git_memzoi.index.index_db import ROW_COLUMNS, RecordRow

    conn = open_index(ws())
    try:
        columns = [row[1] for row in conn.execute("PRAGMA table_xinfo(records)")]
        stored = conn.execute(f"SELECT {', '.join(ROW_COLUMNS)}, body FROM records").fetchall()
    finally:
        conn.close()
    assert columns == [*ROW_COLUMNS, "body"]
    assert len(stored) == 35
    for values in stored:
        row = RecordRow._make(values[:-1])
        assert row.body == values[-1] and row.rowid == values[0] and row.document.startswith("---\n")


def test_an_index_of_an_older_schema_is_built_again_by_the_next_read(repo: Repo) -> None:
    """index.db is disposable: one written by a version that stored fewer stat fields is replaced, not read."""
    add_record(repo, "old/one", "old-one", body="Kept about kingfishers.")
    rebuild(ws())
    path = ws().layout.index_db
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {index_db.SCHEMA_VERSION - 1}")
    conn.execute("DROP TABLE files")
    conn.close()
    assert [h["record_id"] for h in run_cli("search", "--json", "kingfishers").json()["hits"]] == ["old-one"]
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == index_db.SCHEMA_VERSION
    assert conn.execute("SELECT count(*) FROM files").fetchone()[0] == 1
    conn.close()
