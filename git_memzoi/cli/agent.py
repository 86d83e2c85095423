"""`git memzoi agent hook claude` and `git memzoi agent install claude|codex`: memory wired into coding agents."""

from __future__ import annotations

import json
import sys

import click

from git_memzoi.errors import MemzoiError, UsageError


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


def _read_stdin() -> str:
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode("utf-8")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError("hook input is not UTF-8 text") from None


@hook.command("claude")
def hook_claude() -> None:
    """Answer a Claude Code hook event: PreToolUse (precheck) or SessionStart (handoff).

    Reads the event as JSON on stdin and prints Claude Code's hook output on stdout: warnings
    that apply to the file or command go to additionalContext, and a risk record also asks for
    permission ([agents] risk_decision = "ask", "deny" or "context"). Nothing to say prints
    nothing. Bad input, or a repository without memory, never blocks the agent: exit 0 and one
    line on stderr.
    """
    from git_memzoi.agents import claude_hook

    try:
        event = claude_hook.parse_event(_read_stdin())
        from git_memzoi.runtime.workspace import Workspace

        ws = Workspace.open(event.cwd)
        if not ws.repo.memzoi_dir.is_dir():
            click.echo(f"git memzoi: no .memzoi/ in {ws.repo.workdir}; no project memory to consult", err=True)
            return
        answer = claude_hook.answer(event, ws, ws.config.agents.risk_decision)
    except MemzoiError as exc:
        click.echo(f"git memzoi: agent hook claude: {exc}", err=True)
        return
    if answer is not None:
        click.echo(json.dumps(answer, ensure_ascii=False))
