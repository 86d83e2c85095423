"""Context packs: the records a task needs, most relevant first, fitted to a word budget.

Candidates are current records that match the task's words (bm25 through `recall.query`'s pipeline:
stopwords, synonyms, stemming, field weights) or whose `applies_to` covers (or lies inside) a path
the task touches. Each gets a relevance from those two signals (a text match scaled to the best
one, plus 1 for a scope covering a path, 0.6 for one inside it), raised by a small boost for the
kinds that cost most when missed (TYPE_BOOST: risks, warnings, failed attempts, constraints,
decisions, conventions): type moves a record past a slightly better match, never past a clearly
better one, and breaks ties. A match through the concept vocabulary alone (`query.concept_terms`)
counts at most CONCEPT_WEIGHT, below every match of the task's own words; records tagged as the best
matches are raised by up to TAG_WEIGHT (`_by_tags`). Duplicates are dropped,
then the pack discloses progressively: the best records in full (the first as its description when
only that fits) while FULL_SHARE of the budget lasts, then every later one named in one line
(type, title, ID, the scope that matched) while the budget lasts, best first. Then the standing
rules (`recall.standing`) the pack did not name follow as one line each while the budget lasts.
Everything the text holds counts against the budget; what was named in a line is in `listed`, what
was left out, and why, in `omitted` (the text says only how many).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import UsageError
from git_memzoi.freshness import state as freshness
from git_memzoi.index import fts, queries
from git_memzoi.index.index_db import RecordRow
from git_memzoi.index.queries import Filter
from git_memzoi.recall import paths as pathmatch
from git_memzoi.recall import query, standing
from git_memzoi.recall.models import ContextItem, ContextPack, Listed, Omission
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
#: How much a match through the concept vocabulary counts beside a match of the task's own words.
CONCEPT_WEIGHT = 0.2
#: The best text matches whose tags bring in their neighbours, and how good a match must be (a share of the best).
TAG_SEEDS, TAG_SEED_MIN = 2, 0.6
#: A tag held by more than this share of the records (and more than TAG_COMMON_ROWS of them) raises none: it says
#: where records came from, not what they are about.
TAG_COMMON, TAG_COMMON_ROWS = 0.2, 4
#: How much sharing tags with the best matches adds to a record's text relevance (the best such record gets it all).
TAG_WEIGHT = 0.5
#: Words kept for the line saying how many records were left out.
LEFT_OUT_WORDS = 14
#: The share of a budget matched records may leave to the standing rules' one-line list.
STANDING_SHARE = 0.25
#: The share of what a budget leaves (after the header and the reserve) that records in full may take; the
#: records after them are named in one line each while the rest lasts.
FULL_SHARE = 0.5
#: Records considered for a pack (the best-ranked); the rest are not candidates at all.
MAX_CANDIDATES = 100


class _Candidate:
    """A record on its way into a pack: its text and path relevance, and why it came."""

    __slots__ = ("freshness", "path", "row", "scope", "text", "why")

    def __init__(self, row: RecordRow) -> None:
        self.row = row
        self.text = 0.0
        self.path = 0.0
        self.why: list[str] = []
        self.freshness = freshness.current()
        self.scope = ""  # the applies_to entry a path matched

    @property
    def matched_scope(self) -> str:
        """The applies_to entry that matched a path, else the record's first one ("" when repository-wide)."""
        return self.scope or standing.first_scope(self.row)

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


def _by_text(
    conn: sqlite3.Connection, terms: list[str], flt: Filter, weight: float, found: dict[int, _Candidate]
) -> None:
    if not terms:
        return
    hits = queries.ranked(conn, terms, flt, TEXT_CANDIDATES)
    best = max((score for _, score in hits), default=0.0) or 1.0
    for row, score in hits:
        relevance = max(score, 0.0) / best
        if relevance < TEXT_FLOOR:
            continue
        cand = found.setdefault(row.rowid, _Candidate(row))
        if weight * relevance > cand.text:
            cand.text = weight * relevance
        if "matches the task" not in cand.why:
            cand.why.append("matches the task")


def _by_tags(conn: sqlite3.Connection, flt: Filter, found: dict[int, _Candidate]) -> None:
    """Raise the records that share tags with the best text matches (at most TAG_SEEDS of them, each at least
    TAG_SEED_MIN of the best): a record's tags are the words it answers to, so the records tagged as the one a
    task is about are its neighbours in the memory, whatever words they use. One query over the tags column;
    the records sharing the most (and rarest) of those tags gain up to TAG_WEIGHT."""
    seeds = sorted((c for c in found.values() if c.text >= TAG_SEED_MIN), key=lambda c: (-c.text, c.row.record_id))
    tags: list[str] = []
    for cand in seeds[:TAG_SEEDS]:
        for tag in json.loads(cand.row.tags_json):
            words = fts.words(str(tag))
            if words:
                tags.append('"' + " ".join(words) + '"')
    tags = list(dict.fromkeys(tags))
    if tags:  # a tag most records carry (`imported`, the kind of file they came from) names no neighbourhood
        common = max(queries.record_count(conn) * TAG_COMMON, TAG_COMMON_ROWS)
        tags = [tag for tag in tags if queries.holding(conn, f"tags : {tag}") <= common]
    if not tags:
        return
    term = "tags : (" + " OR ".join(tags) + ")"
    hits = queries.ranked(conn, [term], flt, TEXT_CANDIDATES)
    best = max((score for _, score in hits), default=0.0) or 1.0
    for row, score in hits:
        cand = found.setdefault(row.rowid, _Candidate(row))
        cand.text += TAG_WEIGHT * max(score, 0.0) / best
        cand.why.append("shares tags with the best matches")


def _by_paths(conn: sqlite3.Connection, paths: list[str], flt: Filter, found: dict[int, _Candidate]) -> None:
    for path in paths:
        for row, entry, _ in queries.covering(conn, pathmatch.ancestors(path), flt):
            cand = found.setdefault(row.rowid, _Candidate(row))
            cand.path = COVERS
            cand.scope = cand.scope or entry
            cand.why.append(f"applies to {path} ({entry})")
        for row, entry in queries.inside(conn, path, flt):
            cand = found.setdefault(row.rowid, _Candidate(row))
            cand.path = max(cand.path, INSIDE)
            cand.scope = cand.scope or entry
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
        extra = ws.config.recall.synonyms
        # the words as written (with the abbreviations' long forms) rank first; the other words of their concepts
        # add records that share no word with the task, below every match of its own words
        for terms, weight in (
            (query.terms(task, query.synonyms(extra, concepts=False)), 1.0),
            (query.concept_terms(task, extra), CONCEPT_WEIGHT),
        ):
            _by_text(conn, terms, flt, weight, found)
        _by_tags(conn, flt, found)
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


class _Packer:
    """Fills a pack best first: full text while the full share of the budget lasts, then one line each."""

    def __init__(self, budget: int, used: int, reserve: int) -> None:
        self.budget = budget
        self.used = used
        self.reserve = reserve
        self.items: list[ContextItem] = []
        self.listed: list[Listed] = []
        self.omitted: list[Omission] = []
        self.blocks: list[str] = []
        self.lines: list[str] = []
        self.short = False  # once one record is named by a line, every later one is too: the order stays the rank
        self.seen_body: dict[str, str] = {}
        self.seen_title: dict[str, str] = {}
        self.full_until = used + int((budget - used - reserve) * FULL_SHARE)

    def twin(self, row: RecordRow, body: str) -> str | None:
        """The ID of a record already packed with the same body or title, else None (and this one is noted)."""
        normal_body, normal_title = " ".join(body.split()).lower(), " ".join(row.title.split()).lower()
        twin = self.seen_body.get(normal_body) or self.seen_title.get(normal_title)
        if twin is None:
            self.seen_body[normal_body] = row.record_id
            self.seen_title[normal_title] = row.record_id
        return twin

    def whole(self, cand: _Candidate, body: str) -> bool:
        """Give the record in full (or as its description) if that fits the full share; False if not."""
        row = cand.row
        frame = words_in(block(row, "", cand.freshness))  # heading and citation
        # the best record may take the whole budget; the ones after it share FULL_SHARE of it
        end = self.budget - self.reserve
        left = (end if not self.items else min(end, self.full_until)) - self.used
        if frame + words_in(body) <= left:
            text, note = body, ""
        elif row.description and frame + words_in(row.description) <= left and not self.items:
            text, note = row.description, " (description only: body over budget)"
        else:
            return False
        rendered = block(row, text, cand.freshness)
        count = words_in(rendered)
        self.used += count
        self.blocks.append(rendered)
        why = "; ".join(dict.fromkeys(cand.why)) + f"; {row.type}"
        self.items.append(
            ContextItem(
                record_id=row.record_id,
                store=row.store,
                type=row.type,
                lane=row.lane,
                title=row.title,
                text=text,
                words=count,
                why=why + note,
                citation=citation(row),
                freshness=cand.freshness,
            )
        )
        return True

    def line(self, cand: _Candidate) -> bool:
        """Name the record in one line if that fits what the budget leaves; False if not."""
        row, scope = cand.row, cand.matched_scope
        entry = standing.brief(row, scope, unverified_note(cand.freshness))
        cost = words_in(entry) + (0 if self.lines else words_in(LISTED_HEADING))
        if self.used + cost > self.budget - self.reserve:
            return False
        self.lines.append(entry)
        self.listed.append(
            Listed(record_id=row.record_id, type=row.type, title=row.title, scope=scope, freshness=cand.freshness)
        )
        self.used += cost
        return True

    def add(self, cand: _Candidate) -> None:
        row = cand.row
        body = clean_body(row.title, row.body)
        twin = self.twin(row, body)
        if twin is not None:
            self.omitted.append(Omission(record_id=row.record_id, title=row.title, reason=f"duplicate of {twin}"))
            return
        if not self.short and self.whole(cand, body):
            return
        self.short = True
        if not self.line(cand):
            reason = f"over budget ({words_in(block(row, body))} words, {self.budget - self.used} left)"
            self.omitted.append(Omission(record_id=row.record_id, title=row.title, reason=reason))


#: What heads the records a pack names in one line each.
LISTED_HEADING = "## Also relevant (one line each; `git memzoi show ID` gives the whole record)\n\n"


def _pack(
    task: str, paths: list[str], budget: int, ordered: list[_Candidate], rules: Sequence[standing.Rule] = ()
) -> ContextPack:
    header = f"# Context for: {task}\n" + (f"\nPaths: {', '.join(paths)}\n" if paths else "")
    # The standing rules' lines get up to a quarter of the budget, so a full pack still names them.
    packer = _Packer(budget, words_in(header), LEFT_OUT_WORDS + _listed(rules, int(budget * STANDING_SHARE)))
    for cand in ordered[:MAX_CANDIDATES]:
        packer.add(cand)
    blocks = packer.blocks
    if not packer.items and not packer.lines:
        empty = "\nNo current records match this task or these paths.\n"
        packer.used += words_in(empty)
        blocks.append(empty.lstrip("\n"))
    left_out = ""
    if packer.omitted:
        left_out = (
            f"\n{len(packer.omitted)} more matching record(s) left out: over budget or duplicates "
            "(`--json` lists them).\n"
        )
        packer.used += words_in(left_out)
    named = {item.record_id for item in packer.items} | {item.record_id for item in packer.listed}
    lines: list[str] = []
    heading = "## Standing rules also in force\n\n"
    for rule in rules:
        if rule.record_id in named:
            continue
        entry = standing.line(rule)
        cost = words_in(entry) + (0 if lines else words_in(heading))
        if packer.used + cost > budget:
            break
        lines.append(entry)
        packer.used += cost
    text = header + "".join(f"\n{b}" for b in blocks)
    if packer.lines:
        text += "\n" + LISTED_HEADING + "".join(packer.lines)
    if lines:
        text += "\n" + heading + "".join(lines)
    text += left_out
    return ContextPack(
        task=task,
        paths=list(paths),
        budget=budget,
        used=packer.used,
        items=packer.items,
        omitted=packer.omitted,
        listed=packer.listed,
        text=text,
    )
