"""Atomic file writes: temp file in the same folder, flush, fsync, os.replace, fsync the folder."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from git_memzoi.layout import TEMP_PREFIX


def fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(
    path: Path, data: bytes, *, mode: int = 0o644, before_replace: Callable[[], None] | None = None
) -> None:
    """Replace `path` with `data` so that a reader sees the old bytes or the new, never a mix.

    `before_replace` runs once the temp file is durable and just before the rename (a fault
    injection point for crash tests).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        if before_replace is not None:
            before_replace()
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    fsync_dir(path.parent)
