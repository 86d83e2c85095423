"""Full-text recall: bm25 over title, description, body and tags, with path, type and lane filters."""

from __future__ import annotations

import re
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


#: The largest --limit, as for recall.search_limit in config.toml.
MAX_LIMIT = 1000


def check_filters(type: str | None, lane: str | None, limit: int | None) -> None:
    """UsageError for a type or lane outside the profile's vocabulary, or a limit outside 1..MAX_LIMIT."""
    from git_memzoi.profile.vocab import LANES, MEMORY_TYPES

    if type is not None and type not in MEMORY_TYPES:
        raise UsageError(f"--type {type!r} is not a memory type; use one of: {', '.join(MEMORY_TYPES)}")
    if lane is not None and lane not in LANES:
        raise UsageError(f"--lane {lane!r} is not a lane; use one of: {', '.join(LANES)}")
    if limit is not None and not 1 <= limit <= MAX_LIMIT:
        raise UsageError(f"--limit must be from 1 to {MAX_LIMIT}, not {limit}")


def filter_sql(params: dict[str, Any], *, path: str | None, type: str | None, lane: str | None,
               include_all: bool, include_local: bool) -> str:
    """The WHERE clauses (over alias `r`) for the filters; fills `params` (`path` adds `:p0…` bases)."""
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
        clauses.append(f"r.rowid IN (SELECT record FROM applies WHERE base IN ({path_marks(params, path)}))")
    return " AND ".join(clauses) or "1"


def path_marks(params: dict[str, Any], path: str) -> str:
    """Bind every entry base that would cover `path` as :p0, :p1, …; return the placeholders."""
    names = []
    for index, base in enumerate(pathmatch.ancestors(path)):
        params[f"p{index}"] = base
        names.append(f":p{index}")
    return ", ".join(names)


def _one_line(text: str | None, limit: int = 240) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def snippet_pattern(words: list[str]) -> "re.Pattern[str] | None":
    """A pattern finding the first query word (or its stem: "rebuilds" finds "rebuild") in a text."""
    stems = sorted({w[: max(3, len(w) - 2)] for w in words if w}, key=len, reverse=True)
    if not stems:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(s) for s in stems) + ")", re.IGNORECASE)


def snippet(row: Sequence[Any], pattern: "re.Pattern[str] | None") -> str:
    """About SNIPPET_WORDS words of the description or body around the first query word they hold."""
    from git_memzoi.recall.context import clean_body

    body = clean_body(row[C["title"]], row[C["body"]])
    for text in (row[C["description"]], body):
        if not text or pattern is None:
            continue
        found = pattern.search(text)
        if found is None:
            continue
        head = text[: found.start()].split()
        before = head[len(head) - SNIPPET_WORDS // 3:] if len(head) > SNIPPET_WORDS // 3 else head
        room = SNIPPET_WORDS - len(before)
        after = text[found.start():].split(None, room)
        lead = "…" if len(head) > len(before) else ""
        return lead + " ".join(before + after[:room]) + ("…" if len(after) > room else "")
    text = row[C["description"]] or body
    tokens = text.split(None, SNIPPET_WORDS)
    return " ".join(tokens[:SNIPPET_WORDS]) + ("…" if len(tokens) > SNIPPET_WORDS else "")


def _hit(row: Sequence[Any], score: float, text: str, now: float) -> Hit:
    import json

    return Hit(record_id=row[C["record_id"]], store=row[C["store"]], title=row[C["title"]], type=row[C["type"]],
               lane=row[C["lane"]], status=row[C["status"]], current=is_current(row, now), score=round(score, 4),
               snippet=_one_line(text), applies_to=json.loads(row[C["applies_json"]]), citation=citation(row))


def ranked(conn: sqlite3.Connection, query_terms: list[str], where: str, params: dict[str, Any], limit: int,
           *, path: str | None = None) -> list[tuple[tuple[Any, ...], float]]:
    """(row, score) best first: records matching every word, then any word; never an FTS error.

    `where` filters rows (alias r); with a path, ranking starts from the records whose
    applies_to covers it.
    """
    out: list[tuple[tuple[Any, ...], float]] = []
    seen: set[int] = set()
    bound = {k: v for k, v in params.items() if not k.startswith("_")}
    queries = [fts.all_of(query_terms)]
    if len(query_terms) > 1:
        queries.append(fts.any_of(query_terms))
    for match in queries:
        if len(out) >= limit:
            break
        try:
            found = _ranked_then_filtered(conn, match, where, bound, limit + len(seen), path)
        except sqlite3.OperationalError:
            continue  # cannot happen with quoted terms; never let query text break recall
        for row, score in found:
            if row[C["rowid"]] in seen:
                continue
            seen.add(row[C["rowid"]])
            out.append((row, score))
            if len(out) >= limit:
                break
    return out


def _ranked_then_filtered(conn: sqlite3.Connection, match: str, where: str, bound: dict[str, Any], limit: int,
                          path: str | None = None) -> list[tuple[tuple[Any, ...], float]]:
    """Rank FTS matches (within the records whose applies_to covers `path`), then filter the best few.

    Only rowids and scores are ranked; the filters read the small leading columns of the best
    candidates, and whole rows are read for the hits alone.
    """
    params: dict[str, Any] = {"match": match}
    if path is None:
        top_sql = (f"SELECT rowid, {BM25} AS rank FROM records_fts WHERE records_fts MATCH :match "
                   "ORDER BY rank LIMIT :want")
    else:
        top_sql = (f"SELECT a.record, {BM25} AS rank FROM applies a JOIN records_fts ON records_fts.rowid = a.record "
                   f"WHERE a.base IN ({path_marks(params, path)}) AND records_fts MATCH :match "
                   "ORDER BY rank LIMIT :want")
    want = limit * 3 + 10
    while True:
        top = conn.execute(top_sql, params | {"want": want}).fetchall()
        if not top:
            return []
        ranked_ids: dict[int, float] = {}
        for rowid, rank in top:  # a record may hold two entries covering the path
            ranked_ids.setdefault(rowid, -float(rank))
        marks = ", ".join(str(int(rowid)) for rowid in ranked_ids)
        allowed = {rowid for (rowid,) in conn.execute(
            f"SELECT r.rowid FROM records r WHERE r.rowid IN ({marks}) AND {where}", bound)}
        best = [(rowid, score) for rowid, score in ranked_ids.items() if rowid in allowed][:limit]
        if len(best) >= limit or len(top) < want:
            marks = ", ".join(str(int(rowid)) for rowid, _ in best)
            rows = {row[C["rowid"]]: row for row in conn.execute(
                f"SELECT {SELECT} FROM records r WHERE r.rowid IN ({marks})")} if best else {}
            return [(rows[rowid], score) for rowid, score in best]
        want *= 4


def search(ws: "Workspace", query: str, *, path: str | None = None, type: str | None = None,
           lane: str | None = None, limit: int | None = None, include_all: bool = False,
           include_local: bool = False) -> SearchResult:
    """Search current records (or, with include_all, every record); any query text is safe."""
    check_filters(type, lane, limit)
    norm_path = pathmatch.normalise(path, ws.repo.workdir) if path is not None else None
    count = limit if limit is not None else ws.config.recall.search_limit
    params = now_params()
    where = filter_sql(params, path=None, type=type, lane=lane, include_all=include_all,
                       include_local=include_local)
    query_terms = fts.terms(query)
    conn = open_index(ws)
    try:
        if query_terms:
            found = ranked(conn, query_terms, where, params, count, path=norm_path)
        else:  # no words: the filters alone, in path order
            if norm_path is not None:
                where = f"{where} AND r.rowid IN (SELECT record FROM applies WHERE base IN " \
                        f"({path_marks(params, norm_path)}))"
            bound = {k: v for k, v in params.items() if not k.startswith("_")}
            rows = conn.execute(f"SELECT {SELECT} FROM records r WHERE {where} ORDER BY r.path LIMIT :limit",
                                bound | {"limit": count}).fetchall()
            found = [(row, 0.0) for row in rows]
    finally:
        conn.close()
    pattern = snippet_pattern(fts.words(query))
    hits = [_hit(row, score, snippet(row, pattern), params["now"]) for row, score in found]
    return SearchResult(query=query, hits=hits, filters={
        "path": norm_path, "type": type, "lane": lane, "limit": count, "all": include_all, "local": include_local})
