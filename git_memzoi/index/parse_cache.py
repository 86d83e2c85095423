"""The content-addressed parse cache: what a record file's bytes parse to, keyed by its git blob OID.

It lives under the repository key (`Layout.parse_cache`), so every linked worktree of a
repository shares it: a file another worktree already parsed is never parsed again. It is a
cache: when it is unreadable it is set aside and rebuilt, never trusted half-way. Entries are
tagged with the parser version; a different version discards them.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from git_memzoi import __version__

#: Bump when what a parse produces changes shape; the package version is part of the key too.
PARSER_VERSION = f"{__version__}+p1"
_BATCH = 500


class ParseCache:
    """A read-through store of parse results (JSON payloads) by blob OID."""

    def __init__(self, conn: sqlite3.Connection | None) -> None:
        self.conn = conn

    @classmethod
    def open(cls, path: Path, *, readonly: bool = False) -> "ParseCache":
        """Open (or create) the cache; an unusable one is moved aside and the cache starts empty.

        `readonly` only reads (a worker process looking entries up); a missing or unreadable
        cache then just has no entries.
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
                path.parent.mkdir(parents=True, exist_ok=True)
                conn = sqlite3.connect(path, timeout=5.0, isolation_level=None, check_same_thread=False)
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = OFF")  # a cache: losing the last writes costs a re-parse
                conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                conn.execute("CREATE TABLE IF NOT EXISTS parsed (oid TEXT PRIMARY KEY, payload TEXT NOT NULL)")
                row = conn.execute("SELECT value FROM meta WHERE key = 'parser'").fetchone()
                if row is None or row[0] != PARSER_VERSION:
                    conn.execute("BEGIN IMMEDIATE")
                    conn.execute("DELETE FROM parsed")
                    conn.execute("INSERT OR REPLACE INTO meta VALUES ('parser', ?)", (PARSER_VERSION,))
                    conn.execute("COMMIT")
                return cls(conn)
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
                chunk = wanted[start:start + _BATCH]
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
            self.conn.execute("COMMIT")
        except sqlite3.DatabaseError:
            try:
                self.conn.execute("ROLLBACK")
            except sqlite3.DatabaseError:
                pass

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
