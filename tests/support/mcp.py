"""Speaking to `git memzoi mcp serve` as a real subprocess through the MCP SDK's stdio client."""

from __future__ import annotations

import hashlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
from mcp.types import CallToolResult

from mcp import ClientSession, StdioServerParameters, stdio_client
from support.running import memzoi_exe

DEPLOY_RISK = "deploy-friday-risk"
MIGRATION_RISK = "migrations-lock-users"
#: What the server is started with from the test's environment (all else is left out).
ENV_KEYS = (
    "HOME",
    "MEMZOI_HOME",
    "GIT_CONFIG_NOSYSTEM",
    "GIT_CONFIG_GLOBAL",
    "PATH",
    "MEMZOI_ACTOR",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
)


def server_params(repo_path: Path, *, cwd: Path | None = None, via_git: bool = False) -> StdioServerParameters:
    env = {key: os.environ[key] for key in ENV_KEYS if key in os.environ}
    if via_git:
        return StdioServerParameters(command="git", args=["memzoi", "mcp", "serve"], env=env, cwd=cwd or repo_path)
    return StdioServerParameters(
        command=memzoi_exe(), args=["mcp", "serve", "--repo", str(repo_path)], env=env, cwd=cwd or repo_path.parent
    )


@asynccontextmanager
async def session(params: StdioServerParameters, errlog: Path) -> AsyncIterator[ClientSession]:
    with open(errlog, "a", encoding="utf-8") as err:
        async with stdio_client(params, errlog=err) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            yield client


def run_async(fn: Callable[[], Awaitable[None]]) -> None:
    async def bounded() -> None:
        with anyio.fail_after(50):  # a hung server fails the test instead of hanging the suite
            await fn()

    anyio.run(bounded)


def text_of(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def checksums(*roots: Path) -> dict[str, str]:
    out = {}
    for root in roots:
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            out[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out
