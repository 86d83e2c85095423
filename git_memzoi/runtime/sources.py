"""Collect .memzoi/ files to validate: from the work tree, or from the tree at a revision."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from git_memzoi.errors import UsageError, printable
from git_memzoi.gitrepo import GitRepo
from git_memzoi.layout import MEMZOI_DIR
from git_memzoi.profile.tree import LOG_CHUNK, SourceFile, log_chunks


def _reader(path: Path) -> SourceReader:
    return SourceReader(path)


class SourceReader:
    """Reads a work-tree file lazily (callable), so a listing costs no reads."""

    __slots__ = ("path",)

    def __init__(self, path: Path) -> None:
        self.path = path

    def __call__(self) -> bytes:
        return self.path.read_bytes()

    def chunks(self) -> Iterator[bytes]:
        """The file a piece at a time, as `profile.tree.log_chunks` cuts it, never all of it in memory."""
        with open(self.path, "rb") as handle:
            rest = b""
            while True:
                block = handle.read(LOG_CHUNK)
                if not block:
                    break
                pieces = list(log_chunks(rest + block))
                rest = pieces.pop() if len(pieces) > 1 or not pieces[0].endswith(b"\n") else b""
                yield from pieces
            if rest:
                yield rest

    def size(self) -> int:
        """The file's size by lstat, taken before anything reads it."""
        return self.path.lstat().st_size


def _source(rel: str, full: Path) -> SourceFile:
    reader = _reader(full)
    return SourceFile(rel, reader, full.is_symlink(), chunks=reader.chunks, size=reader.size)


def _walk(root: Path, top: Path) -> Iterator[SourceFile]:
    for folder, dirs, files in os.walk(top):
        dirs.sort()
        base = Path(folder)
        for name in [*sorted(files), *[d for d in dirs if (base / d).is_symlink()]]:
            full = base / name
            rel = printable(full.relative_to(root).as_posix())  # a non-UTF-8 name is reported, escaped
            yield _source(rel, full)


def worktree_files(repo: GitRepo, paths: Sequence[str] = ()) -> Iterator[SourceFile]:
    """Files under .memzoi/ in the work tree, or just `paths` (files or folders inside .memzoi/)."""
    root = repo.require_workdir()
    memzoi = root / MEMZOI_DIR
    if memzoi.is_symlink():  # reported as one problem; nothing behind it is read
        yield SourceFile(MEMZOI_DIR, _reader(memzoi), True)
        return
    if not paths:
        if memzoi.is_dir():
            yield from _walk(root, memzoi)
        return
    for given in paths:
        candidate = Path(os.path.abspath(given))
        try:
            rel = candidate.relative_to(root).as_posix()
        except ValueError:
            raise UsageError(f"{given}: outside this work tree ({root})") from None
        if rel != MEMZOI_DIR and not rel.startswith(MEMZOI_DIR + "/"):
            raise UsageError(f"{given}: not inside {MEMZOI_DIR}/; memory files live there")
        if candidate.is_symlink() or candidate.is_file():
            yield _source(rel, candidate)
        elif candidate.is_dir():
            yield from _walk(root, candidate)
        else:
            raise UsageError(f"{given}: no such file or folder")


def rev_files(repo: GitRepo, rev: str) -> Iterator[SourceFile]:
    """Files under .memzoi/ in the tree at `rev`, read from git objects (works in a bare repository)."""
    commit = repo.resolve(rev)
    for item in repo.tree_files(commit.tree):
        size = item.size if item.oid != "symlink" else None
        yield SourceFile(item.path, item.read, item.oid == "symlink", chunks=item.chunks, size=size)
