"""The content-addressed parse cache: what a record file's bytes parse to, keyed by its git blob OID.

It lives under the repository key (`Layout.parse_cache`), so every linked worktree of a
repository shares it: a file another worktree already parsed is never parsed again. It is a
cache: when it is unreadable it is set aside and rebuilt, never trusted half-way. Entries are
tagged with the parser version; a different version discards them.

It is bounded: at most `MAX_ENTRIES` entries. A write that goes past the bound drops the
entries written longest ago (SQLite rowid order; rewriting an entry moves it to the end) until
`KEEP_FRACTION` of the bound is left, so trimming is rare and costs one indexed delete. An entry
dropped while its record is still current is parsed again on the next miss: the bound costs
time, never correctness. Deleted pages are reused, so the file stays near its high-water mark.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (the start-up path reads the index)
if TYPE_CHECKING:
    from typing import Any

from git_memzoi.index.staleness import PARSER_VERSION  # noqa: E402  (after the TYPE_CHECKING stand-in)
from git_memzoi.runtime.private import create_private, private_folder  # noqa: E402

__all__ = ["PARSER_VERSION", "ParseCache"]
_BATCH = 500
#: Enough for every version of every record a large repository keeps current several times over.
MAX_ENTRIES = 100_000
KEEP_FRACTION = 0.9
#: The page cache of the writing handle.
WRITER_CACHE_KIB = 256


class ParseCache:
    """A read-through store of parse results (JSON payloads) by blob OID."""

    def __init__(self, conn: sqlite3.Connection | None, max_entries: int = MAX_ENTRIES) -> None:
        self.conn = conn
        self.max_entries = max_entries

    @classmethod
    def open(cls, path: Path, *, readonly: bool = False, max_entries: int = MAX_ENTRIES) -> ParseCache:
        """Open (or create) the cache; an unusable one is moved aside and the cache starts empty.

        `readonly` only reads (a worker process looking entries up); a missing or unreadable
        cache then just has no entries. `max_entries` is the bound writes keep.
        """
        if readonly:
            try:
                conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=5.0, isolation_level=None)
                row = conn.execute("SELECT value FROM meta WHERE key = 'parser'").fetchone()
                if row is None or row[0] != PARSER_VERSION:
                    conn.close()
                    return cls(None)
                return cls(conn)
            except sqlite3.DatabaseError:
                return cls(None)
        for attempt in (1, 2):
            try:
                private_folder(path.parent)
                create_private(path)
                conn = sqlite3.connect(path, timeout=5.0, isolation_level=None, check_same_thread=False)
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = OFF")  # a cache: losing the last writes costs a re-parse
                # this handle mostly inserts (lookups open their own, read-only): a small page cache keeps a
                # build's resident memory flat (BENCHMARKS.md, rebuild peak memory)
                conn.execute(f"PRAGMA cache_size = -{WRITER_CACHE_KIB}")
                conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                conn.execute("CREATE TABLE IF NOT EXISTS parsed (oid TEXT PRIMARY KEY, payload TEXT NOT NULL)")
                row = conn.execute("SELECT value FROM meta WHERE key = 'parser'").fetchone()
                if row is None or row[0] != PARSER_VERSION:
                    conn.execute("BEGIN IMMEDIATE")
                    conn.execute("DELETE FROM parsed")
                    conn.execute("INSERT OR REPLACE INTO meta VALUES ('parser', ?)", (PARSER_VERSION,))
                    conn.execute("COMMIT")
                return cls(conn, max_entries)
            except (sqlite3.DatabaseError, OSError):
                if attempt == 2:
                    return cls(None)
                _set_aside(path)
        return cls(None)

    def get_many(self, oids: Iterable[str]) -> dict[str, Any]:
        """Cached payloads for the OIDs it holds."""
        if self.conn is None:
            return {}
        wanted = list(dict.fromkeys(oids))
        found: dict[str, Any] = {}
        try:
            for start in range(0, len(wanted), _BATCH):
                chunk = wanted[start : start + _BATCH]
                marks = ",".join("?" * len(chunk))
                for oid, payload in self.conn.execute(f"SELECT oid, payload FROM parsed WHERE oid IN ({marks})", chunk):
                    found[oid] = json.loads(payload)
        except (sqlite3.DatabaseError, ValueError):
            return {}
        return found

    def put_many(self, entries: dict[str, str]) -> None:
        """Store payloads given as JSON text; a cache that cannot be written is simply not updated."""
        if self.conn is None or not entries:
            return
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.executemany("INSERT OR REPLACE INTO parsed (oid, payload) VALUES (?, ?)", entries.items())
            self._trim()
            self.conn.execute("COMMIT")
        except sqlite3.DatabaseError:
            try:
                self.conn.execute("ROLLBACK")
            except sqlite3.DatabaseError:
                pass

    def _trim(self) -> None:
        """Keep the bound: past it, drop the oldest-written entries down to KEEP_FRACTION of it."""
        assert self.conn is not None
        low, high = self.conn.execute("SELECT min(rowid), max(rowid) FROM parsed").fetchone()
        if high is None or high - low + 1 <= self.max_entries:
            return  # the rowid span bounds the count from above: no scan needed
        count = self.conn.execute("SELECT count(*) FROM parsed").fetchone()[0]
        if count <= self.max_entries:
            return
        drop = count - int(self.max_entries * KEEP_FRACTION)
        self.conn.execute(
            "DELETE FROM parsed WHERE rowid IN (SELECT rowid FROM parsed ORDER BY rowid LIMIT ?)", (drop,)
        )

    def count(self) -> int:
        """How many entries the cache holds (0 when it is unusable)."""
        if self.conn is None:
            return 0
        try:
            return int(self.conn.execute("SELECT count(*) FROM parsed").fetchone()[0])
        except sqlite3.DatabaseError:
            return 0

    def close(self) -> None:
        """Close the connection (the cache can be reopened)."""
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def _set_aside(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        target = Path(f"{path}{suffix}")
        if target.exists():
            try:
                os.replace(target, Path(f"{path}.broken{suffix}"))
            except OSError:
                pass
