"""The one place a failure becomes a line and an exit code, for the click CLI and for what runs before it.

`guarded` runs a command and maps what escapes it: a MemzoiError to its `git memzoi:` line, hint
and exit code; memory running out, a full disk or a read-only folder to theirs (errors.py); any
other exception to `internal error` and 70 (with a traceback under --debug or MEMZOI_DEBUG).
cli.main runs click inside it; cli.gate, the server's hooks answered before click loads, runs
its commands inside it. Imports nothing of click.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from git_memzoi.cli.output import err
from git_memzoi.errors import (
    EXIT_INTERNAL,
    OUT_OF_MEMORY,
    OUT_OF_MEMORY_HINT,
    MemzoiError,
    NoSpace,
    StateError,
    UsageError,
    from_environment,
    memory_exhausted,
)

OUT_OF_MEMORY_ERROR = StateError(OUT_OF_MEMORY, hint=OUT_OF_MEMORY_HINT)
#: A command stopped by the person (Ctrl-C): the shell's code for SIGINT.
EXIT_ABORTED = 130


def debug_asked(args: list[str]) -> bool:
    """--debug on the command line, or MEMZOI_DEBUG set (to anything but 0)."""
    return "--debug" in args or os.environ.get("MEMZOI_DEBUG") not in (None, "", "0")


def guarded(command: Callable[[], int], *, debug: bool) -> int:
    """Run `command`; its exit code, or the code of what it raised once that is reported on stderr."""
    try:
        code = command()
    except MemzoiError as exc:
        code = failed(exc, debug=debug)
    except (KeyboardInterrupt, EOFError):  # as click takes them inside a command
        code = aborted(newline=True)
    except BrokenPipeError:
        code = 0
    except MemoryError:
        # the machine's limit (ulimit -v, a container's memory), not a bug: say so, as for a full disk;
        # the message is built from constants, nothing that needs memory of its own
        report(OUT_OF_MEMORY_ERROR)
        code = OUT_OF_MEMORY_ERROR.exit_code
    except Exception as exc:  # noqa: BLE001 - the one place unexpected failures become a line
        code = unexpected(exc, debug=debug)
    sys.stdout.flush()
    return code


def aborted(*, newline: bool) -> int:
    """Ctrl-C: `git memzoi: aborted` (after the empty line click writes on a KeyboardInterrupt)."""
    if newline:
        err("")
    err("git memzoi: aborted")
    return EXIT_ABORTED


def report(error: MemzoiError) -> None:
    """`git memzoi: MESSAGE` and its `hint:` line on stderr."""
    if isinstance(error, UsageError) and error.field:  # the core names the field; here it is an option
        error = UsageError(error.detail, error.hint, field="--" + error.field.replace("_", "-"))
    err(f"git memzoi: {error}")
    if error.hint:
        err(f"hint: {error.hint}")


def failed(exc: MemzoiError, *, debug: bool) -> int:
    """A failure the package names: one `git memzoi:` line and its hint; its exit code."""
    if debug:
        import traceback  # only with --debug (Command start-up: search)

        traceback.print_exc()
    report(exc)
    if isinstance(exc, NoSpace):
        give_space_back()
    return exc.exit_code


def unexpected(exc: Exception, *, debug: bool) -> int:
    """Any other exception: the machine's answer when it is one (no space, read-only, a name too long), else a bug."""
    if debug:
        import traceback  # only with --debug (Command start-up: search)

        traceback.print_exc()
    known = OUT_OF_MEMORY_ERROR if memory_exhausted(exc) else from_environment(exc)
    if known is not None:
        return failed(known, debug=False)
    err(f"git memzoi: internal error: {type(exc).__name__}: {exc}")
    err("hint: rerun with --debug for a traceback")
    return EXIT_INTERNAL


def give_space_back() -> None:
    """After a write failed for want of space, drop the derived caches of the repository here, so that the
    next command (a `local add`, a smaller rebuild) is not refused by space a cache holds."""
    try:
        from git_memzoi.gitrepo.repo import open_repo
        from git_memzoi.runtime.home import Layout, drop_derived

        removed = drop_derived(Layout.for_repo(open_repo()))
    except Exception:  # noqa: BLE001 - best effort: the failure itself is already reported
        return
    if removed:
        err(f"note: dropped {len(removed)} derived cache file(s) to give space back")
