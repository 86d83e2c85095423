"""Full-text recall: bm25 over title, description, body and tags (`recall.query`), with path, type, lane filters."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from git_memzoi.errors import UsageError
from git_memzoi.freshness import state as freshness
from git_memzoi.index import fts, queries
from git_memzoi.index.index_db import RecordRow
from git_memzoi.index.queries import Filter
from git_memzoi.profile.vocab import LANES, MEMORY_TYPES
from git_memzoi.recall import paths as pathmatch
from git_memzoi.recall import query as pipeline
from git_memzoi.recall.models import Hit, SearchResult
from git_memzoi.recall.records import citation, index_connection, now
from git_memzoi.recall.text import clean_body

if TYPE_CHECKING:
    from git_memzoi.runtime.workspace import Workspace

SNIPPET_WORDS = 24


#: The largest limit, as for recall.search_limit in config.toml.
MAX_LIMIT = 1000


def check_filters(type: str | None, lane: str | None, limit: int | None) -> None:
    """UsageError for a type or lane outside the profile's vocabulary, or a limit outside 1..MAX_LIMIT."""
    if type is not None and type not in MEMORY_TYPES:
        raise UsageError(f"{type!r} is not a memory type; use one of: {', '.join(MEMORY_TYPES)}", field="type")
    if lane is not None and lane not in LANES:
        raise UsageError(f"{lane!r} is not a lane; use one of: {', '.join(LANES)}", field="lane")
    if limit is not None and not 1 <= limit <= MAX_LIMIT:
        raise UsageError(f"must be from 1 to {MAX_LIMIT}, not {limit}", field="limit")


def _one_line(text: str | None, limit: int = 240) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def snippet_pattern(words: list[str]) -> re.Pattern[str] | None:
    """A pattern finding the first query word (or its stem: "rebuilds" finds "rebuild") in a text."""
    stems = sorted({w[: max(3, len(w) - 2)] for w in words if w}, key=len, reverse=True)
    if not stems:
        return None
    return re.compile(r"(?<!\w)(?:" + "|".join(re.escape(s) for s in stems) + ")", re.IGNORECASE)


def snippet(row: RecordRow, pattern: re.Pattern[str] | None) -> str:
    """About SNIPPET_WORDS words of the description or body around the first query word they hold."""
    body = clean_body(row.title, row.body)
    for text in (row.description, body):
        if not text or pattern is None:
            continue
        found = pattern.search(text)
        if found is None:
            continue
        head = text[: found.start()].split()
        before = head[len(head) - SNIPPET_WORDS // 3 :] if len(head) > SNIPPET_WORDS // 3 else head
        room = SNIPPET_WORDS - len(before)
        after = text[found.start() :].split(None, room)
        lead = "…" if len(head) > len(before) else ""
        return lead + " ".join(before + after[:room]) + ("…" if len(after) > room else "")
    text = row.description or body
    tokens = text.split(None, SNIPPET_WORDS)
    return " ".join(tokens[:SNIPPET_WORDS]) + ("…" if len(tokens) > SNIPPET_WORDS else "")


def _hit(row: RecordRow, score: float, text: str, at: float, freshness: dict[str, Any]) -> Hit:
    return Hit(
        record_id=row.record_id,
        store=row.store,
        title=row.title,
        type=row.type,
        lane=row.lane,
        status=row.status,
        current=row.is_current(at),
        score=round(score, 4),
        snippet=_one_line(text),
        applies_to=json.loads(row.applies_json),
        citation=citation(row),
        freshness=freshness,
    )


def _current_first(
    found: list[tuple[RecordRow, float]], fresh: dict[str, dict[str, Any]]
) -> list[tuple[RecordRow, float]]:
    """The hits in their order, an unverified one after the current ones next to it with the same score."""
    runs: list[int] = []
    for i, (_, score) in enumerate(found):
        runs.append(runs[-1] if i and found[i - 1][1] == score else i)
    order = sorted(range(len(found)), key=lambda i: (runs[i], fresh[found[i][0].path]["state"] != "current"))
    return [found[i] for i in order]


class Filters(TypedDict, total=False):
    """What `search` narrows to; every key may be left out."""

    path: str | None  # records whose applies_to covers this repository path
    type: str | None
    lane: str | None
    limit: int | None  # default: recall.search_limit
    include_all: bool  # query-only records too
    include_local: bool  # private records and runtime (local, session) memory too


def search(ws: Workspace, query: str, **filters: Unpack[Filters]) -> SearchResult:
    """Search current records (or, with include_all, every record); any query text is safe."""
    path, type, lane, limit = filters.get("path"), filters.get("type"), filters.get("lane"), filters.get("limit")
    include_all, include_local = filters.get("include_all", False), filters.get("include_local", False)
    check_filters(type, lane, limit)
    norm_path = pathmatch.normalise(path, ws.repo.workdir) if path is not None else None
    count = limit if limit is not None else ws.config.recall.search_limit
    _, at = now()
    flt = Filter(now=None if include_all else at, shared=not include_local, types=(type,) if type else (), lane=lane)
    bases = pathmatch.ancestors(norm_path) if norm_path is not None else []
    # The shared pipeline (stopwords, synonyms); text of stopwords alone is still searched as typed.
    query_terms = pipeline.terms(query, pipeline.synonyms(ws.config.recall.synonyms)) or fts.terms(query)
    with index_connection(ws) as conn:
        if query_terms:
            found = queries.ranked(conn, query_terms, flt, count, bases)
        else:  # no words: the filters alone, in path order
            found = [(row, 0.0) for row in queries.in_path_order(conn, flt, count, bases)]
        fresh = freshness.verdicts(ws, conn, [row for row, _ in found])
    found = _current_first(found, fresh)
    pattern = snippet_pattern(fts.words(query))
    hits = [_hit(row, score, snippet(row, pattern), at, fresh[row.path]) for row, score in found]
    return SearchResult(
        query=query,
        hits=hits,
        filters={
            "path": norm_path,
            "type": type,
            "lane": lane,
            "limit": count,
            "all": include_all,
            "local": include_local,
        },
    )
