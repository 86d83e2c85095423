"""Runtime state stays bounded: folders of removed worktrees are found and removed; the parse cache keeps its bound."""

from __future__ import annotations

import shutil
from pathlib import Path

from git_memzoi.index.parse_cache import KEEP_FRACTION, ParseCache
from git_memzoi.runtime.workspace import Workspace
from support import Repo, git, run_cli


def _runtime_folder(root: Path) -> Path:
    return Workspace.open(root).layout.worktree


def test_doctor_reports_and_repair_removes_folders_of_removed_worktrees(repo: Repo, tmp_path: Path) -> None:
    gone = repo.add_worktree("gone", tmp_path / "gone")
    deleted = repo.add_worktree("deleted", tmp_path / "deleted")
    live = repo.add_worktree("live", tmp_path / "live")
    away = repo.add_worktree("away", tmp_path / "away")
    folders = {}
    for name, root in (
        ("main", repo.path),
        ("gone", gone.path),
        ("deleted", deleted.path),
        ("live", live.path),
        ("away", away.path),
    ):
        run_cli("rebuild", cwd=root)
        folders[name] = _runtime_folder(root)
        assert (folders[name] / "index.db").is_file()
    assert run_cli("doctor", "--json").json()["checks"]["worktrees"] == "ok"

    git("worktree", "remove", str(gone.path), cwd=repo.path)
    shutil.rmtree(deleted.path)  # deleted by hand: git would prune it
    git("worktree", "lock", str(away.path), cwd=repo.path)
    shutil.rmtree(away.path)  # locked: git keeps it although its folder is away

    health = run_cli("doctor", "--json", expect=1).json()
    check = health["checks"]["worktrees"]
    assert check.startswith("2 runtime folder(s) of removed worktrees")
    assert folders["gone"].name in check and folders["deleted"].name in check
    assert health["repaired"] == [] and folders["gone"].is_dir()

    repaired = run_cli("doctor", "--repair", "--json").json()["repaired"]
    assert sorted(repaired) == sorted(
        f"removed {folders[n]}: its worktree no longer exists" for n in ("gone", "deleted")
    )
    assert not folders["gone"].exists() and not folders["deleted"].exists()
    for name in ("main", "live", "away"):
        assert (folders[name] / "index.db").is_file(), name
    assert run_cli("doctor", "--json", cwd=live.path).json()["checks"]["worktrees"] == "ok"


def test_parse_cache_stays_under_its_bound(tmp_path: Path) -> None:
    path = tmp_path / "parse-cache.db"
    cache = ParseCache.open(path, max_entries=50)
    written: list[str] = []
    for batch in range(10):
        entries = {f"{batch:04d}{i:036d}": f'{{"n": {batch * 30 + i}}}' for i in range(30)}
        cache.put_many(entries)
        written += entries
        assert cache.count() <= 50
    assert cache.count() >= int(50 * KEEP_FRACTION) - 30
    last = written[-30:]
    assert set(cache.get_many(last)) == set(last)  # the newest entries are kept
    assert cache.get_many(written[:30]) == {}  # the oldest went first
    cache.close()

    reopened = ParseCache.open(path, max_entries=50)
    keep = last[0]
    reopened.put_many({keep: '{"n": -1}'})  # rewriting an entry makes it the newest
    reopened.put_many({f"ffff{i:036d}": "{}" for i in range(20)})
    assert reopened.get_many([keep]) == {keep: {"n": -1}} and reopened.count() <= 50
    reopened.close()
