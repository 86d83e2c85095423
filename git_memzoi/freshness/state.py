"""Freshness at read time: the verdicts of the records a reader shows, judged once per HEAD commit.

A reader passes the rows it is about to show; their verdicts come from freshness.db when it was
judged at the HEAD commit the git directory names now (a file read and one query), and
otherwise every repository record is judged once (`freshness.judge`) and the file replaced.
A record file the work tree holds as HEAD does is judged; one that differs from HEAD's (an
apply not yet committed, a new file) was written after HEAD and is `current` with no `since`.
Runtime memory (local and session records) cites no commit and is always `current`.
A failure to ask git leaves every record `current`: freshness never stops a read.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import MemzoiError
from git_memzoi.gitrepo import headref
from git_memzoi.index import freshness_store, queries
from git_memzoi.index.freshness_store import StoredVerdict
from git_memzoi.layout import RECORDS

if TYPE_CHECKING:
    from git_memzoi.index.index_db import RecordRow
    from git_memzoi.runtime.workspace import Workspace


def current() -> dict[str, Any]:
    """The freshness object of a record with nothing to check (or runtime memory)."""
    return {"state": "current", "since": None, "evidence": []}


def _rejudge(ws: Workspace, conn: sqlite3.Connection, head: str) -> dict[str, StoredVerdict]:
    """Judge every repository record at `head`, keep the verdicts in freshness.db, and return them by path."""
    # the judge and its git processes load only when HEAD moved (a lookup is all a hook pays otherwise)
    from git_memzoi.freshness.evidence import extract
    from git_memzoi.freshness.judge import Subject, judge
    from git_memzoi.gitrepo import codehistory

    cited = []
    stored: dict[str, StoredVerdict] = {}
    for path, oid, applies_json, source_ref, body in queries.cited_sources(conn):
        evidence = extract(json.loads(applies_json), source_ref, body)
        if evidence.empty:
            stored[path] = StoredVerdict(path, oid, oid, "current", None, "[]")
        else:
            cited.append((path, oid, evidence))
    at_head = codehistory.tree_blobs(ws.repo, head, RECORDS) if cited else {}
    subjects = []
    for path, oid, evidence in cited:
        head_oid = at_head.get(path, "")
        if head_oid == oid:
            subjects.append(Subject(path, evidence))
        else:
            stored[path] = StoredVerdict(path, "", head_oid, "current", None, "[]")
    oids = {path: oid for path, oid, _ in cited}
    for path, verdict in judge(ws.repo, head, subjects).items():
        evidence_json = json.dumps([c.as_dict() for c in verdict.evidence])
        stored[path] = StoredVerdict(path, oids[path], oids[path], verdict.state, verdict.since, evidence_json)
    try:
        freshness_store.write(ws.layout.freshness_db, head, stored.values())
    except (OSError, sqlite3.Error):
        pass  # a read-only home: the verdicts still answer this read
    return stored


def _stale(stored: dict[str, StoredVerdict], rows: Sequence[RecordRow]) -> bool:
    """A shown file now holds HEAD's blob, but was judged from other bytes (the work tree was reverted to HEAD)."""
    for row in rows:
        kept = stored.get(row.path)
        if kept is not None and row.oid != kept.judged_oid and row.oid == kept.head_oid:
            return True
    return False


def _evidence(text: str) -> list[dict[str, Any]]:
    """The kept evidence list (an empty one when freshness.db was damaged: it is derived, and judged again)."""
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _head(ws: Workspace) -> str | None:
    answered, sha = headref.head_from_files(ws.repo.git_dir, ws.repo.common_dir)
    if answered:
        return sha
    from git_memzoi.gitrepo import codehistory

    return codehistory.head_commit(ws.repo)


def verdicts(ws: Workspace, conn: sqlite3.Connection, rows: Sequence[RecordRow]) -> dict[str, dict[str, Any]]:
    """The `freshness` object of each row, by record path (index.db `conn` open, for a judging pass)."""
    out = {row.path: current() for row in rows}
    shown = [row for row in rows if row.store == "repo"]
    if not shown:
        return out
    try:
        head = _head(ws)
        if head is None:
            return out
        stored = freshness_store.read(ws.layout.freshness_db, head, [row.path for row in shown])
        if stored is None or _stale(stored, shown):
            stored = _rejudge(ws, conn, head)
    except (MemzoiError, OSError, ValueError, sqlite3.Error):
        return out  # git could not be asked (codehistory.GitQueryError), or the kept verdicts are damaged
    for row in shown:
        kept = stored.get(row.path)
        if kept is not None and kept.judged_oid == row.oid and kept.state != "current":
            out[row.path] = {"state": kept.state, "since": kept.since, "evidence": _evidence(kept.evidence)}
        elif kept is not None and kept.judged_oid == row.oid:
            out[row.path] = {"state": "current", "since": kept.since, "evidence": []}
    return out
