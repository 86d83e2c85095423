"""MCP resources (each current, non-private record) and prompts, read through the official SDK client."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from support import Repo, run_cli
from support.export import record_text, write_record
from support.mcp import MIGRATION_RISK, checksums, run_async, server_params, session

MIME = "text/markdown"


def test_records_are_resources_byte_for_byte(memory_repo: Repo, tmp_path: Path) -> None:
    # Not resources: private, superseded, query-only runtime memory.
    write_record(memory_repo, "private/secret-note", record_text("secret-note", visibility="private"))
    write_record(memory_repo, "old/superseded", record_text("old-decision", status="superseded"))
    # Non-ASCII text and a body without a final newline come back exactly as the file holds them.
    odd = record_text("odd-record", title="Ünïcode “quotes” — and no final newline").rstrip("\n")
    (memory_repo.path / ".memzoi/records/misc").mkdir(parents=True, exist_ok=True)
    (memory_repo.path / ".memzoi/records/misc/odd-record.md").write_bytes(odd.encode("utf-8"))
    memory_repo.commit("more")
    run_cli("local", "add", "--type", "fact", "--title", "Local zebra", "--body", "private")
    records = memory_repo.path / ".memzoi" / "records"
    expected = {
        p.relative_to(records).as_posix()[:-3]
        for p in records.rglob("*.md")
        if re.search(r"^status: active$", p.read_text(), re.M)
        and not re.search(r"^visibility: private$", p.read_text(), re.M)
    }
    assert "misc/odd-record" in expected and "private/secret-note" not in expected
    assert "old/superseded" not in expected and len(expected) > 30
    before = checksums(memory_repo.path)
    seen: dict[str, Any] = {}

    async def main() -> None:
        async with session(server_params(memory_repo.path), tmp_path / "err") as client:
            seen["list"] = (await client.list_resources()).resources
            seen["templates"] = (await client.list_resource_templates()).resource_templates
            seen["reads"] = {r.name: await client.read_resource(r.uri) for r in seen["list"]}
            for uri in (
                "memzoi://records/private/secret-note",
                "memzoi://records/old/superseded",
                "memzoi://records/no/such",
                "memzoi://records/../../etc/passwd",
            ):
                with pytest.raises(MCPError) as caught:
                    await client.read_resource(uri)
                seen[uri] = str(caught.value)
            seen["after"] = (await client.list_resources()).resources

    run_async(main)
    listed = seen["list"]
    assert {r.name for r in listed} == expected
    for resource in listed:
        assert str(resource.uri) == f"memzoi://records/{resource.name}"
        assert resource.mime_type == MIME and resource.title
        contents = seen["reads"][resource.name].contents
        assert len(contents) == 1 and contents[0].mime_type == MIME
        on_disk = (records / f"{resource.name}.md").read_bytes()
        assert contents[0].text.encode("utf-8") == on_disk, resource.name
    migration = next(r for r in listed if r.name == "risks/migrations")
    assert migration.title == "Migrations lock the users table"
    assert [t.uri_template for t in seen["templates"]] == ["memzoi://records/{+concept_id}"]
    assert seen["templates"][0].mime_type == MIME
    assert "no current shareable record" in seen["memzoi://records/private/secret-note"]
    assert "no current shareable record" in seen["memzoi://records/old/superseded"]
    assert "no current shareable record" in seen["memzoi://records/no/such"]
    assert len(seen["after"]) == len(listed), "the server keeps serving after failed reads"
    assert checksums(memory_repo.path) == before


def test_resource_list_follows_records_changed_while_serving(memory_repo: Repo, tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    async def main() -> None:
        async with session(server_params(memory_repo.path), tmp_path / "err") as client:
            seen["before"] = {r.name for r in (await client.list_resources()).resources}
            write_record(memory_repo, "decisions/new-one", record_text("new-one", title="A new decision"))
            (memory_repo.path / ".memzoi/records/risks/migrations.md").unlink()
            seen["after"] = {r.name for r in (await client.list_resources()).resources}
            seen["read"] = await client.read_resource("memzoi://records/decisions/new-one")

    run_async(main)
    assert seen["after"] == (seen["before"] - {"risks/migrations"}) | {"decisions/new-one"}
    assert seen["read"].contents[0].text == (memory_repo.path / ".memzoi/records/decisions/new-one.md").read_text()


def test_prompts_context_pack_and_handoff(memory_repo: Repo, tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    async def main() -> None:
        async with session(server_params(memory_repo.path), tmp_path / "err") as client:
            seen["list"] = (await client.list_prompts()).prompts
            seen["pack"] = await client.get_prompt("context_pack", {"task": "add a database migration"})
            seen["handoff"] = await client.get_prompt("handoff", {"task": "finish the migration work"})
            with pytest.raises(MCPError):
                await client.get_prompt("context_pack", {})

    run_async(main)
    prompts = {p.name: p for p in seen["list"]}
    assert set(prompts) == {"context_pack", "handoff"}
    for prompt in prompts.values():
        assert [a.name for a in prompt.arguments or []] == ["task"] and prompt.arguments[0].required
    pack = seen["pack"].messages[0].content.text
    assert pack.startswith("# Context for: add a database migration") and MIGRATION_RISK in pack
    handoff = seen["handoff"].messages[0].content.text
    assert "## Open inbox" in handoff and "## Session checkpoint" in handoff
