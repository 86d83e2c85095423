"""Retention decisions: is a record current, or query-only, and why (lane rule, boundary, reason)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING

from git_memzoi.index import queries
from git_memzoi.index.rebuild import open_index
from git_memzoi.index.retention_rules import Boundary, boundary, is_current, reason
from git_memzoi.profile.timefmt import format_rfc3339
from git_memzoi.recall.models import ExpiryDecision
from git_memzoi.recall.records import row_by_id
from git_memzoi.runtime import clock

if TYPE_CHECKING:
    from git_memzoi.profile.models import Record
    from git_memzoi.runtime.workspace import Workspace


def judge(record_id: str, lane: str, b: Boundary, now: datetime) -> ExpiryDecision:
    """The decision a boundary gives at `now`."""
    return ExpiryDecision(
        record_id=record_id,
        lane=lane,
        status=b.status,
        current=is_current(b, now),
        rule=b.rule,
        boundary=format_rfc3339(b.at) if b.at is not None else None,
        boundary_kind=b.kind,
        reason=reason(b, now),
        evaluated_at=format_rfc3339(now),
        facts=[dict(f) for f in b.facts],
    )


def decide(record: Record, now: datetime, facts: Iterable[Mapping[str, object]], lease_hours: float) -> ExpiryDecision:
    """Decide whether `record` is current at `now` (pure: no clock, no I/O).

    session: earliest of ended_at, the inactivity lease, the 7-day cap and explicit_expires_at;
    episodic: 30 days from occurred_at, extended only by authorised facts up to 90 days;
    semantic/procedural: only explicit_expires_at. Any status but active is never current.
    """
    retention = record.retention.model_dump()
    b = boundary(record.id, record.lane, record.status, retention, facts, lease_hours)
    return judge(record.id, record.lane, b, now)


def explain(ws: Workspace, record_id: str) -> ExpiryDecision:
    """Explain the retention decision for one record of this worktree's index (raises NotFound).

    The rule is applied afresh to the record's retention fields as the index holds them
    (validated when indexed), its current facts and the configured lease: no file is parsed.
    """

    conn = open_index(ws)
    try:
        row = row_by_id(conn, record_id)
        facts = queries.facts(conn, row.record_id)
    finally:
        conn.close()
    b = boundary(
        row.record_id, row.lane, row.status, json.loads(row.retention), facts, ws.config.retention.session_lease_hours
    )
    return judge(row.record_id, row.lane, b, clock.now())
