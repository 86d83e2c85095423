"""Atomic file writes: temp file in the same folder, flush, fsync, os.replace, fsync the folder.

Files inside a work tree that a clone may have filled with symlinks are read and written with
`read_inside` and `write_inside`: every component is checked from the root (`refuse_symlinks`)
and then opened with O_NOFOLLOW from the folder above it, so a link made between the check and
the write is refused too, and nothing behind a link is read or written.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from git_memzoi.errors import Refused
from git_memzoi.layout import TEMP_PREFIX

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)


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


def refuse_symlinks(root: Path, rel: str, why: str) -> Path:
    """`root/rel` once no component of `rel` is a symlink (one lstat each, from `root`); else Refused naming it.

    `rel` is a relative path without empty, `.` or `..` components. A component that does not
    exist ends the walk: nothing below it exists either.
    """
    parts = rel.split("/")
    if os.path.isabs(rel) or any(p in ("", ".", "..") for p in parts):
        raise Refused(f"{rel}: not a plain path inside {root}")
    node = root
    for part in parts:
        node = node / part
        try:
            mode = os.lstat(node).st_mode
        except (FileNotFoundError, NotADirectoryError):
            break
        except ValueError:  # a NUL in the name: no such file
            raise Refused(f"{rel}: not a plain path inside {root}") from None
        if stat.S_ISLNK(mode):
            raise Refused(f"{node.relative_to(root).as_posix()} is a symlink; {why}", code="symlink")
    return root / rel


@contextmanager
def _folder(root: Path, parts: list[str], why: str, *, create: bool) -> Iterator[int | None]:
    """A descriptor of `root/parts...` opened one component at a time without following a symlink.

    None when a folder is missing and `create` is false. A component that turned into a symlink
    (or a file) since `refuse_symlinks` looked is refused the same way.
    """
    fd = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    try:
        for depth, part in enumerate(parts):
            try:
                child = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    yield None
                    return
                try:
                    os.mkdir(part, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass  # made meanwhile: opened (and checked) below like any other
                child = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    where = "/".join(parts[: depth + 1])
                    raise Refused(f"{where} is a symlink or not a folder; {why}", code="symlink") from None
                raise
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def read_inside(root: Path, rel: str, why: str) -> bytes | None:
    """The bytes of `root/rel` (None when missing), refusing a symlink anywhere on the way, the file included."""
    refuse_symlinks(root, rel, why)
    *folders, name = rel.split("/")
    with _folder(root, folders, why, create=False) as fd:
        if fd is None:
            return None
        try:
            # O_NONBLOCK: a FIFO put where a file belongs must not hang the open (refused below)
            handle = os.open(name, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | _NONBLOCK, dir_fd=fd)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise Refused(f"{rel} is a symlink; {why}", code="symlink") from None
            raise
        with os.fdopen(handle, "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                raise Refused(f"{rel} is not a regular file; {why}", code="not-a-file")
            return file.read()


def write_inside(root: Path, rel: str, data: bytes, why: str, *, mode: int | None = None) -> None:
    """Replace `root/rel` with `data` atomically, refusing a symlink anywhere on the way.

    Missing folders are made; the temp file is made and renamed through the parent folder's
    descriptor, so neither step can be redirected by a link. `mode` None keeps an existing
    file's permissions (0o644 for a new one).
    """
    refuse_symlinks(root, rel, why)
    *folders, name = rel.split("/")
    with _folder(root, folders, why, create=True) as fd:
        assert fd is not None
        try:
            current = os.lstat(name, dir_fd=fd)
        except FileNotFoundError:
            current = None
        if current is not None and stat.S_ISLNK(current.st_mode):
            raise Refused(f"{rel} is a symlink; {why}", code="symlink")
        if current is not None and not stat.S_ISREG(current.st_mode):
            raise Refused(f"{rel} is not a regular file; {why}", code="not-a-file")
        if mode is None:
            mode = stat.S_IMODE(current.st_mode) if current is not None else 0o644
        tmp = f"{TEMP_PREFIX}{name}.{os.urandom(6).hex()}"
        handle = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600, dir_fd=fd)
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(data)
                file.flush()
                os.fchmod(file.fileno(), mode)
                os.fsync(file.fileno())
            os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=fd)
            except FileNotFoundError:
                pass
            raise
        os.fsync(fd)
