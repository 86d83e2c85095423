"""`git memzoi agent hook claude` and `git memzoi agent install claude|codex`: memory wired into coding agents."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from git_memzoi.agents import install as installer
from git_memzoi.agents.claude_hook import MAX_EVENT_BYTES
from git_memzoi.cli.agent_hook import answer_text, read_event
from git_memzoi.cli.common import emit_json, say, workspace
from git_memzoi.errors import UsageError
from git_memzoi.mcp.clientconfig import runtime_env


@click.group()
def agent() -> None:
    """Wire project memory into coding agents: Claude Code hooks, MCP client configuration.

    `agent install claude` writes .mcp.json and the hooks in .claude/settings.json;
    `agent install codex` adds the MCP server to Codex's config.toml. Claude Code then runs
    `agent hook claude` at session start and before each file edit or shell command.
    """


@agent.group("hook")
def hook() -> None:
    """Answer one coding agent hook event (JSON on stdin) from project memory."""


@hook.command("claude")
def hook_claude() -> None:
    """Answer a Claude Code hook event: PreToolUse (precheck) or SessionStart (handoff).

    Reads the event as JSON on stdin and prints Claude Code's hook output on stdout: warnings
    that apply to the file or command go to additionalContext, and a risk record also asks for
    permission ([agents] risk_decision = "ask", "deny" or "context"). Nothing to say prints
    nothing. Bad input, or a repository without memory, never blocks the agent: exit 0 and one
    line on stderr.
    """
    stdin = sys.stdin.buffer if hasattr(sys.stdin, "buffer") else None
    data = (
        read_event(stdin)
        if stdin is not None
        else sys.stdin.read(MAX_EVENT_BYTES + 1).encode("utf-8", "surrogateescape")
    )
    out, err = answer_text(data)
    if err is not None:
        click.echo(err, err=True)
    if out is not None:
        click.echo(out)


@agent.command("install")
@click.argument("client", type=click.Choice(["claude", "codex"]))
@click.option("--dry-run", "dry_run", is_flag=True, help="Print the change as a unified diff; write nothing.")
@click.option(
    "--global",
    "user_wide",
    is_flag=True,
    help="codex: write $CODEX_HOME/config.toml (every directory) instead of the project's .codex/config.toml.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")
def install(client: str, dry_run: bool, user_wide: bool, as_json: bool) -> None:
    """Configure a coding agent to use this repository's memory.

    claude: writes the project's .mcp.json (server memzoi, run as `git memzoi mcp serve`) and
    the SessionStart, UserPromptSubmit and PreToolUse hooks in .claude/settings.json (all run
    `git memzoi agent hook claude`); both files are portable and can be committed. codex: adds
    [mcp_servers.memzoi] to the project's .codex/config.toml, which Codex reads once you trust
    the project (it asks on first start); with --global, to $CODEX_HOME/config.toml (default
    ~/.codex/config.toml), where the server starts in every directory. What is already there
    stays; a second run changes nothing; an entry named memzoi that this command did not write
    is refused (exit 1).
    """
    if user_wide and client != "codex":
        raise UsageError("--global is for codex: Claude Code's files belong to the project")
    workdir = workspace().repo.require_workdir() if client == "claude" else work_tree()
    changes = installer.plan(client, workdir, runtime_env(), user_wide=user_wide)
    if not dry_run:
        installer.install(changes)
    if as_json:
        emit_json({"client": client, "dry_run": dry_run, "files": [c.as_json() for c in changes]})
    elif dry_run:
        click.echo("".join(c.diff() for c in changes), nl=False)
    for change in changes:
        shown = change.label
        if not change.changed:
            say(f"{shown}: already set up, unchanged")
        elif dry_run:
            say(f"{shown}: would {'create' if change.before is None else 'change'} (dry run, nothing written)")
        else:
            say(f"{shown}: {'created' if change.before is None else 'updated'}")
    if client == "codex" and not user_wide and not dry_run and changes[0].changed:
        say(
            "Codex reads .codex/config.toml of a project it trusts: it asks on first start "
            '(or set [projects."<this path>"] trust_level = "trusted" in ~/.codex/config.toml)'
        )
    if client == "claude" and not dry_run and changes[0].changed:
        say(
            "Claude Code asks once to approve the project's MCP server memzoi (or set "
            "enableAllProjectMcpServers in .claude/settings.local.json)"
        )


def work_tree() -> Path | None:
    """The work tree the command runs in, or None outside one (codex needs no repository)."""
    from git_memzoi.errors import NoWorkTree, RepositoryNotFound

    try:
        return workspace().repo.require_workdir()
    except (RepositoryNotFound, NoWorkTree):
        return None
