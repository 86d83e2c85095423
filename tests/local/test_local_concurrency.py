"""Concurrent writers from two linked worktrees lose nothing: every record and every event lands."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from git_memzoi.runtime.workspace import Workspace
from support import Repo, memzoi_exe, run_cli

pytestmark = pytest.mark.slow

N = 40


def _worker(module: str, step: str) -> str:
    """A worker script `GO ARG N`: it waits for the file GO so that all workers really write at the same time, then
    runs `step` N times through the library (the same code the CLI runs), and prints done."""
    return f"""
import sys, time
from pathlib import Path
go, arg, n = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
from git_memzoi.lifecycle.draft import MemoryFields
from git_memzoi.local import {module}
from git_memzoi.runtime.workspace import Workspace
ws = Workspace.open()
while not go.exists():
    time.sleep(0.005)
for i in range(n):
    {step}
print("done")
"""


#: adds N records titled "ARG item I"
WORKER = _worker("memory", 'memory.add(ws, MemoryFields(title=f"{arg} item {i}", body=f"{arg} body {i}", type="fact"))')
#: renews the checkpoint ARG N times
RENEWER = _worker("sessions", "sessions.renew(ws, arg)")


def _spawn(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        args, cwd=cwd, env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _race(tmp_path: Path, script: str, n: int, workers: list[tuple[str, Path]]) -> None:
    """Start `script GO ARG N` once per (ARG, folder), let them all go at once, and wait for each to finish."""
    go = tmp_path / "go"
    procs = [_spawn([sys.executable, "-c", script, str(go), arg, str(n)], where) for arg, where in workers]
    go.write_text("go")
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert out.strip() == "done"


def test_two_worktrees_adding_at_once_lose_nothing(repo: Repo, tmp_path: Path) -> None:
    linked = repo.add_worktree("agent-b", tmp_path / "agent-b")
    _race(tmp_path, WORKER, N, [("main", repo.path), ("linked", linked.path)])
    for where in (repo.path, linked.path):
        titles = {r["title"] for r in run_cli("local", "list", "--json", cwd=where).json()["records"]}
        assert titles == {f"{tag} item {i}" for tag in ("main", "linked") for i in range(N)}
    conn = sqlite3.connect(Workspace.open(repo.path).layout.shared_db)
    assert conn.execute("SELECT count(*) FROM runtime_records").fetchone()[0] == 2 * N
    assert conn.execute("SELECT count(*) FROM events WHERE action = 'local.add'").fetchone()[0] == 2 * N
    keys = {row[0] for row in conn.execute("SELECT DISTINCT worktree_key FROM runtime_records")}
    assert keys == {Workspace.open(repo.path).repo.worktree_key, Workspace.open(linked.path).repo.worktree_key}
    seqs = [row[0] for row in conn.execute("SELECT seq FROM events ORDER BY seq")]
    assert seqs == list(range(1, 2 * N + 1))


def test_concurrent_cli_writers_on_a_fresh_shared_db(repo: Repo, tmp_path: Path) -> None:
    """Both processes may be the first to create shared.db; the schema is made once and nothing is lost."""
    linked = repo.add_worktree("agent-c", tmp_path / "agent-c")
    assert not Workspace.open(repo.path).layout.shared_db.exists()
    exe = memzoi_exe()
    script = 'for i in 1 2 3 4; do "$0" local add --title "$1 $i" --body "b" >/dev/null || exit 1; done'
    procs = [_spawn(["sh", "-c", script, exe, tag], where) for tag, where in (("m", repo.path), ("l", linked.path))]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    lines = run_cli("events", "--jsonl").stdout.splitlines()
    assert len(lines) == 8
    titles = sorted(r["title"] for r in run_cli("local", "list", "--json").json()["records"])
    assert titles == sorted(f"{t} {i}" for t in "ml" for i in range(1, 5))
    assert all(json.loads(line)["action"] == "local.add" for line in lines)


def test_two_worktrees_renewing_one_checkpoint_keep_it_valid(repo: Repo, tmp_path: Path) -> None:
    """Read-check-write of a checkpoint happens under one write lock: every renewal lands on a valid record."""
    linked = repo.add_worktree("agent-d", tmp_path / "agent-d")
    record_id = run_cli("checkpoint", "add", "--task", "T", "--note", "n").stdout.strip()
    _race(tmp_path, RENEWER, 15, [(record_id, repo.path), (record_id, linked.path)])
    events = [json.loads(line) for line in run_cli("events", "--jsonl").stdout.splitlines()]
    assert [e["action"] for e in events].count("checkpoint.continue") == 30
    shown = run_cli("checkpoint", "show", record_id, "--json").json()
    assert shown["current"] is True and shown["note"] == "n"
