"""Session checkpoints: lane session, kept in shared.db, closing at the profile's retention boundaries.

A checkpoint is current until the earliest of its terminal boundary (`checkpoint close`), its
inactivity lease (last_active_at + retention.session_lease_hours), the seven-day cap from
started_at, or an explicit expiry. `continue` renews the lease and is refused once any of
those boundaries is reached: a lapsed checkpoint is query-only, and a successor checkpoint
(`--successor-of`) is the way on. Notes stay in shared.db; nothing is written to the work tree.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any

from git_memzoi.errors import NotFound, Refused, UsageError
from git_memzoi.index import runtime_store, shared_db
from git_memzoi.local import store
from git_memzoi.local.store import RuntimeRecord
from git_memzoi.profile.timefmt import format_rfc3339
from git_memzoi.recall import retention
from git_memzoi.recall.models import Checkpoint, ExpiryDecision
from git_memzoi.runtime import clock
from git_memzoi.runtime.workspace import Workspace

SESSION_CONTENT_CLASS = "session_state"


def decide(
    ws: Workspace, item: RuntimeRecord, now: datetime | None = None, facts: list[dict[str, str]] | None = None
) -> ExpiryDecision:
    """The retention decision for a runtime record at `now`, from the one retention engine."""
    return retention.decide(item.record, now or clock.now(), facts or [], ws.config.retention.session_lease_hours)


def to_checkpoint(ws: Workspace, item: RuntimeRecord, now: datetime | None = None) -> Checkpoint:
    """The recall Checkpoint model of a session record."""
    decision = decide(ws, item, now)
    return Checkpoint(
        record_id=item.id,
        task=item.record.title,
        note=item.body.strip("\n"),
        started_at=item.record.retention.started_at or "",
        last_active_at=item.record.retention.last_active_at,
        current=decision.current,
        expiry=decision,
    )


def add(
    ws: Workspace,
    *,
    task: str,
    note: str,
    successor_of: str | None = None,
    source: str | None = None,
    source_ref: str | None = None,
    applies_to: list[str] | None = None,
) -> Checkpoint:
    """Start a session checkpoint (optionally succeeding an earlier one, which ends if it was current) and return it."""
    if not note.strip():
        raise UsageError("is empty; a checkpoint needs a note", field="note")
    record_id = store.new_id("session")
    stamp = store.now_text()
    data: dict[str, Any] = {
        "id": record_id,
        "kind": "memory",
        "profile": "memzoi",
        "type": "checkpoint",
        "lane": "session",
        "title": task,
        "timestamp": stamp,
        "status": "active",
        "scope": "local",
        "visibility": "private",
        "content_class": SESSION_CONTENT_CLASS,
        "confidence": 1.0,
    }
    if applies_to:
        data["applies_to"] = applies_to
    data |= {
        "source": source,
        "source_ref": source_ref,
        "retention": {"started_at": stamp, "last_active_at": stamp},
        "origin": {"origin_key": f"session:{record_id}", "route": "session_checkpoint"},
    }
    detail: dict[str, Any] = {"store": "session"}
    if successor_of is not None:
        data["lineage"] = {"kind": "session_successor", "predecessor_id": successor_of}
        detail["predecessor_id"] = successor_of
    document = store.render(data, note, "checkpoint add")
    with store.writing(ws) as conn, shared_db.transaction(conn):
        if successor_of is not None:
            predecessor = store.load(conn, successor_of, "session")  # the predecessor must be a checkpoint
            now = clock.now()
            if decide(ws, predecessor, now).current:  # succeeded: this one is where the work goes on
                _stamp(conn, predecessor, "ended_at", now, "checkpoint.close")
        new = runtime_store.NewRecord(
            record_id=record_id, store="session", document=document, status="active", worktree_key=ws.repo.worktree_key
        )
        row = runtime_store.insert_record(
            conn,
            new,
            action="checkpoint.add",
            detail=detail,
        )
    return to_checkpoint(ws, store.parse(row))


def _rewrite(item: RuntimeRecord, retention: dict[str, str]) -> str:
    data = dict(item.data)
    data["retention"] = retention
    return store.render(data, item.body, item.path)


def renew(ws: Workspace, record_id: str) -> Checkpoint:
    """`checkpoint continue`: renew the inactivity lease, unless a retention boundary has been reached."""
    now = clock.now()
    with store.writing(ws) as conn, shared_db.transaction(conn):
        item = store.load(conn, record_id, "session")
        decision = decide(ws, item, now)
        if not decision.current:
            raise Refused(
                f"checkpoint {record_id} cannot be continued: {decision.reason}",
                hint=f"start a successor: git memzoi checkpoint add --successor-of {record_id} --task T --note N",
                code="checkpoint-ended",
            )
        row = _stamp(conn, item, "last_active_at", now, "checkpoint.continue")
    assert row is not None
    return to_checkpoint(ws, store.parse(row), now)


def _stamp(conn: sqlite3.Connection, item: RuntimeRecord, key: str, now: datetime, action: str) -> Any:
    """Set retention `key` to `now` in a checkpoint's document, audited as `action`; the new row."""
    retention = item.record.retention.model_dump(exclude_none=True)
    retention[key] = format_rfc3339(now)
    runtime_store.update_record(
        conn,
        item.record.id,
        document=_rewrite(item, retention),
        status="active",
        action=action,
        detail={"store": "session"},
    )
    return runtime_store.get_record(conn, item.record.id)


def revise(ws: Workspace, record_id: str, note: str) -> Checkpoint:
    """Replace a current checkpoint's note in place and renew its lease (an agent hook's per-turn capture keeps
    one checkpoint per session up to date, rather than a successor per turn); refused once it is not current."""
    if not note.strip():
        raise UsageError("is empty; a checkpoint needs a note", field="note")
    now = clock.now()
    with store.writing(ws) as conn, shared_db.transaction(conn):
        item = store.load(conn, record_id, "session")
        decision = decide(ws, item, now)
        if not decision.current:
            raise Refused(f"checkpoint {record_id} cannot be updated: {decision.reason}", code="checkpoint-ended")
        retention = item.record.retention.model_dump(exclude_none=True)
        retention["last_active_at"] = format_rfc3339(now)
        data = dict(item.data)
        data["retention"] = retention
        runtime_store.update_record(
            conn,
            record_id,
            document=store.render(data, note, item.path),
            status="active",
            action="checkpoint.update",
            detail={"store": "session"},
        )
        row = runtime_store.get_record(conn, record_id)
    assert row is not None
    return to_checkpoint(ws, store.parse(row), now)


def close(ws: Workspace, record_id: str) -> Checkpoint:
    """`checkpoint close`: set ended_at = now, the terminal boundary; closing twice is refused."""
    now = clock.now()
    with store.writing(ws) as conn, shared_db.transaction(conn):
        item = store.load(conn, record_id, "session")
        ended = item.record.retention.ended_at
        if ended is not None:
            raise Refused(f"checkpoint {record_id} was already closed at {ended}", code="checkpoint-ended")
        row = _stamp(conn, item, "ended_at", now, "checkpoint.close")
    assert row is not None
    return to_checkpoint(ws, store.parse(row), now)


def listing(ws: Workspace, *, current_only: bool = False) -> list[Checkpoint]:
    """Every checkpoint, oldest first, each with its retention decision now."""
    now = clock.now()
    with store.reading(ws) as conn:
        if conn is None:
            return []
        rows = list(runtime_store.iter_records(conn, store="session"))
    out = [to_checkpoint(ws, store.parse(row), now) for row in rows]
    return [c for c in out if c.current] if current_only else out


def show(ws: Workspace, record_id: str) -> Checkpoint:
    """One checkpoint by ID."""
    with store.reading(ws) as conn:
        if conn is None:
            raise NotFound(f"no checkpoint {record_id!r} in shared.db")
        return to_checkpoint(ws, store.load(conn, record_id, "session"))
