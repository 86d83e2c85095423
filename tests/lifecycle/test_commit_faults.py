"""Kill `git memzoi apply --commit` (SIGKILL) at every step, repair, and find "before" or "after, committed"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pygit2
import pytest

from git_memzoi.lifecycle import transaction
from support import git, run_cli
from support.lifecycle import APPLIED_AT, at, kill_at, repair, snapshot, supersede_scenario

pytestmark = pytest.mark.crash

PID = "mem_2026_03_01_supersede_abc123"
ARGS = ["apply", PID, "--reviewer", "alice", "--commit"]
STEPS = transaction.fault_steps(6, commit=True)


def _scenario(root: Path) -> None:
    """A supersede that writes six files, with an unrelated change staged that must stay staged and uncommitted."""
    repo = supersede_scenario(root, PID)
    repo.write("README.md", "# staged, not part of the apply\n")
    index = repo.git.index
    index.add("README.md")
    index.write()


def git_state(root: Path) -> dict[str, Any]:
    """HEAD (tree, message, parents' trees), every index entry, and the work tree and shared.db."""
    repo = pygit2.Repository(str(root))
    head = repo.head.peel(pygit2.Commit)
    index = repo.index
    index.read(True)
    return {
        "head_tree": str(head.tree_id),
        "message": head.message,
        "parent_trees": [str(p.tree_id) for p in head.parents],
        "index": sorted((e.path, str(e.id), int(e.mode)) for e in index),
        "files": snapshot(root),
    }


_AFTER: dict[str, Any] = {}


def _after(tmp_path: Path) -> dict[str, Any]:
    if not _AFTER:
        reference = tmp_path / "reference"
        _scenario(reference)
        run_cli(*ARGS, cwd=reference)
        _AFTER.update(git_state(reference))
    return _AFTER


def test_the_commit_steps_come_between_the_files_and_the_journal_delete() -> None:
    assert (
        STEPS.index("index-staged")
        < STEPS.index("commit-built")
        < STEPS.index("db-committed")
        < STEPS.index("head-moved")
        < STEPS.index("journal-deleted")
    )


@pytest.mark.parametrize("step", STEPS)
def test_kill_apply_commit_at_every_step_then_repair(tmp_path: Path, monkeypatch, step: str) -> None:
    at(APPLIED_AT)
    after = _after(tmp_path)
    root = tmp_path / "faulted"
    _scenario(root)
    monkeypatch.chdir(root)
    before = git_state(root)
    kill_at(step, ARGS, root)
    committed = STEPS.index(step) >= STEPS.index(transaction.FIRST_COMMITTED_STEP)
    repair(root, step, committed)
    state = git_state(root)
    if committed:
        assert state == after
        assert state["parent_trees"] == [before["head_tree"]]
    else:
        assert state == before
    # the user's next ordinary commit records exactly what was staged: README.md, nothing reverted
    git("commit", "-q", "-m", "next", cwd=root)
    following = git_state(root)
    changed = git("diff", "--name-only", "HEAD~1", "HEAD", cwd=root).stdout.split()
    assert changed == ["README.md"]
    assert following["files"] == state["files"]
    if not committed:
        run_cli(*ARGS)  # the step can simply be run again
        assert git_state(root)["files"] == after["files"]


def _killed_past_the_commit_point(tmp_path: Path, monkeypatch) -> tuple[Path, dict]:
    """The scenario's apply --commit, SIGKILLed once shared.db committed; returns the repo and the after-state."""
    at(APPLIED_AT)
    after = _after(tmp_path)
    root = tmp_path / "repo"
    _scenario(root)
    monkeypatch.chdir(root)
    kill_at("db-committed", ARGS, root)
    return root, after


def test_a_killed_commit_is_finished_by_the_next_lifecycle_command(tmp_path: Path, monkeypatch) -> None:
    root, after = _killed_past_the_commit_point(tmp_path, monkeypatch)
    assert git_state(root)["head_tree"] != after["head_tree"]  # killed before HEAD moved
    again = run_cli(*ARGS, "--json").json()
    assert again["outcome"] == "already-applied"
    assert any("placed commit" in line for line in again["repaired"]), again["repaired"]
    assert git_state(root) == after


def test_an_ordinary_commit_before_the_repair_waits_for_it(tmp_path: Path, monkeypatch) -> None:
    """Killed while it held index.lock (as a killed `git commit` leaves it): git refuses the user's commit,
    naming the lock; the repair removes the lock its step left, places the commit, and the user's commits on."""
    root, after = _killed_past_the_commit_point(tmp_path, monkeypatch)
    refused = git("commit", "-q", "-m", "the user's own commit", cwd=root, check=False)
    assert refused.returncode == 128 and "index.lock" in refused.stderr
    assert (root / ".git" / "index.lock").read_text().startswith("git memzoi ")
    repaired = run_cli("doctor", "--repair", "--json").json()["repaired"]
    assert any("placed commit" in line for line in repaired), repaired
    assert git_state(root) == after
    git("commit", "-q", "-m", "the user's own commit", cwd=root)
    assert git("diff", "--name-only", "HEAD~1", "HEAD", cwd=root).stdout.split() == ["README.md"]


def test_an_index_lock_of_another_process_is_left_to_it(tmp_path: Path, monkeypatch) -> None:
    root, _ = _killed_past_the_commit_point(tmp_path, monkeypatch)
    lock = root / ".git" / "index.lock"
    lock.write_text("another git\n")
    repaired = run_cli("doctor", "--repair", "--json", expect=None)
    assert lock.read_text() == "another git\n"  # not ours: never removed
    assert repaired.code != 0 or "index.lock" in repaired.stdout + repaired.stderr
