"""Standing rules: the repository-wide records of the kinds that hold everywhere, in the order an agent needs them.

A record is a standing rule when it is current, may leave this machine, has no `applies_to` (or an
entry covering the whole repository) and is a convention, constraint, preference, risk, warning,
decision or procedure. They are ranked risks and warnings first, then by confidence, then newest
first, then by ID. `render` writes them as full text while a character budget lasts and as one
line each (title, ID) after that. Stdlib only: the agent hooks answer with them.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

from git_memzoi.index import queries
from git_memzoi.index.index_db import RecordRow
from git_memzoi.index.queries import Filter
from git_memzoi.recall.text import clean_body

#: Kinds of record that hold everywhere when nothing narrows them to a path.
STANDING_TYPES = ("risk", "warning", "constraint", "convention", "decision", "preference", "procedure")
#: `applies_to` entries that cover the whole repository.
WHOLE_REPOSITORY = frozenset({"**", "./**", ".", "./", "/**"})
_FIRST = {"risk": 0, "warning": 0}


def is_standing(row: RecordRow) -> bool:
    """Whether a row is a standing rule (its type holds everywhere and nothing narrows it to a path)."""
    if row.type not in STANDING_TYPES:
        return False
    entries = json.loads(row.applies_json)
    return not entries or any(str(entry).strip() in WHOLE_REPOSITORY for entry in entries)


def rank(row: RecordRow) -> tuple[int, float, str, str]:
    """Sort key: risks and warnings first, then higher confidence, then newer, then by ID."""
    inverted = "".join(chr(0x10FFFF - ord(c)) for c in row.timestamp)  # newest first within a confidence
    return (_FIRST.get(row.type, 1), -float(row.confidence), inverted, row.record_id)


def standing_rules(conn: sqlite3.Connection, at: float) -> list[RecordRow]:
    """Every current, shareable standing rule in `rank` order."""
    rows = queries.unscoped(conn, Filter(now=at, types=STANDING_TYPES), sorted(WHOLE_REPOSITORY))
    return sorted((row for row in rows if is_standing(row)), key=rank)


def full(row: RecordRow) -> str:
    """A record as full text: a heading with its type, title and ID, then its body."""
    kind = row.type.replace("_", " ").capitalize()
    return f"### {kind}: {row.title} ({row.record_id})\n\n{clean_body(row.title, row.body)}\n"


def line(row: RecordRow) -> str:
    """A record as one line: title and ID."""
    return f"- {row.title} ({row.record_id})\n"


def render(rows: Iterable[RecordRow], limit: int) -> tuple[str, list[str]]:
    """(text, IDs given in full) for `rows` in order: full text while it fits `limit` characters, then one line each.

    Once one record had to be shortened to a line, every later one is a line too, so the order stays the
    ranking; lines stop when the budget is spent.
    """
    out: list[str] = []
    used = 0
    in_full: list[str] = []
    short = False
    for row in rows:
        text = "" if short else full(row)
        if not short and used + len(text) + 1 > limit:
            short = True
        if short:
            text = line(row)
            if used + len(text) > limit:
                break
        else:
            in_full.append(row.record_id)
            if out:
                text = "\n" + text
        out.append(text)
        used += len(text)
    return "".join(out), in_full
