"""SQL for shared.db's runtime memory: runtime_records, retention_facts and the events log.

Every write appends its audit event inside the same transaction (shared_db.append_event), so a
reader never sees a change without its event or an event without its change. Callers that
must read, decide and write atomically open `shared_db.transaction(conn)` themselves; the
functions here join it (transaction() nests).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from git_memzoi.index import shared_db
from git_memzoi.profile.timefmt import format_rfc3339
from git_memzoi.runtime import clock

STORES = ("local", "session")
EPISODIC_EXTENSION = "episodic_extension"


@dataclass(frozen=True)
class RuntimeRow:
    """One runtime_records row: a private local or session record and its full file text."""

    id: str
    store: str
    document: str
    status: str
    created_at: str
    updated_at: str
    worktree_key: str | None


@dataclass(frozen=True)
class NewRecord:
    """A runtime record to insert (its timestamps are the store's)."""

    record_id: str
    store: str  # local | session
    document: str
    status: str
    worktree_key: str | None


@dataclass(frozen=True)
class NewFact:
    """An authorised retention fact to record (its sequence number and timestamp are the store's)."""

    record_id: str
    fact: str
    until: str
    reason: str
    actor: str


@dataclass(frozen=True)
class RetentionFact:
    """One authorised retention fact (today only `episodic_extension`)."""

    seq: int
    record_id: str
    fact: str
    until: str
    reason: str
    actor: str
    created_at: str

    def as_dict(self) -> dict[str, str]:
        """The string mapping retention decisions and ExpiryDecision.facts carry."""
        return {
            "record_id": self.record_id,
            "fact": self.fact,
            "until": self.until,
            "reason": self.reason,
            "actor": self.actor,
            "created_at": self.created_at,
        }


@dataclass(frozen=True)
class Event:
    """One audit event: who did what, when, to which IDs."""

    seq: int
    at: str
    actor: str
    action: str
    ids: list[str]
    detail: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "at": self.at,
            "actor": self.actor,
            "action": self.action,
            "ids": self.ids,
            "detail": self.detail,
        }


_RECORD_COLUMNS = "id, store, document, status, created_at, updated_at, worktree_key"
_FACT_COLUMNS = "seq, record_id, fact, until, reason, actor, created_at"


def _stamp() -> str:
    return format_rfc3339(clock.now())


# --- runtime_records -------------------------------------------------------------------------------


def insert_record(
    conn: sqlite3.Connection, new: NewRecord, *, action: str, detail: dict[str, Any] | None = None
) -> RuntimeRow:
    """Insert a new runtime record and its event; raises sqlite3.IntegrityError on a duplicate ID."""
    if new.store not in STORES:
        raise ValueError(f"unknown runtime store {new.store!r}")
    stamp = _stamp()
    row = RuntimeRow(
        id=new.record_id,
        store=new.store,
        document=new.document,
        status=new.status,
        created_at=stamp,
        updated_at=stamp,
        worktree_key=new.worktree_key,
    )
    with shared_db.transaction(conn):
        conn.execute(
            f"INSERT INTO runtime_records ({_RECORD_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (row.id, row.store, row.document, row.status, row.created_at, row.updated_at, row.worktree_key),
        )
        shared_db.append_event(conn, action, [new.record_id], detail)
    return row


def update_record(
    conn: sqlite3.Connection,
    record_id: str,
    *,
    document: str,
    status: str,
    action: str,
    detail: dict[str, Any] | None = None,
    expected_updated_at: str | None = None,
) -> bool:
    """Replace a record's document and status and log it; False when it is gone or changed since read.

    `expected_updated_at` is a compare-and-swap guard for callers that read outside a transaction.
    """
    stamp = _stamp()
    sql = "UPDATE runtime_records SET document = ?, status = ?, updated_at = ? WHERE id = ?"
    params: tuple[Any, ...] = (document, status, stamp, record_id)
    if expected_updated_at is not None:
        sql += " AND updated_at = ?"
        params += (expected_updated_at,)
    with shared_db.transaction(conn):
        changed = conn.execute(sql, params).rowcount
        if changed:
            shared_db.append_event(conn, action, [record_id], detail)
    return bool(changed)


def delete_record(
    conn: sqlite3.Connection, record_id: str, *, action: str, detail: dict[str, Any] | None = None
) -> bool:
    """Delete a runtime record and its retention facts, logging the deletion; False when absent."""
    with shared_db.transaction(conn):
        gone = conn.execute("DELETE FROM runtime_records WHERE id = ?", (record_id,)).rowcount
        if gone:
            facts = conn.execute("DELETE FROM retention_facts WHERE record_id = ?", (record_id,)).rowcount
            shared_db.append_event(conn, action, [record_id], (detail or {}) | {"retention_facts_deleted": facts})
    return bool(gone)


def _row(values: tuple[Any, ...]) -> RuntimeRow:
    return RuntimeRow(*values)


def get_record(conn: sqlite3.Connection, record_id: str) -> RuntimeRow | None:
    """The runtime record with this ID, or None."""
    found = conn.execute(f"SELECT {_RECORD_COLUMNS} FROM runtime_records WHERE id = ?", (record_id,)).fetchone()
    return _row(found) if found else None


def iter_records(
    conn: sqlite3.Connection, *, store: str | None = None, status: str | None = None
) -> Iterator[RuntimeRow]:
    """Runtime records oldest first (by creation, then ID), optionally one store and/or one status."""
    clauses, params = [], []
    if store is not None:
        clauses.append("store = ?")
        params.append(store)
    if status is not None:
        clauses.append("status = ?")
        params.append(status)
    where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    cursor = conn.execute(f"SELECT {_RECORD_COLUMNS} FROM runtime_records{where} ORDER BY created_at, id", params)
    for values in cursor:
        yield _row(values)


# --- retention_facts -------------------------------------------------------------------------------


def add_fact(
    conn: sqlite3.Connection, new: NewFact, *, action: str, detail: dict[str, Any] | None = None
) -> RetentionFact:
    """Record an authorised retention fact and its event."""
    stamp = _stamp()
    with shared_db.transaction(conn):
        cursor = conn.execute(
            "INSERT INTO retention_facts (record_id, fact, until, reason, actor, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            (new.record_id, new.fact, new.until, new.reason, new.actor, stamp),
        )
        seq = int(cursor.lastrowid or 0)
        event = (detail or {}) | {"fact": new.fact, "until": new.until, "seq": seq}
        shared_db.append_event(conn, action, [new.record_id], event, who=new.actor)
    return RetentionFact(
        seq=seq,
        record_id=new.record_id,
        fact=new.fact,
        until=new.until,
        reason=new.reason,
        actor=new.actor,
        created_at=stamp,
    )


def facts_for(conn: sqlite3.Connection, record_id: str) -> list[RetentionFact]:
    """Every retention fact about one record, oldest first."""
    cursor = conn.execute(f"SELECT {_FACT_COLUMNS} FROM retention_facts WHERE record_id = ? ORDER BY seq", (record_id,))
    return [RetentionFact(*values) for values in cursor]


# --- events ----------------------------------------------------------------------------------------


def log_event(conn: sqlite3.Connection, action: str, ids: list[str], detail: dict[str, Any] | None = None) -> None:
    """Append an event on its own (for a write whose table another module owns, or a pure cross-reference)."""
    with shared_db.transaction(conn):
        shared_db.append_event(conn, action, ids, detail)


def iter_events(conn: sqlite3.Connection, *, since: int = 0, limit: int | None = None) -> Iterator[Event]:
    """Events with seq > `since`, oldest first, read row by row from the cursor (never all at once)."""
    sql = "SELECT seq, at, actor, action, ids, detail FROM events WHERE seq > ? ORDER BY seq"
    params: tuple[Any, ...] = (since,)
    if limit is not None:
        sql += " LIMIT ?"
        params += (limit,)
    cursor = conn.execute(sql, params)
    try:
        for seq, at, who, action, ids, detail in cursor:
            yield Event(seq, at, who, action, _json(ids, []), _json(detail, {}))
    finally:
        cursor.close()


def _json(text: str, default: Any) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return default
