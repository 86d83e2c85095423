"""What the work tree holds under .memzoi/records/: file stats and the folder signature.

The folder signature (each folder's mtime and inode) changes whenever a file is created,
removed, renamed or atomically replaced, and costs one stat per folder: the cheap half of
the staleness check. Stats taken too close to the moment they were read are "racy" (a second
change within the same timestamp tick would not show) and are never trusted.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from git_memzoi.errors import Refused, printable
from git_memzoi.index.sweep import (
    MAX_SIGNED,
    RACY_NS,
    digest,
    dir_signature,
    dirs_unchanged,
    file_stat_signature,
    signed64,
    utf8_name,
)
from git_memzoi.layout import MEMZOI_DIR, RECORDS

__all__ = [
    "RACY_NS",
    "FileStat",
    "Scan",
    "dirs_unchanged",
    "file_stat",
    "file_stat_signature",
    "scan_paths",
    "scan_records",
]


class FileStat(NamedTuple):
    """A record file's stat, the fields git's index compares (a tuple: tens of thousands are made per sweep).

    Inode and device are kept as signed 64-bit numbers (`sweep.signed64`), as SQLite stores them.
    """

    size: int
    mtime_ns: int
    ctime_ns: int
    ino: int
    dev: int


def file_stat(st: os.stat_result) -> FileStat:
    """The FileStat of an `os.stat_result`."""
    return FileStat(st.st_size, st.st_mtime_ns, st.st_ctime_ns, signed64(st.st_ino), signed64(st.st_dev))


@dataclass
class Scan:
    """Every record file, the folders that hold them, and files that cannot be records (symlinks, non-UTF-8 names)."""

    files: dict[str, FileStat] = field(default_factory=dict)
    dirs: dict[str, list[int] | None] = field(default_factory=dict)
    symlinks: list[str] = field(default_factory=list)
    undecodable: list[str] = field(default_factory=list)  # names that are not UTF-8, shown with \x escapes
    newest_ns: int = 0  # the latest file mtime seen
    workdir: str = ""

    def full(self, rel: str) -> str:
        """The absolute path of a repository-relative file."""
        return os.path.join(self.workdir, rel)

    def digest(self) -> str:
        """A fingerprint of every file's path and stat, in walk order (what `sweep.sweep` computes)."""
        return digest(list(self.files), [n for st in self.files.values() for n in st])


def scan_records(workdir: str, now_ns: int) -> Scan:
    """Walk .memzoi/records/ (folder stats first, so a change during the walk shows next time)."""
    _refuse_symlinked_folders(workdir)
    scan = Scan(workdir=workdir)
    newest = 0
    root = os.path.join(workdir, MEMZOI_DIR)
    scan.dirs[MEMZOI_DIR] = dir_signature(root, now_ns)
    stack = [RECORDS]
    while stack:
        rel_dir = stack.pop()
        full_dir = os.path.join(workdir, rel_dir)
        scan.dirs[rel_dir] = dir_signature(full_dir, now_ns)
        try:
            entries = list(os.scandir(full_dir))
        except (FileNotFoundError, NotADirectoryError):
            continue
        newest = max(newest, _scan_folder(scan, rel_dir + "/", entries, stack))
    scan.newest_ns = newest
    return scan


def _refuse_symlinked_folders(workdir: str) -> None:
    for rel in (MEMZOI_DIR, RECORDS):
        if os.path.islink(os.path.join(workdir, rel)):
            # what a symlink points at is outside the reviewed tree: never serve it
            raise Refused(
                f"{rel} is a symlink; memory folders must be real folders in the work tree, "
                "and git memzoi does not follow them",
                hint="`git memzoi validate` reports it",
                code="symlink",
            )


def _scan_folder(scan: Scan, prefix: str, entries: list[os.DirEntry[str]], stack: list[str]) -> int:
    """Take the stats of one folder's record files; push its subfolders on `stack`. The latest mtime seen."""
    files = scan.files
    # FileStat without its Python-level constructor: this loop runs once per record file on every
    # read's stat sweep (BENCHMARKS.md, "no-op rebuild")
    make = tuple.__new__
    newest = 0
    for entry in entries:
        name = entry.name
        if not name.isascii() and not utf8_name(name):
            # SQLite and JSON need text: such a record file (or folder) is reported, never indexed
            if name.endswith(".md") or entry.is_dir(follow_symlinks=False):
                scan.undecodable.append(printable(prefix + name))
            continue
        if name.endswith(".md") and entry.is_file(follow_symlinks=False):
            st = entry.stat()
            mtime, ctime, ino, dev = st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev
            if ino > MAX_SIGNED or dev > MAX_SIGNED:
                ino, dev = signed64(ino), signed64(dev)
            files[prefix + name] = make(FileStat, (st.st_size, mtime, ctime, ino, dev))
            if mtime > newest:
                newest = mtime
        else:
            _other_entry(scan, prefix, entry, stack)
    return newest


def _other_entry(scan: Scan, prefix: str, entry: os.DirEntry[str], stack: list[str]) -> None:
    """A folder to walk, or a symlinked record file to report; anything else is not a record."""
    if entry.is_symlink():
        if entry.name.endswith(".md"):
            scan.symlinks.append(prefix + entry.name)
    elif entry.is_dir():
        stack.append(prefix + entry.name)


def scan_paths(workdir: str, paths: Iterable[str]) -> Scan | None:
    """The stats of just these record files, those that exist; None when one is not a regular file."""
    scan = Scan(workdir=workdir)
    for rel in sorted(paths):
        try:
            st = os.lstat(os.path.join(workdir, rel))
        except FileNotFoundError:
            continue
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        found = scan.files[rel] = file_stat(st)
        scan.newest_ns = max(scan.newest_ns, found.mtime_ns)
    return scan
