"""Path, mode and blob OID of every entry of git's index file, read without loading pygit2 (a speed path).

Only the plain case is read: index version 2 or 3 of a SHA-1 repository whose checksum holds,
no conflicts, no split or sparse index, UTF-8 paths. Anything else returns None and the caller
asks pygit2, so what a caller sees is what pygit2's index gives either way.
"""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

_HEADER = struct.Struct(">4sLL")
# ctime s/ns, mtime s/ns, dev, ino, mode, uid, gid, size, sha1, flags
_ENTRY = struct.Struct(">LLLLLLLLLL20sH")
_EXTENSION = struct.Struct(">4sL")
_EXTENDED_FLAG, _STAGE = 0x4000, 0x3000
_CHECKSUM = 20
#: Extensions that move entries elsewhere (a split index's shared file, a sparse index's directories).
_ELSEWHERE = (b"link", b"sdir")


def entries(git_dir: Path) -> list[tuple[str, int, str]] | None:
    """(path, mode, blob OID) of each index entry in the index's order, or None when pygit2 must read it."""
    try:
        data = (git_dir / "index").read_bytes()
    except OSError:
        return None
    if len(data) < _HEADER.size + _CHECKSUM or hashlib.sha1(data[:-_CHECKSUM]).digest() != data[-_CHECKSUM:]:
        return None  # no index, SHA-256 object names, index.skipHash, or a torn file
    signature, version, count = _HEADER.unpack_from(data, 0)
    if signature != b"DIRC" or version not in (2, 3):
        return None
    out: list[tuple[str, int, str]] = []
    offset = _HEADER.size
    try:
        for _ in range(count):
            fields = _ENTRY.unpack_from(data, offset)
            mode, sha, flags = fields[6], fields[10], fields[11]
            start = offset + _ENTRY.size + (2 if flags & _EXTENDED_FLAG else 0)
            end = data.index(b"\0", start)
            if flags & _STAGE:
                return None  # a conflict: leave its several stages to pygit2
            out.append((data[start:end].decode("utf-8"), mode, sha.hex()))
            # entries are padded with 1-8 NULs to a multiple of 8 bytes
            offset += ((end - offset) // 8 + 1) * 8
        while offset < len(data) - _CHECKSUM:
            name, size = _EXTENSION.unpack_from(data, offset)
            if name in _ELSEWHERE:
                return None
            offset += _EXTENSION.size + size
    except (struct.error, ValueError):  # UnicodeDecodeError is a ValueError
        return None
    return out
