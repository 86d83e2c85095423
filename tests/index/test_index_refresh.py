"""After a write of known files, the index is refreshed for those paths only, and vouches for no more than before."""

from __future__ import annotations

import os
import time

import pytest

from git_memzoi.index import staleness, sync
from git_memzoi.index.rebuild import open_index, rebuild, refresh
from git_memzoi.runtime.workspace import Workspace
from support import Repo, run_cli
from support.index import build_index, dump_index
from support.lifecycle import packet, write_packet
from support.recall import record_text

RECORDS = ".memzoi/records"
PID = "mem_2026_03_01_auth_abc123"
RECORD = f"{RECORDS}/semantic/decisions/protected-routes-must-validate-sessions-server-side.md"


def _full(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    home = os.environ["MEMZOI_HOME"]
    try:
        return build_index(tmp_path_factory.mktemp("full"), full=True)[0]
    finally:
        os.environ["MEMZOI_HOME"] = home


def _no_sweep(workdir: str, now_ns: int) -> None:
    raise AssertionError("every record file was swept")


def test_apply_refreshes_the_rows_of_the_files_it_wrote_without_a_sweep(
    repo: Repo, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    (repo.path / RECORDS / ".gitkeep").unlink()  # a name the index does not know makes apply refresh first
    for n in range(12):
        repo.write(f"{RECORDS}/area{n % 3}/r{n:02d}.md", record_text(f"r-{n:02d}", title=f"Record {n} about otters"))
    repo.commit("records")
    rebuild(Workspace.open())
    write_packet(repo, packet(PID))
    with monkeypatch.context() as patch:
        patch.setattr(sync, "scan_records", _no_sweep)
        result = run_cli("apply", PID, "--json").json()
    assert result["outcome"] == "applied" and result["warnings"] == []
    refreshed = dump_index(Workspace.open())
    assert RECORD in refreshed["records"] and len(refreshed["records"]) == 13
    assert refreshed == _full(tmp_path_factory)
    check = staleness.read_check(Workspace.open().layout.index_db)
    assert check is not None and "digest" not in check
    assert check["dirs"][f"{RECORDS}/semantic"] is None and check["dirs"][f"{RECORDS}/semantic/decisions"] is None
    assert check["files"] == 13
    # the next reader sweeps, finds the index true, and has nothing to write
    assert not rebuild(Workspace.open()).changed
    assert dump_index(Workspace.open()) == refreshed


def test_a_refresh_vouches_for_no_file_it_did_not_look_at(repo: Repo) -> None:
    """A file changed earlier, unseen because its stat is what the index holds, is found by the next sweep.

    Its bytes were confirmed only up to the last build, and stats that recent are never trusted:
    a refresh of other paths must not move that moment forward.
    """
    racy = repo.path / RECORDS / "a" / "racy.md"
    repo.write(f"{RECORDS}/a/racy.md", record_text("racy", body="About otters."))
    rebuild(Workspace.open())  # within the racy window of the file's timestamp
    stat = racy.stat()
    racy.write_text(racy.read_text().replace("otters", "badger"))
    os.utime(racy, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size, same mtime: only the bytes differ
    time.sleep(2.1)
    repo.write(f"{RECORDS}/b/other.md", record_text("other"))
    refresh(Workspace.open(), [f"{RECORDS}/b/other.md"])
    rebuild(Workspace.open())
    conn = open_index(Workspace.open(), refresh=False)
    try:
        found = conn.execute("SELECT count(*) FROM records_fts WHERE records_fts MATCH 'badger'").fetchone()[0]
    finally:
        conn.close()
    assert found == 1


def test_refresh_without_an_index_builds_one(repo: Repo, tmp_path_factory: pytest.TempPathFactory) -> None:
    repo.write(f"{RECORDS}/a/one.md", record_text("one"))
    report = refresh(Workspace.open(), [f"{RECORDS}/a/one.md"])
    assert report.changed and report.records == 1
    assert dump_index(Workspace.open()) == _full(tmp_path_factory)


def test_refresh_of_a_path_that_became_a_folder_rebuilds(repo: Repo, tmp_path_factory: pytest.TempPathFactory) -> None:
    repo.write(f"{RECORDS}/a/one.md", record_text("one"))
    rebuild(Workspace.open())
    path = repo.path / RECORDS / "a" / "one.md"
    path.unlink()
    path.mkdir()
    (path / "inner.md").write_text(record_text("inner"))
    refresh(Workspace.open(), [f"{RECORDS}/a/one.md"])
    assert dump_index(Workspace.open()) == _full(tmp_path_factory)
