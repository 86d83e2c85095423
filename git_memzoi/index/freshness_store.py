"""freshness.db: each record's freshness as judged at one HEAD commit (derived; rebuilt when HEAD moves).

One file per worktree beside index.db. A judging pass writes a new file under a temp name and
`os.replace`s it, so a reader sees the verdicts of one HEAD or none; readers open it read-only.
A row keeps the blob the verdict was judged from (`judged_oid`, empty when the work tree's file
was not HEAD's and so was not judged) and the blob HEAD holds at that path (`head_oid`).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from git_memzoi.runtime.private import create_private, private_folder

SCHEMA_VERSION = 1
_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE verdicts (path TEXT PRIMARY KEY, judged_oid TEXT NOT NULL, head_oid TEXT NOT NULL, "
    "state TEXT NOT NULL, since TEXT, evidence TEXT NOT NULL) WITHOUT ROWID",
)


class StoredVerdict(NamedTuple):
    """One record file's row: the blobs it was judged from and HEAD holds, and the verdict as JSON evidence."""

    path: str
    judged_oid: str
    head_oid: str
    state: str
    since: str | None
    evidence: str  # JSON list of change objects


def read(path: Path, head: str, paths: Sequence[str]) -> dict[str, StoredVerdict] | None:
    """The stored rows of `paths` when the file was judged at `head`; None when it is missing, unreadable or older."""
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, isolation_level=None)
    except (sqlite3.Error, ValueError):
        return None
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
            return None
        stored = conn.execute("SELECT value FROM meta WHERE key = 'head'").fetchone()
        if stored is None or stored[0] != head:
            return None
        out: dict[str, StoredVerdict] = {}
        for start in range(0, len(paths), 500):
            chunk = list(paths[start : start + 500])
            marks = ", ".join("?" * len(chunk))
            sql = f"SELECT path, judged_oid, head_oid, state, since, evidence FROM verdicts WHERE path IN ({marks})"
            out.update((row[0], StoredVerdict(*row)) for row in conn.execute(sql, chunk))
        return out
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def write(path: Path, head: str, rows: Iterable[StoredVerdict]) -> None:
    """Replace the file with the verdicts judged at `head` (a temp file, then one rename)."""
    private_folder(path.parent)
    temp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    try:
        temp.unlink(missing_ok=True)
        create_private(temp)  # runtime state is its owner's alone (runtime/private.py)
        conn = sqlite3.connect(temp, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode = OFF")
            conn.execute("PRAGMA synchronous = OFF")
            for statement in _SCHEMA:
                conn.execute(statement)
            conn.execute("BEGIN")
            conn.execute("INSERT INTO meta VALUES ('head', ?)", (head,))
            conn.executemany("INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?, ?, ?, ?)", rows)
            conn.execute("COMMIT")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        finally:
            conn.close()
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
