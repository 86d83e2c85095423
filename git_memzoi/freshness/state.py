"""Freshness at read time: the verdicts of the records a reader shows, judged once per HEAD commit.

A reader passes the rows it is about to show; their verdicts come from freshness.db when it was
judged at the HEAD commit the git directory names now (a file read and one query). When HEAD
has moved, the file is moved on to it, judging only the records the move may change
(`_advance`); a shown record with no row yet (nothing was kept, or it was never shown) is judged
then (`freshness.judge`) and its row added, so a read judges what it shows, never every record.
A record file the work tree holds as HEAD does is judged; one that differs from HEAD's (an
apply not yet committed, a new file) was written after HEAD and is `current` with no `since`.
Runtime memory (local and session records) cites no commit and is always `current`.
A failure to ask git leaves every record `current`: freshness never stops a read.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import MemzoiError
from git_memzoi.gitrepo import headref
from git_memzoi.index import freshness_store, queries
from git_memzoi.index.freshness_store import Judged, StoredVerdict
from git_memzoi.layout import RECORDS

if TYPE_CHECKING:
    from git_memzoi.index.index_db import RecordRow
    from git_memzoi.runtime.workspace import Workspace


def current() -> dict[str, Any]:
    """The freshness object of a record with nothing to check (or runtime memory)."""
    return {"state": "current", "since": None, "evidence": []}


#: The changes that name a gone path: where it went may change with any change of the code.
_MOVED = frozenset({"deleted", "renamed", "scope-empty"})
_Source = tuple[str, str, str, str | None, str]


def _judge_rows(
    ws: Workspace,
    head: str,
    sources: Sequence[_Source],
    at_head: Callable[[list[str]], dict[str, str]],
    known: dict[str, str] | None = None,
) -> list[Judged]:
    """Judge the records `sources` holds (index.db's rows) at `head`; `at_head` gives the blobs HEAD holds.

    A file that cites nothing is current; one whose bytes are not HEAD's is current, not judged
    (an empty `judged_oid`); the others are judged, `known` naming the commits that still last wrote some.
    """
    # the judge and its git processes load only when HEAD moved (a lookup is all a hook pays otherwise)
    from git_memzoi.freshness.evidence import extract
    from git_memzoi.freshness.judge import Subject, judge

    rows: list[Judged] = []
    cited = {}
    for path, oid, applies_json, source_ref, body in sources:
        evidence = extract(json.loads(applies_json), source_ref, body)
        if evidence.empty:
            rows.append(Judged(StoredVerdict(path, oid, oid, "current", None, "[]")))
        else:
            cited[path] = (oid, evidence)
    blobs = at_head(list(cited)) if cited else {}
    subjects = []
    for path, (oid, evidence) in cited.items():
        if blobs.get(path, "") == oid:
            subjects.append(Subject(path, evidence))
        else:
            rows.append(Judged(StoredVerdict(path, "", blobs.get(path, ""), "current", None, "[]")))
    for path, verdict in judge(ws.repo, head, subjects, known).items():
        oid, evidence = cited[path]
        evidence_json = json.dumps([c.as_dict() for c in verdict.evidence])
        rows.append(
            Judged(
                StoredVerdict(path, oid, oid, verdict.state, verdict.since, evidence_json),
                (*evidence.scopes, *evidence.paths, *evidence.identifiers),
                any(c.change in _MOVED for c in verdict.evidence),
            )
        )
    return rows


def _fill(
    ws: Workspace, conn: sqlite3.Connection, head: str, paths: list[str], *, kept: bool
) -> dict[str, StoredVerdict]:
    """Judge the records at `paths` at `head` and keep their rows: added to freshness.db when it was judged at
    `head` (`kept`), else in a new one holding them alone. Returns them by path."""
    from git_memzoi.gitrepo import codehistory

    def at_head(asked: list[str]) -> dict[str, str]:
        if len(asked) > 1000:  # one listing of the records folder costs less than that many lookups
            return codehistory.tree_blobs(ws.repo, head, RECORDS)
        kinds = codehistory.object_kinds(ws.repo, [(head, p) for p in asked])
        return {p: found[0] for p in asked if (found := kinds.get((head, p))) is not None}

    rows = _judge_rows(ws, head, queries.cited_sources(conn, paths), at_head)
    db = ws.layout.freshness_db
    try:
        if kept:
            freshness_store.advance(db, head, rows, paths, head)
        else:
            freshness_store.write(db, head, rows)
    except (OSError, ValueError, sqlite3.Error):
        pass  # a read-only home, or another process judged meanwhile: the verdicts still answer this read
    return {one.verdict.path: one.verdict for one in rows}


def _folders(path: str) -> Iterator[str]:
    """`path` and every folder above it."""
    parts = path.split("/")
    for end in range(len(parts), 0, -1):
        yield "/".join(parts[:end])


def _may_move(ws: Workspace, kept: freshness_store.Kept, code: dict[str, str]) -> set[str]:
    """The records whose gone path git's rename detection may pair otherwise after the code changes `code`.

    It pairs the files gone since the record's commit with those added since: a file added or deleted
    now may change any pairing; an edit only that of a file that did not exist at the record's commit.
    """
    from git_memzoi.gitrepo import codehistory

    if not code or not kept.moved:
        return set()
    if any(status != "M" for status in code.values()):
        return kept.moved
    sinces = {row.since for p in kept.moved if (row := kept.rows.get(p)) is not None and row.since}
    kinds = codehistory.object_kinds(ws.repo, [(since, path) for since in sinces for path in code])
    new_since = {since for since in sinces if any(kinds.get((since, path)) is None for path in code)}
    return {p for p in kept.moved if (row := kept.rows.get(p)) is None or row.since in new_since or not row.since}


def _advance(
    ws: Workspace, conn: sqlite3.Connection, head: str, shown: Sequence[str]
) -> dict[str, StoredVerdict] | None:
    """Move freshness.db from the HEAD it was judged at to `head`, judging only the records the move may change.

    Those are the record files a commit on either side of the move wrote (or that differ), each
    record citing a path the move added or deleted (or a folder of one) or a name on a line it added
    or removed, those not judged then, and, when the code changed at all, those whose verdict names
    a gone path (git's rename detection may pair it with another file now). Every other verdict
    holds as it was: its record, its writing commit, and everything it cites are as they were.
    None when there is no kept file, or the move cannot be read (the caller judges what it shows).
    """
    from git_memzoi.gitrepo import codehistory
    from git_memzoi.layout import MEMZOI_DIR

    db = ws.layout.freshness_db
    old = freshness_store.head_of(db)
    if old is None or old == head:
        return None
    try:
        changed = codehistory.changed_status(ws.repo, old, head)
        code = {p: status for p, status in changed.items() if not p.startswith(MEMZOI_DIR + "/")}
        names = codehistory.touched_names(ws.repo, old, head, MEMZOI_DIR) if code else set()
        written = {p for p in changed if p.startswith(RECORDS + "/")}
        written |= codehistory.written_between(ws.repo, old, head, RECORDS)
        # an edit in place changes no path's existence: only the names on its lines
        words = {folder for p, status in code.items() if status != "M" for folder in _folders(p)} | names
        kept = freshness_store.kept(db, old, words, moved=bool(code))
        if kept is None:
            return None
        again = (kept.citing | kept.unjudged | _may_move(ws, kept, code)) - written
        known = {p: row.since for p, row in kept.rows.items() if p in again and row.since is not None}

        def at_head(paths: list[str]) -> dict[str, str]:
            blobs = {p: kept.rows[p].head_oid for p in paths if p in again and p in kept.rows}
            asked = [p for p in paths if p not in blobs]
            kinds = codehistory.object_kinds(ws.repo, [(head, p) for p in asked])
            return blobs | {p: found[0] for p in asked if (found := kinds.get((head, p))) is not None}

        rows = _judge_rows(ws, head, queries.cited_sources(conn, sorted(again | written)), at_head, known)
        freshness_store.advance(db, head, rows, again | written, old)
    except (MemzoiError, OSError, ValueError, sqlite3.Error):
        return None  # an old HEAD gone from the repository, a file moved on meanwhile: judge what is shown
    return freshness_store.read(db, head, shown)


def _unjudged(stored: dict[str, StoredVerdict] | None, row: RecordRow) -> bool:
    """Whether a shown file is to be judged now: it has no row at HEAD, or it now holds HEAD's blob but was judged
    from other bytes (the work tree was reverted to HEAD)."""
    kept = stored.get(row.path) if stored is not None else None
    return kept is None or (row.oid != kept.judged_oid and row.oid == kept.head_oid)


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
        paths = [row.path for row in shown]
        stored = freshness_store.read(ws.layout.freshness_db, head, paths)
        if stored is None:
            stored = _advance(ws, conn, head, paths)
        missing = [row.path for row in shown if _unjudged(stored, row)]
        found = stored or {}
        if missing:
            found |= _fill(ws, conn, head, missing, kept=stored is not None)
    except (MemzoiError, OSError, ValueError, sqlite3.Error):
        return out  # git could not be asked (codehistory.GitQueryError), or the kept verdicts are damaged
    for row in shown:
        kept = found.get(row.path)
        if kept is not None and kept.judged_oid == row.oid and kept.state != "current":
            out[row.path] = {"state": kept.state, "since": kept.since, "evidence": _evidence(kept.evidence)}
        elif kept is not None and kept.judged_oid == row.oid:
            out[row.path] = {"state": "current", "since": kept.since, "evidence": []}
    return out
