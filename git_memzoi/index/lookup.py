"""Record facts for the lifecycle's write paths, looked up in index.db at the cost of the question.

`open_records` hands out the installed index when its last check still vouches for the set of
record files (every folder's signature unchanged, or, for a folder changed too recently to
trust its signature, the same names in it as the index holds), and otherwise refreshes it as
the read path does. A file edited in place without its folder changing is seen at the next
sweep of the read path, as every reader sees it; the lifecycle reads the bytes of the files it
acts on itself.
"""

from __future__ import annotations

import os
import sqlite3
from typing import TYPE_CHECKING

from git_memzoi.errors import StateError
from git_memzoi.index import index_db, staleness
from git_memzoi.index.scan import dirs_unchanged
from git_memzoi.layout import MEMZOI_DIR, RECORDS

if TYPE_CHECKING:
    from git_memzoi.runtime.workspace import Workspace


def open_records(ws: Workspace) -> sqlite3.Connection:
    """A read-only index.db that holds every record file the work tree holds (refreshed first when unsure)."""
    from git_memzoi.index.index_db import connect_installed
    from git_memzoi.index.rebuild import open_index

    conn = connect_installed(ws.layout.index_db)
    if conn is not None:
        if _vouched(ws, conn):
            return conn
        conn.close()
    return open_index(ws)


def _vouched(ws: Workspace, conn: sqlite3.Connection) -> bool:
    try:
        meta = index_db.read_meta(conn)
    except StateError:
        return False
    check = staleness.read_check(ws.layout.index_db)
    workdir = str(ws.repo.require_workdir())
    if (
        not meta
        or check is None
        or check.get("build_id") != meta.get("build_id")
        or meta.get("parser") != staleness.parser_version()
        or check.get("workdir") != workdir
    ):
        return False
    dirs: dict[str, list[int] | None] = check.get("dirs") or {}
    if RECORDS not in dirs:
        return False
    for rel, sig in dirs.items():
        if rel == MEMZOI_DIR:
            continue  # log.md and packets change it; records/ has its own entry
        if sig is not None:
            if not dirs_unchanged(workdir, {rel: sig}):
                return False
        elif not _same_names(conn, workdir, rel, dirs):
            return False
    return True


def _same_names(conn: sqlite3.Connection, workdir: str, rel: str, dirs: dict[str, list[int] | None]) -> bool:
    """Does folder `rel` hold exactly the names the index knows in it (record files and folders)?

    Any other name (a symlink, a stray file) also counts as a difference: it only costs a refresh.
    """
    try:
        names = set(os.listdir(os.path.join(workdir, rel)))
    except OSError:
        return False
    prefix = rel + "/"
    start = len(prefix) + 1
    known = {key[len(prefix) :] for key in dirs if key.startswith(prefix) and "/" not in key[len(prefix) :]}
    for table in ("files", "invalid"):
        known.update(
            row[0]
            for row in conn.execute(
                f"SELECT substr(path, ?) FROM {table} WHERE path > ? AND path < ? AND instr(substr(path, ?), '/') = 0",
                (start, prefix, prefix + "\U0010ffff", start),
            )
        )
    return names == known


def with_id(conn: sqlite3.Connection, record_id: str) -> list[tuple[str, str, str]]:
    """(path, status, scope) of every valid repository record with this ID."""
    rows = conn.execute(
        "SELECT path, status, scope FROM records WHERE store = 'repo' AND record_id = ?", (record_id,)
    ).fetchall()
    return [(str(path), str(status), str(scope)) for path, status, scope in rows]


def record_ids(conn: sqlite3.Connection) -> set[str]:
    """The ID of every valid repository record (one query, for callers that ask about many IDs)."""
    return {str(row[0]) for row in conn.execute("SELECT record_id FROM records WHERE store = 'repo'")}


def invalid_paths(conn: sqlite3.Connection) -> list[str]:
    """Record files the index holds as invalid (or as duplicates of another's ID)."""
    return [str(row[0]) for row in conn.execute("SELECT path FROM invalid ORDER BY path")]


def documents(conn: sqlite3.Connection, containing: str | None) -> list[tuple[str, str]]:
    """(path, text) of the valid repository records whose text contains `containing` (all when None)."""
    sql = "SELECT path, document FROM records WHERE store = 'repo'"
    rows = (
        conn.execute(sql + " AND instr(document, ?) > 0", (containing,))
        if containing is not None
        else conn.execute(sql)
    )
    return [(str(path), str(text)) for path, text in rows]
