"""Kept citation indexes: for one records tree (by OID), which record files cite which words (derived, rebuildable).

`hook check BASE..TIP` asks which record files at TIP cite a path the range deleted or renamed,
or a name it removed (freshness/invalidated.py); the words each file cites are kept here, one
database per records tree, so the answer is a lookup of the range's words alone. A tree's index
is a function of its OID and of the code that reads the words (the fingerprint the caller
passes), so one kept under `$MEMZOI_HOME/projects/<key>/cite-trees/` never goes stale.

Each kept tree is `<tree>.cite`, a header line (format, fingerprint, tree OID, the size and
CRC-32 of the database), and `<tree>.db` beside it. The database is checked against the header
before a row is read, then read in place from the same file (an inode that changed in between
is refused), as hooks/treeimage.py reads a validated tree's summary: a missing, damaged,
altered or replaced file, one of another format or fingerprint, or one that is not a regular
file is a miss, and the caller builds the index again. A new tree's index is a copy of a kept
one with the rows of the files that differ replaced, or made whole.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import tempfile
from collections.abc import Iterable
from contextlib import suppress
from functools import cache
from pathlib import Path

from git_memzoi.index.checked_db import open_checked, schema_rows
from git_memzoi.runtime.checksum import file_checksum
from git_memzoi.runtime.private import private_folder, trusted

#: Bump when what a kept index holds changes.
FORMAT = "memzoi-citations 2"
HEADER_SUFFIX = ".cite"
DB_SUFFIX = ".db"
TEMP_PREFIX = ".tmp-"
#: Records trees kept: the last few of each branch a check or a developer moves between.
KEEP = 16
#: The largest header read (a header is a line of a few hundred bytes).
MAX_HEADER_BYTES = 4096
#: The word a file is kept under when its words could not all be read (every lookup finds it).
EVERY = ""
_SCHEMA = """
CREATE TABLE cites(word TEXT NOT NULL, path TEXT NOT NULL, PRIMARY KEY (word, path)) WITHOUT ROWID;
"""
_DAMAGED = (OSError, ValueError, TypeError, IndexError, sqlite3.Error)


@cache
def _schema() -> list[tuple[str, str, str, str | None]]:
    """What sqlite_schema of such a database holds, as `_SCHEMA` makes it."""
    return schema_rows(_SCHEMA)


class Citations:
    """One kept records tree's index, checked and open read-only."""

    def __init__(self, path: Path, checksum: str) -> None:
        """Open the database at `path`, whose size and CRC-32 must be `checksum` (ValueError when they are not)."""
        self.path, self.checksum = path, checksum
        self.conn = open_checked(path, checksum, _schema(), "a citation index")

    def citing(self, words: Iterable[str]) -> set[str]:
        """The files that cite one of `words` (and those whose words could not all be read)."""
        asked = sorted({EVERY, *words})
        found: set[str] = set()
        for start in range(0, len(asked), 500):
            chunk = asked[start : start + 500]
            marks = ", ".join("?" * len(chunk))
            found.update(p for (p,) in self.conn.execute(f"SELECT path FROM cites WHERE word IN ({marks})", chunk))
        return found

    def close(self) -> None:
        self.conn.close()


class CitationStore:
    """Kept citation indexes by records tree OID, in one private folder."""

    def __init__(self, folder: Path, fingerprint: str) -> None:
        self.folder, self.fingerprint = folder, fingerprint

    def _header(self, tree: str) -> Path:
        return self.folder / f"{tree}{HEADER_SUFFIX}"

    def _db(self, tree: str) -> Path:
        return self.folder / f"{tree}{DB_SUFFIX}"

    def open(self, tree: str) -> Citations | None:
        """The kept index of `tree`, checked; None when there is none this code can trust."""
        try:
            fd = os.open(self._header(tree), os.O_RDONLY | os.O_NONBLOCK)
            with os.fdopen(fd, "rb") as handle:
                seen = os.fstat(fd)
                if not stat.S_ISREG(seen.st_mode) or seen.st_size > MAX_HEADER_BYTES or not trusted(seen):
                    raise ValueError("not a file of this account's, or larger than any header")
                header = json.loads(handle.read(MAX_HEADER_BYTES))
            if not isinstance(header, list) or header[:3] != [FORMAT, self.fingerprint, tree] or len(header) != 4:
                raise ValueError("another format, fingerprint or tree")
            found = Citations(self._db(tree), str(header[3]))
        except _DAMAGED:
            return None
        with suppress(OSError):
            os.utime(self._header(tree))  # recently used: pruned last
        return found

    def recent(self) -> list[str]:
        """The kept trees, the most recently used first."""
        found = []
        with suppress(OSError):
            for path in self.folder.glob(f"*{HEADER_SUFFIX}"):
                if not path.name.startswith(TEMP_PREFIX):
                    with suppress(OSError):
                        found.append((path.stat().st_mtime, path.name[: -len(HEADER_SUFFIX)]))
        return [tree for _, tree in sorted(found, reverse=True)]

    def save(
        self,
        tree: str,
        rows: Iterable[tuple[str, Iterable[str]]],
        base: Citations | None = None,
        drop: Iterable[str] = (),
    ) -> bool:
        """Keep the index of `tree`: `base`'s rows less those of the files in `drop`, plus `rows` (path, words).

        Best effort: a folder that cannot be written keeps nothing, and the next check builds it again.
        """
        try:
            private_folder(self.folder)
            fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=DB_SUFFIX, dir=self.folder)
            os.close(fd)
            try:
                checksum = _written(Path(tmp), rows, base, drop)
                os.replace(tmp, self._db(tree))
            finally:
                Path(tmp).unlink(missing_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=HEADER_SUFFIX, dir=self.folder)
            with os.fdopen(fd, "w") as handle:
                handle.write(json.dumps([FORMAT, self.fingerprint, tree, checksum]) + "\n")
            os.replace(tmp, self._header(tree))
            self._prune()
        except (OSError, ValueError, sqlite3.Error):
            return False
        return True

    def _prune(self) -> None:
        """Delete all but the KEEP most recently used trees (a header and its database)."""
        for tree in self.recent()[KEEP:]:
            for path in (self._header(tree), self._db(tree)):
                with suppress(OSError):
                    path.unlink(missing_ok=True)


def _written(dest: Path, rows: Iterable[tuple[str, Iterable[str]]], base: Citations | None, drop: Iterable[str]) -> str:
    """Write the database at `dest` (a copy of `base`'s, checked, when given) and return its checksum."""
    if base is not None:
        with base.path.open("rb") as source, dest.open("wb") as copy:
            data = source.read()
            copy.write(data)
        with dest.open("rb") as handle:
            if file_checksum(handle.fileno(), os.fstat(handle.fileno()).st_size) != base.checksum:
                raise ValueError("a database replaced since it was opened")
    conn = sqlite3.connect(dest)
    try:
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        if base is None:
            conn.executescript(_SCHEMA)
        with conn:
            dropped = sorted(set(drop))
            for start in range(0, len(dropped), 500):  # one pass over the rows for each 500 files
                chunk = dropped[start : start + 500]
                conn.execute(f"DELETE FROM cites WHERE path IN ({', '.join('?' * len(chunk))})", chunk)
            pairs = ((word, path) for path, words in rows for word in words)
            conn.executemany("INSERT OR IGNORE INTO cites VALUES (?, ?)", pairs)
    finally:
        conn.close()
    with dest.open("rb") as handle:
        return file_checksum(handle.fileno(), os.fstat(handle.fileno()).st_size)
