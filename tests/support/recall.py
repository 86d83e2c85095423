"""Helpers the index and recall tests share (this module holds no tests)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

import yaml

from git_memzoi.index import runtime_store
from support import Repo


@dataclass(kw_only=True)
class RecordFields:
    """What a test record says besides its ID; each test names only the fields it cares about."""

    title: str | None = None
    body: str | None = None
    type: str = "decision"
    lane: str = "semantic"
    status: str = "active"
    visibility: str = "repo"
    applies_to: list[str] | None = None
    tags: list[str] | None = None
    source: str | None = "human"
    source_ref: str | None = None
    proposal_id: str | None = None
    description: str | None = None
    retention: dict[str, str] | None = None
    confidence: float = 1.0
    scope: str = "repo"


def record_text(rid: str, **fields: Any) -> str:
    """A valid record file (frontmatter + body); `fields` as RecordFields names them."""
    f = RecordFields(**fields)
    retention = f.retention
    if retention is None:
        retention = (
            {"occurred_at": "2026-01-01T00:00:00Z"}
            if f.lane == "episodic"
            else {"started_at": "2026-01-01T00:00:00Z"}
            if f.lane == "session"
            else {}
        )
    data: dict[str, Any] = {
        "id": rid,
        "kind": "memory",
        "profile": "memzoi",
        "type": f.type,
        "lane": f.lane,
        "title": f.title or rid.replace("-", " ").capitalize(),
    }
    if f.description is not None:
        data["description"] = f.description
    data |= {
        "timestamp": "2026-01-01T00:00:00Z",
        "status": f.status,
        "scope": f.scope,
        "visibility": f.visibility,
        "content_class": "general_repo_knowledge",
        "confidence": f.confidence,
    }
    if f.applies_to is not None:
        data["applies_to"] = f.applies_to
    if f.tags is not None:
        data["tags"] = f.tags
    data["source"] = f.source
    data["source_ref"] = f.source_ref
    if f.proposal_id is not None:
        data["proposal_id"] = f.proposal_id
    data["retention"] = retention
    data["origin"] = {"origin_key": f"test:{rid}", "route": "repository_materialization"}
    front = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    text = f.body if f.body is not None else f"Body of {rid}."
    return f"---\n{front}---\n# {data['title']}\n\n{text}\n"


def add_record(repo: Repo, concept: str, rid: str, commit: bool = False, **fields: Any) -> str:
    """Write `.memzoi/records/<concept>.md`; return its repository path."""
    rel = f".memzoi/records/{concept}.md"
    repo.write(rel, record_text(rid, **fields))
    if commit:
        repo.commit(f"add {rid}")
    return rel


def add_runtime_record(conn: sqlite3.Connection, rid: str, store: str, action: str, **fields: Any) -> None:
    """Put an active local or session record (`record_text(rid, **fields)`) into shared.db, as `action` would."""
    document = record_text(rid, **fields)
    new = runtime_store.NewRecord(record_id=rid, store=store, document=document, status="active", worktree_key=None)
    runtime_store.insert_record(conn, new, action=action)


def tree_snapshot(root: Any) -> dict[str, tuple[int, int, bytes]]:
    """Every file under `root` with its mtime, size and bytes (to prove nothing was written)."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.is_file():
            st = path.stat()
            out[str(path.relative_to(root))] = (st.st_mtime_ns, st.st_size, path.read_bytes())
    return out
