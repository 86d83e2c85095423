"""Retention decisions: is a record current, or query-only, and why (lane rule, boundary, reason)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING

from git_memzoi.profile.retention import Boundary, boundary, is_current, reason
from git_memzoi.profile.timefmt import format_rfc3339
from git_memzoi.recall.models import ExpiryDecision

if TYPE_CHECKING:
    from git_memzoi.profile.models import Record


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
