"""propose: flags and packet files into the DB inbox; secrets, duplicates and bad input refused."""

from __future__ import annotations

import re

import pytest
from pydantic import TypeAdapter

from git_memzoi.index import shared_db
from git_memzoi.lifecycle import inbox
from git_memzoi.profile import frontmatter
from git_memzoi.profile.models import Identifier
from git_memzoi.runtime.workspace import Workspace
from support import run_cli
from support.lifecycle import (
    PROPOSED_AT,
    add_record,
    at,
    loads,
    packet,
    refused,
    states,
    write_packet,
)

ID_SHAPE = re.compile(r"^mem_\d{4}_\d{2}_\d{2}_[a-z0-9_]+_[0-9a-f]{6}$")
BASE = ("propose", "--type", "decision", "--title", "Protected routes validate sessions")


@pytest.fixture
def ready(repo):
    shared_db.connect(Workspace.open(repo.path).layout.shared_db).close()
    at(PROPOSED_AT)
    return repo


def test_propose_builds_a_valid_packet(ready) -> None:
    result = run_cli(
        *BASE,
        "--body",
        "Validate sessions server-side.",
        "--applies-to",
        "src/auth/**",
        "--tag",
        "auth",
        "--source",
        "path",
        "--source-ref",
        "src/auth/session.ts",
        "--confidence",
        "high",
        "--json",
    ).json()
    pid = result["id"]
    assert ID_SHAPE.match(pid) and TypeAdapter(Identifier).validate_python(pid) == pid
    assert pid.startswith("mem_2026_03_01_protected_routes_validate_sessions_")
    assert result["state"] == "validated" and result["file"] is None and result["sensitivity"] == "repo-safe"
    shown = run_cli("proposals", "show", pid, "--json").json()
    data = frontmatter.parse(shown["packet"].encode()).data
    assert data["proposal"] == {
        "action": "create",
        "proposed_by": "tester",
        "proposed_at": PROPOSED_AT,
        "confidence": "high",
    }
    assert data["scope"] == {"kind": "project", "paths": ["src/auth/**"]}
    assert data["origin"] == {"origin_key": f"proposal:{pid}", "route": "repository_proposal"}
    assert data["description"] == "Validate sessions server-side."
    assert not list((ready.path / ".memzoi/proposals/pending").glob("*.md"))


def test_propose_packet_writes_the_review_file(ready) -> None:
    result = run_cli(*BASE, "--body", "Validate sessions.", "--packet", "--json").json()
    rel = f".memzoi/proposals/pending/{result['id']}.md"
    assert result["file"] == rel and result["source"] == "inbox+file"
    shown = run_cli("proposals", "show", result["id"], "--json").json()
    assert (ready.path / rel).read_text() == shown["packet"]
    run_cli("validate", rel)


def test_auto_approval_from_repo_config_overrides_user_config(ready) -> None:
    ws = Workspace.open(ready.path)
    ws.layout.user_config.parent.mkdir(parents=True, exist_ok=True)
    ws.layout.user_config.write_text('[workflow]\nproposal_approval = "auto"\n')
    first = run_cli(*BASE, "--body", "One.", "--json").json()
    assert first["state"] == "approved"
    ready.write(".memzoi/config.toml", '[workflow]\nproposal_approval = "manual"\n')
    second = run_cli("propose", "--type", "fact", "--title", "Another", "--body", "Two.", "--json").json()
    assert second["state"] == "validated"


@pytest.mark.parametrize(
    "field, args",
    [
        ("body", ("--body", "Deploy with AKIAIOSFODNN7EXAMPLE please.")),
        ("body", ("--body", "Clone https://deploy:hunter2secret@git.example.com/repo.git")),
        ("description", ("--body", "Harmless.", "--description", "token ghp_" + "a" * 36)),
    ],
)
def test_secret_looking_content_is_refused(ready, field, args) -> None:
    line = refused(ready, *BASE, *args, needles=(field, "looks like"))
    assert "AKIA" not in line and "hunter2" not in line


def test_secret_in_title_is_refused(ready) -> None:
    refused(
        ready, "propose", "--type", "fact", "--title", "key AKIAIOSFODNN7EXAMPLE", "--body", "x", needles=("title",)
    )


def test_secret_with_non_repo_safe_sensitivity_stays_pending(ready) -> None:
    result = run_cli(*BASE, "--body", "AKIAIOSFODNN7EXAMPLE", "--sensitivity", "secret", "--json").json()
    assert result["state"] == "pending"
    assert any("can only be rejected" in m for m in result["messages"])
    line = refused(ready, "approve", result["id"], needles=("sensitivity", "secret"))
    assert "rejected" in line


def test_non_repo_safe_packet_is_never_written_to_the_work_tree(ready) -> None:
    refused(
        ready,
        *BASE,
        "--body",
        "AKIAIOSFODNN7EXAMPLE",
        "--sensitivity",
        "secret",
        "--packet",
        needles=("sensitivity", "never written"),
    )
    assert not list((ready.path / ".memzoi/proposals/pending").glob("*.md"))


def test_duplicate_content_is_refused_with_the_twin(ready) -> None:
    twin = run_cli(*BASE, "--body", "Validate   sessions\nserver-side.", "--json").json()["id"]
    line = refused(
        ready,
        "propose",
        "--type",
        "fact",
        "--title",
        "Other title",
        "--body",
        "validate sessions SERVER-SIDE.",
        needles=("body", twin),
    )
    assert "already proposed" in line


def test_duplicate_of_a_pending_packet_file(ready) -> None:
    write_packet(ready, packet("mem_2026_03_01_file_abc123"), "# Heading\n\nThe same text.\n")
    refused(ready, *BASE, "--body", "the same   text.", needles=("mem_2026_03_01_file_abc123",))


def test_rejected_twin_does_not_block(ready) -> None:
    twin = run_cli(*BASE, "--body", "Same body.", "--json").json()["id"]
    run_cli("reject", twin, "--reason", "not now")
    run_cli("propose", "--type", "fact", "--title", "Same again", "--body", "Same body.")


def test_from_file_keeps_the_packet_id(ready, tmp_path) -> None:
    source = tmp_path / "packet.md"
    source.write_text(frontmatter.render(packet("mem_2026_03_01_given_abc123"), "# T\n\nGiven packet.\n"))
    result = run_cli("propose", "--from-file", str(source), "--packet", "--json").json()
    assert result["id"] == "mem_2026_03_01_given_abc123"
    assert (ready.path / ".memzoi/proposals/pending/mem_2026_03_01_given_abc123.md").is_file()
    refused(ready, "propose", "--from-file", str(source), needles=("mem_2026_03_01_given_abc123", "already"))


def test_from_file_with_content_flags_is_usage(ready, tmp_path) -> None:
    source = tmp_path / "packet.md"
    source.write_text(frontmatter.render(packet(), "# T\n\nGiven.\n"))
    refused(ready, "propose", "--from-file", str(source), "--title", "x", needles=("--title",), code=2)


@pytest.mark.parametrize(
    "args, needles, code",
    [
        (("--body", "x", "--applies-to", "src/*.ts"), ("scope.paths", "glob"), 1),
        (("--body", "x", "--content-class", "Not Snake"), ("content_class",), 1),
        (("--body", "x", "--lane", "episodic", "--occurred-at", "yesterday"), ("--occurred-at",), 2),
        (("--body", "x", "--confidence", "2"), ("--confidence",), 2),
        (("--body", "x", "--confidence", "nan"), ("--confidence",), 2),
        (("--body", "x", "--target", "a"), ("--target", "create"), 2),
        (("--body", " "), ("--body",), 2),
        (("--body", "x", "--route", "r"), ("--origin-key",), 2),
    ],
)
def test_bad_flags(ready, args, needles, code) -> None:
    refused(ready, *BASE, *args, needles=needles, code=code)


def test_missing_title_and_type_are_usage(ready) -> None:
    refused(ready, "propose", "--type", "fact", "--body", "x", needles=("--title",), code=2)
    refused(ready, "propose", "--title", "t", "--body", "x", needles=("--type",), code=2)


def test_supersede_and_tombstone_proposals_check_their_target(ready) -> None:
    add_record(ready, "semantic/decisions/session-rule", "session-rule", type="risk", lane="procedural")
    sup = run_cli(
        *BASE,
        "--body",
        "New rule.",
        "--action",
        "supersede",
        "--target",
        "session-rule",
        "--reason",
        "broader",
        "--json",
    ).json()
    assert sup["state"] == "validated"
    tomb = run_cli(
        "propose", "--action", "tombstone", "--target", "session-rule", "--reason", "obsolete", "--json"
    ).json()
    data = frontmatter.parse(run_cli("proposals", "show", tomb["id"], "--json").json()["packet"].encode()).data
    assert (data["type"], data["lane"], data["proposal"]["target"]) == ("risk", "procedural", "session-rule")
    refused(
        ready,
        "propose",
        "--action",
        "tombstone",
        "--target",
        "missing-one",
        "--reason",
        "x",
        "--type",
        "fact",
        needles=("proposal.target", "'missing-one' does not exist"),
    )
    refused(
        ready, *BASE, "--body", "y", "--action", "supersede", "--target", "session-rule", needles=("proposal-reason",)
    )


def test_submit_api_fills_defaults(ready) -> None:
    ws = Workspace.open(ready.path)
    data = {
        "type": "fact",
        "lane": "episodic",
        "title": "Deploy broke on Friday",
        "proposal": {"action": "create"},
        "sensitivity": "repo-safe",
        "content_class": "incident_notes",
        "scope": {"kind": "project"},
    }
    entry = inbox.submit(ws, data, "# Deploy broke\n\nThe Friday deploy broke.\n", packet_file=True)
    assert entry.state == "validated" and entry.file == f".memzoi/proposals/pending/{entry.id}.md"
    packet_data = frontmatter.parse((ready.path / entry.file).read_bytes()).data
    assert packet_data["retention"] == {"occurred_at": PROPOSED_AT}
    assert packet_data["kind"] == "proposal" and packet_data["status"] == "proposed"
    assert states(ready.path) == {entry.id: "validated"}


def test_local_promote_lands_in_the_inbox(ready) -> None:
    local_id = loads(run_cli("local", "add", "--title", "Use pnpm", "--body", "We use pnpm.", "--json").stdout)["id"]
    promoted = run_cli("local", "promote", local_id, "--sensitivity", "repo-safe", "--json").json()
    assert states(ready.path)[promoted["id"]] == "validated"
