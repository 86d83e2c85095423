"""Ready-to-paste MCP client configuration for `git memzoi mcp serve` (no SDK import: it stays light)."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from git_memzoi.agents.merge_config import toml_server_table
from git_memzoi.errors import UsageError

CLIENTS: tuple[str, ...] = ("claude", "codex", "generic")
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass(frozen=True)
class ServerConfig:
    """How a client starts the server: a command, its arguments and extra environment."""

    client: str
    name: str
    command: str
    args: list[str]
    env: dict[str, str]
    format: Literal["json", "toml"]
    snippet: str
    where: str

    def as_json(self) -> dict[str, Any]:
        return {
            "client": self.client,
            "name": self.name,
            "command": self.command,
            "args": self.args,
            "env": self.env,
            "format": self.format,
            "where": self.where,
            "snippet": self.snippet,
        }


def launcher() -> tuple[str, list[str]]:
    """The absolute path of git-memzoi (beside this interpreter, else on PATH), else `git memzoi`."""
    beside = Path(sys.executable).parent / "git-memzoi"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside), []
    found = shutil.which("git-memzoi")
    if found:
        return str(Path(found).resolve()), []
    return "git", ["memzoi"]


def server_config(
    repo_root: Path, client: str = "generic", name: str = "memzoi", env: dict[str, str] | None = None
) -> ServerConfig:
    """The snippet a client needs to run `git memzoi mcp serve --repo <repo_root>`."""
    if client not in CLIENTS:
        raise UsageError(f"unknown client {client!r}; use one of {', '.join(CLIENTS)}")
    if not _NAME.fullmatch(name):
        raise UsageError(f"--name {name!r}: use letters, digits, - and _ only")
    command, prefix = launcher()
    args = [*prefix, "mcp", "serve", "--repo", str(repo_root)]
    env = dict(env or {})
    if client == "codex":
        snippet = "\n".join(toml_server_table(name, command, args, env)) + "\n"
        return ServerConfig(client, name, command, args, env, "toml", snippet, "~/.codex/config.toml")
    entry: dict[str, Any] = {"command": command, "args": args}
    if client == "claude":
        entry = {"type": "stdio", **entry}
    if env:
        entry["env"] = dict(sorted(env.items()))
    snippet = json.dumps({"mcpServers": {name: entry}}, indent=2, ensure_ascii=False) + "\n"
    where = (
        ".mcp.json at the repository root (or `claude mcp add-json`)"
        if client == "claude"
        else "the mcpServers section of your MCP client's JSON configuration"
    )
    return ServerConfig(client, name, command, args, env, "json", snippet, where)


def runtime_env() -> dict[str, str]:
    """Environment the server must inherit to find the same runtime state as this shell."""
    home = os.environ.get("MEMZOI_HOME")
    return {"MEMZOI_HOME": str(Path(home).expanduser().resolve())} if home else {}
