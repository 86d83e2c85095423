"""handoff through the real MCP client: a proposal that is not repo-safe is never described without include_local."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import Repo, run_cli
from test_mcp import run_async, server_params, session, text_of

from git_memzoi.index import shared_db
from git_memzoi.runtime.workspace import Workspace

PRIVATE_TITLE = "Alice Example's home address is 12 Private Lane"
PUBLIC_TITLE = "Deploys run from the main branch"


def test_handoff_describes_only_repo_safe_proposals_without_include_local(repo: Repo, tmp_path: Path) -> None:
    shared_db.connect(Workspace.open(repo.path).layout.shared_db).close()
    private = run_cli("propose", "--type", "fact", "--title", PRIVATE_TITLE, "--body", "Kept private.",
                      "--sensitivity", "private-personal-data", "--json").json()["id"]
    public = run_cli("propose", "--type", "fact", "--title", PUBLIC_TITLE, "--body", "Use main.",
                     "--json").json()["id"]
    assert "home" in private  # the ID is slugged from the title: it must stay out too
    calls = {}

    async def talk() -> None:
        async with session(server_params(repo.path), tmp_path / "server.log") as client:
            calls["plain"] = await client.call_tool("handoff", {"task": "deploy"})
            calls["local"] = await client.call_tool("handoff", {"task": "deploy", "include_local": True})

    run_async(talk)
    plain = json.dumps(calls["plain"].structured_content) + text_of(calls["plain"])
    assert PUBLIC_TITLE in plain and public in plain
    assert "Private Lane" not in plain and private not in plain and "home" not in plain.lower()
    assert "1 more open proposal(s) not repo-safe" in text_of(calls["plain"])
    local = json.dumps(calls["local"].structured_content)
    assert PRIVATE_TITLE in local and private in local and PUBLIC_TITLE in local
    # the CLI is the user's own terminal: it lists the whole inbox, as before
    assert PRIVATE_TITLE in run_cli("handoff", "--task", "deploy").stdout
