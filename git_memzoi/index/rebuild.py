"""Build and refresh this worktree's index.db: incremental by stat and blob OID, atomic by replace.

`rebuild(ws)` brings index.db in line with `.memzoi/records/` and shared.db's runtime memory
(see `index.sync`); `open_index(ws)` is the read path, which checks staleness cheaply before
every read (see `index.staleness`) and refreshes the index by itself when it is stale.
Nothing under `.memzoi/` is ever written, and shared.db is only read.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from git_memzoi.errors import NoSpace, StateError, from_environment
from git_memzoi.index import index_db, staleness
from git_memzoi.index.index_db import connect_installed, current_filter, instant
from git_memzoi.layout import INDEX_LOCK

if TYPE_CHECKING:
    from git_memzoi.index.outcome import InvalidRecords, RebuildReport
    from git_memzoi.index.sync import Progress
    from git_memzoi.runtime.workspace import Workspace

__all__ = [
    "InvalidRecords",
    "Progress",
    "RebuildReport",
    "current_filter",
    "instant",
    "open_index",
    "rebuild",
    "refresh",
]


def __getattr__(name: str) -> object:
    """The build's report types, loaded with the build (a read whose index is current never loads it)."""
    if name in ("InvalidRecords", "RebuildReport"):
        from git_memzoi.index import outcome

        return getattr(outcome, name)
    if name == "Progress":
        from git_memzoi.index import sync

        return sync.Progress
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def rebuild(
    ws: Workspace, *, full: bool = False, strict: bool = False, progress: Progress | None = None
) -> RebuildReport:
    """Bring index.db in line with the records and shared.db; cheap when little changed.

    Refuses (StateError) before touching anything when shared.db exists but is corrupt.
    `full` ignores the previous index and the parse cache; `strict` makes invalid files fatal
    (InvalidRecords, nothing installed). `progress(done, total)` is called as work proceeds.
    """
    from git_memzoi.index import shared_db

    ws.repo.require_workdir()
    shared_db.check(ws.layout.shared_db)
    return _sync_one_writer(ws, full=full, strict=strict, progress=progress)


def refresh(ws: Workspace, paths: Iterable[str]) -> RebuildReport:
    """Bring index.db in line after writing `paths` (repository-relative): their rows only, when the
    index was current before; otherwise as `rebuild` does."""
    from git_memzoi.index.sync import refresh_paths, sync

    with _one_writer(ws):
        report = refresh_paths(ws, paths)
        if report is not None:
            return report
        return sync(ws, full=False, strict=False, progress=None)


def open_index(ws: Workspace, *, refresh: bool = True) -> sqlite3.Connection:
    """A read-only connection to a current index.db, refreshing (or building) it first when stale.

    Every call sweeps the record files (`index.staleness`): a change made before the call is in
    the index it returns. Fails closed (StateError) when shared.db exists but cannot be read;
    never writes shared.db.
    """
    path = ws.layout.index_db
    inode = _inode(path)
    conn = connect_installed(path)
    if conn is not None and not refresh:
        return conn
    if conn is not None:
        try:
            meta = index_db.read_meta(conn)
        except StateError:
            meta = {}
        workdir = str(ws.repo.require_workdir())
        lease = ws.config.retention.session_lease_hours
        if (
            meta
            and staleness.current(path, conn, meta, ws.layout.shared_db, workdir, lease, str(ws.repo.git_dir))
            is not None
        ):
            return conn
    report = _sync_one_writer(ws, full=False, strict=False, progress=None, digest=False)
    if conn is not None and not report.changed and _inode(path) == inode:
        return conn
    if conn is not None:
        conn.close()
    conn = connect_installed(path)
    if conn is None:
        raise StateError(f"{path}: index.db could not be read after a refresh", hint="run `git memzoi rebuild --full`")
    return conn


WRITER_WAIT_SECONDS = 300.0


def _sync_one_writer(
    ws: Workspace, *, full: bool, strict: bool, progress: Progress | None, digest: bool = True
) -> RebuildReport:
    """Run `sync` as this worktree's only index writer (a rebuild with nothing to do only reads).

    `digest` False: the caller already compared the sweep's digest (`sync.noop`)."""
    from git_memzoi.index.sync import noop, sync  # the build: only when the index is not current

    if not full:
        report = noop(ws, strict=strict, digest=digest)
        if report is not None:
            return report
    with _one_writer(ws):
        return sync(ws, full=full, strict=strict, progress=progress)


@contextmanager
def _one_writer(ws: Workspace) -> Iterator[None]:
    """Be this worktree's only index writer.

    A build copies the installed index as its base and replaces it at the end; two builds
    interleaved would number rows from a base the other already replaced. Readers never take
    this lock: they keep reading the installed file.
    """
    import filelock  # late: a no-op rebuild takes no lock (BENCHMARKS.md, "Command start-up": no-op `rebuild`)

    from git_memzoi.runtime.lock import flock
    from git_memzoi.runtime.private import private_folder

    try:
        private_folder(ws.layout.worktree)
        lock = flock(ws.layout.worktree / INDEX_LOCK, WRITER_WAIT_SECONDS)
        lock.acquire(poll_interval=0.01)
    except OSError as exc:
        # a read-only or full MEMZOI_HOME: the sweep could not prove the index current, and
        # serving it unchecked could be stale; say why instead
        known = from_environment(exc)
        if known is None:
            raise
        kind = NoSpace if isinstance(known, NoSpace) else StateError
        raise kind(f"cannot refresh {ws.layout.index_db}: {known}", hint=known.hint) from None
    except filelock.Timeout:
        raise StateError(
            f"{ws.layout.worktree / INDEX_LOCK} stayed held for {WRITER_WAIT_SECONDS:g}s by another index build",
            hint="retry when the other rebuild ends",
        ) from None
    try:
        yield
    finally:
        lock.release()


def _inode(path: os.PathLike[str]) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None
