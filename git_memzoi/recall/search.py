"""Full-text recall: bm25 over title, description, body and tags, with path, type and lane filters."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import UsageError
from git_memzoi.index import fts
from git_memzoi.index.rebuild import current_filter, open_index
from git_memzoi.recall import paths as pathmatch
from git_memzoi.recall.models import Hit, SearchResult
from git_memzoi.recall.records import C, SELECT, SHARED_ONLY, citation, is_current, now_params

if TYPE_CHECKING:
    from git_memzoi.runtime.workspace import Workspace

#: bm25 column weights: title, description, body, tags.
WEIGHTS = (10.0, 5.0, 1.0, 4.0)
BM25 = f"bm25(records_fts, {', '.join(str(w) for w in WEIGHTS)})"
SNIPPET_WORDS = 24


def check_filters(type: str | None, lane: str | None, limit: int | None) -> None:
    """UsageError for a type or lane outside the profile's vocabulary, or a limit below 1."""
    from git_memzoi.profile.vocab import LANES, MEMORY_TYPES

    if type is not None and type not in MEMORY_TYPES:
        raise UsageError(f"--type {type!r} is not a memory type; use one of: {', '.join(MEMORY_TYPES)}")
    if lane is not None and lane not in LANES:
        raise UsageError(f"--lane {lane!r} is not a lane; use one of: {', '.join(LANES)}")
    if limit is not None and limit < 1:
        raise UsageError(f"--limit must be at least 1, not {limit}")


def filter_sql(params: dict[str, Any], *, path: str | None, type: str | None, lane: str | None,
               include_all: bool, include_local: bool) -> str:
    """The WHERE clauses (over alias `r`) for the filters; fills `params`."""
    clauses = []
    if not include_all:
        clauses.append(current_filter("r"))
    if not include_local:
        clauses.append(SHARED_ONLY)
    if type is not None:
        clauses.append("r.type = :type")
        params["type"] = type
    if lane is not None:
        clauses.append("r.lane = :lane")
        params["lane"] = lane
    if path is not None:
        names = []
        for index, base in enumerate(pathmatch.ancestors(path)):
            params[f"p{index}"] = base
            names.append(f":p{index}")
        clauses.append(f"r.rowid IN (SELECT record FROM applies WHERE base IN ({', '.join(names)}))")
    return " AND ".join(clauses) or "1"


def _one_line(text: str | None, limit: int = 240) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _hit(row: Sequence[Any], score: float, snippet: str, now: float) -> Hit:
    import json

    title = row[C["title"]]
    text = snippet.lstrip()
    if text.startswith("#"):  # a body's leading "# Title" heading repeats the title
        heading = text.lstrip("#").lstrip()
        if heading.startswith(title):
            snippet = heading[len(title):]
    return Hit(record_id=row[C["record_id"]], store=row[C["store"]], title=row[C["title"]], type=row[C["type"]],
               lane=row[C["lane"]], status=row[C["status"]], current=is_current(row, now), score=round(score, 4),
               snippet=_one_line(snippet).lstrip(), applies_to=json.loads(row[C["applies_json"]]), citation=citation(row))


def ranked(conn: sqlite3.Connection, query_terms: list[str], where: str, params: dict[str, Any],
           limit: int) -> list[tuple[tuple[Any, ...], float, str]]:
    """(row, score, snippet) best first: every word matching first, then any word, never an FTS error."""
    out: list[tuple[tuple[Any, ...], float, str]] = []
    seen: set[int] = set()
    bound = {k: v for k, v in params.items() if not k.startswith("_")}
    queries = [fts.all_of(query_terms)]
    if len(query_terms) > 1:
        queries.append(fts.any_of(query_terms))
    for match in queries:
        if len(out) >= limit:
            break
        sql = (f"SELECT {SELECT}, {BM25} AS rank, "
               f"snippet(records_fts, -1, '', '', '…', {SNIPPET_WORDS}) "
               f"FROM records_fts JOIN records r ON r.rowid = records_fts.rowid "
               f"WHERE records_fts MATCH :match AND {where} ORDER BY rank, r.path LIMIT :limit")
        try:
            rows = conn.execute(sql, bound | {"match": match, "limit": limit + len(seen)}).fetchall()
        except sqlite3.OperationalError:
            continue  # cannot happen with quoted terms; never let query text break recall
        for row in rows:
            rowid = row[C["rowid"]]
            if rowid in seen:
                continue
            seen.add(rowid)
            out.append((row[: len(C)], -float(row[len(C)]), row[len(C) + 1]))
            if len(out) >= limit:
                break
    return out


def search(ws: "Workspace", query: str, *, path: str | None = None, type: str | None = None,
           lane: str | None = None, limit: int | None = None, include_all: bool = False,
           include_local: bool = False) -> SearchResult:
    """Search current records (or, with include_all, every record); any query text is safe."""
    check_filters(type, lane, limit)
    norm_path = pathmatch.normalise(path, ws.repo.workdir) if path is not None else None
    count = limit if limit is not None else ws.config.recall.search_limit
    params = now_params()
    where = filter_sql(params, path=norm_path, type=type, lane=lane, include_all=include_all,
                       include_local=include_local)
    query_terms = fts.terms(query)
    conn = open_index(ws)
    try:
        if query_terms:
            found = ranked(conn, query_terms, where, params, count)
        else:  # no words: the filters alone, in path order
            bound = {k: v for k, v in params.items() if not k.startswith("_")}
            rows = conn.execute(f"SELECT {SELECT} FROM records r WHERE {where} ORDER BY r.path LIMIT :limit",
                                bound | {"limit": count}).fetchall()
            found = [(row, 0.0, row[C["description"]] or row[C["body"]]) for row in rows]
    finally:
        conn.close()
    hits = [_hit(row, score, snippet, params["now"]) for row, score, snippet in found]
    return SearchResult(query=query, hits=hits, filters={
        "path": norm_path, "type": type, "lane": lane, "limit": count, "all": include_all, "local": include_local})
