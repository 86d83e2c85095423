"""Authorised episodic extension: a retention fact in shared.db that keeps an episodic record current longer.

Episodic records have a 30-day ordinary window from retention.occurred_at. A person may extend
it with a reason, at most to 90 days after occurred_at. The fact lives in shared.db (never in
the record file), so the canonical body is not rewritten; `git memzoi expiry ID` shows it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from git_memzoi.errors import NotFound, Refused, UsageError
from git_memzoi.gitrepo.identity import actor
from git_memzoi.index import runtime_store, shared_db
from git_memzoi.layout import RECORDS, SHARED_DB, SUFFIX
from git_memzoi.local import store
from git_memzoi.profile.document import InvalidDocument, read_record
from git_memzoi.profile.models import Record
from git_memzoi.profile.timefmt import format_rfc3339, is_rfc3339, parse_rfc3339, plus
from git_memzoi.runtime import clock
from git_memzoi.runtime.sources import rev_files, worktree_files
from git_memzoi.runtime.workspace import Workspace

ORDINARY_WINDOW = timedelta(days=30)
MAX_WINDOW = timedelta(days=90)


def find_record(ws: Workspace, record_id: str) -> tuple[Record, str]:
    """An episodic candidate by ID: runtime memory in shared.db first, then canonical records; (record, path)."""
    with store.reading(ws) as conn:
        row = runtime_store.get_record(conn, record_id) if conn is not None else None
    if row is not None:
        item = store.parse(row)
        return item.record, item.path
    files = worktree_files(ws.repo) if ws.repo.workdir is not None else rev_files(ws.repo, "HEAD")
    needle = record_id.encode("utf-8")
    for source in files:
        if not source.path.startswith(RECORDS + "/") or not source.path.endswith(SUFFIX) or source.is_symlink:
            continue
        raw = source.read()
        if needle not in raw:  # cheap gate before parsing
            continue
        try:
            record = read_record(raw, source.path).record
        except InvalidDocument:
            continue
        if record.id == record_id:
            return record, source.path
    raise NotFound(
        f"no record {record_id!r} in {RECORDS}/ or {SHARED_DB}",
        hint="search for it with `git memzoi search QUERY --all`",
    )


def window_end(occurred_at: datetime, facts: list[runtime_store.RetentionFact]) -> datetime:
    """The end of the current window: 30 days after occurred_at, or the latest authorised extension."""
    end = plus(occurred_at, ORDINARY_WINDOW)
    for fact in facts:
        if fact.fact == runtime_store.EPISODIC_EXTENSION and is_rfc3339(fact.until):
            end = max(end, parse_rfc3339(fact.until))
    return end


def extend(ws: Workspace, record_id: str, *, until: str, reason: str) -> dict[str, Any]:
    """Record an authorised episodic extension to `until`; refused past 90 days or for any other lane."""
    if not is_rfc3339(until):
        raise UsageError(
            f"{until!r} is not an RFC 3339 date-time with a timezone (for example 2026-08-30T00:00:00Z)", field="until"
        )
    if not reason.strip():
        raise UsageError("is empty; say why this record should stay current longer", field="reason")
    target = parse_rfc3339(until)
    record, path = find_record(ws, record_id)
    if record.lane != "episodic":
        raise Refused(
            f"{record_id} is a {record.lane} record; only episodic records take an extension",
            hint="semantic and procedural records have no age limit; session records end at their lease, cap or close",
            code="not-episodic",
        )
    if record.status != "active":
        raise Refused(f"{record_id} has status {record.status}; only active records can be extended", code="not-active")
    assert record.retention.occurred_at is not None  # the profile requires it for episodic records
    occurred = parse_rfc3339(record.retention.occurred_at)
    limit = plus(occurred, MAX_WINDOW)
    now = clock.now()
    with store.writing(ws) as conn, shared_db.transaction(conn):
        facts = runtime_store.facts_for(conn, record_id)
        current_end = window_end(occurred, facts)
        if target > limit:
            raise Refused(
                f"{until} is more than 90 days after occurred_at {record.retention.occurred_at}; "
                f"the latest allowed is {format_rfc3339(limit)}",
                code="extension-too-long",
            )
        if target <= current_end:
            raise Refused(
                f"{until} is not after the current window, which ends {format_rfc3339(current_end)}",
                code="extension-not-later",
            )
        if target <= now:
            raise Refused(f"{until} is already in the past (now is {format_rfc3339(now)})", code="extension-in-past")
        new = runtime_store.NewFact(
            record_id=record_id,
            fact=runtime_store.EPISODIC_EXTENSION,
            until=format_rfc3339(target),
            reason=reason,
            actor=actor(ws.repo),
        )
        fact = runtime_store.add_fact(
            conn,
            new,
            action="retention.extend",
            detail={"path": path},
        )
    return {
        "record_id": record_id,
        "path": path,
        "occurred_at": record.retention.occurred_at,
        "previous_window_end": format_rfc3339(current_end),
        "until": fact.until,
        "limit": format_rfc3339(limit),
        "reason": fact.reason,
        "actor": fact.actor,
        "created_at": fact.created_at,
    }
