"""Standing rules: the repository-wide records of the kinds that hold everywhere, in the order an agent needs them.

A record is a standing rule when it is current, may leave this machine, has no `applies_to` (or an entry covering
the whole repository), is a convention, constraint, preference, risk, warning, decision or procedure, and no
activation its import kept narrows it (index.activation: a glob, agent-requested or manual rule, or an imported ADR,
is never standing). They are ranked risks and warnings first, then by where they came from (the root instruction
files, records not imported, nested and tool files, each in source order), then by confidence, then newest first,
then by ID. `render` gives every rule at least its line: full text while the budget lasts with room for the lines of
the rest, a long record as its title and description line. Stdlib only: the agent hooks answer with them.

Which rows are standing rules, and their rank, is worked out once per index state: index.db's
`standing` table, kept in step with `records` by triggers as rows are written (`index.index_db`).
A read keeps the current ones (retention is decided at the read's instant) in rank order, and
reads whole rows only for the rules given in full.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from functools import partial
from itertools import accumulate
from typing import NamedTuple

from git_memzoi.index import activation, queries
from git_memzoi.index.index_db import STANDING_FIRST, STANDING_TYPES, WHOLE_REPOSITORY, RecordRow
from git_memzoi.index.queries import Filter
from git_memzoi.recall.text import clean_body

__all__ = [
    "STANDING_TYPES",
    "WHOLE_REPOSITORY",
    "Rule",
    "brief",
    "described",
    "first_scope",
    "full",
    "is_standing",
    "line",
    "rank",
    "render",
]

_FIRST = dict.fromkeys(STANDING_FIRST, 0)
#: Inverts a character's order (newest first within a confidence), for the ASCII of a timestamp.
_INVERT = {code: 0x10FFFF - code for code in range(128)}
#: Whole rows read at a time for the rules `render` gives in full.
_FETCH = 8


class Rule(NamedTuple):
    """A standing rule as the list holds it: enough for its line; `render` reads the whole row to give it in full."""

    rowid: int
    record_id: str
    type: str
    title: str
    source_ref: str | None = None


def is_standing(row: RecordRow) -> bool:
    """Whether a row is a standing rule (its type holds everywhere and nothing narrows it to a path or a moment)."""
    if row.type not in STANDING_TYPES or activation.mode(row.source_ref) != activation.ALWAYS:
        return False
    entries = json.loads(row.applies_json)
    return not entries or any(str(entry).strip() in WHOLE_REPOSITORY for entry in entries)


def rank(row: RecordRow) -> tuple[int, int, str, int, float, str, str]:
    """Sort key: risks and warnings first, then by origin and source order, then higher confidence, newer, by ID."""
    stamp = row.timestamp
    inverted = stamp.translate(_INVERT) if stamp.isascii() else "".join(chr(0x10FFFF - ord(c)) for c in stamp)
    where, source, first = activation.origin(row.source_ref)
    quoted = (row.source_ref or "")[len("import:") :].partition("?")[0] if source else ""
    return (_FIRST.get(row.type, 1), where, quoted, first, -float(row.confidence), inverted, row.record_id)


def standing_rules(conn: sqlite3.Connection, at: float, limit: int = -1) -> list[Rule]:
    """Every standing rule current at `at` that may leave this machine (the first `limit`; -1: all), in `rank` order."""
    return list(map(Rule._make, queries.standing(conn, Filter(now=at, types=STANDING_TYPES), limit)))


#: The shortest a rule's line can be (`line`: "- T (I)\n"), in characters and in words.
LINE_CHARS, LINE_WORDS = 8, 3
#: A record longer than this share of the budget is given as its title and description line.
LONG_SHARE = 4
#: A description line's description, at most this many characters.
DESCRIPTION_CHARS = 200


def full(row: RecordRow) -> str:
    """A record as full text: a heading with its type, title and ID, then its body."""
    kind = row.type.replace("_", " ").capitalize()
    return f"### {kind}: {row.title} ({row.record_id})\n\n{clean_body(row.title, row.body)}\n"


def line(row: RecordRow | Rule, note: str = "") -> str:
    """A record as one line: title and ID (and `note` after them)."""
    return f"- {row.title} ({row.record_id}){note}\n"


def brief(row: RecordRow, scope: str = "", flag: str = "") -> str:
    """A record named in one line, to be asked for by ID: type, title, ID, the scope that matched and `flag`
    (" (unverified: ...)" for a record whose cited code moved on)."""
    kind = row.type.replace("_", " ").capitalize()
    return f"- {kind}: {row.title}{flag} ({row.record_id})" + (f" · {scope}" if scope else "") + "\n"


def first_scope(row: RecordRow) -> str:
    """The first `applies_to` entry of a record, or "" when it has none (repository-wide)."""
    entries = json.loads(row.applies_json)
    return str(entries[0]) if entries else ""


def described(row: RecordRow) -> str:
    """A record as its title and description line: its description, or its body's first line, shortened."""
    text = " ".join((row.description or "").split())
    if not text:
        text = next((ln.strip() for ln in clean_body(row.title, row.body).splitlines() if ln.strip()), "")
    text = " ".join(text.lstrip("#>-* ").split())
    if len(text) > DESCRIPTION_CHARS:
        text = text[: DESCRIPTION_CHARS - 1].rstrip() + "…"
    return line(row, f": {text}" if text else "")


def _body(row_at: Callable[[int], RecordRow], at: int) -> str:
    return row_at(at).body


def render(
    conn: sqlite3.Connection,
    rules: Sequence[Rule],
    limit: int,
    loaded: Callable[[Rule, Callable[[], str]], str | None] | None = None,
) -> tuple[str, list[str]]:
    """(text, IDs given in full) for `rules` in order, within `limit` characters.

    Every rule gets at least its line while lines fit: a rule is given in full only when its text leaves room for
    the lines of every rule after it (at most half of `limit`), and a record longer than 1/LONG_SHARE of `limit` is
    given as its title and description line, so that no long record crowds the rest out (an imported ADR is never a
    standing rule: index.activation). `loaded(rule, body)` names the file the client loads itself and still holds the
    rule's text (`body()` gives the rule's body, read only when asked): such a rule is one line naming that file.
    Whole rows are read only for the rules that may be given in more than a line, or whose body `loaded` asks for.
    """
    lines = [len(line(rule)) for rule in rules]
    # the room kept for the lines of the rules after each one: all of them, or half the budget when they
    # could not all fit anyway (then the best ranked still get their text)
    after = [min(rest, limit // 2) for rest in accumulate(reversed([*lines[1:], 0]))][::-1]
    out: list[str] = []
    used = 0
    in_full: list[str] = []
    rows: dict[int, RecordRow] = {}

    def row_at(at: int) -> RecordRow:
        """Rule `at`'s row, read with the next _FETCH rules' when it is not read yet."""
        if rules[at].rowid not in rows:
            rows.clear()
            rows.update((row.rowid, row) for row in queries.by_rowid(conn, [r.rowid for r in rules[at : at + _FETCH]]))
        return rows[rules[at].rowid]

    for at, rule in enumerate(rules):
        where = loaded(rule, partial(_body, row_at, at)) if loaded is not None else None
        text = line(rule, f", in {where}") if where else ""
        if not text and used + lines[at] + after[at] < limit:
            row = row_at(at)
            whole = ("\n" if out else "") + full(row)
            if len(whole) <= limit // LONG_SHARE and used + len(whole) + after[at] <= limit:
                text = whole
                in_full.append(rule.record_id)
            else:
                short = described(row)
                text = short if used + len(short) + after[at] <= limit else ""
        text = text or line(rule)
        if used + len(text) > limit:
            break
        out.append(text)
        used += len(text)
    return "".join(out), in_full
