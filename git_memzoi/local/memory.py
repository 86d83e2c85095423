"""Private local memory: records that live only in shared.db, shared by every linked worktree.

Local records are `visibility: private`, `scope: local`. They are never written to the work
tree, never exported, and reach repository memory only through `local promote` (a reviewed
proposal). `forget` deletes the row: a user's explicit forget of private memory removes the
content; the audit log keeps only the ID and the record's shape, never its text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from git_memzoi.errors import UsageError
from git_memzoi.index import runtime_store, shared_db
from git_memzoi.lifecycle.draft import MemoryFields
from git_memzoi.local import store
from git_memzoi.local.store import RuntimeRecord
from git_memzoi.profile import secrets
from git_memzoi.profile.timefmt import format_rfc3339, is_rfc3339, parse_rfc3339
from git_memzoi.recall import search as recall_search
from git_memzoi.recall.models import SearchResult
from git_memzoi.runtime.workspace import Workspace

#: What a local record's content is, for the profile's required content_class.
LOCAL_CONTENT_CLASS = "private_working_memory"
#: Local memory states what its writer asserts; review status is carried by visibility, not confidence.
DEFAULT_CONFIDENCE = 1.0
LOCAL_LANES = ("semantic", "procedural", "episodic")


@dataclass(frozen=True)
class Added:
    """A stored local record and any secret-looking spans found in it (kind and line only)."""

    record: RuntimeRecord
    warnings: list[str]


def _timestamp(value: str | None, field: str) -> str | None:
    if value is None:
        return None
    if not is_rfc3339(value):
        raise UsageError(
            f"{value!r} is not an RFC 3339 date-time with a timezone (for example 2026-07-05T12:00:00Z)", field=field
        )
    return format_rfc3339(parse_rfc3339(value))


def add(ws: Workspace, fields: MemoryFields, *, confidence: float = DEFAULT_CONFIDENCE) -> Added:
    """Store a private local memory record in shared.db (validated as a profile record first).

    `fields` as `local add` takes them; type defaults to note and lane to semantic.
    """
    title, body = fields.title, fields.body or ""
    type, lane = fields.type or "note", fields.lane or "semantic"
    if lane == "session":
        raise UsageError(
            "local memory does not take lane session; session state is a checkpoint",
            hint="use `git memzoi checkpoint add --task T --note N`",
        )
    if lane not in LOCAL_LANES:
        raise UsageError(f"{lane!r} is not one of {', '.join(LOCAL_LANES)}", field="lane")
    if fields.occurred_at is not None and lane != "episodic":
        raise UsageError("applies only to lane episodic", field="occurred_at")
    if title is None:
        raise UsageError("is required", field="title")
    if not body.strip():
        raise UsageError("is empty; give the memory itself", field="body")
    record_id = store.new_id("local")
    stamp = store.now_text()
    retention: dict[str, str] = {}
    if lane == "episodic":
        retention["occurred_at"] = _timestamp(fields.occurred_at, "occurred_at") or stamp
    expires = _timestamp(fields.expires_at, "expires_at")
    if expires is not None:
        retention["explicit_expires_at"] = expires
    data: dict[str, Any] = {
        "id": record_id,
        "kind": "memory",
        "profile": "memzoi",
        "type": type,
        "lane": lane,
        "title": title,
    }
    if fields.description is not None:
        data["description"] = fields.description
    data |= {
        "timestamp": stamp,
        "status": "active",
        "scope": "local",
        "visibility": "private",
        "content_class": LOCAL_CONTENT_CLASS,
        "confidence": confidence,
    }
    if fields.applies_to:
        data["applies_to"] = list(fields.applies_to)
    if fields.tags:
        data["tags"] = list(fields.tags)
    data |= {
        "source": fields.source,
        "source_ref": fields.source_ref,
        "retention": retention,
        "origin": {"origin_key": f"local:{record_id}", "route": "local_memory"},
    }
    document = store.render(data, body, "local add")
    with store.writing(ws) as conn:
        new = runtime_store.NewRecord(
            record_id=record_id, store="local", document=document, status="active", worktree_key=ws.repo.worktree_key
        )
        row = runtime_store.insert_record(
            conn,
            new,
            action="local.add",
            detail={"store": "local", "lane": lane, "type": type},
        )
    warnings = [finding.describe() for finding in secrets.scan(f"{title}\n{fields.description or ''}\n{body}")]
    return Added(store.parse(row), warnings)


def listing(ws: Workspace, *, type: str | None = None, lane: str | None = None) -> list[RuntimeRecord]:
    """Local memory records, oldest first (optionally one type or lane)."""
    with store.reading(ws) as conn:
        if conn is None:
            return []
        out = []
        for row in runtime_store.iter_records(conn, store="local"):
            item = store.parse(row)
            if (type is None or item.record.type == type) and (lane is None or item.record.lane == lane):
                out.append(item)
        return out


def show(ws: Workspace, record_id: str) -> RuntimeRecord:
    """One runtime record (local or session) by ID."""
    with store.reading(ws) as conn:
        return store.load(conn, record_id)


def forget(ws: Workspace, record_id: str) -> dict[str, Any]:
    """Delete a private runtime record (local or session) and its retention facts; audit without content."""
    with store.writing(ws) as conn, shared_db.transaction(conn):  # read and delete under one write lock
        row = runtime_store.get_record(conn, record_id)
        if row is None:
            store.load(None, record_id)  # raises NotFound with the hint
        assert row is not None
        runtime_store.delete_record(conn, record_id, action=f"{row.store}.forget", detail={"store": row.store})
    return {"id": record_id, "store": row.store, "forgotten": True}


def search(
    ws: Workspace,
    query: str,
    *,
    limit: int | None = None,
    type: str | None = None,
    lane: str | None = None,
    include_all: bool = False,
) -> SearchResult:
    """Full-text search over private local memory only, through the one recall search engine.

    Recall ranks repository and runtime memory together; this widens the window until it has
    `limit` local hits (or recall has nothing more), so local hits keep their ranking.
    """
    count = limit if limit is not None else ws.config.recall.search_limit
    window = count * 4
    while True:
        result = recall_search.search(
            ws, query, type=type, lane=lane, limit=window, include_all=include_all, include_local=True
        )
        hits = [hit for hit in result.hits if hit.store == "local"]
        if len(hits) >= count or len(result.hits) < window:
            break
        window *= 4
    return result.model_copy(
        update={"hits": hits[:count], "filters": {**result.filters, "limit": count, "store": "local"}}
    )
