"""Install a Plan all-or-nothing: journal first, then the files, then the shared.db commit point.

The database transaction is the commit point. Before it commits, recovery restores every
before-image; once it has committed, recovery finishes writing every after-image. Either way
the work tree ends exactly as it was before the step or exactly as the step leaves it.

Test hook: `MEMZOI_FAULT=<step>` (read only here) makes the process kill itself with SIGKILL at
that step, so tests can prove the claim above at every step (see `fault_steps`).
"""

from __future__ import annotations

import os
import signal
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from git_memzoi.errors import MemzoiError, Refused, StateError
from git_memzoi.index import inbox_store
from git_memzoi.lifecycle import journal as journals
from git_memzoi.lifecycle.packets import GITATTRIBUTES, MEMZOI
from git_memzoi.lifecycle.plan import Plan
from git_memzoi.runtime.atomic import TEMP_PREFIX, fsync_dir, write_atomic
from git_memzoi.runtime import clock
from git_memzoi.runtime.home import Layout

if TYPE_CHECKING:
    from git_memzoi.runtime.workspace import Workspace

FAULT_ENV = "MEMZOI_FAULT"


def fault(step: str) -> None:
    """Test hook: die by SIGKILL when MEMZOI_FAULT names this step."""
    if os.environ.get(FAULT_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)


def fault_steps(n_files: int) -> list[str]:
    """Every fault step of an install that writes `n_files` files, in order."""
    steps = ["planned", "journal-temp", "journal"]
    for i in range(1, n_files + 1):
        steps += [f"file-{i}-temp", f"file-{i}"]
    return steps + ["files-installed", "db-before-commit", "db-committed", "journal-commit-temp",
                    "journal-commit", "journal-deleted"]


#: The first step at which an interrupted install must end in the after state.
FIRST_COMMITTED_STEP = "db-committed"


def safe_path(root: Path, rel: str) -> Path:
    """`root/rel` for a path inside .memzoi/ (or .gitattributes), refusing escapes and symlinked folders."""
    parts = rel.split("/")
    if (rel != GITATTRIBUTES and parts[0] != MEMZOI) or any(p in ("", ".", "..") for p in parts) \
            or os.path.isabs(rel):
        raise Refused(f"{rel}: outside {MEMZOI}/; lifecycle steps only write memory files")
    node = root
    for part in parts:
        node = node / part
        if node.is_symlink():
            raise Refused(f"{node.relative_to(root).as_posix()} is a symlink; memory files and folders must be real")
    return root / rel


def read_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise Refused(f"{path} is a folder where a memory file belongs") from None


def put(path: Path, data: bytes | None, step: str | None = None) -> None:
    """Replace (or remove, for None) one file durably: temp file, fsync, rename, fsync the folder."""
    if data is None:
        if step:
            fault(f"{step}-temp")
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        fsync_dir(path.parent)
        if step:
            fault(step)
        return
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o644
    write_atomic(path, data, mode=mode, before_replace=(lambda: fault(f"{step}-temp")) if step else None)
    if step:
        fault(step)


def _committed(conn: sqlite3.Connection, txid: str) -> bool:
    if conn.in_transaction:
        conn.execute("ROLLBACK")
    return inbox_store.journal_committed(conn, txid)


def install(root: Path, layout: Layout, conn: sqlite3.Connection, plan: Plan) -> None:
    """Carry out `plan` in the work tree at `root` and in shared.db, all or nothing."""
    fault("planned")
    for change in plan.files:
        if read_or_none(safe_path(root, change.path)) != change.before:
            raise Refused(f"{change.path} changed while the {plan.operation} was being planned; nothing was changed",
                          hint="run the command again")
    journal = journals.Journal(journals.new_txid(), plan.operation, plan.proposal_id, str(root),
                               tuple(journals.Entry(c.path, c.before, c.after) for c in plan.files), plan.new_dirs)
    jpath = journals.path_for(layout.journal_dir, journal.txid)
    layout.journal_dir.mkdir(parents=True, exist_ok=True)
    put(jpath, journal.to_bytes(), "journal")
    try:
        for folder in plan.new_dirs:
            (root / folder).mkdir(exist_ok=True)
        for number, change in enumerate(plan.files, 1):
            put(root / change.path, change.after, f"file-{number}")
        fault("files-installed")
        inbox_store.execute(conn, plan.db, journal.txid, before_commit=lambda: fault("db-before-commit"))
        fault("db-committed")
    except BaseException as exc:
        committed = _committed(conn, journal.txid)
        settle(journal, committed)
        jpath.unlink()
        fsync_dir(jpath.parent)
        if isinstance(exc, inbox_store.Conflict):
            raise Refused(f"{exc}: another process changed it first; nothing was changed") from None
        if isinstance(exc, sqlite3.DatabaseError):
            raise StateError(f"{layout.shared_db}: {exc}; the {plan.operation} was rolled back") from None
        raise
    put(jpath, replace(journal, committed=True).to_bytes(), "journal-commit")
    jpath.unlink()
    fsync_dir(jpath.parent)
    fault("journal-deleted")


def settle(journal: journals.Journal, committed: bool) -> list[str]:
    """Bring every path of `journal` to its after-image (committed) or before-image; report paths left alone."""
    root = Path(journal.workdir)
    notes: list[str] = []
    for entry in journal.entries:
        full = root / entry.path
        want, other = (entry.after, entry.before) if committed else (entry.before, entry.after)
        try:
            safe_path(root, entry.path)
            current = read_or_none(full)
        except Refused as exc:
            notes.append(f"{entry.path}: left as is ({exc})")
            continue
        if current == want:
            continue
        if current == other:
            put(full, want)
        else:
            notes.append(f"{entry.path}: left as is, it changed after the interrupted {journal.operation}")
    if not committed:
        for folder in reversed(journal.new_dirs):
            try:
                (root / folder).rmdir()
            except OSError:
                pass
    return notes


def clean_temp(roots: list[Path], journal_dir: Path) -> list[str]:
    """Remove temp files an interrupted write left in .memzoi/, the work tree roots and the journal folder."""
    removed: list[str] = []
    folders: list[Path] = [journal_dir]
    for root in roots:
        folders.append(root)
        top = root / MEMZOI
        if top.is_dir() and not top.is_symlink():
            for here, subdirs, _ in os.walk(top):
                folders.append(Path(here))
                subdirs[:] = [d for d in subdirs if not (Path(here) / d).is_symlink()]
    for folder in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            path = folder / name
            if name.startswith(TEMP_PREFIX) and path.is_file() and not path.is_symlink():
                path.unlink()
                removed.append(str(path))
    return removed


_COMMITTED = {"apply": ("applied", "applied"), "reject": ("rejected", "resolved")}


def install_and_commit(ws: "Workspace", root: Path, conn: sqlite3.Connection, plan: Plan, *, verb: str,
                       commit: bool) -> tuple[list[str], str | None]:
    """Install `plan`, update the index, and with `commit` record exactly its paths in one git commit."""
    install(root, ws.layout, conn, plan)
    warnings = refresh_index(ws)
    if not commit:
        return warnings, None
    from git_memzoi.gitrepo.commit import commit_paths

    try:
        sha = commit_paths(ws.repo, plan.paths, f"memzoi: {verb} {plan.proposal_id}", when=clock.now())
    except MemzoiError as exc:
        done, files = _COMMITTED[verb]
        raise Refused(f"{done} {plan.proposal_id}, but the commit failed: {exc.message}",
                      hint=f"commit the {files} files yourself", code="commit-failed") from None
    return warnings, sha


def refresh_index(ws: "Workspace") -> list[str]:
    """Update this worktree's index.db; a failure is a warning, never an undo (the index is disposable)."""
    try:
        from git_memzoi.index import rebuild

        rebuild.rebuild(ws)
    except Exception as exc:  # noqa: BLE001 - the files are installed; the next read refreshes the index
        return [f"index.db was not updated ({type(exc).__name__}: {exc}); the next read refreshes it"]
    return []
