"""Blob OIDs of unchanged tracked files, read from the git index's stat cache instead of hashing them.

git records each tracked file's stat data next to its blob OID when it checks the file out or
stages it; a work-tree file whose size, mtime, ctime, inode and device still match (and that is
not "racily clean": changed in the same instant the index was written) holds exactly that blob.
Entries git itself does not check against the work tree are left out: assume-unchanged (git
trusts them whatever their stat) and skip-worktree (outside a sparse checkout). This is
how `git status` avoids reading files, and how a fresh linked worktree avoids hashing every
record. Only index versions 2 and 3 are read; anything else (or anything unexpected) returns
nothing, and the caller hashes the files as usual.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

#: path -> (blob OID, size, mtime_ns, ctime_ns, inode, device), size, inode and device as the low
#: 32 bits git keeps.
Tracked = dict[str, tuple[str, int, int, int, int, int]]

_HEADER = struct.Struct(">4sLL")
# ctime s/ns, mtime s/ns, dev, ino, mode, uid, gid, size, sha1, flags
_ENTRY = struct.Struct(">LLLLLLLLLL20sH")
_EXTENDED = struct.Struct(">H")
_ASSUME_VALID, _EXTENDED_FLAG, _STAGE = 0x8000, 0x4000, 0x3000
_SKIP_WORKTREE = 0x4000  # in the extended flags


def tracked_stats(git_dir: Path, prefix: str) -> Tracked | None:
    """path -> (blob OID, size, mtime_ns, ctime_ns, inode, device) for index entries under `prefix`, or None.

    None when the index is unreadable. Size, inode and device are the low 32 bits git keeps;
    compare them with `& 0xFFFFFFFF`. Entries modified in the second before the index file was
    written are left out (racily clean), and so are assume-unchanged and skip-worktree ones.
    """
    path = git_dir / "index"
    try:
        with open(path, "rb") as handle:
            data = handle.read()
            index_mtime = os.fstat(handle.fileno()).st_mtime_ns
    except OSError:
        return None
    if len(data) < _HEADER.size:
        return None
    signature, version, count = _HEADER.unpack_from(data, 0)
    if signature != b"DIRC" or version not in (2, 3):
        return None
    wanted = prefix.encode("utf-8")
    out: Tracked = {}
    offset = _HEADER.size
    racy_before = index_mtime - 1_000_000_000
    try:
        for _ in range(count):
            (ctime_s, ctime_n, mtime_s, mtime_n, dev, ino, _mode, _uid, _gid, size, sha, flags) = _ENTRY.unpack_from(
                data, offset
            )
            start = offset + _ENTRY.size
            extended = 0
            if flags & _EXTENDED_FLAG:  # extended flags (version 3): two more bytes
                (extended,) = _EXTENDED.unpack_from(data, start)
                start += 2
            end = data.index(b"\0", start)
            name = data[start:end]
            # entries are padded with 1-8 NULs to a multiple of 8 bytes
            offset += ((end - offset) // 8 + 1) * 8
            if not name.startswith(wanted) or flags & (_STAGE | _ASSUME_VALID) or extended & _SKIP_WORKTREE:
                continue  # a conflict, or an entry whose stat git does not keep true
            mtime_ns = mtime_s * 1_000_000_000 + mtime_n
            ctime_ns = ctime_s * 1_000_000_000 + ctime_n
            if mtime_ns >= racy_before:  # git's rule: the mtime alone (the ctime must match as well)
                continue
            out[name.decode("utf-8", "surrogateescape")] = (sha.hex(), size, mtime_ns, ctime_ns, ino, dev)
    except (struct.error, ValueError):
        return None
    return out
