"""SQL for the DB-local proposal inbox in shared.db: the proposals and rejections tables.

Lifecycle code describes a change as data (a DbChange) and `execute` carries it out in one
transaction together with its audit event. The event names the install journal, which is how
crash recovery learns whether the database side of an interrupted change committed.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from git_memzoi.index import shared_db

OPEN_STATES = ("pending", "validated", "approved")
STATES = ("pending", "validated", "approved", "applied", "rejected")

_COLUMNS = ("id, state, packet, body_digest, file_id, created_at, updated_at, reviewer, reason, "
            "resolved_at, affected_ids, target_blob")


@dataclass(frozen=True)
class ProposalRow:
    """One proposals row: an inbox proposal, its full packet text and how it was resolved."""

    id: str
    state: str
    packet: str
    body_digest: str
    file_id: str | None
    created_at: str
    updated_at: str
    reviewer: str | None = None
    reason: str | None = None
    resolved_at: str | None = None
    affected_ids: tuple[str, ...] | None = None
    target_blob: str | None = None  # supersede/tombstone: the target's blob OID the proposal was made against

    def params(self) -> tuple[Any, ...]:
        affected = json.dumps(list(self.affected_ids)) if self.affected_ids is not None else None
        return (self.id, self.state, self.packet, self.body_digest, self.file_id, self.created_at,
                self.updated_at, self.reviewer, self.reason, self.resolved_at, affected, self.target_blob)


@dataclass(frozen=True)
class RejectionRow:
    """A hashed alias (proposal ID or file ID) pointing at a hash-only rejection receipt."""

    alias_sha256: str
    receipt_id: str
    receipt_path: str
    created_at: str


@dataclass(frozen=True)
class EventSpec:
    """The audit event a change appends: action, IDs involved, detail."""

    action: str
    ids: tuple[str, ...]
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DbChange:
    """Everything one lifecycle step changes in shared.db, applied all at once.

    `expect` is a compare-and-swap guard: (proposal ID, state it must have, or None for absent).
    """

    event: EventSpec
    expect: tuple[tuple[str, str | None], ...] = ()
    delete_ids: tuple[str, ...] = ()
    upsert: ProposalRow | None = None
    rejections: tuple[RejectionRow, ...] = ()


class Conflict(Exception):
    """A guarded row was not in the expected state when the change was applied."""


def _row(values: Iterable[Any]) -> ProposalRow:
    (pid, state, packet, digest, file_id, created, updated, reviewer, reason, resolved, affected, base) = values
    ids = tuple(json.loads(affected)) if affected is not None else None
    return ProposalRow(pid, state, packet, digest, file_id, created, updated, reviewer, reason, resolved, ids, base)


def get(conn: sqlite3.Connection, proposal_id: str) -> ProposalRow | None:
    """The inbox row with this ID, or None."""
    found = conn.execute(f"SELECT {_COLUMNS} FROM proposals WHERE id = ?", (proposal_id,)).fetchone()
    return _row(found) if found else None


def by_file_id(conn: sqlite3.Connection, file_id: str) -> ProposalRow | None:
    """The inbox row whose pending packet file has this file ID, or None."""
    found = conn.execute(f"SELECT {_COLUMNS} FROM proposals WHERE file_id = ? ORDER BY created_at LIMIT 1",
                         (file_id,)).fetchone()
    return _row(found) if found else None


def list_rows(conn: sqlite3.Connection, states: Iterable[str] | None = None) -> list[ProposalRow]:
    """Inbox rows, oldest first, optionally only those in `states`."""
    if states is None:
        rows = conn.execute(f"SELECT {_COLUMNS} FROM proposals ORDER BY created_at, id").fetchall()
    else:
        wanted = list(states)
        marks = ",".join("?" for _ in wanted)
        rows = conn.execute(f"SELECT {_COLUMNS} FROM proposals WHERE state IN ({marks}) ORDER BY created_at, id",
                            wanted).fetchall()
    return [_row(r) for r in rows]


def twin(conn: sqlite3.Connection, body_digest: str, exclude_states: Iterable[str] = ("rejected",)) -> str | None:
    """The ID of a proposal with the same normalised body, ignoring those in `exclude_states`."""
    skip = list(exclude_states)
    marks = ",".join("?" for _ in skip) or "''"
    found = conn.execute(
        f"SELECT id FROM proposals WHERE body_digest = ? AND state NOT IN ({marks}) ORDER BY created_at LIMIT 1",
        [body_digest, *skip]).fetchone()
    return str(found[0]) if found else None


def find_rejection(conn: sqlite3.Connection, alias_sha256: str) -> RejectionRow | None:
    """The hash-only receipt a hashed alias points at, or None."""
    found = conn.execute("SELECT alias_sha256, receipt_id, receipt_path, created_at FROM rejections "
                         "WHERE alias_sha256 = ?", (alias_sha256,)).fetchone()
    return RejectionRow(*found) if found else None


def journal_committed(conn: sqlite3.Connection, txid: str) -> bool:
    """True when the database side of the install journal `txid` committed (its event exists)."""
    found = conn.execute("SELECT 1 FROM events WHERE json_extract(detail, '$.journal') = ? LIMIT 1",
                         (txid,)).fetchone()
    return found is not None


def execute(conn: sqlite3.Connection, change: DbChange, txid: str,
            before_commit: Callable[[], None] | None = None) -> None:
    """Apply `change` and its event (tagged with journal `txid`) in one transaction; raise Conflict on a stale guard."""
    with shared_db.transaction(conn):
        for proposal_id, state in change.expect:
            row = conn.execute("SELECT state FROM proposals WHERE id = ?", (proposal_id,)).fetchone()
            current = row[0] if row else None
            if current != state:
                raise Conflict(f"proposal {proposal_id} is {current or 'absent'}, expected {state or 'absent'}")
        for proposal_id in change.delete_ids:
            conn.execute("DELETE FROM proposals WHERE id = ?", (proposal_id,))
        if change.upsert is not None:
            conn.execute(f"INSERT OR REPLACE INTO proposals ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                         change.upsert.params())
        for rejection in change.rejections:
            conn.execute("INSERT OR REPLACE INTO rejections (alias_sha256, receipt_id, receipt_path, created_at) "
                         "VALUES (?, ?, ?, ?)", (rejection.alias_sha256, rejection.receipt_id,
                                                 rejection.receipt_path, rejection.created_at))
        detail = dict(change.event.detail) | {"journal": txid}
        shared_db.append_event(conn, change.event.action, list(change.event.ids), detail)
        if before_commit is not None:
            before_commit()
