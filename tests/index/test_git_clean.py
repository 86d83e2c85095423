"""A read asks git, not a sweep, when the git index vouches for every record file; and sees every change all the same.

Each change is made to a real repository whose baseline git vouched for, then read by a real
`git memzoi search` process: the answer must be the new bytes', whichever way the read took.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from git_memzoi.index import git_clean, staleness
from git_memzoi.index.rebuild import open_index, rebuild
from git_memzoi.runtime.workspace import Workspace
from support import Repo
from support.recall import record_text
from support.repos import age, git
from support.running import memzoi_exe

RECORDS = ".memzoi/records"


@pytest.fixture(autouse=True)
def _git_for_every_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """The baselines these tests make in-process are made for six records too (git_clean.GIT_FROM is 1,000)."""
    monkeypatch.setattr(git_clean, "GIT_FROM", 0)


def _settle(repo: Repo) -> None:
    """Make the tree old enough to trust (records, folders, git's index), git's stat cache current."""
    age(repo.path / ".memzoi", 30)
    git("update-index", "-q", "--refresh", cwd=repo.path, check=False)
    index = repo.path / git("rev-parse", "--git-path", "index", cwd=repo.path).stdout.strip()
    then = index.stat().st_mtime - 30
    os.utime(index, (then, then))


def _records(repo: Repo, count: int = 6) -> None:
    for n in range(count):
        repo.write(f"{RECORDS}/area{n % 2}/r{n}.md", record_text(f"r-{n}", body=f"Record {n} about otters."))
    repo.commit("records")


def _baseline(repo: Repo) -> dict[str, object]:
    _settle(repo)
    rebuild(Workspace.open(repo.path))
    open_index(Workspace.open(repo.path)).close()  # the first read sweeps, and asks git whether it can stand in
    check = staleness.read_check(Workspace.open(repo.path).layout.index_db)
    assert check is not None
    return dict(check)


def _search(repo: Repo, word: str, env: dict[str, str] | None = None) -> list[str]:
    done = subprocess.run(
        [memzoi_exe(), "search", word, "--json"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **(env or {})},
    )
    import json

    return sorted(item["record_id"] for item in json.loads(done.stdout)["hits"])


def _edit_in_place(path: Path, old: str, new: str) -> None:
    """Rewrite `path` in place, same size, mtime put back: only the ctime and the bytes tell."""
    assert len(old) == len(new)
    st = path.stat()
    with open(path, "r+", encoding="utf-8") as handle:
        text = handle.read()
        handle.seek(0)
        handle.write(text.replace(old, new))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def test_git_vouches_for_a_committed_tree_and_the_next_read_does_not_sweep(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    _records(repo)
    check = _baseline(repo)
    assert check["git"] == {"index": check["git"]["index"], "digest": check["digest"], "vouched": True}  # type: ignore[index]

    def no_sweep(workdir: str, now_ns: int) -> None:
        raise AssertionError("every record file was swept")

    monkeypatch.setattr(staleness, "sweep", no_sweep)
    open_index(Workspace.open()).close()
    monkeypatch.setenv("GIT_INDEX_FILE", str(repo.path / ".git" / "index"))  # git would look elsewhere: sweep
    with pytest.raises(AssertionError, match="swept"):
        open_index(Workspace.open())


def test_an_edit_in_place_with_its_mtime_put_back_is_seen(repo: Repo) -> None:
    _records(repo)
    _baseline(repo)
    assert _search(repo, "otters") == [f"r-{n}" for n in range(6)]
    _edit_in_place(repo.path / RECORDS / "area0" / "r2.md", "otters", "badger")
    assert _search(repo, "badger") == ["r-2"]
    assert "r-2" not in _search(repo, "otters")


def test_a_new_record_file_git_does_not_track_is_seen(repo: Repo) -> None:
    _records(repo)
    _baseline(repo)
    repo.write(f"{RECORDS}/area1/new.md", record_text("new-one", body="A record about weasels."))
    assert _search(repo, "weasels") == ["new-one"]
    check = _baseline(repo)
    assert check["git"]["vouched"] is False  # type: ignore[index]  # untracked: only a sweep sees it change
    _edit_in_place(repo.path / RECORDS / "area1" / "new.md", "weasels", "ferrets")
    assert _search(repo, "ferrets") == ["new-one"]


def test_a_record_file_removed_or_replaced_and_staged_is_seen(repo: Repo) -> None:
    _records(repo)
    _baseline(repo)
    (repo.path / RECORDS / "area0" / "r0.md").unlink()
    assert "r-0" not in _search(repo, "otters")
    _baseline(repo)
    _edit_in_place(repo.path / RECORDS / "area1" / "r1.md", "otters", "badger")
    git("add", RECORDS, cwd=repo.path)  # the git index now holds the edit: it vouches for it
    assert _search(repo, "badger") == ["r-1"]


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_a_record_git_does_not_compare_is_swept(repo: Repo, flag: str) -> None:
    _records(repo)
    git("update-index", flag, f"{RECORDS}/area1/r3.md", cwd=repo.path)
    check = _baseline(repo)
    assert check["git"]["vouched"] is False  # type: ignore[index]
    _edit_in_place(repo.path / RECORDS / "area1" / "r3.md", "otters", "badger")
    assert _search(repo, "badger") == ["r-3"]


def test_a_dirty_tree_asks_git_once_not_at_every_read(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    _records(repo)
    _edit_in_place(repo.path / RECORDS / "area0" / "r4.md", "otters", "badger")  # not added
    check = _baseline(repo)
    assert check["git"]["vouched"] is False  # type: ignore[index]

    def no_git(*args: object) -> bool:
        raise AssertionError("git was asked again")

    monkeypatch.setattr(git_clean, "_vouched", no_git)
    open_index(Workspace.open()).close()
    assert _search(repo, "badger") == ["r-4"]


def test_a_linked_worktree_is_vouched_for_by_its_own_index(repo: Repo, tmp_path: Path) -> None:
    _records(repo)
    _baseline(repo)
    linked = repo.add_worktree("side", tmp_path / "side")
    _baseline(linked)
    _edit_in_place(linked.path / RECORDS / "area0" / "r0.md", "otters", "badger")
    assert _search(linked, "badger") == ["r-0"]
    assert _search(repo, "badger") == []


def test_a_small_tree_is_swept_without_asking_git(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Below git_clean.GIT_FROM record files a git process costs more than the sweep it would save."""
    monkeypatch.setattr(git_clean, "GIT_FROM", 7)
    _records(repo)
    assert _baseline(repo).get("git") is None


def test_an_agent_hook_starts_git_early_and_sees_an_edit_in_place(repo: Repo) -> None:
    """The hook starts git's comparison before it loads its modules (cli.agent_hook.prefetch); its answer still
    has the bytes an edit in place wrote just before it."""
    import json

    repo.write(f"{RECORDS}/rules/r-title.md", record_text("r-title", title="Otters rule", body="Never feed otters."))
    _records(repo)
    _baseline(repo)
    _edit_in_place(repo.path / RECORDS / "rules" / "r-title.md", "Otters rule", "Badger rule")
    event = {
        "session_id": "s1",
        "transcript_path": str(repo.path / "none.jsonl"),
        "cwd": str(repo.path),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "what does the badger rule say about feeding",
    }
    done = subprocess.run(
        [memzoi_exe(), "agent", "hook", "claude"],
        cwd=repo.path,
        input=json.dumps(event),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and done.stderr == ""
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Badger rule" in context and "Otters rule" not in context


def test_the_hooks_head_start_starts_git_only_for_a_reading_event_and_never_fails(repo: Repo) -> None:
    import json

    from git_memzoi.cli.agent_hook import prefetch

    _records(repo)
    _baseline(repo)
    key = (str(Workspace.open(repo.path).repo.git_dir), str(repo.path))
    for data in (
        b"not json",
        b"[1, 2]",
        b"[" * 100_000 + b"]" * 100_000,
        json.dumps({"hook_event_name": "Stop", "cwd": str(repo.path)}).encode(),
        json.dumps({"hook_event_name": "PreToolUse", "cwd": 7}).encode(),
        json.dumps({"hook_event_name": "PreToolUse", "cwd": "/"}).encode(),
        json.dumps({"hook_event_name": "PreToolUse", "cwd": str(repo.path), "pad": "x" * 70_000}).encode(),
    ):
        prefetch(data)
        assert key not in git_clean._STARTED, data[:60]
    prefetch(json.dumps({"hook_event_name": "PreToolUse", "cwd": str(repo.path)}).encode())
    assert key in git_clean._STARTED
    assert git_clean.clean(
        dict(staleness.read_check(Workspace.open(repo.path).layout.index_db) or {}), key[0], key[1], time.time_ns()
    )
    assert key not in git_clean._STARTED  # its answer was taken
