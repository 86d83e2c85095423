"""The click CLI: lazy command loading; cli.failures turns what a command raises into its line and exit code."""

from __future__ import annotations

import importlib
import importlib.util
import signal
import sys
from typing import Any

import click

from git_memzoi import __version__
from git_memzoi.cli.failures import aborted, debug_asked, guarded
from git_memzoi.cli.finish import leave
from git_memzoi.cli.stdfds import open_closed_streams
from git_memzoi.errors import EXIT_USAGE

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
    "maintenance": (
        "git_memzoi.cli.recall:maintenance",
        "List what needs review: unverified, duplicate, contradicting records.",
    ),
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
    "agent": (
        "git_memzoi.cli.agent:agent",
        "Wire memory into Claude Code, Codex, Gemini CLI and Copilot CLI (hooks, MCP).",
    ),
    "completion": ("git_memzoi.cli.completion:completion", "Shell completion for bash, zsh and fish."),
}

#: The headings `-h` lists the commands under, as git groups its own; every command is in one.
GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Set up", ("init", "doctor", "rebuild", "completion")),
    ("Examine", ("status", "show", "validate", "events", "maintenance")),
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
# MEMZOI_DEBUG is read by cli.failures.debug_asked (set, and not 0), not by click, whose boolean parsing would
# refuse a value such as "yes please" as a usage error (exit 2) only on the commands that reach click
@click.option("--debug", is_flag=True, help="Show tracebacks for unexpected failures.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Reviewable, file-native project memory for coding agents.

    Records live as Markdown under .memzoi/records/ and change only through reviewed
    proposals; recall is served from a per-worktree index under $MEMZOI_HOME.
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug or debug_asked([])


#: The commands agents run on every prompt and tool call, which only read: they end as the gates
#: do (cli.finish), without the interpreter's teardown of click and the recall modules.
READS = frozenset({"search", "context", "precheck"})


def main(argv: list[str] | None = None) -> None:
    """Run the CLI and exit with the contract's exit code."""
    open_closed_streams()  # a closed stdin, stdout or stderr is /dev/null, as git makes it
    # Like git: a reader that stops early (`git memzoi events | head`) ends us quietly by SIGPIPE.
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    args = sys.argv[1:] if argv is None else argv
    code = run(args)
    if args[:1] and args[0] in READS:
        leave(code)  # an answer read from the index: nothing of it is left to write at exit
    sys.exit(code)


def run(args: list[str]) -> int:
    """Run one command; return its exit code (0, 1 documented no, 2 usage, 3 state, 70 internal)."""
    return guarded(lambda: _click(args), debug=debug_asked(args))


def _click(args: list[str]) -> int:
    """The click group's answer to `args`; what click itself refuses (usage, Ctrl-C) as its exit code."""
    try:
        code: Any = cli.main(args=args, prog_name="git memzoi", standalone_mode=False, complete_var=COMPLETE_VAR)
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except click.exceptions.Abort:
        code = aborted(newline=False)  # click wrote the empty line after ^C
    except click.ClickException as exc:
        exc.show()
        code = EXIT_USAGE if isinstance(exc, click.UsageError) else exc.exit_code
    return code if isinstance(code, int) else 0
