"""Runtime state is its owner's alone: every folder memzoi makes under MEMZOI_HOME is 0700, every file 0600.

shared.db holds private local memory and transcript-derived checkpoints, a worktree's index.db
mirrors them for recall, and the parse cache, kept tree summaries, verdicts and session files
hold what records and sessions said. Another account on the machine reads none of it: the
folders from `$MEMZOI_HOME/projects` down admit their owner only, so a file made before this
rule (or by another program) is out of reach too, and each file memzoi creates there is 0600
in its own right. A folder found open to others (left by an older version) is tightened on the
next write into it, when the account running memzoi owns it.

Light to import: the agent hooks write their session files through it.
"""

from __future__ import annotations

import os
from pathlib import Path

from git_memzoi.runtime.home import memzoi_home

FOLDER_MODE = 0o700
FILE_MODE = 0o600
_OPEN_TO_OTHERS = 0o077


def private_folder(folder: Path) -> None:
    """Make `folder` and every missing folder above it, each 0700; tighten the existing ones below MEMZOI_HOME.

    MEMZOI_HOME itself is made 0700 when memzoi makes it, and left as it is when it exists (it
    may be a folder the user chose to share other things from); everything private lives
    below it, in folders this makes owner-only.
    """
    home = memzoi_home()
    try:
        below = folder.relative_to(home).parts
    except ValueError:  # a runtime path not under MEMZOI_HOME (a test's own folder): only what is made here
        _make(folder, tighten=False)
        return
    _make(home, tighten=False)
    level = home
    for part in below:
        level = level / part
        _make(level, tighten=True)


def _make(folder: Path, *, tighten: bool) -> None:
    try:
        found = os.stat(folder)
    except FileNotFoundError:
        if folder.parent != folder:
            _make(folder.parent, tighten=False)
        try:
            os.mkdir(folder, FOLDER_MODE)
        except FileExistsError:  # made meanwhile by another process, as private as this one would be
            pass
        return
    if tighten and found.st_mode & _OPEN_TO_OTHERS and found.st_uid == os.geteuid():
        os.chmod(folder, FOLDER_MODE)


def trusted(seen: os.stat_result) -> bool:
    """Whether a kept file (its `os.fstat`) can be read as this account's own: owned by it, and writable by no one
    else (a file another account could have written is derived state to make again, never to believe)."""
    return seen.st_uid == os.geteuid() and not seen.st_mode & 0o022


def is_private(path: Path) -> bool:
    """Whether `path` lies under MEMZOI_HOME (as given, links not followed): a file made there gets FILE_MODE."""
    return Path(os.path.abspath(path)).is_relative_to(Path(os.path.abspath(memzoi_home())))


def create_private(path: Path) -> None:
    """Create `path`, empty and 0600, unless it exists; never through a symlink in its place.

    SQLite creates a database with 0644 less the umask, and gives its -wal, -shm and -journal
    files the database's own mode: a database file made here first keeps all four private.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
    except FileExistsError:
        return
    os.close(fd)
