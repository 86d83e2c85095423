"""`git memzoi agent hook claude|codex|gemini|copilot` and `git memzoi agent install claude|codex|gemini|copilot`:
memory wired into coding agents."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from git_memzoi.agents import merge_config
from git_memzoi.agents.limits import MAX_EVENT_BYTES
from git_memzoi.cli.agent_hook import answer_text, read_event
from git_memzoi.cli.common import emit_json, say, workspace
from git_memzoi.errors import UsageError
from git_memzoi.mcp.clientconfig import runtime_env


@click.group()
def agent() -> None:
    """Wire project memory into coding agents: their hooks and MCP client configuration.

    `agent install claude` writes .mcp.json and the hooks in .claude/settings.json;
    `agent install codex` the MCP server in .codex/config.toml and the hooks in .codex/hooks.json;
    `agent install gemini` both in .gemini/settings.json; `agent install copilot` (GitHub Copilot
    CLI) .mcp.json and .github/hooks/memzoi.json. Each client then runs `agent hook CLIENT` at
    session start, on each prompt, and around each file edit or shell command.
    """


@agent.group("hook")
def hook() -> None:
    """Answer one coding agent hook event (JSON on stdin) from project memory."""


def _answer_stdin(client: str, event_name: str | None = None) -> None:
    stdin = sys.stdin.buffer if hasattr(sys.stdin, "buffer") else None
    data = (
        read_event(stdin)
        if stdin is not None
        else sys.stdin.read(MAX_EVENT_BYTES + 1).encode("utf-8", "surrogateescape")
    )
    out, err = answer_text(data, client, event_name)
    if err is not None:
        click.echo(err, err=True)
    if out is not None:
        click.echo(out)


@hook.command("claude")
def hook_claude() -> None:
    """Answer a Claude Code hook event: SessionStart, UserPromptSubmit, PreToolUse, PreCompact, Stop, SessionEnd.

    Reads the event as JSON on stdin and prints Claude Code's hook output on stdout: the
    standing rules at session start, a context pack for a prompt, the warnings and rules that
    apply to a file or command before a tool runs (a risk record also asks for permission:
    [agents] risk_decision = "ask", "deny" or "context"). Nothing to say prints nothing. Bad
    input, or a repository without memory, never blocks the agent: exit 0 and one line on stderr.
    """
    _answer_stdin("claude")


@hook.command("codex")
def hook_codex() -> None:
    """Answer a Codex hook event: SessionStart, UserPromptSubmit, PreToolUse (Bash, apply_patch), Stop.

    The same answers as `agent hook claude`, in Codex's output. Codex takes no "ask" from a
    hook: a risk is context, or refuses the call with [agents] risk_decision = "deny". Stop
    keeps the session's checkpoint from its rollout.
    """
    _answer_stdin("codex")


@hook.command("gemini")
def hook_gemini() -> None:
    """Answer a Gemini CLI hook event: SessionStart, BeforeAgent, BeforeTool, AfterTool, AfterAgent, PreCompress.

    SessionStart and BeforeAgent add context as for Claude Code. BeforeTool acts on a risk only
    (risk_decision "deny" refuses the call, "ask" tells the user); AfterTool adds the warnings and
    rules for the file or command to the tool's result. AfterAgent and PreCompress keep the
    session's checkpoint from its chat recording.
    """
    _answer_stdin("gemini")


@hook.command("copilot")
@click.argument("event", required=False)
def hook_copilot(event: str | None) -> None:
    """Answer a GitHub Copilot CLI hook event, named as EVENT (its JSON does not name it).

    EVENT is one of sessionStart, userPromptSubmitted, preToolUse, agentStop; another, or none,
    never blocks Copilot CLI: exit 0 and one line on stderr.

    sessionStart, userPromptSubmitted and preToolUse (create, edit, bash) get the answers of
    `agent hook claude` as Copilot CLI's additionalContext; a risk refuses the tool call with
    [agents] risk_decision = "deny" (Copilot CLI asks no one from a hook). agentStop keeps the
    session's checkpoint from its events.jsonl.
    """
    _answer_stdin("copilot", event)


@agent.command("install")
@click.argument("client", type=click.Choice(list(merge_config.CLIENTS)))
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
    the SessionStart, UserPromptSubmit, PreToolUse, PreCompact, Stop and SessionEnd hooks in
    .claude/settings.json (all run `git memzoi agent hook claude`). codex: adds
    [mcp_servers.memzoi] to the project's .codex/config.toml and the SessionStart,
    UserPromptSubmit, PreToolUse and Stop hooks to .codex/hooks.json, which Codex reads once you trust
    the project (it asks on first start, and asks you to review new hooks); with --global, to
    $CODEX_HOME/config.toml and hooks.json (default ~/.codex), for every directory. gemini: adds
    the server and the SessionStart, BeforeAgent, BeforeTool, AfterTool, AfterAgent and PreCompress hooks to the
    project's .gemini/settings.json. copilot: adds the server to .mcp.json (GitHub Copilot CLI
    reads it) and the sessionStart, userPromptSubmitted, preToolUse and agentStop hooks to
    .github/hooks/memzoi.json. Project files are portable and can be committed. What is
    already there stays; a second run changes nothing; an entry named memzoi that this command
    did not write is refused (exit 1).
    """
    if user_wide and client != "codex":
        raise UsageError(f"--global is for codex: {client}'s files belong to the project")
    workdir = workspace().repo.require_workdir() if client == "claude" else work_tree()
    changes = merge_config.plan(client, workdir, runtime_env(), user_wide=user_wide)
    if not dry_run:
        merge_config.install(changes)
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
    if not dry_run and any(c.changed for c in changes):
        next_steps(client, user_wide, changes)


def next_steps(client: str, user_wide: bool, changes: list[merge_config.FileChange]) -> None:
    """What the client asks before it uses what install wrote."""
    if client == "codex" and not user_wide and changes[0].changed:
        say(
            "Codex reads .codex/config.toml and hooks.json of a project it trusts: it asks on first start "
            '(or set [projects."<this path>"] trust_level = "trusted" in ~/.codex/config.toml)'
        )
    if client == "codex" and changes[-1].changed:
        say("Codex runs new hooks once you review them: it asks at start (or review them with /hooks)")
    if client == "copilot":
        say(
            "GitHub Copilot CLI runs .github/hooks/*.json and starts .mcp.json's servers in a folder you trust: "
            "it asks on first start (one prompt-mode run: --trust-folder)"
        )
    if client == "gemini":
        say(
            "Gemini CLI reads .gemini/settings.json in a folder you trust: it asks on first start "
            "(headless runs: GEMINI_CLI_TRUST_WORKSPACE=true); /hooks panel lists the hooks"
        )
    if client == "claude" and changes[0].changed:
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
