"""Change git's index as git does: `index.lock` is taken with O_EXCL before the index is read and held until
the new index is renamed over it, so a `git add` can never land between the read and the write and be undone.

libgit2 takes the lock only while it writes, so the index is read and changed here as a copy: the copy is
written by libgit2 under its own lock, renamed onto the held `index.lock`, and that onto `index`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pygit2
from pygit2.enums import FileMode

from git_memzoi.errors import Refused
from git_memzoi.gitrepo.config import config_value
from git_memzoi.gitrepo.repo import GitRepo
from git_memzoi.layout import INDEX_LOCK, TEMP_PREFIX
from git_memzoi.runtime.atomic import fsync_dir

__all__ = ["HeldIndex", "add_from_workdir", "index_locked_refusal", "locked_index", "release_stale"]

_U32 = 0xFFFFFFFF


def index_locked_refusal(lock: Path) -> Refused:
    """The one refusal for an index another process holds."""
    return Refused(
        f"{lock} exists: another git process seems to be running in this repository; nothing was changed",
        hint="wait for it to finish; remove the file only if no git process is running",
        code="index-locked",
    )


@dataclass
class HeldIndex:
    """The index read under its lock; set `changed` for it to be written back when the block ends."""

    index: pygit2.Index
    changed: bool = False


@contextmanager
def locked_index(repo: GitRepo, token: str = "") -> Iterator[HeldIndex]:
    """Hold `index.lock` across a read-modify-write of the index; a held lock is refused and changes nothing.

    `token` is written into the lock while it is held, so that recovery can tell a lock a killed
    step of its own left (release_stale) from another process's.
    """
    index_path = repo.git_dir / "index"
    lock = repo.git_dir / INDEX_LOCK
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    except FileExistsError:
        raise index_locked_refusal(lock) from None
    try:
        if token:
            os.write(fd, _lock_token(token))
    finally:
        os.close(fd)
    copy = repo.git_dir / f"{TEMP_PREFIX}index-locked-{os.getpid()}"
    held_lock = True
    try:
        try:
            data: bytes | None = index_path.read_bytes()
        except FileNotFoundError:
            data = None  # an unborn repository: the index starts empty
        copy.unlink(missing_ok=True)
        if data is not None:
            copy.write_bytes(data)
        try:
            held = HeldIndex(pygit2.Index(str(copy)))
        except pygit2.GitError as exc:
            raise unwritable_index(index_path, exc) from None
        yield held
        if held.changed:
            try:
                held.index.write()
            except pygit2.GitError as exc:
                raise Refused(f"{index_path}: cannot write the index: {exc}") from None
            with open(copy, "rb") as handle:
                os.fsync(handle.fileno())
            os.replace(copy, lock)  # the lock file now holds the new index; it was never absent
            os.replace(lock, index_path)
            held_lock = False  # from here on an index.lock is another process's
            fsync_dir(repo.git_dir)
    finally:
        copy.unlink(missing_ok=True)
        if held_lock:
            lock.unlink(missing_ok=True)


def _lock_token(token: str) -> bytes:
    return f"git memzoi {token}\n".encode()


def release_stale(repo: GitRepo, token: str) -> bool:
    """Remove `index.lock` when it is the one a killed step holding `token` left (True), else leave it."""
    lock = repo.git_dir / INDEX_LOCK
    try:
        with open(lock, "rb") as handle:
            held = handle.read(256)
    except OSError:
        return False
    if held != _lock_token(token):
        return False
    lock.unlink(missing_ok=True)
    return True


def _file_mode(repo: GitRepo, index: pygit2.Index, rel: str, st: os.stat_result) -> FileMode:
    """The mode `git add` records: from the file, or kept from the entry when core.fileMode is false."""
    if (config_value(repo, "core.filemode") or "true").lower() in ("false", "no", "off", "0"):
        if rel in index:
            return FileMode(index[rel].mode)
        return FileMode.BLOB
    return FileMode.BLOB_EXECUTABLE if st.st_mode & 0o100 else FileMode.BLOB


def add_from_workdir(repo: GitRepo, held: HeldIndex, rel: str) -> None:
    """Stage the work-tree file `rel` as `git add` does: its blob (through git's filters) and its stat data."""
    root = repo.require_workdir()
    st = os.lstat(root / rel)
    oid = repo.pygit.create_blob_fromworkdir(rel)
    entry = pygit2.IndexEntry(rel, oid, _file_mode(repo, held.index, rel, st))
    from pygit2.errors import check_error
    from pygit2.ffi import C

    # pygit2's IndexEntry carries no stat data; without it git would take the entry as changed until
    # it refreshes the index, so the C entry is completed here as libgit2's add_bypath would
    centry, _keep = entry._to_c()
    centry.ctime.seconds, centry.ctime.nanoseconds = divmod(st.st_ctime_ns, 10**9)
    centry.mtime.seconds, centry.mtime.nanoseconds = divmod(st.st_mtime_ns, 10**9)
    centry.dev, centry.ino = st.st_dev & _U32, st.st_ino & _U32
    centry.uid, centry.gid, centry.file_size = st.st_uid & _U32, st.st_gid & _U32, st.st_size & _U32
    check_error(C.git_index_add(held.index._index, centry))
    held.changed = True


def unwritable_index(index_path: Path, exc: Exception) -> Refused:
    """The refusal for an index libgit2 cannot read back as it would write it (a split index, an unknown extension)."""
    hint = (
        "git update-index --no-split-index (and git config core.splitIndex false)"
        if "link" in str(exc)
        else "commit the files with git yourself"
    )
    return Refused(f"{index_path}: git memzoi cannot write this index ({exc})", hint=hint)
