"""A kept SQLite database opened only as the bytes that were checked (tree summaries, citation indexes).

Only a regular file is read (a FIFO or a device is refused unopened; a file of another size unread). The
checksum is computed over the file's bytes as read from one open file, then SQLite opens the same file
read-only: if the file was replaced in between (another process kept a new one), its inode differs and
the open is refused, so every row read is of the bytes that were checked.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

from git_memzoi.runtime.checksum import file_checksum
from git_memzoi.runtime.private import trusted


def schema_rows(script: str) -> list[Any]:
    """What sqlite_schema holds for a database `script` makes: its tables and indexes, in name order."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(script)
        return conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name").fetchall()
    finally:
        conn.close()


def open_checked(path: Path, checksum: str, schema: list[Any], what: str) -> sqlite3.Connection:
    """`path` opened read-only when its size and CRC-32 are `checksum` and its schema rows are `schema`;
    ValueError naming what is wrong otherwise (`what`: the kind of database expected)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO would block an open without it
    try:
        seen = os.fstat(fd)
        if not stat.S_ISREG(seen.st_mode) or seen.st_size == 0 or not trusted(seen):
            raise ValueError("an empty file, not a file, or one another account could have written")
        if not checksum.endswith(f"-{seen.st_size}") or file_checksum(fd, seen.st_size) != checksum:
            raise ValueError("a database altered after writing")
        conn = sqlite3.connect(f"{path.absolute().as_uri()}?mode=ro&immutable=1", uri=True)
        try:
            found = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY name").fetchall()
            now = os.stat(path)
        except (sqlite3.Error, OSError):
            conn.close()
            raise
    finally:
        os.close(fd)
    if (now.st_ino, now.st_dev) != (seen.st_ino, seen.st_dev):
        conn.close()
        raise ValueError("a database replaced while it was opened")
    if found != schema:
        conn.close()
        raise ValueError(f"not {what}")
    return conn
