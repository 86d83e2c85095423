"""freshness.db: each record's freshness as judged at one HEAD commit (derived; rebuilt when HEAD moves).

One file per worktree beside index.db. A judging pass writes a new file under a temp name and
`os.replace`s it, so a reader sees the verdicts of one HEAD or none; readers open it read-only.
A row keeps the blob the verdict was judged from (`judged_oid`, empty when the work tree's file
was not HEAD's and so was not judged), the blob HEAD holds at that path (`head_oid`), and
whether a cited path was gone (`moved`: its verdict names where it went, which any change of
the code may change). `cites` holds what each judged record cites (its scopes, paths and
names): when HEAD moves, the records citing what the move changed are found there, and only
they are judged again (`advance`: a copy of the file with their rows replaced).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

from git_memzoi.runtime.private import create_private, private_folder, trusted

SCHEMA_VERSION = 2
_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE verdicts (path TEXT PRIMARY KEY, judged_oid TEXT NOT NULL, head_oid TEXT NOT NULL, "
    "state TEXT NOT NULL, since TEXT, evidence TEXT NOT NULL, moved INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID",
    "CREATE TABLE cites (word TEXT NOT NULL, path TEXT NOT NULL, PRIMARY KEY (word, path)) WITHOUT ROWID",
    "CREATE INDEX cites_by_path ON cites(path)",
)
_COLUMNS = "path, judged_oid, head_oid, state, since, evidence"


class StoredVerdict(NamedTuple):
    """One record file's row: the blobs it was judged from and HEAD holds, and the verdict as JSON evidence."""

    path: str
    judged_oid: str
    head_oid: str
    state: str
    since: str | None
    evidence: str  # JSON list of change objects


class Judged(NamedTuple):
    """A row to keep: the verdict, what the record cites, and whether a cited path was gone."""

    verdict: StoredVerdict
    cites: Sequence[str] = ()
    moved: bool = False


def _open(path: Path) -> sqlite3.Connection | None:
    """The file opened read-only when it is a regular file of this schema (not a symlink: a FIFO in its place would
    block SQLite's open, and a link would read a file outside MEMZOI_HOME); None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        seen = os.fstat(fd)
        if not stat.S_ISREG(seen.st_mode) or not trusted(seen):
            return None
        conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro", uri=True, isolation_level=None)
    except (OSError, sqlite3.Error, ValueError):
        return None
    finally:
        os.close(fd)
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        now = os.lstat(path)
        if version == SCHEMA_VERSION and (now.st_ino, now.st_dev) == (seen.st_ino, seen.st_dev):
            return conn
    except (OSError, sqlite3.Error):
        pass
    conn.close()
    return None


def _rows(conn: sqlite3.Connection, paths: Sequence[str]) -> dict[str, StoredVerdict]:
    out: dict[str, StoredVerdict] = {}
    for start in range(0, len(paths), 500):
        chunk = list(paths[start : start + 500])
        marks = ", ".join("?" * len(chunk))
        sql = f"SELECT {_COLUMNS} FROM verdicts WHERE path IN ({marks})"
        out.update((row[0], StoredVerdict(*row)) for row in conn.execute(sql, chunk))
    return out


def read(path: Path, head: str, paths: Sequence[str]) -> dict[str, StoredVerdict] | None:
    """The stored rows of `paths` when the file was judged at `head`; None when it is missing, unreadable or older."""
    conn = _open(path)
    if conn is None:
        return None
    try:
        stored = conn.execute("SELECT value FROM meta WHERE key = 'head'").fetchone()
        if stored is None or stored[0] != head:
            return None
        return _rows(conn, paths)
    except sqlite3.Error:
        return None
    finally:
        conn.close()


class Kept(NamedTuple):
    """What a file judged at another HEAD says about the records a move of HEAD may change."""

    head: str
    citing: set[str]  # the records citing one of the words asked
    moved: set[str]  # the records whose verdict names a gone path
    unjudged: set[str]  # the rows not judged (the work tree's file was not HEAD's)
    rows: dict[str, StoredVerdict]  # the rows of all these


def head_of(path: Path) -> str | None:
    """The HEAD commit the file was judged at (None: no file of this schema, or a damaged one)."""
    conn = _open(path)
    if conn is None:
        return None
    try:
        head = conn.execute("SELECT value FROM meta WHERE key = 'head'").fetchone()
        return None if head is None else str(head[0])
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def kept(path: Path, head: str, words: Iterable[str], *, moved: bool) -> Kept | None:
    """What the file judged at `head` holds for a move of HEAD: the records citing one of `words`, those not
    judged, those whose verdict names a gone path (with `moved`), and their rows (None: not judged at `head`)."""
    conn = _open(path)
    if conn is None:
        return None
    try:
        if conn.execute("SELECT value FROM meta WHERE key = 'head'").fetchone() != (head,):
            return None
        asked = sorted(set(words))
        citing: set[str] = set()
        for start in range(0, len(asked), 500):
            chunk = asked[start : start + 500]
            sql = f"SELECT path FROM cites WHERE word IN ({', '.join('?' * len(chunk))})"
            citing.update(p for (p,) in conn.execute(sql, chunk))
        gone = {p for (p,) in conn.execute("SELECT path FROM verdicts WHERE moved = 1")} if moved else set()
        unjudged = {p for (p,) in conn.execute("SELECT path FROM verdicts WHERE judged_oid = ''")}
        return Kept(head, citing, gone, unjudged, _rows(conn, sorted(citing | gone | unjudged)))
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def _insert(conn: sqlite3.Connection, rows: Iterable[Judged]) -> None:
    for one in rows:
        conn.execute(f"INSERT OR REPLACE INTO verdicts ({_COLUMNS}, moved) VALUES (?, ?, ?, ?, ?, ?, ?)",
                     (*one.verdict, int(one.moved)))  # fmt: skip
        conn.executemany("INSERT OR IGNORE INTO cites VALUES (?, ?)", ((w, one.verdict.path) for w in one.cites))


def write(path: Path, head: str, rows: Iterable[Judged]) -> None:
    """Replace the file with the verdicts judged at `head` (a temp file, then one rename)."""
    _replace(path, head, rows, fresh=True)


def advance(path: Path, head: str, rows: Iterable[Judged], dropped: Iterable[str], old_head: str) -> None:
    """Replace the file with a copy judged at `head`: the rows of `dropped` and of `rows` replaced by `rows`.

    ValueError when the file is no longer the one judged at `old_head` (another process moved it on).
    """
    _replace(path, head, rows, fresh=False, dropped=dropped, old_head=old_head)


def _replace(
    path: Path, head: str, rows: Iterable[Judged], *, fresh: bool, dropped: Iterable[str] = (), old_head: str = ""
) -> None:
    private_folder(path.parent)
    temp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    try:
        temp.unlink(missing_ok=True)
        create_private(temp)  # runtime state is its owner's alone (runtime/private.py)
        if not fresh:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as source, temp.open("wb") as copy:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise ValueError("freshness.db is not a file")
                shutil.copyfileobj(source, copy)
        conn = sqlite3.connect(temp, isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode = OFF")
            conn.execute("PRAGMA synchronous = OFF")
            if fresh:
                for statement in _SCHEMA:
                    conn.execute(statement)
            elif conn.execute("SELECT value FROM meta WHERE key = 'head'").fetchone() != (old_head,):
                raise ValueError("freshness.db was judged at another HEAD meanwhile")
            conn.execute("BEGIN")
            for table in ("verdicts", "cites"):
                conn.executemany(f"DELETE FROM {table} WHERE path = ?", ((p,) for p in dropped))
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('head', ?)", (head,))
            _insert(conn, rows)
            conn.execute("COMMIT")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        finally:
            conn.close()
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
