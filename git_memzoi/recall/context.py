"""Context packs: the records a task needs, path-bound and risk-first, fitted to a word budget.

Candidates are current records that match the task's words (bm25) or whose `applies_to`
covers (or lies inside) a path the task touches. Each gets a relevance from those two
signals; risks, warnings, failed attempts and decisions come first (in that order), then the
rest, each group by relevance. Duplicates are dropped, then records are packed best first while the
budget lasts; a record too long for what is left goes in as its description when that fits. Everything left out is
listed with the reason.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from git_memzoi.errors import UsageError
from git_memzoi.index import fts, queries
from git_memzoi.index.index_db import RecordRow
from git_memzoi.index.queries import Filter
from git_memzoi.index.rebuild import open_index
from git_memzoi.recall import paths as pathmatch
from git_memzoi.recall.models import ContextItem, ContextPack, Omission
from git_memzoi.recall.records import citation, now

if TYPE_CHECKING:
    from git_memzoi.runtime.workspace import Workspace

#: Types that lead a pack, in this order; every other type follows by relevance alone.
TYPE_ORDER = {"risk": 0, "warning": 1, "failed_attempt": 2, "decision": 3}
COVERS, INSIDE = 1.0, 0.6
TEXT_CANDIDATES = 40
#: A text match weaker than this share of the best one is noise, not context.
TEXT_FLOOR = 0.25
OMITTED_SHOWN = 10
#: Records considered for a pack (the best-ranked); the rest are not candidates at all.
MAX_CANDIDATES = 100
_HEADING = re.compile(r"^#{1,6}\s+(.*)$")


@dataclass
class _Candidate:
    row: RecordRow
    text: float = 0.0
    path: float = 0.0
    why: list[str] = field(default_factory=list)

    @property
    def rank(self) -> tuple[int, float, str, str]:
        """Sort key: leading types first, then relevance, then record ID and path."""
        return (
            TYPE_ORDER.get(self.row.type, len(TYPE_ORDER)),
            -(self.text + self.path),
            self.row.record_id,
            self.row.path,
        )


def clean_body(title: str, body: str) -> str:
    """The body without a leading `# Title` heading that repeats the title, whitespace trimmed."""
    text = body.strip()
    first, _, rest = text.partition("\n")
    heading = _HEADING.match(first)
    if heading and heading.group(1).strip().strip("*_`").lower() == title.strip().lower():
        text = rest.strip()
    return text


def words_in(text: str) -> int:
    """How many words a text holds, as the budget counts them."""
    return len(text.split())


def _show(value: str | None) -> str:
    return "null" if value is None else value


def _label(kind: str) -> str:
    return kind.replace("_", " ").capitalize()


def block(row: RecordRow, text: str) -> str:
    """How one record appears in the pack: a heading, the text, one line of evidence (missing values as null)."""
    cite = (
        f"Cite: {row.record_id} · source: {_show(row.source)} · source_ref: {_show(row.source_ref)} · "
        f"proposal_id: {_show(row.proposal_id)}"
    )
    return f"## {_label(row.type)}: {row.title}\n\n{text}\n\n{cite}\n"


def _by_paths(conn: sqlite3.Connection, paths: list[str], flt: Filter, found: dict[int, _Candidate]) -> None:
    for path in paths:
        for row, entry, _ in queries.covering(conn, pathmatch.ancestors(path), flt):
            cand = found.setdefault(row.rowid, _Candidate(row))
            cand.path = COVERS
            cand.why.append(f"applies to {path} ({entry})")
        for row, entry in queries.inside(conn, path, flt):
            cand = found.setdefault(row.rowid, _Candidate(row))
            cand.path = max(cand.path, INSIDE)
            cand.why.append(f"scope {entry} is inside {path}")


#: The largest word budget, as for recall.context_budget in config.toml.
MAX_BUDGET = 100_000


def build_context(
    ws: Workspace, task: str, *, paths: Sequence[str] = (), budget: int | None = None, include_local: bool = False
) -> ContextPack:
    """A prompt-ready pack of current records for `task`, within `budget` words (default from config)."""
    words = budget if budget is not None else ws.config.recall.context_budget
    if not 1 <= words <= MAX_BUDGET:
        raise UsageError(f"must be from 1 to {MAX_BUDGET} words, not {words}", field="budget")
    norm = list(dict.fromkeys(pathmatch.normalise(p, ws.repo.workdir) for p in paths))
    flt = Filter(now=now()[1], shared=not include_local)
    found: dict[int, _Candidate] = {}
    conn = open_index(ws)
    try:
        query_terms = fts.terms(" ".join(fts.significant(task)))
        if query_terms:
            hits = queries.ranked(conn, query_terms, flt, TEXT_CANDIDATES)
            best = max((score for _, score in hits), default=0.0) or 1.0
            for row, score in hits:
                relevance = max(score, 0.0) / best
                if relevance < TEXT_FLOOR:
                    continue
                cand = found.setdefault(row.rowid, _Candidate(row))
                cand.text = relevance
                cand.why.append("matches the task")
        _by_paths(conn, norm, flt, found)
    finally:
        conn.close()
    ordered = sorted(found.values(), key=lambda c: c.rank)
    return _pack(task, norm, words, ordered)


def _pack(task: str, paths: list[str], budget: int, ordered: list[_Candidate]) -> ContextPack:
    header = f"# Context for: {task}\n" + (f"\nPaths: {', '.join(paths)}\n" if paths else "")
    used = words_in(header)
    items: list[ContextItem] = []
    omitted: list[Omission] = []
    blocks: list[str] = []
    seen_body: dict[str, str] = {}
    seen_title: dict[str, str] = {}
    for cand in ordered[:MAX_CANDIDATES]:
        row = cand.row
        rid, title = row.record_id, row.title
        body = clean_body(title, row.body)
        body_words = body.split()
        normal_body, normal_title = " ".join(body_words).lower(), " ".join(title.split()).lower()
        twin = seen_body.get(normal_body) or seen_title.get(normal_title)
        if twin is not None:
            omitted.append(Omission(record_id=rid, title=title, reason=f"duplicate of {twin}"))
            continue
        seen_body[normal_body] = rid
        seen_title[normal_title] = rid
        frame = words_in(block(row, ""))  # heading and citation
        left = budget - used
        if frame + len(body_words) <= left:
            text, note = body, ""
        elif row.description and frame + words_in(row.description) <= left:
            text, note = row.description, " (description only: body over budget)"
        else:
            omitted.append(
                Omission(
                    record_id=rid, title=title, reason=f"over budget ({frame + len(body_words)} words, {left} left)"
                )
            )
            continue
        rendered = block(row, text)
        count = words_in(rendered)
        used += count
        blocks.append(rendered)
        why = "; ".join(dict.fromkeys(cand.why)) + f"; {row.type}"
        items.append(
            ContextItem(
                record_id=rid,
                store=row.store,
                type=row.type,
                lane=row.lane,
                title=title,
                text=text,
                words=count,
                why=why + note,
                citation=citation(row),
            )
        )
    text = header + "".join(f"\n{b}" for b in blocks)
    if not items:
        text += "\nNo current records match this task or these paths.\n"
    if omitted:
        text += "\n## Omitted\n\n" + "".join(
            f"- {o.record_id}: {o.title} ({o.reason})\n" for o in omitted[:OMITTED_SHOWN]
        )
        if len(omitted) > OMITTED_SHOWN:
            text += f"- and {len(omitted) - OMITTED_SHOWN} more (all listed in `omitted`)\n"
    return ContextPack(task=task, paths=list(paths), budget=budget, used=used, items=items, omitted=omitted, text=text)
