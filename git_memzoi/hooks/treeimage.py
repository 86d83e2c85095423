"""A validated tree's per-file rows as an SQLite database image, read a row at a time.

A kept tree summary (hooks/treecache.py) is a small SQLite database: one row per file (its
blob, facts and own problems), one per record ID a file refers to, and the cross-file errors of
each file. A check reads back the rows of the files its change touches, and of the files sharing
an ID with them or referring to them, through the primary key and indexes: at 50,000 records
that is a few rows, where parsing a JSON summary of the whole tree was most of a gate's time.
The file is checked against its size and CRC-32 first (as zip and PNG check theirs: a torn
write, a flipped bit or a truncation is found, and a file of another size is not read at all;
the one pass over its bytes is in C, a few milliseconds at 50,000 records), then read in
place. A new summary is a copy of the file with the rows of the changed files replaced.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from collections.abc import Iterable, Iterator
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from git_memzoi.index.checked_db import open_checked, schema_rows
from git_memzoi.runtime.checksum import file_checksum

_SCHEMA = """
CREATE TABLE files(
    path TEXT PRIMARY KEY, oid TEXT NOT NULL, symlink INTEGER NOT NULL,
    kind TEXT, ident TEXT, facts TEXT, problems TEXT, errors INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX files_by_id ON files(kind, ident) WHERE kind IS NOT NULL;
CREATE INDEX files_with_errors ON files(path) WHERE errors = 1;
CREATE TABLE refs(path TEXT NOT NULL, ref TEXT NOT NULL, PRIMARY KEY (path, ref)) WITHOUT ROWID;
CREATE INDEX refs_by_ref ON refs(ref);
CREATE TABLE cross(path TEXT PRIMARY KEY, problems TEXT NOT NULL) WITHOUT ROWID;
"""
_TABLES = ("cross", "files", "refs")


class FileRow(NamedTuple):
    """One file as a summary holds it: its blob, whether a symlink, its facts' row and own problems' rows."""

    oid: str
    symlink: bool
    facts: list[Any] | None
    problems: list[list[Any]]


class Written(NamedTuple):
    """What an image holds of one file: its row (None: absent), the record IDs it refers to, its cross errors."""

    path: str
    row: FileRow | None
    refs: Iterable[str]
    cross: list[list[Any]]


def _dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


class TreeImage:
    """A tree summary's database, read in place, for lookups by path, by ID and by referred record."""

    def __init__(self, path: Path, checksum: str) -> None:
        """Open the database at `path`, whose size and CRC-32 must be `checksum` (ValueError when they are not):
        `index.checked_db.open_checked`, so every row read is of the bytes that were checked."""
        self.path, self.checksum = path, checksum
        self.conn = open_checked(path, checksum, _schema(), "a tree summary's database")

    def file(self, path: str) -> FileRow | None:
        found = self.conn.execute("SELECT oid, symlink, facts, problems FROM files WHERE path = ?", (path,)).fetchone()
        if found is None:
            return None
        oid, symlink, facts, problems = found
        return FileRow(oid, bool(symlink), json.loads(facts) if facts else None, json.loads(problems or "[]"))

    def cross(self, path: str) -> list[list[Any]]:
        found = self.conn.execute("SELECT problems FROM cross WHERE path = ?", (path,)).fetchone()
        return json.loads(found[0]) if found is not None else []

    def with_id(self, kind: str, ident: str) -> list[str]:
        """The files whose facts are of `kind` with ID `ident`."""
        rows = self.conn.execute("SELECT path FROM files WHERE kind = ? AND ident = ?", (kind, ident))
        return [path for (path,) in rows]

    def referrers(self, ref: str) -> list[str]:
        """The files that refer to record ID `ref`."""
        return [path for (path,) in self.conn.execute("SELECT path FROM refs WHERE ref = ?", (ref,))]

    def error_rows(self) -> Iterator[tuple[str, list[list[Any]], bool]]:
        """Each file with an error: its own problems' rows (False) or its cross errors' rows (True)."""
        for path, problems in self.conn.execute("SELECT path, problems FROM files WHERE errors = 1"):
            yield path, json.loads(problems), False
        for path, problems in self.conn.execute("SELECT path, problems FROM cross"):
            yield path, json.loads(problems), True

    def ids(self) -> Iterator[tuple[str, str, str]]:
        """(path, kind, ID) of every record and packet."""
        yield from self.conn.execute("SELECT path, kind, ident FROM files WHERE kind IS NOT NULL")

    def paths(self) -> Iterator[tuple[str, str, bool]]:
        """(path, blob, symlink) of every file."""
        for path, oid, symlink in self.conn.execute("SELECT path, oid, symlink FROM files"):
            yield path, oid, bool(symlink)

    def count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM files").fetchone()[0])

    def write(self, files: Iterable[Written], dest: Path) -> str:
        """A copy of this database at `dest` with each file's rows replaced by `files`' (a row of None:
        removed); its checksum. ValueError when the file at its path is no longer the one checked."""
        shutil.copyfile(self.path, dest)
        with dest.open("rb") as copy:
            if file_checksum(copy.fileno(), os.fstat(copy.fileno()).st_size) != self.checksum:
                raise ValueError("a database replaced since it was opened")  # its rows are not the ones read
        return _written(dest, files, fresh=False)

    @staticmethod
    def create(files: Iterable[Written], dest: Path) -> str:
        """A new database at `dest` holding `files`; its checksum."""
        return _written(dest, files, fresh=True)


def _written(dest: Path, files: Iterable[Written], *, fresh: bool) -> str:
    """Write `files` into the database at `dest` (a new one when `fresh`) and return the file's CRC-32.

    No journal and no sync: the file is a temporary one until it is renamed into place, and a
    file torn by a crash fails its checksum.
    """
    conn = sqlite3.connect(dest)
    try:
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        if fresh:
            conn.executescript(_SCHEMA)
        with conn:
            for one in files:
                if not fresh:
                    for table in _TABLES:
                        conn.execute(f"DELETE FROM {table} WHERE path = ?", (one.path,))
                _insert(conn, one)
    finally:
        conn.close()
    with dest.open("rb") as handle:
        return file_checksum(handle.fileno(), os.fstat(handle.fileno()).st_size)


@cache
def _schema() -> list[tuple[str, str, str, str | None]]:
    """What sqlite_schema of such a database holds, as `_SCHEMA` makes it."""
    return schema_rows(_SCHEMA)


def _insert(conn: sqlite3.Connection, one: Written) -> None:
    if one.row is not None:
        facts = one.row.facts
        conn.execute(
            "INSERT INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (
                one.path,
                one.row.oid,
                int(one.row.symlink),
                facts[0] if facts else None,
                facts[1] if facts else None,
                _dumps(facts) if facts else None,
                _dumps(one.row.problems) if one.row.problems else None,
                int(any(row[3] == "error" for row in one.row.problems)),
            ),
        )
        conn.executemany("INSERT INTO refs VALUES (?, ?)", [(one.path, ref) for ref in sorted(set(one.refs))])
    if one.cross:
        conn.execute("INSERT INTO cross VALUES (?, ?)", (one.path, _dumps(one.cross)))
