"""The single entry point: lazy command loading and the one place errors become exit codes."""

from __future__ import annotations

import importlib
import importlib.util
import os
import signal
import sys
from typing import Any

import click

from git_memzoi import __version__
from git_memzoi.errors import (
    EXIT_INTERNAL,
    EXIT_USAGE,
    OUT_OF_MEMORY,
    OUT_OF_MEMORY_HINT,
    MemzoiError,
    NoSpace,
    StateError,
    UsageError,
    from_environment,
    memory_exhausted,
)

#: name -> ("module:attribute", short help). Modules load only when their command runs,
#: so `git memzoi search` never imports what export, mcp or lifecycle need.
COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("git_memzoi.cli.setup:init", "Create the .memzoi/ tree in this repository."),
    "validate": ("git_memzoi.cli.validate:validate", "Check memory files against the profile."),
    "status": ("git_memzoi.cli.inspect:status", "Where memory stands, and the command that mends what is off."),
    "show": ("git_memzoi.cli.inspect:show", "Show a proposal, packet or record by ID or unique prefix."),
    "doctor": (
        "git_memzoi.cli.setup:doctor",
        "Show keys, paths and health; --repair settles crashed steps, stale worktree state.",
    ),
    "rebuild": ("git_memzoi.cli.recall:rebuild", "Rebuild this worktree's index.db from the records."),
    "search": ("git_memzoi.cli.recall:search", "Full-text recall over current records."),
    "context": ("git_memzoi.cli.recall:context", "A prompt-ready context pack for a task."),
    "handoff": ("git_memzoi.cli.recall:handoff", "A context pack plus the open inbox and session checkpoint."),
    "precheck": ("git_memzoi.cli.recall:precheck", "Warnings that apply to a path, command or action."),
    "expiry": ("git_memzoi.cli.recall:expiry", "Explain why a record is current or query-only."),
    "propose": ("git_memzoi.cli.lifecycle:propose", "Add a proposal to the inbox."),
    "proposals": ("git_memzoi.cli.lifecycle:proposals", "List the inbox and pending packet files."),
    "review": ("git_memzoi.cli.review:review", "Walk the inbox and pending packets: approve, skip, reject, edit."),
    "approve": ("git_memzoi.cli.lifecycle:approve", "Approve a validated inbox proposal."),
    "apply": ("git_memzoi.cli.lifecycle:apply", "Apply an approved proposal or pending packet."),
    "reject": ("git_memzoi.cli.lifecycle:reject", "Reject a proposal or pending packet."),
    "local": ("git_memzoi.cli.local:local", "Private local memory (never in the work tree)."),
    "checkpoint": ("git_memzoi.cli.local:checkpoint", "Session memory checkpoints."),
    "retention": ("git_memzoi.cli.local:retention", "Authorised retention facts (episodic extension)."),
    "events": ("git_memzoi.cli.local:events", "The audit event log of shared.db."),
    "import": (
        "git_memzoi.cli.importcmd:import_",
        "Plan an import of AGENTS.md, CLAUDE.md, Cursor, Copilot rules and ADRs as proposals.",
    ),
    "export": ("git_memzoi.cli.export:export", "Generate OKF and agent instruction exports."),
    "mcp": ("git_memzoi.cli.mcp:mcp", "The stdio MCP server and its client config."),
    "hook": ("git_memzoi.cli.hooks:hook", "Server-side and client-side git hook checks."),
    "agent": ("git_memzoi.cli.agent:agent", "Wire memory into Claude Code and Codex (hooks, MCP config)."),
    "completion": ("git_memzoi.cli.completion:completion", "Shell completion for bash, zsh and fish."),
}

#: The headings `-h` lists the commands under, as git groups its own; every command is in one.
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Set up", ("init", "doctor", "rebuild", "completion")),
    ("Examine", ("status", "show", "validate", "events")),
    ("Change memory (reviewed)", ("propose", "import", "proposals", "review", "approve", "apply", "reject")),
    ("Recall", ("search", "context", "handoff", "precheck", "expiry")),
    ("Private memory", ("local", "checkpoint", "retention")),
    ("Integrate", ("export", "mcp", "hook", "agent")),
)

#: The environment variable click's shell completion answers to (`git memzoi completion` sets it).
COMPLETE_VAR = "_GIT_MEMZOI_COMPLETE"

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        names = []
        for name, (target, _) in COMMANDS.items():
            module = target.split(":")[0]
            if importlib.util.find_spec(module) is not None:
                names.append(name)
        return names

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module_name, attr = entry[0].split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                return None
            raise
        command: click.Command = getattr(module, attr)
        return command

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """As click resolves it; an unknown name gets git's suggestion of the most similar commands."""
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:
            name = args[0] if args else ""
            if name.startswith("-") or name in COMMANDS:
                raise
            import difflib  # only on a mistyped command

            similar = difflib.get_close_matches(name, list(COMMANDS), n=3, cutoff=0.6)
            if not similar:
                raise
            lead = "The most similar command is" if len(similar) == 1 else "The most similar commands are"
            listed = "".join(f"\n\t{match}" for match in similar)
            raise click.UsageError(f"{exc.message}\n\n{lead}{listed}", ctx) from None

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        available = set(self.list_commands(ctx))
        for title, names in GROUPS:
            rows = [(name, COMMANDS[name][1]) for name in names if name in available]
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings=CONTEXT_SETTINGS)
@click.version_option(__version__, "--version", prog_name="git memzoi")
@click.option("--debug", is_flag=True, envvar="MEMZOI_DEBUG", help="Show tracebacks for unexpected failures.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Reviewable, file-native project memory for coding agents.

    Records live as Markdown under .memzoi/records/ and change only through reviewed
    proposals; recall is served from a per-worktree index under $MEMZOI_HOME.
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


_OUT_OF_MEMORY = StateError(OUT_OF_MEMORY, hint=OUT_OF_MEMORY_HINT)


def _report(error: MemzoiError) -> None:
    if isinstance(error, UsageError) and error.field:  # the core names the field; here it is an option
        error = UsageError(error.detail, error.hint, field="--" + error.field.replace("_", "-"))
    click.echo(f"git memzoi: {error}", err=True)
    if error.hint:
        click.echo(f"hint: {error.hint}", err=True)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI and exit with the contract's exit code."""
    # Like git: a reader that stops early (`git memzoi events | head`) ends us quietly by SIGPIPE.
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(run(sys.argv[1:] if argv is None else argv))


def _give_space_back() -> None:
    """After a write failed for want of space, drop the derived caches of the repository here, so that the
    next command (a `local add`, a smaller rebuild) is not refused by space a cache holds."""
    try:
        from git_memzoi.gitrepo.repo import open_repo
        from git_memzoi.runtime.home import Layout, drop_derived

        removed = drop_derived(Layout.for_repo(open_repo()))
    except Exception:  # noqa: BLE001 - best effort: the failure itself is already reported
        return
    if removed:
        click.echo(f"note: dropped {len(removed)} derived cache file(s) to give space back", err=True)


def run(args: list[str]) -> int:
    """Run one command; return its exit code (0, 1 documented no, 2 usage, 3 state, 70 internal)."""
    debug = "--debug" in args or os.environ.get("MEMZOI_DEBUG") not in (None, "", "0")
    try:
        code: Any = cli.main(args=args, prog_name="git memzoi", standalone_mode=False, complete_var=COMPLETE_VAR)
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except click.exceptions.Abort:
        click.echo("git memzoi: aborted", err=True)
        code = 130
    except click.ClickException as exc:
        exc.show()
        code = EXIT_USAGE if isinstance(exc, click.UsageError) else exc.exit_code
    except MemzoiError as exc:
        code = _failed(exc, debug=debug)
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:
        code = 0
    except MemoryError:
        # the machine's limit (ulimit -v, a container's memory), not a bug: say so, as for a full disk;
        # the message is built from constants, nothing that needs memory of its own
        _report(_OUT_OF_MEMORY)
        code = _OUT_OF_MEMORY.exit_code
    except Exception as exc:  # noqa: BLE001 - the one place unexpected failures become a line
        code = _unexpected(exc, debug=debug)
    sys.stdout.flush()
    return code if isinstance(code, int) else 0


def _failed(exc: MemzoiError, *, debug: bool) -> int:
    """A failure the package names: one `git memzoi:` line and its hint; its exit code."""
    if debug:
        import traceback  # only with --debug (Command start-up: search)

        traceback.print_exc()
    _report(exc)
    if isinstance(exc, NoSpace):
        _give_space_back()
    return exc.exit_code


def _unexpected(exc: Exception, *, debug: bool) -> int:
    """Any other exception: the machine's answer when it is one (no space, read-only, a name too long), else a bug."""
    if debug:
        import traceback  # only with --debug (Command start-up: search)

        traceback.print_exc()
    known = _OUT_OF_MEMORY if memory_exhausted(exc) else from_environment(exc)
    if known is not None:
        return _failed(known, debug=False)
    click.echo(f"git memzoi: internal error: {type(exc).__name__}: {exc}", err=True)
    click.echo("hint: rerun with --debug for a traceback", err=True)
    return EXIT_INTERNAL
