"""Finish or roll back lifecycle steps a crash interrupted, and hold the lock for the next one.

Every lifecycle command runs `repair` under repo-lifecycle.lock before it plans anything;
`doctor --repair` runs it on demand. A journal whose shared.db side committed is completed
(every after-image written, and for `--commit` the paths staged and the journaled commit put on
HEAD); any other journal is rolled back (every before-image and index entry restored).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from git_memzoi.gitrepo.identity import actor
from git_memzoi.index import inbox_store, shared_db
from git_memzoi.lifecycle import journal as journals
from git_memzoi.lifecycle import transaction
from git_memzoi.lifecycle.state import require_initialised
from git_memzoi.lifecycle.targets import Settled, Source, resolve
from git_memzoi.runtime.atomic import fsync_dir
from git_memzoi.runtime.lock import lifecycle_lock
from git_memzoi.runtime.workspace import Workspace

#: How a repair line about a leftover temp file starts (no journal: the tree was never torn).
ORPHAN_LINE = "removed orphan temp file"


def settled_journals(repaired: list[str]) -> list[str]:
    """The lines of a repair that finished or rolled back an interrupted step (not the temp-file clean-up)."""
    return [line for line in repaired if not line.startswith(ORPHAN_LINE)]


def pending_journals(ws: Workspace) -> list[Path]:
    """Journals of interrupted lifecycle steps of this repository (any of its worktrees)."""
    return journals.pending(ws.layout.journal_dir)


def repair(ws: Workspace) -> list[str]:
    """Take the lock and repair; one line per thing done."""
    with lifecycle_lock(ws.layout.lock):
        return repair_locked(ws)


def _db_committed(ws: Workspace, conn: sqlite3.Connection | None, txid: str) -> bool:
    if conn is not None:
        return inbox_store.journal_committed(conn, txid)
    if not ws.layout.shared_db.exists():
        return False
    own = shared_db.connect(
        ws.layout.shared_db, create=False, actor=actor(ws.repo), owner=shared_db.owner_of(ws.repo.common_dir)
    )
    try:
        return inbox_store.journal_committed(own, txid)
    finally:
        own.close()


def repair_locked(ws: Workspace, conn: sqlite3.Connection | None = None) -> list[str]:
    """Settle every pending journal and remove orphan temp files; the caller holds the lock."""
    lines: list[str] = []
    roots: set[Path] = set()
    for path in pending_journals(ws):
        journal = journals.load(path)
        committed = journal.committed or _db_committed(ws, conn, journal.txid)
        root = Path(journal.workdir)
        if not root.is_dir():
            lines.append(
                f"dropped the journal of an interrupted {journal.operation} of {journal.proposal_id}: "
                f"its work tree {root} no longer exists"
            )
        else:
            notes = transaction.settle(journal, committed)
            roots.add(root)
            verb = "completed" if committed else "rolled back"
            lines.append(f"{verb} the interrupted {journal.operation} of {journal.proposal_id} in {root}")
            lines.extend(notes)
        path.unlink()
        fsync_dir(path.parent)
    if ws.repo.workdir is not None:
        roots.add(ws.repo.workdir)
    removed = transaction.clean_temp(sorted(roots), ws.layout.journal_dir, (ws.repo.git_dir,))
    lines.extend(f"{ORPHAN_LINE} {name}" for name in removed)
    return lines


@dataclass
class Session:
    """A lifecycle step in progress: the lock is held, shared.db is open, `root` is an initialised work tree."""

    ws: Workspace
    conn: sqlite3.Connection
    repaired: list[str]
    root: Path


@contextmanager
def locked(ws: Workspace) -> Iterator[Session]:
    """Hold repo-lifecycle.lock, open shared.db and repair anything interrupted, for one lifecycle step.

    Refused when the work tree has no .memzoi/ folder (after the repair, which may need none).
    """
    with lifecycle_lock(ws.layout.lock):
        conn = shared_db.connect(
            ws.layout.shared_db, actor=actor(ws.repo), owner=shared_db.owner_of(ws.repo.common_dir)
        )
        try:
            repaired = repair_locked(ws, conn)
            yield Session(ws, conn, repaired, require_initialised(ws.repo))
        finally:
            conn.close()


@contextmanager
def resolving(ws: Workspace, target: str) -> Iterator[tuple[Session, Source | Settled]]:
    """`locked`, and what TARGET names: a proposal, or how it was already resolved (apply, reject)."""
    with locked(ws) as session:
        yield session, resolve(ws.repo, session.conn, target)


def settle_if_needed(ws: Workspace) -> list[str]:
    """For read-only commands: repair only when a journal is waiting (so reads never wait on the lock otherwise)."""
    if not pending_journals(ws):
        return []
    return repair(ws)
