"""Precheck: risk, warning and failed_attempt records that apply to a path, command or action.

A path matches through `applies_to` (an entry covers it, or lies inside the folder given).
A command or action matches through its words: a record must mention at least two of them
(or the only one), so `git push --force` finds "never force-push to main" but a record that
merely mentions "git" does not. Warnings come most severe first: risks, then warnings, then
failed attempts; within a type, the most specific match first.
"""

from __future__ import annotations

import sqlite3
from contextlib import nullcontext
from typing import TYPE_CHECKING, Literal

from git_memzoi.errors import UsageError
from git_memzoi.freshness import state as freshness
from git_memzoi.index import fts, queries
from git_memzoi.index.index_db import RecordRow
from git_memzoi.index.queries import Filter
from git_memzoi.recall import paths as pathmatch
from git_memzoi.recall.models import PrecheckResult, PrecheckWarning
from git_memzoi.recall.records import citation, index_connection, now
from git_memzoi.recall.text import clean_body

if TYPE_CHECKING:
    from git_memzoi.runtime.workspace import Workspace

SEVERITY = {"risk": 1, "warning": 2, "failed_attempt": 3}
#: (row, what matched, rank within its type: lower is more specific)
Found = tuple[RecordRow, str, tuple[int, ...]]


def _filter(at: float) -> Filter:
    """Current, shareable, warning-shaped records (precheck never reads private or local memory)."""
    return Filter(now=at, types=tuple(SEVERITY))


def _message(row: RecordRow) -> str:
    text = row.description or clean_body(row.title, row.body).split("\n\n")[0]
    flat = " ".join(text.split())
    return flat if len(flat) <= 400 else flat[:399].rstrip() + "…"


def next_step(kind: str, record_id: str, subject: str, value: str) -> str:
    """What to do before going ahead."""
    doing = {"path": f"changing {value}", "command": f"running `{value}`", "action": value}[subject]
    if kind == "risk":
        return f"Read {record_id} before {doing}; confirm the mitigation it describes or ask a reviewer."
    if kind == "warning":
        return f"Follow {record_id} while {doing}, or get explicit approval to deviate from it."
    return f"This was tried before and failed: read {record_id} for why before {doing} again."


def _by_path(conn: sqlite3.Connection, path: str, flt: Filter) -> list[Found]:
    out: dict[int, Found] = {}
    for row, entry, base in queries.covering(conn, pathmatch.ancestors(path), flt):
        rank = (0, -len(base))  # covers the path; deeper scopes are more specific
        if row.rowid not in out or rank < out[row.rowid][2]:
            out[row.rowid] = (row, entry, rank)
    for row, entry in queries.inside(conn, path, flt):
        if row.rowid not in out:
            out[row.rowid] = (row, f"{entry} (inside {path})", (1, 0))
    return list(out.values())


def by_words(conn: sqlite3.Connection, text: str, flt: Filter) -> list[Found]:
    """Rows `flt` keeps whose text holds at least two of the text's significant words (or its only one)."""
    significant = fts.significant(text)
    if not significant:
        return []
    words = list(significant)
    held = queries.holding_terms(conn, [fts.terms(word)[0] for word in words], min(2, len(words)), flt)
    return [(row, "words: " + ", ".join(words[i] for i in which), (0, -len(which))) for row, which in held]


def precheck(
    ws: Workspace,
    *,
    path: str | None = None,
    command: str | None = None,
    action: str | None = None,
    conn: sqlite3.Connection | None = None,
) -> PrecheckResult:
    """Warnings that apply to exactly one of a path, a command or an action, most severe first.

    `conn`: an index connection the caller opened (and closes) for several questions of one moment,
    so the index is checked against the files once, not once per question.
    """
    given = [
        (name, value) for name, value in (("path", path), ("command", command), ("action", action)) if value is not None
    ]
    if len(given) != 1:
        raise UsageError("give exactly one of path, command or action")
    subject: Literal["path", "command", "action"] = given[0][0]  # type: ignore[assignment]
    value = given[0][1]
    if not value.strip():
        raise UsageError("must not be empty", field=subject)
    flt = _filter(now()[1])
    with nullcontext(conn) if conn is not None else index_connection(ws) as db:
        if subject == "path":
            value = pathmatch.normalise(value, ws.repo.workdir)
            found = _by_path(db, value, flt)
        else:
            found = by_words(db, value, flt)
        fresh = freshness.verdicts(ws, db, [row for row, _, _ in found])
    # an unverified record follows the current ones of the same type and match
    found.sort(
        key=lambda f: (
            SEVERITY[f[0].type],
            f[2],
            fresh[f[0].path]["state"] != "current",
            -float(f[0].confidence),
            f[0].record_id,
            f[0].path,
        )
    )
    warnings = [
        PrecheckWarning(
            record_id=row.record_id,
            type=row.type,
            severity=SEVERITY[row.type],
            title=row.title,
            message=_message(row),
            matched=matched,
            next_step=next_step(row.type, row.record_id, subject, value),
            citation=citation(row),
            freshness=fresh[row.path],
        )
        for row, matched, _ in found
    ]
    return PrecheckResult(subject=subject, value=value, warnings=warnings)
