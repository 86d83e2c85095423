"""The profile's lane retention rules as pure functions: where a record's retention boundary lies.

The boundary does not depend on the current time, so the index stores it and every query
compares it with the clock: a record is current strictly before its boundary and query-only
from the boundary instant on. `recall.retention` turns a boundary into an ExpiryDecision.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from functools import lru_cache
from typing import NamedTuple

from git_memzoi.profile.timefmt import format_rfc3339, parse_rfc3339, plus

SESSION_CAP = timedelta(days=7)
EPISODIC_WINDOW = timedelta(days=30)
EPISODIC_MAX = timedelta(days=90)
EXTENSION_FACT = "episodic_extension"

#: When two session boundaries fall on the same instant, name the most deliberate one.
_SESSION_ORDER = {"terminal": 0, "explicit": 1, "lease": 2, "cap": 3}


class Boundary(NamedTuple):
    """Where retention ends ordinary recall for one record, and how that instant was reached."""

    rule: str  # the lane rule, for a person
    at: datetime | None  # None: no retention boundary (or the status already decides)
    kind: str | None  # terminal | lease | cap | explicit | window | extension | status
    basis: str  # how `at` follows from the record's retention fields and facts
    active: bool  # status: active (anything else is never current)
    status: str = "active"
    facts: tuple[dict[str, str], ...] = ()


def lane_rule(lane: str, lease_hours: float) -> str:
    """The rule sentence for a lane."""
    if lane == "session":
        return (
            f"session: closes at the earliest of ended_at, the inactivity lease ({lease_hours:g}h after "
            f"last_active_at or started_at), 7 days after started_at, and explicit_expires_at"
        )
    if lane == "episodic":
        return (
            "episodic: 30-day window from occurred_at, extendable by authorised facts to at most "
            "90 days from occurred_at; explicit_expires_at ends it earlier"
        )
    return f"{lane}: no age limit; only explicit_expires_at ends ordinary recall"


def _when(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return parse_rfc3339(value)
    except ValueError:
        return None


def _fmt(moment: datetime) -> str:
    return format_rfc3339(moment)


def _hours(value: float) -> str:
    return f"{value:g}h"


def facts_for(record_id: str, facts: Iterable[Mapping[str, object]]) -> tuple[dict[str, str], ...]:
    """The retention facts that name `record_id` (facts without a record_id are taken as given)."""
    out = []
    for fact in facts:
        rid = fact.get("record_id")
        if rid is not None and rid != record_id:
            continue
        out.append({str(k): str(v) for k, v in fact.items() if v is not None and k != "seq"})
    return tuple(out)


@lru_cache(maxsize=64)
def _plain(lane: str, status: str, lease_hours: float) -> Boundary:
    """The boundary of a record whose retention fields do not matter and that has no facts (most records)."""
    return _compute("", lane, status, {}, (), lease_hours)


def boundary(
    record_id: str,
    lane: str,
    status: str,
    retention: Mapping[str, object],
    facts: Iterable[Mapping[str, object]],
    lease_hours: float,
) -> Boundary:
    """The retention boundary of one record under its lane's rule."""
    if not facts and (
        status != "active" or (lane in ("semantic", "procedural") and not retention.get("explicit_expires_at"))
    ):
        return _plain(lane, status, lease_hours)
    return _compute(record_id, lane, status, retention, facts, lease_hours)


def _compute(
    record_id: str,
    lane: str,
    status: str,
    retention: Mapping[str, object],
    facts: Iterable[Mapping[str, object]],
    lease_hours: float,
) -> Boundary:
    rule = lane_rule(lane, lease_hours)
    mine = facts_for(record_id, facts)
    if status != "active":
        return Boundary(
            rule, None, "status", f"status is {status}; only status: active records are current", False, status, mine
        )
    explicit = _when(retention.get("explicit_expires_at"))
    if lane == "session":
        return _session(rule, retention, explicit, lease_hours, mine)
    if lane == "episodic":
        return _episodic(rule, retention, explicit, mine)
    if explicit is not None:
        return Boundary(rule, explicit, "explicit", f"explicit_expires_at {_fmt(explicit)}", True, status, mine)
    return Boundary(
        rule,
        None,
        None,
        f"{lane} records have no age limit and this one sets no explicit_expires_at",
        True,
        status,
        mine,
    )


def _session(
    rule: str,
    retention: Mapping[str, object],
    explicit: datetime | None,
    lease_hours: float,
    facts: tuple[dict[str, str], ...],
) -> Boundary:
    started = _when(retention.get("started_at"))
    ended = _when(retention.get("ended_at"))
    last_active = _when(retention.get("last_active_at"))
    candidates: list[tuple[datetime, str, str]] = []
    if ended is not None:
        candidates.append((ended, "terminal", f"the session ended at {_fmt(ended)} (ended_at)"))
    if explicit is not None:
        candidates.append((explicit, "explicit", f"explicit_expires_at {_fmt(explicit)}"))
    lease_from, lease_field = (last_active, "last_active_at") if last_active is not None else (started, "started_at")
    if lease_from is not None:
        lease_end = plus(lease_from, timedelta(hours=lease_hours))
        candidates.append(
            (lease_end, "lease", f"inactivity lease: {lease_field} {_fmt(lease_from)} + {_hours(lease_hours)}")
        )
    if started is not None:
        candidates.append((plus(started, SESSION_CAP), "cap", f"7-day cap: started_at {_fmt(started)} + 7 days"))
    if not candidates:
        return Boundary(rule, None, None, "no retention timestamps to measure from", True, "active", facts)
    at, kind, basis = min(candidates, key=lambda c: (c[0], _SESSION_ORDER[c[1]]))
    return Boundary(rule, at, kind, basis, True, "active", facts)


def _episodic(
    rule: str, retention: Mapping[str, object], explicit: datetime | None, facts: tuple[dict[str, str], ...]
) -> Boundary:
    occurred = _when(retention.get("occurred_at"))
    if occurred is None:
        if explicit is not None:
            return Boundary(rule, explicit, "explicit", f"explicit_expires_at {_fmt(explicit)}", True, "active", facts)
        return Boundary(rule, None, None, "no occurred_at to measure from", True, "active", facts)
    window_end = plus(occurred, EPISODIC_WINDOW)
    cap = plus(occurred, EPISODIC_MAX)
    at, kind = window_end, "window"
    basis = f"30-day window: occurred_at {_fmt(occurred)} + 30 days"
    for fact in facts:
        if fact.get("fact") != EXTENSION_FACT:
            continue
        until = _when(fact.get("until"))
        if until is None:
            continue
        extended = min(until, cap)
        if extended > at:
            at, kind = extended, "extension"
            capped = " (capped at 90 days from occurred_at)" if until > cap else ""
            who = fact.get("actor", "an authorised actor")
            basis = f"extended by an authorised fact from {who} to {_fmt(extended)}{capped}"
    if explicit is not None and explicit < at:
        return Boundary(rule, explicit, "explicit", f"explicit_expires_at {_fmt(explicit)}", True, "active", facts)
    return Boundary(rule, at, kind, basis, True, "active", facts)


def is_current(b: Boundary, now: datetime) -> bool:
    """Current means active and strictly before the boundary; at the boundary it is query-only."""
    return b.active and (b.at is None or now < b.at)


def reason(b: Boundary, now: datetime) -> str:
    """One sentence for a person."""
    if not b.active:
        return f"query-only: {b.basis}"
    if b.at is None:
        return f"current: {b.basis}"
    if now < b.at:
        return f"current until {_fmt(b.at)} ({b.basis})"
    return f"query-only since {_fmt(b.at)} ({b.basis})"
