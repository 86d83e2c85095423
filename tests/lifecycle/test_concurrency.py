"""repo-lifecycle.lock: two worktrees applying at once lose and double nothing; a held lock times out cleanly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from git_memzoi.index import shared_db
from git_memzoi.lifecycle import inbox
from git_memzoi.runtime.lock import lifecycle_lock
from git_memzoi.runtime.workspace import Workspace
from support import ROOT
from support.lifecycle import at, one_line_error, packet, run_memzoi, snapshot, states, write_packet

pytestmark = pytest.mark.slow

APPLY_LOOP = """
import contextlib, io, json, pathlib, sys, time
from git_memzoi.cli.main import run
ids, me, other = json.loads(sys.argv[1]), pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3])
me.touch()
while not other.exists():  # start together, so the two really contend for the lock
    time.sleep(0.005)
out = []
for pid in ids:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        code = run(["apply", pid, "--json"])
    out.append([pid, code, json.loads(buf.getvalue())["outcome"] if code == 0 else None])
print(json.dumps(out))
"""


def _loop(cwd: Path, ids: list[str], me: Path, other: Path) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), MEMZOI_LOCK_TIMEOUT="120")
    return subprocess.Popen(
        [sys.executable, "-c", APPLY_LOOP, json.dumps(ids), str(me), str(other)],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _applied_here(root: Path) -> dict[str, str]:
    """proposal ID -> record ID of every record in this work tree (from the records' proposal_id)."""
    from git_memzoi.profile import frontmatter

    out = {}
    for path in (root / ".memzoi/records").rglob("*.md"):
        data = frontmatter.parse(path.read_bytes()).data
        out[data["proposal_id"]] = data["id"]
    return out


def test_two_worktrees_apply_fifty_each_none_lost_or_doubled(repo, tmp_path: Path) -> None:
    linked = repo.add_worktree("other", tmp_path / "other-wt")
    ws = Workspace.open(repo.path)
    ws.layout.user_config.parent.mkdir(parents=True, exist_ok=True)
    ws.layout.user_config.write_text('[workflow]\nproposal_approval = "auto"\n')
    at("2026-03-01T00:00:00Z")
    ids = []
    for n in range(100):
        entry = inbox.submit(
            ws,
            {
                "type": "fact",
                "lane": "semantic",
                "title": f"Fact number {n}",
                "sensitivity": "repo-safe",
                "content_class": "general_repo_knowledge",
                "scope": {"kind": "project"},
            },
            f"# Fact number {n}\n\nFact {n} holds.\n",
        )
        assert entry.state == "approved"
        ids.append(entry.id)
    mine, theirs = ids[:50], ids[50:]
    # each applies its own fifty, then tries the other's fifty from the far end (already applied, or a race)
    ready_a, ready_b = tmp_path / "ready-a", tmp_path / "ready-b"
    first = _loop(repo.path, mine + theirs[::-1], ready_a, ready_b)
    second = _loop(linked.path, theirs + mine[::-1], ready_b, ready_a)
    results = []
    for proc in (first, second):
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        results.append(json.loads(out))
    applied_by = {pid: [] for pid in ids}
    for who, rows in zip(("main", "linked"), results, strict=True):
        for pid, code, outcome in rows:
            assert code == 0, (pid, who)
            assert outcome in ("applied", "already-applied")
            if outcome == "applied":
                applied_by[pid].append(who)
    assert all(len(who) == 1 for who in applied_by.values()), applied_by  # applied once: none lost, none doubled
    assert set(states(repo.path).values()) == {"applied"} and len(states(repo.path)) == 100
    here, there = _applied_here(repo.path), _applied_here(linked.path)
    assert not set(here) & set(there) and set(here) | set(there) == set(ids)
    assert set(here) == {pid for pid, who in applied_by.items() if who == ["main"]}
    for root, applied in ((repo.path, here), (linked.path, there)):
        resolved = {f.name[:-3] for f in (root / ".memzoi/proposals/resolved/applied").iterdir()}
        assert resolved == set(applied)
        log = (root / ".memzoi/log.md").read_text()
        assert all(log.count(f" applied {pid} ") == 1 for pid in applied)
        assert not any(f" applied {pid} " in log for pid in set(ids) - set(applied))


def test_a_held_lock_times_out_naming_it_and_changes_nothing(repo) -> None:
    pending = write_packet(repo, packet())
    ws = Workspace.open(repo.path)
    shared_db.connect(ws.layout.shared_db).close()
    before = snapshot(repo.path)
    with lifecycle_lock(ws.layout.lock, timeout=0):
        result = run_memzoi("apply", pending, cwd=repo.path, env={"MEMZOI_LOCK_TIMEOUT": "0.3"})
    assert result.returncode == 1
    line = one_line_error(result.stderr)
    assert str(ws.layout.lock) in line and "held" in line
    assert snapshot(repo.path) == before
