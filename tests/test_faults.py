"""Kill `git memzoi apply` (SIGKILL) at every install step, repair, and find exactly the before or after state."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from conftest import make_repo, run_cli
from git_memzoi.index import shared_db
from git_memzoi.lifecycle import install
from git_memzoi.lifecycle.recovery import pending_journals
from git_memzoi.runtime.atomic import TEMP_PREFIX
from git_memzoi.runtime.workspace import Workspace
from test_lifecycle_support import (
    APPLIED_AT,
    add_record,
    at,
    packet,
    run_memzoi,
    snapshot,
    supersede_packet,
    write_packet,
)

PID = "mem_2026_03_01_supersede_abc123"
SECRET = "# Zanzibar\n\nThe zanzibar token is private.\n"


def _scenario(root: Path, kind: str) -> list[str]:
    """Build a repository ready for one lifecycle command; return that command's arguments."""
    repo = make_repo(root)
    shared_db.connect(Workspace.open(root).layout.shared_db).close()
    if kind == "supersede":
        # six files: new record, superseded target, resolved packet, removed pending packet, log.md, .gitattributes
        repo.write(".gitattributes", "*.png binary\n")
        repo.commit("attributes", paths=[".gitattributes"])
        add_record(repo, "semantic/decisions/session-rule", "session-rule")
        pending = write_packet(repo, supersede_packet("session-rule", pid=PID))
        repo.commit("packet", paths=[pending])
        return ["apply", PID, "--reviewer", "alice"]
    if kind == "reject-receipt":
        write_packet(repo, packet(PID, sensitivity="secret"), SECRET)
        return ["reject", PID, "--reason", "secret"]
    assert kind == "propose-packet"
    return ["propose", "--type", "fact", "--title", "Use pnpm", "--body", "The repo uses pnpm.", "--packet"]


FILES = {"supersede": 6, "reject-receipt": 3, "propose-packet": 1}
CASES = [("supersede", step) for step in install.fault_steps(FILES["supersede"])]
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
    steps = install.fault_steps(FILES[kind])
    return steps.index(step) >= steps.index(install.FIRST_COMMITTED_STEP)


def _leftovers(root: Path) -> list[str]:
    ws = Workspace.open(root)
    temps = [
        str(p)
        for folder in (root, root / ".memzoi", ws.layout.journal_dir)
        if folder.exists()
        for p in folder.rglob(f"{TEMP_PREFIX}*")
    ]
    return temps + [str(p) for p in pending_journals(ws)]


@pytest.mark.parametrize("kind, step", CASES)
def test_kill_at_every_step_then_repair(tmp_path: Path, monkeypatch, kind: str, step: str) -> None:
    at(APPLIED_AT)
    after = _after(tmp_path, kind)
    args = _ARGS[kind]

    root = tmp_path / "faulted"
    _scenario(root, kind)
    monkeypatch.chdir(root)
    before = snapshot(root)
    killed = run_memzoi(*args, cwd=root, env={"MEMZOI_FAULT": step, "MEMZOI_NOW": APPLIED_AT})
    assert killed.returncode == -signal.SIGKILL, killed.stderr

    repaired = run_cli("doctor", "--repair", "--json", expect=None).json()["repaired"]
    assert _leftovers(root) == []
    state = snapshot(root)
    if _committed(step, kind):
        assert state == after
        assert any(line.startswith("completed") for line in repaired) or step == "journal-deleted"
    else:
        assert state == before
        if step not in ("planned", "journal-temp"):
            assert any(line.startswith("rolled back") for line in repaired), repaired
        run_cli(*args)  # the step can simply be run again
        assert snapshot(root) == after


def test_next_lifecycle_command_repairs_first(tmp_path: Path, monkeypatch) -> None:
    at(APPLIED_AT)
    root = tmp_path / "repo"
    args = _scenario(root, "supersede")
    monkeypatch.chdir(root)
    before = snapshot(root)
    killed = run_memzoi(*args, cwd=root, env={"MEMZOI_FAULT": "file-3", "MEMZOI_NOW": APPLIED_AT})
    assert killed.returncode == -signal.SIGKILL
    assert snapshot(root) != before  # half installed
    health = run_cli("doctor", "--json", expect=1).json()
    assert health["checks"]["journal"].startswith("1 interrupted") and health["repaired"] == []
    listed = run_cli("proposals", "--json").json()["proposals"]  # even a read repairs when a journal waits
    assert [p["id"] for p in listed] == [PID]
    assert snapshot(root) == before and _leftovers(root) == []
