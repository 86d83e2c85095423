"""repo-lifecycle.lock: one lifecycle mutation at a time across every linked worktree."""

from __future__ import annotations

# fcntl before filelock: filelock turns a failed `import fcntl` (an extension module that could
# not be mapped under a memory limit) into its soft lock with a warning, and a soft lock does not
# exclude a process holding the flock. Imported here first, that failure is raised instead.
import fcntl  # noqa: F401
import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import filelock

from git_memzoi.errors import LockTimeout, UsageError
from git_memzoi.runtime.private import FILE_MODE, private_folder

DEFAULT_TIMEOUT = 10.0


def lock_timeout() -> float:
    """Seconds to wait for the lock: `MEMZOI_LOCK_TIMEOUT`, default 10."""
    raw = os.environ.get("MEMZOI_LOCK_TIMEOUT")
    if raw is None or raw == "":
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        raise UsageError(f"MEMZOI_LOCK_TIMEOUT={raw!r} is not a number of seconds") from None
    if not math.isfinite(value) or value < 0:  # nan waits for nothing, inf forever: neither is a bound
        raise UsageError(f"MEMZOI_LOCK_TIMEOUT={raw!r} must be a finite number of seconds, 0 or more")
    return value


def flock(path: Path, timeout: float) -> filelock.UnixFileLock:
    """An flock(2) lock on `path`, never filelock's soft fallback."""
    return filelock.UnixFileLock(str(path), timeout=timeout, mode=FILE_MODE)


@contextmanager
def lifecycle_lock(path: Path, timeout: float | None = None) -> Iterator[None]:
    """Hold `path` (repo-lifecycle.lock) or raise LockTimeout naming it; nothing is changed on timeout."""
    private_folder(path.parent)
    wait = lock_timeout() if timeout is None else timeout
    lock = flock(path, wait)
    try:
        # a short poll lets a waiting worktree in soon after a release, not 50 ms later
        lock.acquire(poll_interval=0.01)
    except filelock.Timeout:
        raise LockTimeout(
            f"{path} is held by another memzoi process (waited {wait:g}s)",
            hint="wait for the other apply to finish, or raise MEMZOI_LOCK_TIMEOUT",
        ) from None
    try:
        yield
    finally:
        lock.release()
