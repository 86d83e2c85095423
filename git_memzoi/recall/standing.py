"""Standing rules: the repository-wide records of the kinds that hold everywhere, in the order an agent needs them.

A record is a standing rule when it is current, may leave this machine, has no `applies_to` (or an
entry covering the whole repository) and is a convention, constraint, preference, risk, warning,
decision or procedure. They are ranked risks and warnings first, then by confidence, then newest
first, then by ID. `render` writes them as full text while a character budget lasts and as one
line each (title, ID) after that. Stdlib only: the agent hooks answer with them.

Which rows are standing rules, and their rank, is worked out once per index state: index.db's
`standing` table, kept in step with `records` by triggers as rows are written (`index.index_db`).
A read keeps the current ones (retention is decided at the read's instant) in rank order, and
reads whole rows only for the rules given in full.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import NamedTuple

from git_memzoi.index import queries
from git_memzoi.index.index_db import STANDING_FIRST, STANDING_TYPES, WHOLE_REPOSITORY, RecordRow
from git_memzoi.index.queries import Filter
from git_memzoi.recall.text import clean_body

__all__ = [
    "STANDING_TYPES",
    "WHOLE_REPOSITORY",
    "Rule",
    "brief",
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


def is_standing(row: RecordRow) -> bool:
    """Whether a row is a standing rule (its type holds everywhere and nothing narrows it to a path)."""
    if row.type not in STANDING_TYPES:
        return False
    entries = json.loads(row.applies_json)
    return not entries or any(str(entry).strip() in WHOLE_REPOSITORY for entry in entries)


def rank(row: RecordRow) -> tuple[int, float, str, str]:
    """Sort key: risks and warnings first, then higher confidence, then newer, then by ID."""
    stamp = row.timestamp
    inverted = stamp.translate(_INVERT) if stamp.isascii() else "".join(chr(0x10FFFF - ord(c)) for c in stamp)
    return (_FIRST.get(row.type, 1), -float(row.confidence), inverted, row.record_id)


def standing_rules(conn: sqlite3.Connection, at: float, limit: int = -1) -> list[Rule]:
    """Every standing rule current at `at` that may leave this machine (the first `limit`; -1: all), in `rank` order."""
    return list(map(Rule._make, queries.standing(conn, Filter(now=at, types=STANDING_TYPES), limit)))


#: The shortest a rule's line can be (`line`: "- T (I)\n"), in characters and in words.
LINE_CHARS, LINE_WORDS = 8, 3


def full(row: RecordRow) -> str:
    """A record as full text: a heading with its type, title and ID, then its body."""
    kind = row.type.replace("_", " ").capitalize()
    return f"### {kind}: {row.title} ({row.record_id})\n\n{clean_body(row.title, row.body)}\n"


def line(row: RecordRow | Rule) -> str:
    """A record as one line: title and ID."""
    return f"- {row.title} ({row.record_id})\n"


def brief(row: RecordRow, scope: str = "", flag: str = "") -> str:
    """A record named in one line, to be asked for by ID: type, title, ID, the scope that matched and `flag`
    (" (unverified: ...)" for a record whose cited code moved on)."""
    kind = row.type.replace("_", " ").capitalize()
    return f"- {kind}: {row.title}{flag} ({row.record_id})" + (f" · {scope}" if scope else "") + "\n"


def first_scope(row: RecordRow) -> str:
    """The first `applies_to` entry of a record, or "" when it has none (repository-wide)."""
    entries = json.loads(row.applies_json)
    return str(entries[0]) if entries else ""


def render(conn: sqlite3.Connection, rules: Sequence[Rule], limit: int) -> tuple[str, list[str]]:
    """(text, IDs given in full) for `rules` in order: full text while it fits `limit` characters, then one line each.

    Once one record had to be shortened to a line, every later one is a line too, so the order stays the
    ranking; lines stop when the budget is spent. Whole rows are read only while full text may still fit.
    """
    out: list[str] = []
    used = 0
    in_full: list[str] = []
    short = False
    rows: dict[int, RecordRow] = {}
    for at, rule in enumerate(rules):
        if not short and rule.rowid not in rows:
            rows = {row.rowid: row for row in queries.by_rowid(conn, [r.rowid for r in rules[at : at + _FETCH]])}
        text = "" if short else full(rows[rule.rowid])
        if not short and used + len(text) + 1 > limit:
            short = True
        if short:
            text = line(rule)
            if used + len(text) > limit:
                break
        else:
            in_full.append(rule.record_id)
            if out:
                text = "\n" + text
        out.append(text)
        used += len(text)
    return "".join(out), in_full
