"""The stat sweep of .memzoi/records/ and the stat signatures the staleness checks compare, stdlib only.

`scan.scan_records` keeps every file's stat for a build; `sweep` keeps only the fingerprint a
no-op rebuild compares (`digest`: every path, size and mtime in walk order), walking the same
folders in the same order. It is imported before click on the start-up path, so it needs
nothing but the standard library, and its loop is as tight as Python allows (see `sweep`).

Stats taken too close to the moment they were read are "racy" (a second change within the
same timestamp tick would not show) and are never trusted. Stats that vouched for something
are kept in small JSON caches (`load_cache`, `store_cache`): the index's check file, and the
stats shared.db had when its integrity check last passed.
"""

from __future__ import annotations

import json
import os
import time

from git_memzoi.layout import MEMZOI_DIR, RECORDS

#: Timestamps closer than this to the moment they were read are not trusted (coarse clocks).
RACY_NS = 2_000_000_000
_FORMAT, _REGULAR, _DIRECTORY, _SYMLINK = 0o170000, 0o100000, 0o040000, 0o120000  # stat.S_IFMT and kinds


def digest(paths: list[str], numbers: list[int]) -> str:
    """The fingerprint of a walk: every file's path, then its size and mtime, in walk order."""
    return digest_joined("\0".join(paths), numbers)


def digest_joined(paths: str, numbers: list[int]) -> str:
    """`digest`, from the paths already joined by NUL."""
    from array import array

    try:
        from _sha1 import sha1  # CPython's own: hashlib loads OpenSSL (ms)
    except ImportError:
        from hashlib import sha1
    return str(sha1(paths.encode("utf-8", "surrogateescape") + b"\1" + array("q", numbers).tobytes()).hexdigest())


def dir_signature(full: str, now_ns: int) -> list[int] | None:
    """A folder's mtime and inode; [0, 0] when it is missing, None when too recent to trust."""
    try:
        st = os.lstat(full)  # lstat: a folder swapped for a symlink to it is a change
    except OSError:
        return [0, 0]  # missing: a folder appearing later changes this
    if st.st_mtime_ns >= now_ns - RACY_NS:
        return None
    return [st.st_mtime_ns, st.st_ino]


def dirs_unchanged(workdir: str, dirs: dict[str, list[int] | None]) -> bool:
    """True when every folder still has the stats it had (a racy or missing entry is a change)."""
    for rel, sig in dirs.items():
        if sig is None:
            return False
        try:
            st = os.lstat(os.path.join(workdir, rel))
        except OSError:
            if sig != [0, 0]:
                return False
            continue
        if st.st_mtime_ns != sig[0] or st.st_ino != sig[1]:
            return False
    return True


def file_stat_signature(path: str, now_ns: int | None = None) -> list[int] | None:
    """Stats of a SQLite file and its WAL (-1s when absent); with `now_ns`, None when too recent to trust."""
    out: list[int] = []
    for suffix in ("", "-wal"):
        try:
            st = os.stat(path + suffix)
        except OSError:
            out += [-1, -1, -1]
            continue
        if now_ns is not None and st.st_mtime_ns >= now_ns - RACY_NS:
            return None
        out += [st.st_size, st.st_mtime_ns, st.st_ino]
    return out


def utf8_name(name: str) -> bool:
    """False for a name os.scandir could not decode (it gives the bytes back as lone surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def load_cache(path: str) -> object:
    """A small JSON file of stats kept as a cache (the index's check file, shared.db's), or None."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None


def store_cache(path: str, data: object) -> None:
    """Replace such a cache in one step (no fsync: losing it only costs the check it saves)."""
    tmp = f"{path}.{os.getpid()}.{time.monotonic_ns()}"
    try:
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(data))
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


class Swept:
    """What `sweep` saw: the digest, the newest file mtime, the folder signatures, how many files."""

    __slots__ = ("digest", "dirs", "files", "newest_ns")

    def __init__(self, digest: str, newest_ns: int, dirs: dict[str, list[int] | None], files: int) -> None:
        self.digest = digest
        self.newest_ns = newest_ns
        self.dirs = dirs
        self.files = files


def sweep(workdir: str, now_ns: int) -> Swept | None:
    """Walk .memzoi/records/ as `scan.scan_records` does, keeping only its digest; None when a scan must decide.

    None means anything a plain walk does not settle: a symlink or a file name that is not
    UTF-8 (the scan reports those), a folder that cannot be read. One `lstat` per name,
    relative to the open folder (cheaper than DirEntry objects and their stats), and one
    string join per folder.
    """
    if os.path.islink(os.path.join(workdir, MEMZOI_DIR)) or os.path.islink(os.path.join(workdir, RECORDS)):
        return None
    dirs = {MEMZOI_DIR: dir_signature(os.path.join(workdir, MEMZOI_DIR), now_ns)}
    chunks: list[str] = []  # per folder: its record files' paths, NUL-separated
    numbers: list[int] = []  # size, mtime of each, in the same order
    add = numbers.append
    lstat = os.lstat
    count = newest = 0
    stack = [RECORDS]
    while stack:
        rel_dir = stack.pop()
        full_dir = os.path.join(workdir, rel_dir)
        dirs[rel_dir] = dir_signature(full_dir, now_ns)
        try:
            fd = os.open(full_dir, os.O_RDONLY | os.O_DIRECTORY)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError:
            return None
        prefix = rel_dir + "/"
        names: list[str] = []
        try:
            for name in os.listdir(fd):  # the order os.scandir gives scan_records
                st = lstat(name, dir_fd=fd)
                kind = st.st_mode & _FORMAT
                if not name.isascii() and not utf8_name(name):
                    if name.endswith(".md") or kind == _DIRECTORY:
                        return None
                elif kind == _REGULAR:
                    if name.endswith(".md"):
                        names.append(name)
                        add(st.st_size)
                        mtime = st.st_mtime_ns
                        add(mtime)
                        if mtime > newest:
                            newest = mtime
                elif kind == _DIRECTORY:
                    stack.append(prefix + name)
                elif kind == _SYMLINK and name.endswith(".md"):
                    return None
        except OSError:
            return None  # a name gone between listing and stat, or an unreadable folder: the scan decides
        finally:
            os.close(fd)
        if names:
            chunks.append(prefix + ("\0" + prefix).join(names))
            count += len(names)
    return Swept(digest_joined("\0".join(chunks), numbers), newest, dirs, count)
