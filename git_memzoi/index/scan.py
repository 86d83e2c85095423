"""What the work tree holds under .memzoi/records/: file stats and the folder signature.

The folder signature (each folder's mtime and inode) changes whenever a file is created,
removed, renamed or atomically replaced, and costs one stat per folder: the cheap half of
the staleness check. Stats taken too close to the moment they were read are "racy" (a second
change within the same timestamp tick would not show) and are never trusted.
"""

from __future__ import annotations

import hashlib
import os
from array import array
from dataclasses import dataclass, field
from typing import NamedTuple

from git_memzoi.errors import Refused, printable
from git_memzoi.layout import MEMZOI_DIR, RECORDS

#: Timestamps closer than this to the moment they were read are not trusted (coarse clocks).
RACY_NS = 2_000_000_000


class FileStat(NamedTuple):
    """A record file's stat (a tuple: tens of thousands are made per sweep)."""

    size: int
    mtime_ns: int
    ino: int


@dataclass
class Scan:
    """Every record file, the folders that hold them, and files that cannot be records (symlinks, non-UTF-8 names)."""

    files: dict[str, FileStat] = field(default_factory=dict)
    dirs: dict[str, list[int] | None] = field(default_factory=dict)
    symlinks: list[str] = field(default_factory=list)
    undecodable: list[str] = field(default_factory=list)  # names that are not UTF-8, shown with \x escapes
    taken_ns: int = 0
    newest_ns: int = 0   # the latest file mtime seen
    workdir: str = ""

    def full(self, rel: str) -> str:
        """The absolute path of a repository-relative file."""
        return os.path.join(self.workdir, rel)

    def digest(self) -> str:
        """A fingerprint of every file's path, size and mtime, in walk order."""
        names = "\0".join(self.files).encode("utf-8", "surrogateescape")
        numbers = array("q", [n for st in self.files.values() for n in st[:2]])
        return hashlib.sha1(names + b"\1" + numbers.tobytes()).hexdigest()


def _dir_sig(full: str, now_ns: int) -> list[int] | None:
    try:
        st = os.lstat(full)  # lstat: a folder swapped for a symlink to it is a change
    except OSError:
        return [0, 0]  # missing: a folder appearing later changes this
    if st.st_mtime_ns >= now_ns - RACY_NS:
        return None
    return [st.st_mtime_ns, st.st_ino]


def scan_records(workdir: str, now_ns: int) -> Scan:
    """Walk .memzoi/records/ (folder stats first, so a change during the walk shows next time)."""
    for rel in (MEMZOI_DIR, RECORDS):
        if os.path.islink(os.path.join(workdir, rel)):
            # what a symlink points at is outside the reviewed tree: never serve it
            raise Refused(f"{rel} is a symlink; memory folders must be real folders in the work tree, "
                          "and git memzoi does not follow them", hint="`git memzoi validate` reports it",
                          code="symlink")
    scan = Scan(taken_ns=now_ns, workdir=workdir)
    files = scan.files
    make = tuple.__new__  # FileStat without its Python-level constructor: this loop runs per file
    newest = 0
    root = os.path.join(workdir, MEMZOI_DIR)
    scan.dirs[MEMZOI_DIR] = _dir_sig(root, now_ns)
    stack = [RECORDS]
    while stack:
        rel_dir = stack.pop()
        full_dir = os.path.join(workdir, rel_dir)
        scan.dirs[rel_dir] = _dir_sig(full_dir, now_ns)
        try:
            entries = list(os.scandir(full_dir))
        except (FileNotFoundError, NotADirectoryError):
            continue
        prefix = rel_dir + "/"
        for entry in entries:
            name = entry.name
            if not name.isascii() and not _utf8(name):
                # SQLite and JSON need text: such a record file (or folder) is reported, never indexed
                if name.endswith(".md") or entry.is_dir(follow_symlinks=False):
                    scan.undecodable.append(printable(prefix + name))
                continue
            if name.endswith(".md") and entry.is_file(follow_symlinks=False):
                st = entry.stat()
                mtime = st.st_mtime_ns
                files[prefix + name] = make(FileStat, (st.st_size, mtime, st.st_ino))
                if mtime > newest:
                    newest = mtime
            elif entry.is_symlink():
                if name.endswith(".md"):
                    scan.symlinks.append(prefix + name)
            elif entry.is_dir():
                stack.append(prefix + name)
    scan.newest_ns = newest
    return scan


def _utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # os.scandir gave undecodable bytes back as lone surrogates
        return False
    return True


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
