"""The `git-memzoi` program: a client hook's commit or push that leaves .memzoi/ alone ends here.

Every other command, and every client hook run that touches memory, goes on to the click CLI
(cli.main). The client hooks run on each commit and push; most carry only code, and
answering them before click, pygit2 or the checks load is what keeps them cheap. Claude Code
runs `agent hook claude` before every edit (Codex, Gemini CLI and GitHub Copilot CLI `agent hook
codex`, `agent hook gemini` and `agent hook copilot EVENT`), so those exact command lines skip
click too, as do `--version` and the top-level help (`-h`, `--help`, no arguments), printed from
the text click would print (cli.help_text, generated from the click group).

The server's gate skips click as well: `hook pre-receive`, `hook update REF OLD NEW` and `hook
check RANGE` (each alone or with `--json`) run in cli.gate, which prints what the click commands
print (they call it) with the same exit codes; a push refused by a file's size loads
neither click nor PyYAML.

`rebuild` (alone or with `--strict`) with nothing to do is answered here as well, with the
standard library only (`index.staleness.unchanged`): agents and scripts run it to be sure
the index is current, and most of the time it is. Anything else it finds goes to the command.

`import --json`, the plan agents read before anything is written, is made here by the
command's own code (cli.import_quick) without click; a plan that fails goes to the command,
which reports it.
"""

from __future__ import annotations

import os
import signal
import sys

from git_memzoi.cli.stdfds import open_closed_streams
from git_memzoi.errors import EXIT_STATE, OUT_OF_MEMORY, OUT_OF_MEMORY_HINT, memory_exhausted

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from pathlib import Path
    from typing import TypedDict

    class Summary(TypedDict):
        """What the line `rebuild` ends with counts (a plain dict at run time: typing stays unloaded)."""

        changed: bool
        records: int
        runtime: int
        parsed: int
        cached: int
        reused: int
        removed: int
        problems: int
        duration: float


#: The clients' hooks' whole argv (anything else, such as --help, goes to click).
HOOK_ARGVS = (["agent", "hook", "claude"], ["agent", "hook", "codex"], ["agent", "hook", "gemini"])
#: The plan of an import as agents and scripts ask for it (cli.import_quick); any other import argv goes to click.
IMPORT_ARGV = ["import", "--json"]


def main() -> None:
    """Run `git memzoi`: the client hooks' early exit (hooks.quick), the agents' hooks, else the CLI.

    What runs before click fails as a click command does: Ctrl-C is `aborted` and 130, a reader that
    stops early ends us by SIGPIPE, and any other exception (stdout on a full disk, a bug) is
    cli.failures' one line and exit code, never a traceback and 1 (a "no" no check gave).
    """
    open_closed_streams()  # a closed stdin, stdout or stderr is /dev/null, as git makes it
    if hasattr(signal, "SIGPIPE"):  # as cli.main: `git memzoi -h | head -1` ends quietly
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        try:
            _main(sys.argv[1:])
        finally:
            sys.stdout.flush()  # what a fast path wrote fails here, where it is reported, not at exit
    except KeyboardInterrupt:  # Ctrl-C in what runs before click: the empty line and the line click's run gives
        from git_memzoi.cli.failures import aborted

        sys.exit(aborted(newline=True))
    except Exception as exc:  # noqa: BLE001 - mapped as cli.failures.guarded maps what escapes a command
        if memory_exhausted(exc):  # before cli.failures loads (an import that needed memory): the same line
            _out_of_memory()
        from git_memzoi.cli.failures import debug_asked, unexpected

        sys.exit(unexpected(exc, debug=debug_asked(sys.argv[1:])))


def _out_of_memory() -> None:
    """Before cli.main's mapping is loaded (an import that needed memory): the same one line as a command gives,
    from names imported at start-up (an import here could need the memory that ran out)."""
    sys.stderr.write(f"git memzoi: {OUT_OF_MEMORY}\nhint: {OUT_OF_MEMORY_HINT}\n")
    sys.exit(EXIT_STATE)


def _main(args: list[str]) -> None:
    if "_GIT_MEMZOI_COMPLETE" in os.environ:  # a shell asking click for completions (cli.main.COMPLETE_VAR)
        from git_memzoi.cli.main import main as complete_main

        complete_main()
        return
    if args == ["--version"]:  # asked by every tool that checks for us: answered before click loads
        from git_memzoi import __version__

        print(f"git memzoi, version {__version__}")
        sys.exit(0)
    if args in ([], ["-h"], ["--help"]):
        # click prints the same help for all three; with no command it is a usage error, on stderr
        (sys.stdout if args else sys.stderr).write(top_help(help_width()) + "\n")
        sys.exit(0 if args else 2)
    if args in (["rebuild"], ["rebuild", "--strict"]):
        try:
            code = noop_rebuild(strict=len(args) == 2)
        except Exception:  # noqa: BLE001 - a shortcut that trips (damaged runtime files) leaves it to the command
            code = None
        if code is not None:
            from git_memzoi.cli.finish import leave

            leave(code)
    _hooks_before_click(args)
    if args in HOOK_ARGVS:
        from git_memzoi.cli.agent_hook import main as hook_main

        hook_main(args[2])
        return
    if args[:1] == ["search"]:
        _search_before_click(args)
    if len(args) == 4 and args[:3] == ["agent", "hook", "copilot"] and not args[3].startswith("-"):
        from git_memzoi.cli.agent_hook import main as hook_main

        hook_main("copilot", args[3])
        return
    from git_memzoi.cli.main import main as cli_main

    cli_main()


def _search_before_click(args: list[str]) -> None:
    """Answer, and exit, `search WORDS… [--json]` as agents and scripts ask it; return for any other search argv."""
    from git_memzoi.cli import search_quick

    if search_quick.takes(args):
        from git_memzoi.cli.finish import leave

        leave(search_quick.main(args))


def _hooks_before_click(args: list[str]) -> None:
    """Answer, and exit, the git hooks and the import plan that need no click: an untouched
    pre-commit or pre-push, the gates (pre-push too) and the CI check, `import --json`; return otherwise."""
    if args[:1] == ["hook"]:
        if args[1:2] in (["pre-commit"], ["pre-push"]):
            from git_memzoi.hooks.quick import early_exit

            code = early_exit(args[1:])
            if code is not None:
                from git_memzoi.cli.finish import leave

                leave(code)
        from git_memzoi.cli import gate

        if gate.takes(args):  # the server's gate, the CI check and a pre-push that touches memory, without click
            gate.main(args)
    if args == IMPORT_ARGV:
        plan_json()  # exits when it printed the plan


def plan_json() -> None:
    """Print the plan of `import --json` and exit 0; return when it could not be made (the command then reports why)."""
    from git_memzoi.cli.import_quick import plan_document

    try:
        document = plan_document()
    except Exception:  # noqa: BLE001 - every failure is the command's to report, in its words and exit code
        return
    if document is None:  # refused items: the command reports them
        return
    sys.stdout.write(document)  # a reader that stops early ends us by SIGPIPE (main set it)
    sys.stdout.flush()
    sys.exit(0)


def help_width() -> int:
    """The width click wraps help to: the terminal's columns (as shutil reads them) less 2, within its bounds."""
    from git_memzoi.cli.help_text import MAX_CONTENT_WIDTH, MIN_WIDTH

    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
        columns = columns or 80
    return max(min(columns, MAX_CONTENT_WIDTH) - 2, MIN_WIDTH)


def top_help(width: int) -> str:
    """`git memzoi -h` wrapped to `width`, as click prints it (without the final newline)."""
    from git_memzoi.cli.help_text import LINES, MIN_WIDTH, PAGE_OF_WIDTH, PAGES

    page = PAGES[PAGE_OF_WIDTH[width - MIN_WIDTH]]
    return "\n".join(LINES[int(i)] for i in page.split())


def noop_rebuild(*, strict: bool) -> int | None:
    """`rebuild` when nothing changed, in its words, without click, pygit2 or the parser; None: run the command."""
    import time

    started = time.perf_counter()
    from git_memzoi.gitrepo.discover import find
    from git_memzoi.runtime.home import Layout

    found = find()
    if found is None:
        return None  # pygit2 decides
    git_dir, common_dir, workdir = found
    if workdir is None:
        return None  # a bare repository: the command says what it says
    layout = Layout.for_paths(git_dir, common_dir, workdir)
    lease = configured_lease(layout.config_files(workdir))
    if lease is None:
        return None
    from git_memzoi.index.staleness import unchanged

    if layout.shared_db.exists():  # the module is tens of imports: only when there is a file to verify
        from git_memzoi.index.shared_db import verify_for

        verify_for(layout.shared_db, common_dir)  # another repository's state: the command refuses it
    verified = unchanged(layout.index_db, layout.shared_db, str(workdir), lease, str(git_dir))
    if verified is None:
        return None
    problems = sorted(((path, *entry) for path, entry in verified.problems), key=lambda p: p[:3])
    if strict and any((p[4] if len(p) > 4 else "error") == "error" for p in problems):
        return None  # the command refuses, naming every problem
    lines = [problem_line(*problem) for problem in problems]
    lines.append(
        rebuild_summary(
            {
                "changed": False,
                "records": verified.records,
                "runtime": verified.runtime,
                "parsed": 0,
                "cached": 0,
                "reused": verified.records + verified.runtime,
                "removed": 0,
                "problems": len(problems),
                "duration": time.perf_counter() - started,
            }
        )
    )
    sys.stderr.write("".join(f"{line}\n" for line in lines))
    return 0


def configured_lease(config_files: list[Path]) -> float | None:
    """[retention] session_lease_hours from these files (the config module only when one exists); None: invalid."""
    if not any(os.path.exists(path) for path in config_files):
        from git_memzoi.runtime import DEFAULT_SESSION_LEASE_HOURS

        return DEFAULT_SESSION_LEASE_HOURS
    from git_memzoi.errors import ConfigError
    from git_memzoi.runtime import config

    try:
        return config.load([config.file_source(path) for path in config_files]).retention.session_lease_hours
    except ConfigError:
        return None  # the command reports it


def problem_line(path: str, line: int, code: str, message: str, severity: str = "error") -> str:
    """A stored problem as `profile.document.Problem` prints it."""
    return f"{path}:{line}: {'warning: ' if severity == 'warning' else ''}{code}: {message}"


def rebuild_summary(s: Summary) -> str:
    """The line `rebuild` ends with."""
    extra = f", {s['problems']} invalid files skipped" if s["problems"] else ""
    return (
        f"index {'rebuilt' if s['changed'] else 'up to date'}: {s['records']} records, {s['runtime']} runtime "
        f"records (parsed {s['parsed']}, from cache {s['cached']}, reused {s['reused']}, removed {s['removed']})"
        f"{extra} in {s['duration']:.2f}s"
    )
