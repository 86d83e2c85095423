"""The MemzoiError tree: each class names one condition and carries a hint.

The CLI's single entry point maps these to exit codes (see EXIT_* below):
0 success, 1 a documented "no", 2 usage, 3 broken runtime state,
128 not inside a git repository (as git itself), 70 anything unexpected.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_NO = 1
EXIT_USAGE = 2
EXIT_STATE = 3
EXIT_INTERNAL = 70
EXIT_NOT_A_REPO = 128


class MemzoiError(Exception):
    """Base of every error git memzoi reports to a user."""

    exit_code = EXIT_INTERNAL
    code = "error"

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message


class UsageError(MemzoiError):
    """The call itself is wrong: unknown option value, missing argument."""

    exit_code = EXIT_USAGE
    code = "usage"


class RepositoryNotFound(MemzoiError):
    """No git repository at or above the starting directory."""

    exit_code = EXIT_NOT_A_REPO
    code = "not-a-repository"


class NoWorkTree(MemzoiError):
    """The command needs a work tree and the repository is bare."""

    exit_code = EXIT_USAGE
    code = "no-work-tree"


class ConfigError(MemzoiError):
    """A config.toml has an unknown key, a bad value, or is not TOML."""

    exit_code = EXIT_USAGE
    code = "config"


class FormatError(MemzoiError):
    """A memory file breaks the profile; carries path, line and a problem code."""

    exit_code = EXIT_NO

    def __init__(self, code: str, message: str, *, path: str | None = None,
                 line: int | None = None, hint: str | None = None) -> None:
        super().__init__(message, hint)
        self.code = code
        self.path = path
        self.line = line

    def located(self, path: str) -> "FormatError":
        """Return a copy of this error that names `path`."""
        return FormatError(self.code, self.message, path=path, line=self.line, hint=self.hint)

    def __str__(self) -> str:
        where = self.path or "<input>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        return f"{where}: {self.code}: {self.message}"


class Refused(MemzoiError):
    """A documented "no": an apply, reject or propose refused for a stated reason."""

    exit_code = EXIT_NO
    code = "refused"

    def __init__(self, message: str, hint: str | None = None, *, code: str = "refused") -> None:
        super().__init__(message, hint)
        self.code = code


class NotFound(MemzoiError):
    """A named record, proposal or checkpoint does not exist."""

    exit_code = EXIT_NO
    code = "not-found"


class LockTimeout(MemzoiError):
    """repo-lifecycle.lock stayed held by another process past MEMZOI_LOCK_TIMEOUT."""

    exit_code = EXIT_NO
    code = "lock-timeout"


class StateError(MemzoiError):
    """Runtime state (shared.db, index.db, a journal) is unreadable or corrupt."""

    exit_code = EXIT_STATE
    code = "state"
