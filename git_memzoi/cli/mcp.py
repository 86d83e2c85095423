"""`git memzoi mcp serve` (the stdio MCP server) and `git memzoi mcp config` (a client snippet)."""

from __future__ import annotations

import shlex

import click

from git_memzoi.cli.common import emit_json, json_option, say, workspace
from git_memzoi.mcp.clientconfig import CLIENTS, runtime_env, server_config

repo_option = click.option(
    "--repo",
    metavar="PATH",
    type=click.Path(exists=True, file_okay=False),
    help="Any folder of the repository's work tree (default: the current directory).",
)


def _use_repo(repo: str | None) -> None:
    if repo is not None:
        root = click.get_current_context().find_root()
        root.ensure_object(dict)
        root.obj["repo"] = repo


@click.group()
def mcp() -> None:
    """The stdio MCP server (read-only tools) and its client configuration.

    The server answers search_memory, build_context_pack, precheck_path, precheck_command,
    precheck_action, inspect_memory_expiry and handoff, serves each current, non-private record
    as the resource memzoi://records/<concept-id>, and offers the prompts context_pack and
    handoff. None of its tools can propose, approve, apply, reject or edit memory.
    """


@mcp.command("serve")
@repo_option
def serve(repo: str | None) -> None:
    """Serve this repository's memory over MCP on stdin/stdout until the client disconnects."""
    _use_repo(repo)
    ws = workspace()
    # the MCP SDK stays out of `mcp config` (tests/mcp/test_mcp.py)
    from git_memzoi.mcp.server import serve_stdio  # the SDK loads only for this command

    serve_stdio(ws)


@mcp.command("config")
@click.option(
    "--client",
    type=click.Choice(CLIENTS),
    default="generic",
    show_default=True,
    help="claude: .mcp.json for Claude Code; codex: ~/.codex/config.toml; generic: mcpServers JSON.",
)
@click.option("--name", default="memzoi", show_default=True, help="The server's name in the client.")
@repo_option
@json_option
def config(client: str, name: str, repo: str | None, as_json: bool) -> None:
    """Print a ready MCP client configuration that runs `git memzoi mcp serve` for this repository."""
    _use_repo(repo)
    ws = workspace()
    root = ws.repo.require_workdir()
    cfg = server_config(root, client, name, runtime_env())
    if as_json:
        emit_json(cfg.as_json())
        return
    click.echo(cfg.snippet, nl=False)
    say(f"paste this into {cfg.where}")
    if client == "claude":
        env = [part for key, value in sorted(cfg.env.items()) for part in ("--env", f"{key}={value}")]
        say(
            "or run: "
            + shlex.join(["claude", "mcp", "add", "--transport", "stdio", *env, name, "--", cfg.command, *cfg.args])
        )
