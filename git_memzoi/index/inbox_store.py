"""SQL for the DB-local proposal inbox in shared.db: the proposals and rejections tables.

Lifecycle code describes a change as data (a DbChange) and `execute` carries it out in one
transaction together with its audit event. The event names the install journal, which is how
crash recovery learns whether the database side of an interrupted change committed.

`listing` is the inbox as people see it: the proposals, then the pending packet files under
`.memzoi/proposals/pending/` that no proposal stands for. `proposals list`, handoff and the
session-start hook all list it so.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterable
from contextlib import closing
from pathlib import Path
from typing import Any, NamedTuple

from git_memzoi.errors import FormatError, StateError
from git_memzoi.index import shared_db
from git_memzoi.layout import PENDING, SUFFIX, pending_path

#: States of a proposal still to be decided; a pending packet file alone is open too (`proposed`).
OPEN_STATES = ("pending", "validated", "approved")
STATES = ("pending", "validated", "approved", "applied", "rejected")

_COLUMNS = (
    "id, state, packet, body_digest, file_id, created_at, updated_at, reviewer, reason, "
    "resolved_at, affected_ids, target_blob"
)


class ProposalRow(NamedTuple):
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
        return (
            self.id,
            self.state,
            self.packet,
            self.body_digest,
            self.file_id,
            self.created_at,
            self.updated_at,
            self.reviewer,
            self.reason,
            self.resolved_at,
            affected,
            self.target_blob,
        )


class RejectionRow(NamedTuple):
    """A hashed alias (proposal ID or file ID) pointing at a hash-only rejection receipt."""

    alias_sha256: str
    receipt_id: str
    receipt_path: str
    created_at: str


class EventSpec(NamedTuple):
    """The audit event a change appends: action, IDs involved, detail."""

    action: str
    ids: tuple[str, ...]
    detail: dict[str, Any]


class DbChange(NamedTuple):
    """Everything one lifecycle step changes in shared.db, applied all at once.

    `expect` is a compare-and-swap guard: (proposal ID, state it must have, or None for absent).
    """

    event: EventSpec
    expect: tuple[tuple[str, str | None], ...] = ()
    delete_ids: tuple[str, ...] = ()
    upsert: ProposalRow | None = None
    rejections: tuple[RejectionRow, ...] = ()
    more: tuple[ProposalRow, ...] = ()  # further rows a batch step upserts with `upsert`


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


def names(conn: sqlite3.Connection) -> list[str]:
    """Every inbox proposal ID and packet file ID, in any state (what a shortened ID may stand for)."""
    rows = conn.execute("SELECT id, file_id FROM proposals").fetchall()
    return [name for row in rows for name in row if name]


def list_rows(conn: sqlite3.Connection, states: Iterable[str] | None = None) -> list[ProposalRow]:
    """Inbox rows, oldest first, optionally only those in `states`."""
    if states is None:
        rows = conn.execute(f"SELECT {_COLUMNS} FROM proposals ORDER BY created_at, id").fetchall()
    else:
        wanted = list(states)
        marks = ",".join("?" for _ in wanted)
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM proposals WHERE state IN ({marks}) ORDER BY created_at, id", wanted
        ).fetchall()
    return [_row(r) for r in rows]


class Listed(NamedTuple):
    """One entry of the inbox listing: a proposal, or a pending packet file that no proposal stands for."""

    id: str
    state: str  # the proposal's state, or `proposed` for a packet file alone
    packet: bytes  # the proposal's packet text, or the file's bytes (empty when unreadable)
    data: dict[str, Any] | None  # the packet's frontmatter, unvalidated (None when it does not parse)
    file: str | None  # its pending packet file in the work tree, when there is one
    row: ProposalRow | None  # the proposal (None for a packet file alone)


def pending_files(workdir: Path) -> list[str]:
    """The pending packet files of a work tree (regular files, no symlinks), by name."""
    folder = workdir / PENDING
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    return [
        f"{PENDING}/{name}"
        for name in names
        if name.endswith(SUFFIX) and (folder / name).is_file() and not (folder / name).is_symlink()
    ]


def listing(db_path: Path, workdir: Path | None, *, open_only: bool = False) -> list[Listed]:
    """The inbox: proposals oldest first (with `open_only`, those in OPEN_STATES), then the pending
    packet files of `workdir` that no proposal stands for (none has the file's name or `id`).

    shared.db is only read, and may not exist yet (then the files alone are listed).
    """

    def parse(raw: bytes, where: str) -> dict[str, Any] | None:
        from git_memzoi.profile import frontmatter  # PyYAML: only when there is a packet to read

        try:
            return frontmatter.parse(raw, where).data
        except FormatError:
            return None

    out: list[Listed] = []
    known: set[str] = set()
    if db_path.exists():
        with closing(shared_db.connect(db_path, readonly=True)) as conn:
            try:
                rows = list_rows(conn, OPEN_STATES if open_only else None)
                known.update(
                    name for pair in conn.execute("SELECT id, file_id FROM proposals") for name in pair if name
                )
            except sqlite3.DatabaseError as exc:
                raise StateError(f"{db_path}: shared.db is unreadable: {exc}") from None
        for row in rows:
            file = pending_path(row.file_id) if row.file_id else None
            if file is not None and (workdir is None or not (workdir / file).is_file()):
                file = None
            raw = row.packet.encode("utf-8")
            out.append(Listed(row.id, row.state, raw, parse(raw, f"inbox:{row.id}"), file, row))
    if workdir is None:
        return out
    for rel in pending_files(workdir):
        try:
            raw = (workdir / rel).read_bytes()
        except OSError:
            raw = b""
        data = parse(raw, rel)
        stem = rel.rsplit("/", 1)[1][: -len(SUFFIX)]
        given = data.get("id") if data is not None else None
        name = given if isinstance(given, str) else stem
        if stem in known or name in known:
            continue
        out.append(Listed(name, "proposed", raw, data, rel, None))
    return out


def twin(conn: sqlite3.Connection, body_digest: str, exclude_states: Iterable[str] = ("rejected",)) -> str | None:
    """The ID of a proposal with the same normalised body, ignoring those in `exclude_states`."""
    skip = list(exclude_states)
    marks = ",".join("?" for _ in skip) or "''"
    found = conn.execute(
        f"SELECT id FROM proposals WHERE body_digest = ? AND state NOT IN ({marks}) ORDER BY created_at LIMIT 1",
        [body_digest, *skip],
    ).fetchone()
    return str(found[0]) if found else None


def find_rejection(conn: sqlite3.Connection, alias_sha256: str) -> RejectionRow | None:
    """The hash-only receipt a hashed alias points at, or None."""
    found = conn.execute(
        "SELECT alias_sha256, receipt_id, receipt_path, created_at FROM rejections WHERE alias_sha256 = ?",
        (alias_sha256,),
    ).fetchone()
    return RejectionRow(*found) if found else None


def journal_committed(conn: sqlite3.Connection, txid: str) -> bool:
    """True when the database side of the install journal `txid` committed (its event exists).

    A transaction an interrupted `execute` left open is rolled back first: it never committed.
    """
    if conn.in_transaction:
        conn.execute("ROLLBACK")
    found = conn.execute("SELECT 1 FROM events WHERE json_extract(detail, '$.journal') = ? LIMIT 1", (txid,)).fetchone()
    return found is not None


def execute(
    conn: sqlite3.Connection, change: DbChange, txid: str, before_commit: Callable[[], None] | None = None
) -> None:
    """Apply `change` and its event (tagged with journal `txid`) in one transaction; raise Conflict on a stale guard."""
    with shared_db.transaction(conn):
        for proposal_id, state in change.expect:
            row = conn.execute("SELECT state FROM proposals WHERE id = ?", (proposal_id,)).fetchone()
            current = row[0] if row else None
            if current != state:
                raise Conflict(f"proposal {proposal_id} is {current or 'absent'}, expected {state or 'absent'}")
        for proposal_id in change.delete_ids:
            conn.execute("DELETE FROM proposals WHERE id = ?", (proposal_id,))
        for upsert in (change.upsert, *change.more) if change.upsert is not None else ():
            conn.execute(
                f"INSERT OR REPLACE INTO proposals ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                upsert.params(),
            )
        for rejection in change.rejections:
            conn.execute(
                "INSERT OR REPLACE INTO rejections (alias_sha256, receipt_id, receipt_path, created_at) "
                "VALUES (?, ?, ?, ?)",
                (rejection.alias_sha256, rejection.receipt_id, rejection.receipt_path, rejection.created_at),
            )
        detail = dict(change.event.detail) | {"journal": txid}
        shared_db.append_event(conn, change.event.action, list(change.event.ids), detail)
        if before_commit is not None:
            before_commit()
