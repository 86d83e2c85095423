"""The stat sweep of .memzoi/records/ and the stat signatures the staleness checks compare, stdlib only.

`scan.scan_records` keeps every file's stat for a build; `sweep` keeps only the fingerprint a
no-op rebuild compares (`digest`: every path and its stat, `STAT_FIELDS`, in walk order), walking the same
folders in the same order. It is imported before click on the start-up path, so it needs
nothing but the standard library, and its loop is as tight as Python allows (see `sweep`).

A stat is what git's index compares: size, mtime, ctime, inode and device. The ctime is what
gives away an edit whose mtime was put back (`touch -r`, `cp -p`, `rsync -t`, `tar x`): no
call sets it. The inode and device give away a file replaced by another with the same size and
times (two records swapped by `mv`). A file whose mtime is not older than the moment its
content was last confirmed, less RACY_NS (coarse file system clocks), is "racy": a second
change within the same timestamp tick would not show, so its stat is never trusted and it is
hashed again (git's racy-clean rule, which looks at the mtime alone: a ctime cannot be set back,
so an edit after the stat was taken shows in it). Stats that vouched for something
are kept in small JSON caches (`load_cache`, `store_cache`): the index's check file, and the
stats shared.db had when its integrity check last passed.
"""

from __future__ import annotations

import json
import os
import time

from git_memzoi.layout import MEMZOI_DIR, RECORDS
from git_memzoi.runtime.private import FILE_MODE

#: Timestamps closer than this to the moment they were read are not trusted (coarse clocks).
RACY_NS = 2_000_000_000
#: The stat of a record file, as the index stores it and the digest folds it in, in this order.
STAT_FIELDS = ("size", "mtime_ns", "ctime_ns", "ino", "dev")
#: Inodes and device numbers are unsigned 64-bit; SQLite and the digest hold signed ones (`signed64`).
MAX_SIGNED = (1 << 63) - 1


def signed64(n: int) -> int:
    """An unsigned 64-bit number (an inode, a device) as the signed one with the same bits."""
    return n - (1 << 64) if n > MAX_SIGNED else n


_FORMAT, _REGULAR, _DIRECTORY, _SYMLINK = 0o170000, 0o100000, 0o040000, 0o120000  # stat.S_IFMT and kinds


def digest(paths: list[str], numbers: list[int]) -> str:
    """The fingerprint of a walk: every file's path, then its stat (`STAT_FIELDS`), in walk order."""
    return digest_joined("\0".join(paths), numbers)


def digest_joined(paths: str, numbers: list[int]) -> str:
    """`digest`, from the paths already joined by NUL."""
    from array import array

    try:
        from _blake2 import blake2b  # CPython's own: hashlib loads OpenSSL (ms); _sha1 is 6x slower
    except ImportError:
        from hashlib import blake2b
    data = paths.encode("utf-8", "surrogateescape") + b"\1" + array("q", numbers).tobytes()
    return str(blake2b(data, digest_size=20).hexdigest())


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
        with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE), "w", encoding="utf-8") as handle:
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
    relative to the open folder (cheaper than DirEntry objects and their stats); a plain
    record file (a regular file, an ASCII name ending in .md) costs that and one list extend
    (`_folder`), everything else goes through `_other`; the newest mtime is taken from the
    numbers at the end.
    """
    if os.path.islink(os.path.join(workdir, MEMZOI_DIR)) or os.path.islink(os.path.join(workdir, RECORDS)):
        return None
    dirs = {MEMZOI_DIR: dir_signature(os.path.join(workdir, MEMZOI_DIR), now_ns)}
    chunks: list[str] = []  # per folder: its record files' paths, NUL-separated
    numbers: list[int] = []  # the stat of each (STAT_FIELDS), in the same order
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
        try:
            names = _folder(fd, prefix, numbers, stack)
        except OSError:
            return None  # a name gone between listing and stat, or an unreadable folder: the scan decides
        finally:
            os.close(fd)
        if names is None:
            return None
        if names:
            chunks.append(prefix + ("\0" + prefix).join(names))
    newest = max(numbers[1 :: len(STAT_FIELDS)], default=0)
    try:
        found = digest_joined("\0".join(chunks), numbers)
    except OverflowError:  # an inode or device past the signed 64-bit range: as SQLite would hold it
        found = digest_joined("\0".join(chunks), [signed64(n) for n in numbers])
    return Swept(found, newest, dirs, len(numbers) // len(STAT_FIELDS))


def _folder(fd: int, prefix: str, numbers: list[int], stack: list[str]) -> list[str] | None:
    """The record files of the open folder `fd`, their stats added to `numbers`, its folders to `stack`; None: stop."""
    names: list[str] = []
    keep = names.append
    extend = numbers.extend
    lstat = os.lstat
    for name in os.listdir(fd):  # the order os.scandir gives scan_records
        st = lstat(name, dir_fd=fd)
        if st.st_mode & _FORMAT == _REGULAR and name[-3:] == ".md" and name.isascii():
            keep(name)
            extend((st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev))
        elif not _other(name, st, prefix, names, numbers, stack):
            return None
    return names


def _other(name: str, st: os.stat_result, prefix: str, names: list[str], numbers: list[int], stack: list[str]) -> bool:
    """`sweep`'s every other name: a folder to walk, a record file with a non-ASCII name, one to skip; False: stop."""
    kind = st.st_mode & _FORMAT
    if not name.isascii() and not utf8_name(name):
        return not (name.endswith(".md") or kind == _DIRECTORY)
    if kind == _REGULAR and name.endswith(".md"):
        names.append(name)
        numbers.extend((st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev))
    elif kind == _DIRECTORY:
        stack.append(prefix + name)
    elif kind == _SYMLINK and name.endswith(".md"):
        return False
    return True
