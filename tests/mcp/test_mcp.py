"""The MCP server as a real subprocess, spoken to with the SDK's stdio client; and `mcp config`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.types import CallToolResult

from git_memzoi.index import shared_db
from git_memzoi.runtime.workspace import Workspace
from mcp import ClientSession, stdio_client
from support import Repo, make_repo, memzoi_exe, run_cli
from support.mcp import DEPLOY_RISK, MIGRATION_RISK, checksums, run_async, server_params, session, text_of

TOOLS = {
    "search_memory",
    "build_context_pack",
    "precheck_path",
    "precheck_command",
    "precheck_action",
    "inspect_memory_expiry",
    "handoff",
}


def test_server_tools_answer_and_change_nothing(memory_repo: Repo, tmp_path: Path) -> None:
    local_id = run_cli(
        "local",
        "add",
        "--type",
        "warning",
        "--title",
        "My local zebra note",
        "--body",
        "Private zebra detail about db migrations.",
    ).stdout.strip()
    checkpoint_id = run_cli(
        "checkpoint",
        "add",
        "--task",
        "Migrate the users table",
        "--note",
        "Quagga step: three of five migrations done.",
    ).stdout.strip()
    ws = Workspace.open(memory_repo.path)
    conn = shared_db.connect(ws.layout.shared_db)
    with shared_db.transaction(conn):
        shared_db.append_event(conn, "test.seed", ["seed"], {"why": "something to protect"})
    conn.close()
    protected = (memory_repo.path, ws.layout.shared_db)
    before = checksums(*protected)
    errlog = tmp_path / "server.err"
    calls: dict[str, CallToolResult] = {}

    async def main() -> None:
        async with session(server_params(memory_repo.path), errlog) as client:
            listed = await client.list_tools()
            assert {t.name for t in listed.tools} == TOOLS
            for tool in listed.tools:
                assert tool.annotations is not None and tool.annotations.read_only_hint is True
                assert tool.output_schema is not None, tool.name
            calls["search"] = await client.call_tool("search_memory", {"query": "content classification"})
            calls["search_filtered"] = await client.call_tool(
                "search_memory",
                {
                    "query": "migrations",
                    "path": "db/migrations/001.sql",
                    "type": "risk",
                    "lane": "semantic",
                    "limit": 5,
                },
            )
            calls["search_private_default"] = await client.call_tool("search_memory", {"query": "zebra"})
            calls["search_private_opt_in"] = await client.call_tool(
                "search_memory", {"query": "zebra", "include_local": True}
            )
            calls["context"] = await client.call_tool(
                "build_context_pack",
                {"task": "add a database migration", "paths": ["db/migrations/002.sql"], "budget": 400},
            )
            calls["precheck_path"] = await client.call_tool("precheck_path", {"path": "db/migrations/001.sql"})
            calls["precheck_command"] = await client.call_tool("precheck_command", {"command": "make deploy"})
            calls["precheck_action"] = await client.call_tool("precheck_action", {"action": "deploy on friday"})
            calls["expiry"] = await client.call_tool("inspect_memory_expiry", {"record_id": MIGRATION_RISK})
            calls["handoff"] = await client.call_tool("handoff", {"task": "finish the migration work"})
            calls["handoff_local"] = await client.call_tool(
                "handoff", {"task": "finish the migration work", "include_local": True}
            )
            # bad calls are tool errors; the server keeps answering afterwards
            calls["unknown_id"] = await client.call_tool("inspect_memory_expiry", {"record_id": "no-such-record"})
            calls["bad_limit"] = await client.call_tool("search_memory", {"query": "x", "limit": 0})
            calls["missing_arg"] = await client.call_tool("precheck_path", {})
            calls["bad_type"] = await client.call_tool("search_memory", {"query": "x", "type": "Decision"})
            calls["no_tool"] = await client.call_tool("apply_proposal", {"target": "x"})
            calls["after_errors"] = await client.call_tool("precheck_path", {"path": "Makefile"})

    run_async(main)

    ok = {k: v for k, v in calls.items() if k not in ("unknown_id", "bad_limit", "missing_arg", "bad_type", "no_tool")}
    for name, result in ok.items():
        assert not result.is_error, (name, text_of(result))
        assert result.structured_content is not None and text_of(result), name

    hits = [h["record_id"] for h in calls["search"].structured_content["hits"]]
    assert "canonical-repository-records-require-explicit-content-classification" in hits
    assert "content-classification" in text_of(calls["search"]) or "classification" in text_of(calls["search"])
    filtered = calls["search_filtered"].structured_content["hits"]
    assert [h["record_id"] for h in filtered] == [MIGRATION_RISK]
    assert all(h["citation"]["path"].startswith(".memzoi/records/") for h in filtered)
    assert calls["search_private_default"].structured_content["hits"] == []
    assert [h["record_id"] for h in calls["search_private_opt_in"].structured_content["hits"]] == [local_id]

    pack = calls["context"].structured_content
    assert pack["task"] == "add a database migration" and pack["budget"] == 400
    assert MIGRATION_RISK in [item["record_id"] for item in pack["items"]]
    assert local_id not in json.dumps(pack)
    assert text_of(calls["context"]) == pack["text"]

    path_warnings = calls["precheck_path"].structured_content
    assert path_warnings["subject"] == "path" and MIGRATION_RISK in [w["record_id"] for w in path_warnings["warnings"]]
    assert local_id not in json.dumps(path_warnings)
    assert DEPLOY_RISK in [w["record_id"] for w in calls["precheck_command"].structured_content["warnings"]]
    assert calls["precheck_command"].structured_content["subject"] == "command"
    assert calls["precheck_action"].structured_content["subject"] == "action"
    assert DEPLOY_RISK in [w["record_id"] for w in calls["precheck_action"].structured_content["warnings"]]
    assert DEPLOY_RISK in [w["record_id"] for w in calls["after_errors"].structured_content["warnings"]]

    expiry = calls["expiry"].structured_content
    assert expiry["record_id"] == MIGRATION_RISK and expiry["current"] is True and expiry["lane"] == "semantic"
    handoff = calls["handoff"].structured_content
    assert handoff["task"] == "finish the migration work" and "pack" in handoff and "inbox" in handoff
    # session memory stays out of a handoff unless the call opts in
    assert handoff["checkpoint"] is None and "Quagga" not in json.dumps(handoff)
    assert "include_local" in text_of(calls["handoff"])
    local_handoff = calls["handoff_local"].structured_content
    assert local_handoff["checkpoint"]["record_id"] == checkpoint_id
    assert "Quagga step" in text_of(calls["handoff_local"])

    assert calls["unknown_id"].is_error and "no-such-record" in text_of(calls["unknown_id"])
    assert calls["bad_limit"].is_error and "limit" in text_of(calls["bad_limit"])
    assert calls["missing_arg"].is_error and "path" in text_of(calls["missing_arg"])
    assert calls["bad_type"].is_error and "type" in text_of(calls["bad_type"])
    assert calls["no_tool"].is_error and "apply_proposal" in text_of(calls["no_tool"])

    assert checksums(*protected) == before
    assert "Traceback" not in errlog.read_text(encoding="utf-8")


def test_server_never_creates_shared_db_and_runs_from_a_subfolder_via_git(memory_repo: Repo, tmp_path: Path) -> None:
    ws = Workspace.open(memory_repo.path)
    assert not ws.layout.shared_db.exists()
    sub = memory_repo.path / "docs" / "deep"
    sub.mkdir(parents=True)
    seen: dict[str, Any] = {}

    async def main() -> None:
        async with session(server_params(memory_repo.path, cwd=sub, via_git=True), tmp_path / "err") as client:
            seen["search"] = await client.call_tool("search_memory", {"query": "Friday deploy"})
            seen["handoff"] = await client.call_tool("handoff", {"task": "release"})
            seen["context"] = await client.call_tool("build_context_pack", {"task": "release", "include_local": True})

    run_async(main)
    for result in seen.values():
        assert not result.is_error, text_of(result)
    assert DEPLOY_RISK in [h["record_id"] for h in seen["search"].structured_content["hits"]]
    assert not ws.layout.shared_db.exists()
    assert not any(p.name.startswith("shared.db") for p in ws.layout.project.iterdir())


async def cli(*args: str, cwd: Path) -> str:
    """Run the installed `git memzoi` as its own process (a writer racing the servers)."""
    done = await anyio.run_process([memzoi_exe(), *args], cwd=cwd, check=False)
    assert done.returncode == 0, (args, done.stderr.decode())
    return done.stdout.decode().strip()


@pytest.mark.slow
def test_two_servers_see_records_that_change_between_calls(memory_repo: Repo, tmp_path: Path) -> None:
    new_id = "rotate-signing-keys-quarterly"
    applied: list[str] = []
    # shared.db exists before the servers start, as it does once anything was proposed; its
    # very first creation racing a reader is a separate case (shared_db.connect).
    shared_db.connect(Workspace.open(memory_repo.path).layout.shared_db).close()

    async def ask(client: ClientSession) -> list[str]:
        result = await client.call_tool("search_memory", {"query": "signing keys quarterly"})
        assert not result.is_error, text_of(result)
        return [h["record_id"] for h in result.structured_content["hits"]]

    async def keep_asking(client: ClientSession, until: anyio.Event, seen: list[list[str]]) -> None:
        while not until.is_set():
            seen.append(await ask(client))
            await anyio.sleep(0.05)  # leave the CPU to the writer it races

    async def change(*proposal: str) -> None:
        """propose, approve and apply --commit through the CLI while both servers keep answering."""
        done = anyio.Event()
        seen: dict[str, list[list[str]]] = {"first": [], "second": []}
        async with anyio.create_task_group() as group:
            group.start_soon(keep_asking, first, done, seen["first"])
            group.start_soon(keep_asking, second, done, seen["second"])
            pid = await cli("propose", *proposal, cwd=memory_repo.path)
            await cli("approve", pid, cwd=memory_repo.path)
            await cli("apply", pid, "--commit", cwd=memory_repo.path)
            await cli("rebuild", "--full", cwd=memory_repo.path)
            applied.append(pid)
            done.set()
        assert seen["first"] and seen["second"]

    async def main() -> None:
        nonlocal first, second
        async with (
            session(server_params(memory_repo.path), tmp_path / "a.err") as first,
            session(server_params(memory_repo.path), tmp_path / "b.err") as second,
        ):
            assert new_id not in await ask(first) and new_id not in await ask(second)
            await change(
                "--type",
                "decision",
                "--title",
                "Rotate signing keys quarterly",
                "--body",
                "Signing keys rotate every quarter.",
            )
            assert new_id in await ask(first) and new_id in await ask(second)
            await change("--action", "tombstone", "--target", new_id, "--reason", "Keys now rotate monthly.")
            assert new_id not in await ask(first) and new_id not in await ask(second)

    first = second = None  # bound by main()
    run_async(main)
    for log in ("a.err", "b.err"):
        text = (tmp_path / log).read_text(encoding="utf-8")
        assert "locked" not in text and "Traceback" not in text
    # no write was lost: both proposals are applied in shared.db and the record is tombstoned in git
    conn = shared_db.connect(Workspace.open(memory_repo.path).layout.shared_db, readonly=True)
    states = dict(conn.execute("SELECT id, state FROM proposals").fetchall())
    conn.close()
    assert [states[pid] for pid in applied] == ["applied", "applied"]
    head = memory_repo.git.head.peel().tree
    blob = head / ".memzoi" / "records" / "semantic" / "decisions" / f"{new_id}.md"
    assert b"status: tombstoned" in blob.data


def test_serve_outside_a_repository_fails_before_speaking_mcp(tmp_path: Path) -> None:
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    done = subprocess.run(
        [memzoi_exe(), "mcp", "serve", "--repo", str(outside)], capture_output=True, text=True, input="", timeout=30
    )
    assert done.returncode == 128 and "repository" in done.stderr and done.stdout == ""


def test_serve_in_a_bare_repository_fails_before_speaking_mcp(repo: Repo, tmp_path: Path) -> None:
    bare = tmp_path / "server.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo.path), str(bare)], check=True)
    done = subprocess.run(
        [memzoi_exe(), "mcp", "serve", "--repo", str(bare)], capture_output=True, text=True, input="", timeout=30
    )
    assert done.returncode == 2 and "work tree" in done.stderr and done.stdout == ""


# -- mcp config --------------------------------------------------------------------------------


def test_config_snippets_for_each_client(repo: Repo) -> None:
    exe = str(Path(memzoi_exe()).resolve())
    root = str(repo.path.resolve())
    generic = run_cli("mcp", "config", "--json").json()
    assert generic["command"] == exe and generic["args"] == ["mcp", "serve", "--repo", root]
    assert generic["env"] == {"MEMZOI_HOME": str(Path(os.environ["MEMZOI_HOME"]).resolve())}
    snippet = json.loads(generic["snippet"])
    assert snippet["mcpServers"]["memzoi"]["command"] == exe
    claude = run_cli("mcp", "config", "--client", "claude")
    entry = json.loads(claude.stdout)["mcpServers"]["memzoi"]
    assert entry["type"] == "stdio" and entry["args"][-1] == root
    assert "claude mcp add --transport stdio" in claude.stderr
    codex = run_cli("mcp", "config", "--client", "codex", "--name", "project-memory")
    import tomllib

    table = tomllib.loads(codex.stdout)["mcp_servers"]["project-memory"]
    assert table["command"] == exe and table["args"] == ["mcp", "serve", "--repo", root]
    run_cli("mcp", "config", "--name", "bad name", expect=2)
    run_cli("mcp", "config", "--client", "cursor", expect=2)


def test_config_from_a_subfolder_names_the_repository_root(repo: Repo) -> None:
    sub = repo.path / "src"
    sub.mkdir()
    data = run_cli("mcp", "config", "--json", cwd=sub).json()
    assert data["args"][-1] == str(repo.path.resolve())


@pytest.mark.slow
def test_other_commands_never_import_the_mcp_sdk(repo: Repo, tmp_path: Path) -> None:
    probe = (
        "import json, sys\n"
        "from git_memzoi.cli.main import run\n"
        "code = run(sys.argv[1:])\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types', 'anyio', 'starlette',"
        " 'uvicorn', 'httpx', 'httpx2'))\n"
        "sys.stderr.write('HEAVY=' + json.dumps(heavy) + '\\n')\n"
    )
    commands = [
        ["search", "anything"],
        ["export", "agents-md", "--output", str(tmp_path / "out")],
        ["mcp", "config", "--json"],
        ["validate"],
        ["doctor", "--json"],
        ["--help"],
    ]

    def heavy_modules(args: list[str]) -> list[str]:
        done = subprocess.run(
            [sys.executable, "-c", probe, *args], capture_output=True, text=True, cwd=repo.path, timeout=60, input=""
        )
        line = [ln for ln in done.stderr.splitlines() if ln.startswith("HEAVY=")]
        assert line, (args, done.stderr)
        return list(json.loads(line[0][6:]))

    for args in commands:
        assert heavy_modules(args) == [], args
    # the probe does see the SDK when a command loads it (the server exits at end of input)
    assert "mcp" in heavy_modules(["mcp", "serve"])


def test_a_fresh_repository_with_no_records_serves_empty_answers(tmp_path: Path) -> None:
    empty = make_repo(tmp_path / "empty")
    seen: dict[str, CallToolResult] = {}

    async def main() -> None:
        async with session(server_params(empty.path), tmp_path / "err") as client:
            seen["search"] = await client.call_tool("search_memory", {"query": "anything"})
            seen["precheck"] = await client.call_tool("precheck_path", {"path": "src/app.py"})

    run_async(main)
    assert seen["search"].structured_content["hits"] == []
    assert seen["precheck"].structured_content["warnings"] == []


def test_output_schemas_come_from_the_recall_models() -> None:
    from git_memzoi.mcp.server import output_model
    from git_memzoi.recall.models import ExpiryDecision, Handoff

    expiry = output_model(ExpiryDecision).model_json_schema()
    assert expiry["description"].startswith("Why a record is current or query-only")
    assert expiry["properties"]["facts"]["default"] == [] and "facts" not in expiry["required"]
    handoff = output_model(Handoff).model_json_schema()
    assert handoff["description"] == Handoff.__doc__
    assert set(handoff["$defs"]) == {
        "Checkpoint",
        "Citation",
        "ContextItem",
        "ContextPack",
        "ExpiryDecision",
        "InboxItem",
        "Listed",
        "Omission",
    }
    assert handoff["properties"]["checkpoint"]["anyOf"][1] == {"type": "null"}


def test_instructions_tell_the_agent_how_to_propose_and_keep_a_private_note(memory_repo: Repo, tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    async def main() -> None:
        with open(tmp_path / "err", "a", encoding="utf-8") as err:
            params = server_params(memory_repo.path)
            async with stdio_client(params, errlog=err) as (read, write), ClientSession(read, write) as client:
                seen["init"] = await client.initialize()

    run_async(main)
    instructions = seen["init"].instructions
    assert "git memzoi propose" in instructions and "--source agent --packet" in instructions
    assert "git memzoi local add" in instructions
