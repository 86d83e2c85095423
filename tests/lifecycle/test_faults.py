"""Kill `git memzoi apply` (SIGKILL) at every install step, repair, and find exactly the before or after state."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memzoi.index import shared_db
from git_memzoi.lifecycle import transaction
from git_memzoi.runtime.workspace import Workspace
from support import make_repo, run_cli
from support.lifecycle import (
    APPLIED_AT,
    at,
    kill_at,
    leftovers,
    packet,
    repair,
    snapshot,
    supersede_scenario,
    write_packet,
)

pytestmark = pytest.mark.crash

PID = "mem_2026_03_01_supersede_abc123"
SECRET = "# Zanzibar\n\nThe zanzibar token is private.\n"


def _scenario(root: Path, kind: str) -> list[str]:
    """Build a repository ready for one lifecycle command; return that command's arguments."""
    if kind == "supersede":
        supersede_scenario(root, PID)
        return ["apply", PID, "--reviewer", "alice"]
    repo = make_repo(root)
    shared_db.connect(Workspace.open(root).layout.shared_db).close()
    if kind == "reject-receipt":
        write_packet(repo, packet(PID, sensitivity="secret"), SECRET)
        return ["reject", PID, "--reason", "secret"]
    assert kind == "propose-packet"
    return ["propose", "--type", "fact", "--title", "Use pnpm", "--body", "The repo uses pnpm.", "--packet"]


FILES = {"supersede": 6, "reject-receipt": 3, "propose-packet": 1}
CASES = [("supersede", step) for step in transaction.fault_steps(FILES["supersede"])]
CASES += [
    (kind, step)
    for kind in ("reject-receipt", "propose-packet")
    for step in ("journal", "file-1-temp", "file-1", "db-before-commit", "db-committed", "journal-commit")
]


_AFTER: dict[str, dict] = {}
_ARGS: dict[str, list[str]] = {}


def _after(tmp_path: Path, kind: str) -> dict:
    """The state the step leaves when it completes (the same bytes in every repository: time and actor are pinned)."""
    if kind not in _AFTER:
        reference = tmp_path / "reference"
        _ARGS[kind] = _scenario(reference, kind)
        run_cli(*_ARGS[kind], cwd=reference)
        _AFTER[kind] = snapshot(reference)
    return _AFTER[kind]


def _committed(step: str, kind: str) -> bool:
    steps = transaction.fault_steps(FILES[kind])
    return steps.index(step) >= steps.index(transaction.FIRST_COMMITTED_STEP)


@pytest.mark.parametrize("kind, step", CASES)
def test_kill_at_every_step_then_repair(tmp_path: Path, monkeypatch, kind: str, step: str) -> None:
    at(APPLIED_AT)
    after = _after(tmp_path, kind)
    args = _ARGS[kind]

    root = tmp_path / "faulted"
    _scenario(root, kind)
    monkeypatch.chdir(root)
    before = snapshot(root)
    kill_at(step, args, root)
    repair(root, step, _committed(step, kind))
    state = snapshot(root)
    if _committed(step, kind):
        assert state == after
    else:
        assert state == before
        run_cli(*args)  # the step can simply be run again
        assert snapshot(root) == after


def test_next_lifecycle_command_repairs_first(tmp_path: Path, monkeypatch) -> None:
    at(APPLIED_AT)
    root = tmp_path / "repo"
    args = _scenario(root, "supersede")
    monkeypatch.chdir(root)
    before = snapshot(root)
    kill_at("file-3", args, root)
    assert snapshot(root) != before  # half installed
    health = run_cli("doctor", "--json", expect=1).json()
    assert health["checks"]["journal"].startswith("1 interrupted") and health["repaired"] == []
    listed = run_cli("proposals", "--json").json()["proposals"]  # even a read repairs when a journal waits
    assert [p["id"] for p in listed] == [PID]
    assert snapshot(root) == before and leftovers(root) == []
