"""Precheck: risk, warning and failed_attempt records that apply to a path, command or action.

A path matches through `applies_to` (an entry covers it, or lies inside the folder given).
A command or action matches through its words: a record must mention at least two of them
(or the only one), so `git push --force` finds "never force-push to main" but a record that
merely mentions "git" does not. Warnings come most severe first: risks, then warnings, then
failed attempts; within a type, the most specific match first.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from git_memzoi.errors import UsageError
from git_memzoi.index import fts
from git_memzoi.index.rebuild import current_filter, open_index
from git_memzoi.recall import paths as pathmatch
from git_memzoi.recall.context import clean_body
from git_memzoi.recall.models import PrecheckResult, PrecheckWarning
from git_memzoi.recall.records import C, SELECT, SHARED_ONLY, citation, now_params

if TYPE_CHECKING:
    from git_memzoi.runtime.workspace import Workspace

SEVERITY = {"risk": 1, "warning": 2, "failed_attempt": 3}
_TYPES = "r.type IN ('risk', 'warning', 'failed_attempt')"


#: Current, shareable, warning-shaped records (precheck never reads private or local memory).
_WHERE = f"{current_filter('r')} AND {SHARED_ONLY} AND {_TYPES}"


def _message(row: Sequence[Any]) -> str:
    text = row[C["description"]] or clean_body(row[C["title"]], row[C["body"]]).split("\n\n")[0]
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


def _by_path(conn: sqlite3.Connection, path: str, params: dict[str, Any]) -> list[tuple[Any, str, tuple[int, ...]]]:
    bound = {k: v for k, v in params.items() if not k.startswith("_")}
    out: dict[int, tuple[Any, str, tuple[int, ...]]] = {}
    names = {f"a{i}": base for i, base in enumerate(pathmatch.ancestors(path))}
    sql = (f"SELECT {SELECT}, a.entry, a.base FROM applies a JOIN records r ON r.rowid = a.record "
           f"WHERE a.base IN ({', '.join(':' + n for n in names)}) AND {_WHERE}")
    for row in conn.execute(sql, bound | names):
        rank = (0, -len(row[len(C) + 1]))  # covers the path; deeper scopes are more specific
        rowid = row[C["rowid"]]
        if rowid not in out or rank < out[rowid][2]:
            out[rowid] = (row[: len(C)], row[len(C)], rank)
    sql = (f"SELECT {SELECT}, a.entry FROM applies a JOIN records r ON r.rowid = a.record "
           f"WHERE a.base > :lo AND a.base < :hi AND {_WHERE}")
    for row in conn.execute(sql, bound | {"lo": path + "/", "hi": path + "0"}):
        rowid = row[C["rowid"]]
        if rowid not in out:
            out[rowid] = (row[: len(C)], f"{row[len(C)]} (inside {path})", (1, 0))
    return list(out.values())


def _by_words(conn: sqlite3.Connection, text: str, params: dict[str, Any]) -> list[tuple[Any, str, tuple[int, ...]]]:
    bound = {k: v for k, v in params.items() if not k.startswith("_")}
    significant = fts.significant(text)
    if not significant:
        return []
    needed = min(2, len(significant))
    matched: dict[int, list[str]] = {}
    rows: dict[int, Any] = {}
    for word in significant:
        sql = (f"SELECT {SELECT} FROM records_fts JOIN records r ON r.rowid = records_fts.rowid "
               f"WHERE records_fts MATCH :match AND {_WHERE}")
        for row in conn.execute(sql, bound | {"match": fts.terms(word)[0]}):
            rowid = row[C["rowid"]]
            rows[rowid] = row
            matched.setdefault(rowid, []).append(word)
    out: list[tuple[Any, str, tuple[int, ...]]] = []
    for rowid, hits in matched.items():
        if len(hits) >= needed:
            out.append((rows[rowid], "words: " + ", ".join(hits), (0, -len(hits))))
    return out


def precheck(ws: "Workspace", *, path: str | None = None, command: str | None = None,
             action: str | None = None) -> PrecheckResult:
    """Warnings that apply to exactly one of a path, a command or an action, most severe first."""
    given = [(name, value) for name, value in (("path", path), ("command", command), ("action", action))
             if value is not None]
    if len(given) != 1:
        raise UsageError("give exactly one of --path, --command or --action")
    subject: Literal["path", "command", "action"] = given[0][0]  # type: ignore[assignment]
    value = given[0][1]
    if not value.strip():
        raise UsageError(f"--{subject} must not be empty")
    params = now_params()
    conn = open_index(ws)
    try:
        if subject == "path":
            value = pathmatch.normalise(value, ws.repo.workdir)
            found = _by_path(conn, value, params)
        else:
            found = _by_words(conn, value, params)
    finally:
        conn.close()
    found.sort(key=lambda f: (SEVERITY[f[0][C["type"]]], f[2], -float(f[0][C["confidence"]]), f[0][C["record_id"]]))
    warnings = [
        PrecheckWarning(record_id=row[C["record_id"]], type=row[C["type"]], severity=SEVERITY[row[C["type"]]],
                        title=row[C["title"]], message=_message(row), matched=matched,
                        next_step=next_step(row[C["type"]], row[C["record_id"]], subject, value),
                        citation=citation(row))
        for row, matched, _ in found
    ]
    return PrecheckResult(subject=subject, value=value, warnings=warnings)
