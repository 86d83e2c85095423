"""Records as the index holds them: current ones (for exports and packs), all of them, one by ID."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import NotFound
from git_memzoi.index.rebuild import current_filter, instant, open_index
from git_memzoi.index.retention_rules import Boundary
from git_memzoi.profile.timefmt import parse_rfc3339
from git_memzoi.recall.models import Citation, ExpiryDecision, IndexedRecord
from git_memzoi.runtime import clock

if TYPE_CHECKING:
    from git_memzoi.runtime.workspace import Workspace

#: Columns every reader selects, in this order (`row[i]` below).
COLUMNS = ("rowid", "path", "store", "record_id", "concept_id", "type", "lane", "status", "visibility",
           "title", "description", "body", "tags_json", "applies_json", "source", "source_ref", "proposal_id",
           "boundary", "boundary_at", "boundary_kind", "rule", "basis", "facts", "document", "confidence",
           "timestamp")
C = {name: i for i, name in enumerate(COLUMNS)}
SELECT = ", ".join(f"r.{c}" for c in COLUMNS)
STORE_ORDER = "CASE r.store WHEN 'repo' THEN 0 WHEN 'local' THEN 1 ELSE 2 END"
#: Runtime memory (local notes and session checkpoints) and private records stay out of
#: ordinary recall unless the caller asks for local memory.
SHARED_ONLY = "(r.store = 'repo' AND r.visibility != 'private')"


def now_params() -> dict[str, Any]:
    """The clock as the query parameter `:now` (and the datetime it came from)."""
    moment = clock.now()
    return {"now": instant(moment), "_moment": moment}


def citation(row: Sequence[Any]) -> Citation:
    """Evidence for a row: source/source_ref exactly as stored, plus proposal lineage."""
    return Citation(record_id=row[C["record_id"]], source=row[C["source"]], source_ref=row[C["source_ref"]],
                    proposal_id=row[C["proposal_id"]], path=row[C["path"]])


def is_current(row: Sequence[Any], now: float) -> bool:
    """Active and strictly before the stored retention boundary."""
    boundary = row[C["boundary"]]
    return bool(row[C["status"]] == "active" and (boundary is None or boundary > now))


def decision(row: Sequence[Any], moment: datetime) -> ExpiryDecision:
    """The retention decision the row's stored boundary gives at `moment`."""
    from git_memzoi.recall.retention import judge

    at = row[C["boundary_at"]]
    b = Boundary(rule=row[C["rule"]], at=parse_rfc3339(at) if at else None, kind=row[C["boundary_kind"]],
                 basis=row[C["basis"]], active=row[C["status"]] == "active", status=row[C["status"]],
                 facts=tuple(json.loads(row[C["facts"]])))
    return judge(row[C["record_id"]], row[C["lane"]], b, moment)


def indexed(row: Sequence[Any], moment: datetime) -> IndexedRecord:
    """An IndexedRecord from a row selected with SELECT."""
    return IndexedRecord(
        record_id=row[C["record_id"]], concept_id=row[C["concept_id"]], store=row[C["store"]], path=row[C["path"]],
        type=row[C["type"]], lane=row[C["lane"]], status=row[C["status"]], visibility=row[C["visibility"]],
        title=row[C["title"]], description=row[C["description"]], body=row[C["body"]],
        applies_to=json.loads(row[C["applies_json"]]), tags=json.loads(row[C["tags_json"]]),
        citation=citation(row), expiry=decision(row, moment), document=row[C["document"]],
    )


def _query(conn: sqlite3.Connection, where: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    sql = f"SELECT {SELECT} FROM records r WHERE {where} ORDER BY {STORE_ORDER}, r.path"
    return conn.execute(sql, {k: v for k, v in params.items() if not k.startswith("_")}).fetchall()


def current_records(ws: "Workspace", *, include_private: bool = False) -> list[IndexedRecord]:
    """Current records (active, before their retention boundary), repository first, then by path.

    Without `include_private`, only repository records whose visibility is not private: what
    may leave this machine. With it, private records and runtime (local, session) memory too.
    """
    params = now_params()
    where = current_filter("r") + ("" if include_private else f" AND {SHARED_ONLY}")
    conn = open_index(ws)
    try:
        rows = _query(conn, where, params)
    finally:
        conn.close()
    return [indexed(row, params["_moment"]) for row in rows]


def all_records(ws: "Workspace") -> list[IndexedRecord]:
    """Every indexed record, current or query-only, every store, repository first, then by path."""
    params = now_params()
    conn = open_index(ws)
    try:
        rows = _query(conn, "1", params)
    finally:
        conn.close()
    return [indexed(row, params["_moment"]) for row in rows]


def get_record(ws: "Workspace", record_id: str) -> IndexedRecord:
    """One record by ID (a repository record before runtime memory of the same ID); NotFound otherwise."""
    params = now_params() | {"id": record_id}
    conn = open_index(ws)
    try:
        rows = _query(conn, "r.record_id = :id", params)
    finally:
        conn.close()
    if not rows:
        raise NotFound(f"no record {record_id!r} in this worktree's index",
                       hint="search for it with `git memzoi search --all TEXT`")
    return indexed(rows[0], params["_moment"])


def facts(ws: "Workspace", record_id: str) -> list[dict[str, str]]:
    """The authorised retention facts about one record, as mirrored from shared.db."""
    conn = open_index(ws)
    try:
        keys = ("record_id", "fact", "until", "reason", "actor", "created_at")
        rows = conn.execute(f"SELECT {', '.join(keys)} FROM facts WHERE record_id = ? ORDER BY seq",
                            (record_id,)).fetchall()
    finally:
        conn.close()
    return [dict(zip(keys, row)) for row in rows]


#: What a client may read as a resource: current repository records that are not private.
_SHAREABLE = "r.store = 'repo' AND r.visibility != 'private' AND r.concept_id IS NOT NULL"


def shareable_records(ws: "Workspace") -> list[tuple[str, str, str, str | None]]:
    """(concept ID, record ID, title, description) of each current, non-private repository record, by path."""
    params = now_params()
    conn = open_index(ws)
    try:
        rows = conn.execute(f"SELECT r.concept_id, r.record_id, r.title, r.description FROM records r "
                            f"WHERE {current_filter('r')} AND {_SHAREABLE} ORDER BY r.path",
                            {"now": params["now"]}).fetchall()
    finally:
        conn.close()
    return [(row[0], row[1], row[2], row[3]) for row in rows]


def shareable_document(ws: "Workspace", concept_id: str) -> str:
    """The file text of the current, non-private repository record at `concept_id`; NotFound otherwise."""
    params = now_params()
    conn = open_index(ws)
    try:
        row = conn.execute(f"SELECT r.document FROM records r WHERE r.concept_id = :concept AND "
                           f"{current_filter('r')} AND {_SHAREABLE}",
                           {"now": params["now"], "concept": concept_id}).fetchone()
    finally:
        conn.close()
    if row is None:
        raise NotFound(f"no current shareable record at concept ID {concept_id!r}",
                       hint="list them with resources/list; private and query-only records are not resources")
    text: str = row[0]
    return text
