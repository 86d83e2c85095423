"""The MemzoiError tree: each class names one condition and carries a hint.

The CLI's single entry point maps these to exit codes (see EXIT_* below):
0 success, 1 a documented "no", 2 usage, 3 broken runtime state,
128 not inside a git repository (as git itself), 70 anything unexpected.
"""

from __future__ import annotations

import errno
import os

from git_memzoi.layout import DEFAULT_HOME, HOME_ENV

EXIT_OK = 0
EXIT_NO = 1
EXIT_USAGE = 2
EXIT_STATE = 3
EXIT_INTERNAL = 70
EXIT_NOT_A_REPO = 128


class MemzoiError(Exception):
    """Base of every error git memzoi reports to a user.

    A subclass declares its exit code and problem code as class keywords:
    `class NotFound(MemzoiError, exit_code=EXIT_NO, code="not-found")`.
    """

    exit_code = EXIT_INTERNAL
    code = "error"

    def __init_subclass__(cls, *, exit_code: int | None = None, code: str | None = None) -> None:
        super().__init_subclass__()
        if exit_code is not None:
            cls.exit_code = exit_code
        if code is not None:
            cls.code = code

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class UsageError(MemzoiError, exit_code=EXIT_USAGE, code="usage"):
    """The call itself is wrong: unknown option value, missing argument.

    With `field`, the message is about that one input and begins with its name
    (`limit must be from 1 to 1000, not 0`); `detail` is the rest, so that a front end
    can name the input its own way (the CLI: `--limit must be ...`).
    """

    def __init__(self, message: str, hint: str | None = None, *, field: str | None = None) -> None:
        super().__init__(f"{field} {message}" if field else message, hint)
        self.field = field
        self.detail = message


class RepositoryNotFound(MemzoiError, exit_code=EXIT_NOT_A_REPO, code="not-a-repository"):
    """No git repository at or above the starting directory."""


class UnsupportedRepository(MemzoiError, exit_code=EXIT_NOT_A_REPO, code="unsupported-repository"):
    """A repository git memzoi cannot read (a SHA-256 object format): 128, as git for a repository it cannot open."""


class NoWorkTree(MemzoiError, exit_code=EXIT_USAGE, code="no-work-tree"):
    """The command needs a work tree and the repository is bare."""


class ConfigError(MemzoiError, exit_code=EXIT_USAGE, code="config"):
    """A config.toml has an unknown key, a bad value, or is not TOML."""


class FormatError(MemzoiError, exit_code=EXIT_NO):
    """A memory file breaks the profile; carries path, line and a problem code."""

    def __init__(
        self, code: str, message: str, *, path: str | None = None, line: int | None = None, hint: str | None = None
    ) -> None:
        super().__init__(message, hint)
        self.code = code
        self.path = path
        self.line = line

    def __str__(self) -> str:
        where = self.path or "<input>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        return f"{where}: {self.code}: {self.message}"


class Refused(MemzoiError, exit_code=EXIT_NO, code="refused"):
    """A documented "no": an apply, reject or propose refused for a stated reason."""

    def __init__(self, message: str, hint: str | None = None, *, code: str = "refused") -> None:
        super().__init__(message, hint)
        self.code = code


class NotFound(MemzoiError, exit_code=EXIT_NO, code="not-found"):
    """A named record, proposal or checkpoint does not exist."""


class IdentityUnknown(MemzoiError, exit_code=EXIT_USAGE, code="identity-unknown"):
    """No MEMZOI_ACTOR and no git identity: nothing is proposed or reviewed anonymously."""


class Ambiguous(MemzoiError, exit_code=EXIT_USAGE, code="ambiguous"):
    """A shortened ID that begins more than one ID: nothing is done, the candidates are listed."""


class LockTimeout(MemzoiError, exit_code=EXIT_NO, code="lock-timeout"):
    """repo-lifecycle.lock stayed held by another process past MEMZOI_LOCK_TIMEOUT."""


class StateError(MemzoiError, exit_code=EXIT_STATE, code="state"):
    """Runtime state (shared.db, index.db, a journal) is unreadable or corrupt."""


class NoSpace(StateError, code="no-space"):
    """A write failed for want of space: a full disk, a disk quota, or the file-size limit (`ulimit -f`)."""


#: errno names of failures caused by the machine (space, permissions), not by memzoi or its input.
_NO_SPACE = ("ENOSPC", "EDQUOT", "EFBIG")
_NOT_WRITABLE = ("EROFS", "EACCES", "EPERM")
_NO_SPACE_HINT = (
    "free some space (or raise the quota or `ulimit -f`) where MEMZOI_HOME or the work tree lives, then retry"
)
_NOT_A_FOLDER_HINT = (
    "a file stands where MEMZOI_HOME keeps a folder: move it aside, or point MEMZOI_HOME at a folder; "
    "the files under .memzoi/ are unaffected"
)
_NOT_WRITABLE_HINT = (
    "make MEMZOI_HOME writable, or point MEMZOI_HOME at a writable folder; the files under .memzoi/ are unaffected"
)


def from_environment(exc: BaseException, folder: str | None = None) -> MemzoiError | None:
    """The MemzoiError for an OSError or SQLite failure the machine or broken runtime state caused
    (no space, read-only, a name too long, a corrupt database), or None for anything else (a bug).

    SQLite reports some writes that fail for want of space (its shared-memory file) only as
    "disk I/O error": those count as no space when `folder` (default MEMZOI_HOME) has none left.
    """
    if isinstance(exc, OSError) and exc.errno is not None:
        name = errno.errorcode.get(exc.errno, "")
        where = exc.filename if isinstance(exc.filename, str) else None
        what = f"{_short(where)}: {exc.strerror}" if where else str(exc.strerror or exc)
        if name == "ENAMETOOLONG":
            return UsageError(f"{what} (longer than the file system allows a name to be)")
        if name in _NO_SPACE:
            return NoSpace(what, hint=_NO_SPACE_HINT)
        if name in _NOT_WRITABLE:
            return StateError(what, hint=_NOT_WRITABLE_HINT)
        if name == "ENOTDIR" and where is not None and _in_home(where):
            return StateError(what, hint=_NOT_A_FOLDER_HINT)
        return None
    code = getattr(exc, "sqlite_errorname", None)  # sqlite3.Error; no import of sqlite3 needed here
    if code in ("SQLITE_FULL",) or (
        isinstance(code, str) and code.startswith("SQLITE_IOERR") and "disk is full" in str(exc)
    ):
        return NoSpace(f"SQLite: {exc}", hint=_NO_SPACE_HINT)
    if code in _SQLITE_WRITE_FAILED:
        # SQLite reports a write that failed with EDQUOT or EFBIG (any errno but ENOSPC) only as an I/O error
        limit = _file_size_limit()
        reason = (
            f"the file-size limit (ulimit -f) is {limit} bytes" if limit is not None else "a disk quota or a full disk"
        )
        return NoSpace(f"SQLite: {exc} while writing ({reason})", hint=_NO_SPACE_HINT)
    if isinstance(code, str) and (code.startswith("SQLITE_CORRUPT") or code == "SQLITE_NOTADB"):
        return StateError(
            f"SQLite: {exc}",
            hint="a runtime database is corrupt: `git memzoi rebuild --full` "
            "replaces index.db; shared.db is never recreated over, "
            "restore it from a backup or move it aside deliberately",
        )
    if isinstance(code, str) and code.startswith("SQLITE_IOERR") and _full(folder):
        return NoSpace(f"SQLite: {exc} (no space left)", hint=_NO_SPACE_HINT)
    if isinstance(code, str) and (code.startswith("SQLITE_READONLY") or code.startswith("SQLITE_CANTOPEN")):
        return StateError(f"SQLite: {exc}", hint=_NOT_WRITABLE_HINT)
    return None


#: SQLite's extended codes for a write, truncate, sync or grow that the operating system refused.
_SQLITE_WRITE_FAILED = ("SQLITE_IOERR_WRITE", "SQLITE_IOERR_TRUNCATE", "SQLITE_IOERR_SHMSIZE", "SQLITE_IOERR_FSYNC")


def _file_size_limit() -> int | None:
    """RLIMIT_FSIZE when it is set (`ulimit -f`), else None."""
    try:
        import resource
    except ImportError:  # not on this platform
        return None
    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return None if soft == resource.RLIM_INFINITY else soft


def _in_home(path: str) -> bool:
    """Whether `path` lies under MEMZOI_HOME (runtime state), or is it."""
    home = os.path.abspath(os.environ.get(HOME_ENV) or os.path.expanduser(DEFAULT_HOME))
    return os.path.abspath(path) == home or os.path.abspath(path).startswith(home + os.sep)


def _full(folder: str | None) -> bool:
    """True when the file system holding `folder` (or MEMZOI_HOME) has no free block left."""
    where = folder or os.environ.get(HOME_ENV) or os.path.expanduser(DEFAULT_HOME)
    while where and not os.path.isdir(where):
        parent = os.path.dirname(where)
        if parent == where:
            break
        where = parent
    try:
        return os.statvfs(where).f_bavail == 0
    except (OSError, AttributeError):  # no statvfs (Windows) or no such folder: not known to be full
        return False


def printable(path: str) -> str:
    """`path` with the bytes of a non-UTF-8 name shown as \\xNN escapes (safe to print and to store)."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _short(name: str, keep: int = 120) -> str:
    """A file name short enough for a one-line message (the head and the tail of a very long one)."""
    if len(name) <= keep:
        return name
    return f"{name[: keep // 2]}…{name[-keep // 2 :]}"


#: What a MemoryError says (cli.main and cli.entry print it): the machine's limit, not a bug.
OUT_OF_MEMORY = "out of memory: the command reached the memory limit of its process (ulimit -v, or the container's)"
OUT_OF_MEMORY_HINT = "raise the limit, or run the command where more memory is free"


#: CPython's words when a C function failed to allocate and had no memory left to say so.
_SILENT_FAILURES = ("error return without exception set", "returned NULL without setting an exception")


def memory_exhausted(exc: BaseException) -> bool:
    """Whether `exc` is memory running out, however Python reports it: a MemoryError; ENOMEM; the
    dynamic loader refusing an extension module (its ImportError names the shared object, in glibc's
    words for mapping or allocating); or, under an address-space limit, CPython's SystemError for an
    allocation it could not describe. Anything else is the error it names."""
    if isinstance(exc, MemoryError):
        return True
    if isinstance(exc, OSError):
        return exc.errno == errno.ENOMEM
    if isinstance(exc, ImportError):
        text = str(exc).lower()
        return exc.path is not None and ".so" in exc.path and any(w in text for w in ("map", "alloc", "memory"))
    if isinstance(exc, SystemError):
        return any(words in str(exc) for words in _SILENT_FAILURES) and _memory_limited()
    return False


def _memory_limited() -> bool:
    """Whether this process runs under an address-space limit (ulimit -v, a container's)."""
    try:
        import resource

        return resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY
    except (MemoryError, ImportError, SystemError):
        return True  # too little memory left even to load the module that would tell
