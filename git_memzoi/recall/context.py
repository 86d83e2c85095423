"""Context packs: the records a task needs, most relevant first, fitted to a word budget.

Candidates are current records that match the task's words (bm25 through `recall.query`'s pipeline:
stopwords, synonyms, stemming, field weights) or whose `applies_to` covers (or lies inside) a path
the task touches. Each gets a relevance from those two signals (a text match scaled to the best
one, plus 1 for a scope covering a path, 0.6 for one inside it), raised by a small boost for the
kinds that cost most when missed (TYPE_BOOST: risks, warnings, failed attempts, constraints,
decisions, conventions): type moves a record past a slightly better match, never past a clearly
better one, and breaks ties. Duplicates are dropped, then records are packed best first while the
budget lasts; a record too long for what is left goes in as its description when that fits. Then
the standing rules (`recall.standing`) the pack did not include follow as one line each while the
budget lasts. Everything the text holds counts against the budget; what was left out, and why, is
in `omitted` (the text says only how many).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import UsageError
from git_memzoi.freshness import state as freshness
from git_memzoi.index import queries
from git_memzoi.index.index_db import RecordRow
from git_memzoi.index.queries import Filter
from git_memzoi.recall import paths as pathmatch
from git_memzoi.recall import query, standing
from git_memzoi.recall.models import ContextItem, ContextPack, Omission
from git_memzoi.recall.records import citation, index_connection, now
from git_memzoi.recall.text import clean_body

if TYPE_CHECKING:
    from git_memzoi.runtime.workspace import Workspace

#: Types that break ties, in this order; every other type follows them.
TYPE_ORDER = {"risk": 0, "warning": 1, "failed_attempt": 2, "decision": 3}
#: How much a kind raises a record's relevance (a share of it): a boost, never a wall.
TYPE_BOOST = {
    "risk": 0.25,
    "warning": 0.2,
    "failed_attempt": 0.2,
    "constraint": 0.15,
    "decision": 0.1,
    "convention": 0.1,
    "procedure": 0.05,
}
COVERS, INSIDE = 1.0, 0.6
TEXT_CANDIDATES = 40
#: A text match weaker than this share of the best one is noise, not context.
TEXT_FLOOR = 0.25
#: Words kept for the line saying how many records were left out.
LEFT_OUT_WORDS = 14
#: The share of a budget matched records may leave to the standing rules' one-line list.
STANDING_SHARE = 0.25
#: Records considered for a pack (the best-ranked); the rest are not candidates at all.
MAX_CANDIDATES = 100


class _Candidate:
    """A record on its way into a pack: its text and path relevance, and why it came."""

    __slots__ = ("freshness", "path", "row", "text", "why")

    def __init__(self, row: RecordRow) -> None:
        self.row = row
        self.text = 0.0
        self.path = 0.0
        self.why: list[str] = []
        self.freshness = freshness.current()

    @property
    def relevance(self) -> float:
        """Text and path relevance, raised by the type's boost."""
        return (self.text + self.path) * (1 + TYPE_BOOST.get(self.row.type, 0.0))

    @property
    def rank(self) -> tuple[float, bool, int, str, str]:
        """Sort key: relevance, an unverified record after current ones, then the type's order, then record ID
        and path (ties alike in every index)."""
        return (
            -round(self.relevance, 9),
            self.freshness["state"] != "current",
            TYPE_ORDER.get(self.row.type, len(TYPE_ORDER)),
            self.row.record_id,
            self.row.path,
        )


def words_in(text: str) -> int:
    """How many words a text holds, as the budget counts them."""
    return len(text.split())


def _show(value: str | None) -> str:
    return "null" if value is None else value


def _label(kind: str) -> str:
    return kind.replace("_", " ").capitalize()


def unverified_note(fresh: dict[str, Any]) -> str:
    """ " (unverified: ...)" for a record whose cited code changed since it was written, else ""."""
    if fresh["state"] == "current":
        return ""
    changes = ", ".join(
        f"{c.get('identifier') or c['path']} {c['change']}" + (f" to {c['to']}" if c.get("to") else "")
        for c in fresh["evidence"][:3]
    )
    return f" (unverified: {changes})"


def block(row: RecordRow, text: str, fresh: dict[str, Any] | None = None) -> str:
    """How one record appears in the pack: a heading, the text, one line of evidence (missing values as null)."""
    cite = (
        f"Cite: {row.record_id} · source: {_show(row.source)} · source_ref: {_show(row.source_ref)} · "
        f"proposal_id: {_show(row.proposal_id)}"
    )
    flag = unverified_note(fresh) if fresh is not None else ""
    return f"## {_label(row.type)}: {row.title}{flag}\n\n{text}\n\n{cite}\n"


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


def candidates(
    ws: Workspace,
    task: str,
    paths: Sequence[str] = (),
    *,
    include_local: bool = False,
    rules: bool = True,
    rule_limit: int = -1,
) -> tuple[list[str], list[_Candidate], list[standing.Rule]]:
    """(normalised paths, candidates best first, standing rules in their order (the first `rule_limit`; -1: all),
    or none without `rules`)."""
    norm = list(dict.fromkeys(pathmatch.normalise(p, ws.repo.workdir) for p in paths))
    at = now()[1]
    flt = Filter(now=at, shared=not include_local)
    found: dict[int, _Candidate] = {}
    with index_connection(ws) as conn:
        query_terms = query.terms(task, query.synonyms(ws.config.recall.synonyms))
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
        fresh = freshness.verdicts(ws, conn, [cand.row for cand in found.values()])
        for cand in found.values():
            cand.freshness = fresh[cand.row.path]
        standing_rows = standing.standing_rules(conn, at, rule_limit) if rules else []
    return norm, sorted(found.values(), key=lambda c: c.rank), standing_rows


def build_context(
    ws: Workspace, task: str, *, paths: Sequence[str] = (), budget: int | None = None, include_local: bool = False
) -> ContextPack:
    """A prompt-ready pack of current records for `task`, within `budget` words (default from config)."""
    words = budget if budget is not None else ws.config.recall.context_budget
    if not 1 <= words <= MAX_BUDGET:
        raise UsageError(f"must be from 1 to {MAX_BUDGET} words, not {words}", field="budget")
    # A pack names at most a line (3 words or more) per budget's 3 words of the rules it did not include.
    limit = words // standing.LINE_WORDS + MAX_CANDIDATES + 1
    norm, ordered, rules = candidates(ws, task, paths, include_local=include_local, rule_limit=limit)
    return _pack(task, norm, words, ordered, rules)


def _listed(rules: Sequence[standing.Rule], cap: int) -> int:
    """The words the standing rules' one-line list takes with its heading, or `cap` if that is less."""
    if not rules:
        return 0
    listed = 6
    for rule in rules:
        listed += words_in(standing.line(rule))
        if listed >= cap:
            return cap
    return listed


def _pack(
    task: str, paths: list[str], budget: int, ordered: list[_Candidate], rules: Sequence[standing.Rule] = ()
) -> ContextPack:
    header = f"# Context for: {task}\n" + (f"\nPaths: {', '.join(paths)}\n" if paths else "")
    used = words_in(header)
    # The standing rules' lines get up to a quarter of the budget, so a full pack still names them.
    reserve = LEFT_OUT_WORDS + _listed(rules, int(budget * STANDING_SHARE))
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
        frame = words_in(block(row, "", cand.freshness))  # heading and citation
        left = budget - used - reserve
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
        rendered = block(row, text, cand.freshness)
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
                freshness=cand.freshness,
            )
        )
    if not items:
        empty = "\nNo current records match this task or these paths.\n"
        used += words_in(empty)
        blocks.append(empty.lstrip("\n"))
    left_out = ""
    if omitted:
        left_out = (
            f"\n{len(omitted)} more matching record(s) left out: over budget or duplicates (`--json` lists them).\n"
        )
        used += words_in(left_out)
    included = {item.record_id for item in items}
    lines: list[str] = []
    heading = "## Standing rules also in force\n\n"
    for rule in rules:
        if rule.record_id in included:
            continue
        entry = standing.line(rule)
        cost = words_in(entry) + (0 if lines else words_in(heading))
        if used + cost > budget:
            break
        lines.append(entry)
        used += cost
    text = header + "".join(f"\n{b}" for b in blocks)
    if lines:
        text += "\n" + heading + "".join(lines)
    text += left_out
    return ContextPack(task=task, paths=list(paths), budget=budget, used=used, items=items, omitted=omitted, text=text)
