"""Kill `git memzoi import --apply` (SIGKILL) at install steps: the tree is left exactly before or after the batch."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memzoi.index import shared_db
from git_memzoi.lifecycle import transaction
from git_memzoi.runtime.workspace import Workspace
from support import git, make_repo, run_cli
from support.lifecycle import APPLIED_AT, at, kill_at, leftovers, repair, snapshot

pytestmark = pytest.mark.crash

AGENTS = "# Rules\n\n## Testing\n\nRun `make test` before every push.\n\n## Security\n\nNever commit `.env` files.\n"
#: Two records and log.md (a create's resolved packet is left out of an import's batch).
FILES = 3


def _scenario(root: Path) -> None:
    repo = make_repo(root)
    repo.write("AGENTS.md", AGENTS)
    repo.commit("agents")
    shared_db.connect(Workspace.open(root).layout.shared_db).close()


def _after(tmp_path: Path, args: list[str]) -> dict:
    reference = tmp_path / "reference"
    _scenario(reference)
    result = run_cli(*args, "--json", cwd=reference).json()
    assert len(result["written"]) == FILES
    return snapshot(reference)


STEPS = ["planned", "journal", "file-1", "file-2", "file-3", "files-installed", "db-before-commit", "db-committed"]
STEPS += ["journal-commit", "journal-deleted"]


@pytest.mark.parametrize("step", STEPS)
def test_kill_during_import_apply_leaves_before_or_after(tmp_path: Path, monkeypatch, step: str) -> None:
    at(APPLIED_AT)
    args = ["import", "--apply"]
    after = _after(tmp_path, args)
    root = tmp_path / "faulted"
    _scenario(root)
    monkeypatch.chdir(root)
    before = snapshot(root)
    kill_at(step, args, root)
    steps = transaction.fault_steps(FILES)
    committed = steps.index(step) >= steps.index(transaction.FIRST_COMMITTED_STEP)
    repair(root, step, committed)
    if committed:
        assert snapshot(root) == after
    else:
        assert snapshot(root) == before
        run_cli(*args)
        assert snapshot(root) == after
    assert leftovers(root) == []


@pytest.mark.parametrize("step", ["index-staged", "commit-built", "db-committed", "head-moved"])
def test_kill_during_import_apply_commit(tmp_path: Path, monkeypatch, step: str) -> None:
    at(APPLIED_AT)
    root = tmp_path / "faulted"
    _scenario(root)
    monkeypatch.chdir(root)
    head = git("rev-parse", "HEAD", cwd=root).stdout
    kill_at(step, ["import", "--apply", "--commit"], root)
    steps = transaction.fault_steps(FILES, commit=True)
    committed = steps.index(step) >= steps.index(transaction.FIRST_COMMITTED_STEP)
    repair(root, step, committed)
    status = git("status", "--porcelain", cwd=root).stdout
    if committed:
        assert git("rev-parse", "HEAD~1", cwd=root).stdout == head and status == ""
        assert run_cli("import", "--json").json()["changes"] == 0
    else:
        assert git("rev-parse", "HEAD", cwd=root).stdout == head and status == ""
        assert run_cli("import", "--json").json()["changes"] == 2
