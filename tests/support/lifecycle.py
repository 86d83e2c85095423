"""Builders and snapshots the lifecycle tests share (no tests here)."""

from __future__ import annotations

import copy
import json
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from git_memzoi.index import shared_db
from git_memzoi.lifecycle.recovery import pending_journals
from git_memzoi.profile import frontmatter
from git_memzoi.runtime import clock
from git_memzoi.runtime.atomic import TEMP_PREFIX
from git_memzoi.runtime.workspace import Workspace
from support import ROOT, Repo, make_repo, run_cli

#: Records in these tests are committed at 2026-01-01 (conftest AUTHOR); proposals are made later.
PROPOSED_AT = "2026-03-01T00:00:00Z"
APPLIED_AT = "2026-03-02T00:00:00Z"
LATER = int(datetime(2026, 4, 1, tzinfo=UTC).timestamp())


def at(text: str) -> None:
    """Pin the in-process clock."""
    clock.set_now(datetime.fromisoformat(text.replace("Z", "+00:00")))


def packet(pid: str = "mem_2026_03_01_auth_abc123", **over: Any) -> dict[str, Any]:
    """A valid pending create packet's frontmatter (the profile's example), with overrides."""
    data: dict[str, Any] = {
        "id": pid,
        "kind": "proposal",
        "profile": "memzoi",
        "retention": {},
        "origin": {"origin_key": f"issue:{pid}:proposal", "route": "repository_proposal"},
        "type": "decision",
        "lane": "semantic",
        "title": "Protected routes must validate sessions server-side",
        "description": "Protected API routes must validate sessions server-side.",
        "status": "proposed",
        "proposal": {
            "action": "create",
            "proposed_by": "agent",
            "proposed_at": PROPOSED_AT,
            "reason": "Learned during auth middleware migration.",
            "confidence": "medium",
        },
        "scope": {"kind": "project", "paths": ["src/auth/**"]},
        "tags": ["auth", "security"],
        "timestamp": PROPOSED_AT,
        "created_by": "agent",
        "sources": [{"path": "src/auth/session.ts"}],
        "supersedes": [],
        "sensitivity": "repo-safe",
        "content_class": "general_repo_knowledge",
    }
    for key, value in over.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return data


BODY = "# Protected routes must validate sessions server-side\n\nDo not trust client-side auth state.\n"


def _proposal(action: str, reason: str, **more: str) -> dict[str, str]:
    """The `proposal` block of a packet an agent proposed at PROPOSED_AT."""
    return {"action": action, "proposed_by": "agent", "proposed_at": PROPOSED_AT, "reason": reason, **more}


def supersede_packet(target: str, pid: str = "mem_2026_03_01_supersede_abc123", **over: Any) -> dict[str, Any]:
    proposal = _proposal("supersede", "The old rule was too narrow.")
    over.setdefault("title", "Validate every session server-side")
    return packet(pid, proposal=proposal, supersedes=[target], **over)


def tombstone_packet(target: str, pid: str = "mem_2026_03_01_tombstone_abc123", **over: Any) -> dict[str, Any]:
    proposal = _proposal("tombstone", "No longer true.", target=target)
    over.setdefault("title", f"Tombstone {target}")
    return packet(pid, proposal=proposal, **over)


def write_packet(repo: Repo, data: dict[str, Any], body: str = BODY, name: str | None = None) -> str:
    rel = f".memzoi/proposals/pending/{name or data['id']}.md"
    repo.write(rel, frontmatter.render(copy.deepcopy(data), body))
    return rel


def record(rid: str, **over: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": rid,
        "kind": "memory",
        "profile": "memzoi",
        "type": "decision",
        "lane": "semantic",
        "title": f"Record {rid}",
        "description": f"About {rid}.",
        "timestamp": "2026-01-01T00:00:00Z",
        "status": "active",
        "scope": "repo",
        "visibility": "repo",
        "content_class": "general_repo_knowledge",
        "confidence": 0.9,
        "applies_to": ["src/auth/**"],
        "tags": ["auth"],
        "source": "human",
        "source_ref": "issue://1",
        "retention": {},
        "origin": {"origin_key": f"record:{rid}", "route": "repository_materialization"},
    }
    data.update(over)
    return data


def add_record(repo: Repo, concept_id: str, rid: str, commit: bool = True, **over: Any) -> str:
    rel = f".memzoi/records/{concept_id}.md"
    repo.write(rel, frontmatter.render(record(rid, **over), f"# Record {rid}\n\nThe body of {rid}.\n"))
    if commit:
        repo.commit(f"add {rid}", paths=[rel])
    return rel


def tree(root: Path) -> dict[str, bytes]:
    """Every file under .memzoi/ plus .gitattributes, by repository-relative path."""
    out: dict[str, bytes] = {}
    top = root / ".memzoi"
    for path in sorted(top.rglob("*")):
        if path.is_file() or path.is_symlink():
            out[path.relative_to(root).as_posix()] = path.read_bytes() if path.is_file() else b"<symlink>"
    attributes = root / ".gitattributes"
    if attributes.exists():
        out[".gitattributes"] = attributes.read_bytes()
    return out


def db_state(ws: Workspace) -> dict[str, Any]:
    """The inbox, the hashed rejections and the number of events in shared.db."""
    path = ws.layout.shared_db
    if not path.exists():
        return {}
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute(
            "SELECT id, state, packet, file_id, reviewer, reason, resolved_at, affected_ids FROM proposals ORDER BY id"
        ).fetchall()
        rejections = conn.execute("SELECT * FROM rejections ORDER BY alias_sha256").fetchall()
        events = conn.execute("SELECT count(*) FROM events").fetchone()[0]
    finally:
        conn.close()
    return {"proposals": rows, "rejections": rejections, "events": events}


def snapshot(root: Path) -> dict[str, Any]:
    ws = Workspace.open(root)
    return {"tree": tree(root), "db": db_state(ws)}


def states(root: Path) -> dict[str, str]:
    ws = Workspace.open(root)
    if not ws.layout.shared_db.exists():
        return {}
    conn = sqlite3.connect(ws.layout.shared_db)
    try:
        return dict(conn.execute("SELECT id, state FROM proposals").fetchall())
    finally:
        conn.close()


def run_memzoi(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """git memzoi as a real subprocess (python -m git_memzoi, so it works before the package is installed)."""
    full = dict(os.environ)
    full["PYTHONPATH"] = str(ROOT) + (os.pathsep + full["PYTHONPATH"] if full.get("PYTHONPATH") else "")
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "git_memzoi", *args], cwd=cwd, env=full, capture_output=True, text=True, timeout=timeout
    )


def one_line_error(stderr: str) -> str:
    """The `git memzoi: …` line of a refusal (asserting there is exactly one and no traceback)."""
    assert "Traceback" not in stderr, stderr
    lines = [line for line in stderr.splitlines() if line.startswith("git memzoi: ")]
    assert len(lines) == 1, stderr
    return lines[0]


def loads(text: str) -> Any:
    return json.loads(text)


def refused(repo: Repo, *args: str, needles: tuple[str, ...], code: int = 1) -> str:
    """Run a command that must be refused: its one-line error holds `needles`, and nothing changed."""
    from support import run_cli

    before = snapshot(repo.path)
    result = run_cli(*args, expect=code)
    line = one_line_error(result.stderr)
    for needle in needles:
        assert needle in line, line
    assert snapshot(repo.path) == before
    return line


def supersede_scenario(root: Path, pid: str) -> Repo:
    """A repository whose pending supersede `pid` writes six files when applied: the new record, the superseded
    target, the resolved packet, the removed pending packet, log.md and .gitattributes."""
    repo = make_repo(root)
    shared_db.connect(Workspace.open(root).layout.shared_db).close()
    repo.write(".gitattributes", "*.png binary\n")
    repo.commit("attributes", paths=[".gitattributes"])
    add_record(repo, "semantic/decisions/session-rule", "session-rule")
    pending = write_packet(repo, supersede_packet("session-rule", pid=pid))
    repo.commit("packet", paths=[pending])
    return repo


def kill_at(step: str, args: Sequence[str], root: Path) -> None:
    """Run `git memzoi ARGS` in root as a subprocess that SIGKILLs itself at fault step `step`."""
    killed = run_memzoi(*args, cwd=root, env={"MEMZOI_FAULT": step, "MEMZOI_NOW": APPLIED_AT})
    assert killed.returncode == -signal.SIGKILL, killed.stderr


def leftovers(root: Path) -> list[str]:
    """Temporary files of ours and pending journals in the repository, its .git, .memzoi/ and the journal folder."""
    ws = Workspace.open(root)
    temps = [
        str(p)
        for folder in (root, root / ".memzoi", ws.layout.journal_dir, root / ".git")
        if folder.exists()
        for p in folder.rglob(f"{TEMP_PREFIX}*")
    ]
    return temps + [str(p) for p in pending_journals(ws)]


def repair(root: Path, step: str, committed: bool) -> None:
    """`doctor --repair` after a kill at `step`: it completes a committed change and rolls back any other that wrote,
    leaving nothing behind."""
    repaired = run_cli("doctor", "--repair", "--json", expect=None, cwd=root).json()["repaired"]
    assert leftovers(root) == []
    if committed:
        assert any(line.startswith("completed") for line in repaired) or step == "journal-deleted", repaired
    elif step not in ("planned", "journal-temp"):
        assert any(line.startswith("rolled back") for line in repaired), repaired


def inbox_ready(repo: Repo) -> Repo:
    """`repo` with its shared.db made and the clock pinned at PROPOSED_AT: ready to propose into."""
    shared_db.connect(Workspace.open(repo.path).layout.shared_db).close()
    at(PROPOSED_AT)
    return repo


def propose_decision(title: str, *extra: str) -> str:
    """Propose a decision titled `title` (a body of its own, so no two are duplicates); its proposal ID."""
    body = f"The body of {title}."
    return str(run_cli("propose", "--type", "decision", "--title", title, "--body", body, *extra).stdout.strip())
