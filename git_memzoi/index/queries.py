"""The read path's SQL over index.db: records by filter, by rank, by path and by ID; facts; resources.

Every reader of index.db asks through these functions and gets RecordRow values back, read by
field name. A `Filter` says which rows count (current ones, what may leave this machine, a type
or lane). Stdlib only: every read command imports this module.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from git_memzoi.index import activation, fts
from git_memzoi.index.index_db import ROW_COLUMNS, RecordRow, current_filter

#: bm25 column weights: title, description, body, tags.
WEIGHTS = (10.0, 5.0, 1.0, 4.0)
_BM25 = f"bm25(records_fts, {', '.join(str(w) for w in WEIGHTS)})"
_ROW = ", ".join(f"r.{c}" for c in ROW_COLUMNS)
_STORE_ORDER = "CASE r.store WHEN 'repo' THEN 0 WHEN 'local' THEN 1 ELSE 2 END"
_CURRENT = current_filter("r")
#: What may leave this machine: repository records that are not private.
_SHARED = "r.store = 'repo' AND r.visibility != 'private'"
_MAKE = RecordRow._make


class Filter:
    """Which records a query keeps.

    `now` (Unix seconds): only rows current then, active and strictly before their retention
    boundary (None: current or not). `shared`: only repository records that are not private,
    what may leave this machine (runtime memory, local notes and session checkpoints, never is).
    `stores`, `types`, `lane`: only those values.
    """

    __slots__ = ("lane", "now", "shared", "stores", "types")

    def __init__(
        self,
        *,
        now: float | None = None,
        shared: bool = True,
        stores: Sequence[str] = (),
        types: Sequence[str] = (),
        lane: str | None = None,
    ) -> None:
        self.now = now
        self.shared = shared
        self.stores = tuple(stores)
        self.types = tuple(types)
        self.lane = lane

    def where(self, params: dict[str, Any]) -> str:
        """The WHERE clause over alias `r`; binds what it needs in `params`."""
        clauses = []
        if self.now is not None:
            clauses.append(_CURRENT)
            params["now"] = self.now
        if self.shared:
            clauses.append(_SHARED)
        for column, values in (("store", self.stores), ("type", self.types)):
            if values:
                clauses.append(f"r.{column} IN ({_bind(params, column, values)})")
        if self.lane is not None:
            clauses.append("r.lane = :lane")
            params["lane"] = self.lane
        return " AND ".join(clauses) or "1"


def _bind(params: dict[str, Any], prefix: str, values: Iterable[str]) -> str:
    """Bind `values` as :<prefix>0, :<prefix>1, … and return the placeholders."""
    names = []
    for index, value in enumerate(values):
        params[f"{prefix}{index}"] = value
        names.append(f":{prefix}{index}")
    return ", ".join(names)


def records(conn: sqlite3.Connection, flt: Filter, *, record_id: str | None = None) -> list[RecordRow]:
    """The rows `flt` keeps (only those with this ID, when given): repository first, then by path."""
    params: dict[str, Any] = {}
    where = flt.where(params)
    if record_id is not None:
        where += " AND r.record_id = :id"
        params["id"] = record_id
    sql = f"SELECT {_ROW} FROM records r WHERE {where} ORDER BY {_STORE_ORDER}, r.path"
    return list(map(_MAKE, conn.execute(sql, params)))


def in_path_order(conn: sqlite3.Connection, flt: Filter, limit: int, bases: Sequence[str] = ()) -> list[RecordRow]:
    """The first `limit` rows `flt` keeps by path; with `bases`, only records with an entry at one of them."""
    params: dict[str, Any] = {"limit": limit}
    where = flt.where(params)
    if bases:
        where += f" AND r.rowid IN (SELECT record FROM applies WHERE base IN ({_bind(params, 'p', bases)}))"
    sql = f"SELECT {_ROW} FROM records r WHERE {where} ORDER BY r.path LIMIT :limit"
    return list(map(_MAKE, conn.execute(sql, params)))


def ranked(
    conn: sqlite3.Connection, query_terms: list[str], flt: Filter, limit: int, bases: Sequence[str] = ()
) -> list[tuple[RecordRow, float]]:
    """(row, bm25 score) best first: records matching every term, then any term; never an FTS error.

    `query_terms` are quoted FTS5 terms (`fts.terms`). With `bases`, ranking starts from the
    records with an `applies` entry at one of them.
    """
    out: list[tuple[RecordRow, float]] = []
    seen: set[int] = set()
    params: dict[str, Any] = {}
    where = flt.where(params)
    queries = [fts.all_of(query_terms)]
    if len(query_terms) > 1:
        queries.append(fts.any_of(_informative(conn, query_terms)))
    for match in queries:
        if len(out) >= limit:
            break
        try:
            found = _ranked_then_filtered(conn, match, where, params, limit + len(seen), bases)
        except sqlite3.OperationalError:
            continue  # cannot happen with quoted terms; never let query text break recall
        for row, score in found:
            if row.rowid in seen:
                continue
            seen.add(row.rowid)
            out.append((row, score))
            if len(out) >= limit:
                break
    return out


#: A term left out of an any-term query must be held by more records than this (and by more than half).
COMMON_ROWS = 500


def record_count(conn: sqlite3.Connection) -> int:
    """How many records the full-text index holds (current or not)."""
    return int(conn.execute("SELECT count(*) FROM records_fts_docsize").fetchone()[0])


def holding(conn: sqlite3.Connection, term: str) -> int:
    """How many records hold one quoted FTS5 term (its posting list is read, nothing is scored)."""
    try:
        return int(conn.execute("SELECT count(*) FROM records_fts WHERE records_fts MATCH ?", (term,)).fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def _informative(conn: sqlite3.Connection, query_terms: list[str]) -> list[str]:
    """The terms worth an any-term query: all of them, less those held by more than half the records
    and by more than COMMON_ROWS; all of them when that leaves none that any record holds.

    bm25 gives a term that more than half the records hold no weight (FTS5 floors its IDF near
    zero): it ranks nothing, and its rows join the results only as filler after every scored one.
    In a large memory it still has each of its thousands of rows scored, most of an any-term
    query's cost for a prompt holding a word as common as "tests"; counting a term's rows reads
    its posting list only (no score), a fraction of that. In a small memory its rows cost nothing
    and may still be the filler a pack has room for: it stays.
    """
    total = conn.execute("SELECT count(*) FROM records_fts_docsize").fetchone()[0]
    if total <= COMMON_ROWS:
        return query_terms
    kept, useful = [], False
    for term in query_terms:
        held = conn.execute("SELECT count(*) FROM records_fts WHERE records_fts MATCH ?", (term,)).fetchone()[0]
        if held <= COMMON_ROWS or held * 2 <= total:
            kept.append(term)
            useful = useful or held > 0
    return kept if useful else query_terms


def _ranked_then_filtered(
    conn: sqlite3.Connection, match: str, where: str, bound: dict[str, Any], limit: int, bases: Sequence[str]
) -> list[tuple[RecordRow, float]]:
    """Rank FTS matches (within the records with an entry at `bases`), then filter the best few.

    Only rowids and scores are ranked; the filters read the small leading columns of the best
    candidates, and whole rows are read for the hits alone. Equal scores are ordered by record
    ID, then path (never by rowid, which depends on the order rows were written): a group of
    equal scores that the LIMIT may have cut is left out until a larger fetch holds it whole.
    """
    params: dict[str, Any] = {"match": match}
    if not bases:
        top_sql = (
            f"SELECT rowid, {_BM25} AS rank FROM records_fts WHERE records_fts MATCH :match ORDER BY rank LIMIT :want"
        )
    else:
        top_sql = (
            f"SELECT a.record, {_BM25} AS rank FROM applies a JOIN records_fts ON records_fts.rowid = a.record "
            f"WHERE a.base IN ({_bind(params, 'p', bases)}) AND records_fts MATCH :match "
            "ORDER BY rank LIMIT :want"
        )
    want = limit * 3 + 10
    while True:
        top = conn.execute(top_sql, params | {"want": want}).fetchall()
        whole = len(top) < want
        if not whole:
            cut = top[-1][1]
            top = [(rowid, rank) for rowid, rank in top if rank != cut]
        ranked_ids: dict[int, float] = {}
        for rowid, rank in top:  # a record may hold two entries at the bases
            ranked_ids.setdefault(rowid, -float(rank))
        marks = ", ".join(str(int(rowid)) for rowid in ranked_ids)
        allowed = sorted(
            (-ranked_ids[rowid], record_id, path, rowid)
            for rowid, record_id, path in conn.execute(
                f"SELECT r.rowid, r.record_id, r.path FROM records r WHERE r.rowid IN ({marks}) AND {where}", bound
            )
        )
        best = [(rowid, -negated) for negated, _, _, rowid in allowed[:limit]]
        if len(best) >= limit or whole:
            if not best:
                return []
            marks = ", ".join(str(int(rowid)) for rowid, _ in best)
            rows = {
                row.rowid: row
                for row in map(_MAKE, conn.execute(f"SELECT {_ROW} FROM records r WHERE r.rowid IN ({marks})"))
            }
            return [(rows[rowid], score) for rowid, score in best]
        want *= 4


def matching(conn: sqlite3.Connection, term: str, flt: Filter) -> list[RecordRow]:
    """The rows `flt` keeps whose text matches one quoted FTS5 term, in no particular order."""
    params: dict[str, Any] = {"match": term}
    sql = (
        f"SELECT {_ROW} FROM records_fts JOIN records r ON r.rowid = records_fts.rowid "
        f"WHERE records_fts MATCH :match AND {flt.where(params)}"
    )
    return list(map(_MAKE, conn.execute(sql, params)))


def holding_terms(
    conn: sqlite3.Connection, terms: Sequence[str], needed: int, flt: Filter
) -> list[tuple[RecordRow, list[int]]]:
    """(row, which of `terms` it holds, by position) for the rows `flt` keeps that hold at least
    `needed` of the quoted FTS5 terms: counted in SQLite, so a common term's thousands of rowids
    never reach Python."""
    params: dict[str, Any] = {"needed": needed}
    hits = []
    for index, term in enumerate(terms):
        params[f"t{index}"] = term
        hits.append(f"SELECT rowid AS id, {index} AS term FROM records_fts WHERE records_fts MATCH :t{index}")
    # counted before the join: a row is kept or not as a whole, so the filter may come after
    sql = (
        f"SELECT {_ROW}, held.terms FROM (SELECT id, group_concat(term) AS terms FROM ({' UNION ALL '.join(hits)}) "
        f"GROUP BY id HAVING count(*) >= :needed) AS held JOIN records r ON r.rowid = held.id WHERE {flt.where(params)}"
    )
    return [
        (_MAKE(values[:-1]), sorted(int(term) for term in values[-1].split(",")))
        for values in conn.execute(sql, params)
    ]


def by_rowid(conn: sqlite3.Connection, rowids: Iterable[int]) -> list[RecordRow]:
    """The rows with these rowids, in no particular order."""
    marks = ", ".join(str(int(rowid)) for rowid in rowids)
    if not marks:
        return []
    return list(map(_MAKE, conn.execute(f"SELECT {_ROW} FROM records r WHERE r.rowid IN ({marks})")))


def manual_rules(conn: sqlite3.Connection) -> set[int]:
    """The rowids of imported rules that reach the agent only on request (index.activation's `manual`)."""
    return {rowid for (rowid,) in conn.execute("SELECT record FROM activation WHERE mode = ?", (activation.MANUAL,))}


def covering(conn: sqlite3.Connection, bases: Sequence[str], flt: Filter) -> list[tuple[RecordRow, str, str]]:
    """(row, entry, base) for each `applies_to` entry whose base is one of `bases`, of the rows `flt` keeps.

    `bases[0]` is the path itself (`recall.paths.ancestors`). An imported rule whose activation narrows it
    (index.activation) is not found by its `applies_to`: a glob-activated one is found when the path
    matches one of its original globs (entry: that glob, base: ''), the others never by a path."""
    params: dict[str, Any] = {}
    sql = (
        f"SELECT {_ROW}, a.entry, a.base FROM applies a JOIN records r ON r.rowid = a.record "
        f"WHERE a.base IN ({_bind(params, 'a', bases)}) AND {flt.where(params)} "
        "AND NOT EXISTS (SELECT 1 FROM activation x WHERE x.record = a.record)"
    )
    found = [(_MAKE(values[:-2]), values[-2], values[-1]) for values in conn.execute(sql, params)]
    return found + (by_glob(conn, bases[0], flt) if bases else [])


def by_glob(conn: sqlite3.Connection, path: str, flt: Filter) -> list[tuple[RecordRow, str, str]]:
    """(row, glob, '') for each glob-activated rule `flt` keeps whose original globs match `path`.

    Most memories hold no such rule: the small activation table says so first, because the query below,
    given a filter on types, walks every current record of those types to find the few."""
    params: dict[str, Any] = {"mode": activation.GLOB}
    if conn.execute("SELECT 1 FROM activation WHERE mode = :mode LIMIT 1", params).fetchone() is None:
        return []
    sql = (
        f"SELECT {_ROW} FROM activation x JOIN records r ON r.rowid = x.record "
        f"WHERE x.mode = :mode AND {flt.where(params)}"
    )
    out: list[tuple[RecordRow, str, str]] = []
    for values in conn.execute(sql, params):
        row = _MAKE(values)
        glob = activation.matches(row.source_ref, path)
        if glob is not None:
            out.append((row, glob, ""))
    return out


def inside(conn: sqlite3.Connection, folder: str, flt: Filter) -> list[tuple[RecordRow, str]]:
    """(row, entry) for each `applies_to` entry strictly inside `folder`, of the rows `flt` keeps."""
    params: dict[str, Any] = {"lo": folder + "/", "hi": folder + "0"}  # "0" sorts right after "/"
    sql = (
        f"SELECT {_ROW}, a.entry FROM applies a JOIN records r ON r.rowid = a.record "
        f"WHERE a.base > :lo AND a.base < :hi AND {flt.where(params)} "
        "AND NOT EXISTS (SELECT 1 FROM activation x WHERE x.record = a.record)"
    )
    return [(_MAKE(values[:-1]), values[-1]) for values in conn.execute(sql, params)]


def standing(conn: sqlite3.Connection, flt: Filter, limit: int = -1) -> list[tuple[int, str, str, str, str | None]]:
    """(rowid, record ID, type, title, source_ref) of the first `limit` standing rules `flt` keeps (-1: all), ranked.

    The `standing` table (kept by index.db's triggers) holds the rows whose type, scope and activation make
    them standing rules, with their rank (risks and warnings first, then by where they came from: the root
    instruction files, records not imported, nested and tool files, ADRs, each in source order; then higher
    confidence, then newer, then by ID) and the columns `flt` reads, so no record row is read. Whether a row is
    `flt`'s, decided now: a rule whose retention boundary passes drops out at that moment with no
    change to the index.
    """
    params: dict[str, Any] = {"limit": limit}
    sql = (
        f"SELECT r.record, r.record_id, r.type, r.title, r.source_ref FROM standing r WHERE {flt.where(params)} "
        "ORDER BY r.first, r.origin, r.source, r.line, r.confidence DESC, r.timestamp DESC, r.record_id, r.record "
        "LIMIT :limit"
    )
    return conn.execute(sql, params).fetchall()


_FACT_KEYS = ("record_id", "fact", "until", "reason", "actor", "created_at")


def facts(conn: sqlite3.Connection, record_id: str) -> list[dict[str, str]]:
    """The authorised retention facts about one record, as mirrored from shared.db, oldest first."""
    rows = conn.execute(f"SELECT {', '.join(_FACT_KEYS)} FROM facts WHERE record_id = ? ORDER BY seq", (record_id,))
    return [dict(zip(_FACT_KEYS, row, strict=True)) for row in rows]


#: A resource: a current, non-private repository record (with a concept ID, as every repository record).
_SHAREABLE = f"{_CURRENT} AND {_SHARED} AND r.concept_id IS NOT NULL"


def shareable(conn: sqlite3.Connection, now: float) -> list[tuple[str, str, str, str | None]]:
    """(concept ID, record ID, title, description) of each current, non-private repository record, by path."""
    rows = conn.execute(
        f"SELECT r.concept_id, r.record_id, r.title, r.description FROM records r WHERE {_SHAREABLE} ORDER BY r.path",
        {"now": now},
    )
    return [(row[0], row[1], row[2], row[3]) for row in rows]


def shareable_document(conn: sqlite3.Connection, now: float, concept_id: str) -> str | None:
    """The file text of the current, non-private repository record at `concept_id`, or None."""
    row = conn.execute(
        f"SELECT r.document FROM records r WHERE r.concept_id = :concept AND {_SHAREABLE}",
        {"now": now, "concept": concept_id},
    ).fetchone()
    return None if row is None else str(row[0])


def database_state(path: Path, table: str) -> str:
    """How a database file stands: `missing`, `ok`, `unreadable: …` or `corrupt: …` (it must hold `table`)."""
    if not path.exists():
        return "missing"
    try:
        with closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as conn:
            conn.execute(f"SELECT count(*) FROM {table}").fetchone()
            result = conn.execute("PRAGMA quick_check").fetchone()[0]
    except sqlite3.DatabaseError as exc:
        return f"unreadable: {exc}"
    return "ok" if result == "ok" else f"corrupt: {result}"


def record_ids_with_prefix(conn: sqlite3.Connection, prefix: str, limit: int = 1000) -> list[str]:
    """Distinct record IDs that begin with `prefix` (at most `limit`), in ID order: what a short ID may mean."""
    sql = "SELECT DISTINCT record_id FROM records WHERE substr(record_id, 1, ?) = ? ORDER BY record_id LIMIT ?"
    return [str(row[0]) for row in conn.execute(sql, (len(prefix), prefix, limit))]


def counts(conn: sqlite3.Connection, flt: Filter) -> list[tuple[str, str, int]]:
    """(type, lane, how many) of the rows `flt` keeps, by type then lane."""
    params: dict[str, Any] = {}
    sql = f"SELECT r.type, r.lane, count(*) FROM records r WHERE {flt.where(params)} GROUP BY r.type, r.lane"
    return sorted((str(t), str(lane), int(n)) for t, lane, n in conn.execute(sql, params))


def invalid_files(conn: sqlite3.Connection) -> int:
    """How many record files the index could not take (invalid, or a duplicate ID)."""
    return int(conn.execute("SELECT count(*) FROM invalid").fetchone()[0])


def cited_sources(
    conn: sqlite3.Connection, paths: Sequence[str] | None = None
) -> list[tuple[str, str, str, str | None, str]]:
    """(path, blob OID, applies_json, source_ref, body) of every repository record (or of those at `paths`):
    what freshness judges."""
    sql = "SELECT r.path, r.oid, r.applies_json, r.source_ref, r.body FROM records r WHERE r.store = 'repo'"
    if paths is None:
        return [(str(a), str(b), str(c), d, str(e)) for a, b, c, d, e in conn.execute(sql)]
    found = []
    for start in range(0, len(paths), 500):
        chunk = list(paths[start : start + 500])
        rows = conn.execute(f"{sql} AND r.path IN ({', '.join('?' * len(chunk))})", chunk)
        found += [(str(a), str(b), str(c), d, str(e)) for a, b, c, d, e in rows]
    return found
