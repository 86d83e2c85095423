"""Records as the index holds them: current ones (for exports and packs), one by ID, the MCP resources."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from datetime import datetime
from typing import TYPE_CHECKING

from git_memzoi import shortids
from git_memzoi.errors import NotFound
from git_memzoi.index import queries
from git_memzoi.index.index_db import RecordRow, instant
from git_memzoi.index.queries import Filter
from git_memzoi.index.rebuild import open_index
from git_memzoi.profile import retention as retention_rules
from git_memzoi.profile.retention import Boundary
from git_memzoi.profile.timefmt import parse_rfc3339
from git_memzoi.recall.models import Citation, ExpiryDecision, IndexedRecord
from git_memzoi.recall.retention import judge
from git_memzoi.runtime import clock

if TYPE_CHECKING:
    from git_memzoi.runtime.workspace import Workspace


def index_connection(ws: Workspace) -> closing[sqlite3.Connection]:
    """This worktree's index.db, brought up to date by `open_index`, for a `with` block that closes it.

    Every reader opens the index through this one door: `with index_connection(ws) as conn:`.
    """
    return closing(open_index(ws))


def now() -> tuple[datetime, float]:
    """The clock, and the same instant as index.db compares it (Unix seconds)."""
    moment = clock.now()
    return moment, instant(moment)


def citation(row: RecordRow) -> Citation:
    """Evidence for a row: source/source_ref exactly as stored, plus proposal lineage."""
    return Citation(
        record_id=row.record_id,
        source=row.source,
        source_ref=row.source_ref,
        proposal_id=row.proposal_id,
        path=row.path,
    )


def decision(row: RecordRow, moment: datetime) -> ExpiryDecision:
    """The retention decision the row's stored boundary gives at `moment`."""
    b = Boundary(
        rule=row.rule,
        at=parse_rfc3339(row.boundary_at) if row.boundary_at else None,
        kind=row.boundary_kind,
        basis=row.basis,
        active=row.status == "active",
        status=row.status,
        facts=tuple(json.loads(row.facts)),
    )
    return judge(row.record_id, row.lane, b, moment)


def indexed(row: RecordRow, moment: datetime) -> IndexedRecord:
    """The IndexedRecord of a row."""
    return IndexedRecord(
        record_id=row.record_id,
        concept_id=row.concept_id,
        store=row.store,
        path=row.path,
        type=row.type,
        lane=row.lane,
        status=row.status,
        visibility=row.visibility,
        title=row.title,
        description=row.description,
        body=row.body,
        applies_to=json.loads(row.applies_json),
        tags=json.loads(row.tags_json),
        citation=citation(row),
        expiry=decision(row, moment),
        document=row.document,
    )


def current_records(ws: Workspace, *, include_private: bool = False) -> list[IndexedRecord]:
    """Current records (active, before their retention boundary), repository first, then by path.

    Without `include_private`, only repository records whose visibility is not private: what
    may leave this machine. With it, private records and runtime (local, session) memory too.
    """
    moment, at = now()
    with index_connection(ws) as conn:
        rows = queries.records(conn, Filter(now=at, shared=not include_private))
    return [indexed(row, moment) for row in rows]


def expand_id(conn: sqlite3.Connection, name: str) -> str:
    """The whole record ID a unique prefix stands for; `name` itself when it is an ID or begins none."""
    if queries.records(conn, Filter(shared=False), record_id=name):
        return name
    return shortids.expand(name, queries.record_ids_with_prefix(conn, name), "record")


def expand_record_id(ws: Workspace, name: str) -> str:
    """`expand_id` over this worktree's index."""
    with index_connection(ws) as conn:
        return expand_id(conn, name)


def row_by_id(conn: sqlite3.Connection, record_id: str) -> RecordRow:
    """The row of one record (a repository record before runtime memory of the same ID); NotFound otherwise."""
    rows = queries.records(conn, Filter(shared=False), record_id=expand_id(conn, record_id))
    if not rows:
        raise NotFound(
            f"no record {record_id!r} in this worktree's index",
            hint="search for it with `git memzoi search --all TEXT`",
        )
    return rows[0]


def get_record(ws: Workspace, record_id: str) -> IndexedRecord:
    """One record by ID (a repository record before runtime memory of the same ID); NotFound otherwise."""
    moment, _ = now()
    with index_connection(ws) as conn:
        row = row_by_id(conn, record_id)
    return indexed(row, moment)


def shareable_records(ws: Workspace) -> list[tuple[str, str, str, str | None]]:
    """(concept ID, record ID, title, description) of each current, non-private repository record, by path."""
    with index_connection(ws) as conn:
        return queries.shareable(conn, now()[1])


def shareable_document(ws: Workspace, concept_id: str) -> str:
    """The file text of the current, non-private repository record at `concept_id`; NotFound otherwise."""
    with index_connection(ws) as conn:
        text = queries.shareable_document(conn, now()[1], concept_id)
    if text is None:
        raise NotFound(
            f"no current shareable record at concept ID {concept_id!r}",
            hint="list them with resources/list; private and query-only records are not resources",
        )
    return text


def explain(ws: Workspace, record_id: str) -> ExpiryDecision:
    """Explain the retention decision for one record of this worktree's index (raises NotFound).

    The rule is applied afresh to the record's retention fields as the index holds them
    (validated when indexed), its current facts and the configured lease: no file is parsed.
    """

    with index_connection(ws) as conn:
        row = row_by_id(conn, record_id)
        facts = queries.facts(conn, row.record_id)
    b = retention_rules.boundary(
        row.record_id, row.lane, row.status, json.loads(row.retention), facts, ws.config.retention.session_lease_hours
    )
    return judge(row.record_id, row.lane, b, clock.now())
