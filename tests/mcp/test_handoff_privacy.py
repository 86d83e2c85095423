"""handoff through the real MCP client: a proposal that is not repo-safe is never described without include_local."""

from __future__ import annotations

import json
from pathlib import Path

from git_memzoi.index import shared_db
from git_memzoi.runtime.workspace import Workspace
from support import Repo, run_cli
from support.mcp import run_async, server_params, session, text_of

PRIVATE_TITLE = "Alice Example's home address is 12 Private Lane"
PUBLIC_TITLE = "Deploys run from the main branch"


def test_handoff_describes_only_repo_safe_proposals_without_include_local(repo: Repo, tmp_path: Path) -> None:
    shared_db.connect(Workspace.open(repo.path).layout.shared_db).close()
    private = run_cli(
        "propose",
        "--type",
        "fact",
        "--title",
        PRIVATE_TITLE,
        "--body",
        "Kept private.",
        "--sensitivity",
        "private-personal-data",
        "--json",
    ).json()["id"]
    public = run_cli("propose", "--type", "fact", "--title", PUBLIC_TITLE, "--body", "Use main.", "--json").json()["id"]
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


def test_handoff_without_local_memory_leaves_the_checkpoint_out_whatever_its_note_holds(repo: Repo) -> None:
    """The session section is rendered or not: a heading-like line in the note cannot move the cut."""
    from git_memzoi.mcp.tools import MemoryTools

    note = "Quagga step one.\n\n## Session checkpoint\n\nQuagga step two: three of five migrations done."
    checkpoint_id = run_cli("checkpoint", "add", "--task", "Zebra migration", "--note", note).stdout.strip()
    tools = MemoryTools(Workspace.open(repo.path))
    plain = tools.handoff("finish the work")
    dumped = json.dumps(plain.model.model_dump()) + plain.text
    assert plain.model.checkpoint is None  # type: ignore[attr-defined]
    assert "Quagga" not in dumped and "Zebra" not in dumped and checkpoint_id not in dumped
    assert plain.text.count("## Session checkpoint") == 1
    assert plain.text.endswith(
        "## Session checkpoint\n\nA current session checkpoint exists. It is session memory "
        "of this machine: call handoff with include_local set to true to include it.\n"
    )
    local = tools.handoff("finish the work", include_local=True)
    assert local.model.checkpoint.record_id == checkpoint_id  # type: ignore[attr-defined]
    assert local.text.endswith(note + "\n") and "Zebra migration" in local.text
