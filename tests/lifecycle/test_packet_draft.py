"""PacketDraft.to_packet: the one place a new proposal gets its ID, times and documented fill-ins."""

from __future__ import annotations

import pytest

from git_memzoi.errors import UsageError
from git_memzoi.lifecycle import propose
from git_memzoi.lifecycle.draft import FIELD_ORDER, MemoryFields, PacketDraft
from git_memzoi.lifecycle.packets import render_packet
from git_memzoi.lifecycle.propose import ProposeRequest
from git_memzoi.local import memory
from git_memzoi.profile import frontmatter
from git_memzoi.profile.document import InvalidDocument, read_packet
from git_memzoi.runtime.workspace import Workspace
from support import Repo, run_cli
from support.lifecycle import PROPOSED_AT, at

NOW = "2026-03-01T00:00:00Z"
BODY = "# Deploys\n\nFriday deploys break the weekend on-call.\n"


def _draft(**over: object) -> PacketDraft:
    given: dict = dict(type="risk", lane="semantic", title="Deploys", body=BODY)  # type: ignore[type-arg]
    given.update(over)
    return PacketDraft.create(**given)  # type: ignore[arg-type]


def test_to_packet_fills_exactly_the_documented_fields_in_order() -> None:
    data = _draft().to_packet(now=NOW, actor="alice")
    packet = read_packet(render_packet(data, BODY), "p.md").packet
    assert (packet.kind, packet.profile, packet.status, packet.timestamp) == ("proposal", "memzoi", "proposed", NOW)
    assert (packet.proposal.proposed_by, packet.proposal.proposed_at) == ("alice", NOW)
    assert data["origin"] == {"origin_key": f"proposal:{data['id']}", "route": "repository_proposal"}
    assert data["description"] == "Friday deploys break the weekend on-call."
    assert list(data) == [key for key in FIELD_ORDER if key in data]


def test_a_given_id_names_the_packet_and_its_default_origin() -> None:
    data = _draft().to_packet(now=NOW, actor="alice", proposal_id="mem_2026_03_01_given_abc123")
    assert data["id"] == "mem_2026_03_01_given_abc123"
    assert data["origin"]["origin_key"] == "proposal:mem_2026_03_01_given_abc123"
    given = _draft(origin={"origin_key": "issue:9", "route": "issue_import"}).to_packet(
        now=NOW, actor="a", proposal_id="mem_x"
    )
    assert given["origin"] == {"origin_key": "issue:9", "route": "issue_import"}


@pytest.mark.parametrize("lane, key", [("episodic", "occurred_at"), ("session", "started_at")])
def test_lane_start_is_filled_only_when_no_retention_is_given(lane: str, key: str) -> None:
    assert _draft(lane=lane).to_packet(now=NOW, actor="a")["retention"] == {key: NOW}
    given = _draft(lane=lane, retention={"explicit_expires_at": "2027-01-01T00:00:00Z"}).to_packet(now=NOW, actor="a")
    assert given["retention"] == {"explicit_expires_at": "2027-01-01T00:00:00Z"}
    with pytest.raises(InvalidDocument) as caught:
        read_packet(render_packet(given, BODY), "p.md")
    assert caught.value.problems[0].code == "retention-invalid"


def test_propose_and_local_promote_build_through_the_same_draft(repo: Repo) -> None:
    at(PROPOSED_AT)
    body = "Friday deploys break the weekend on-call."
    local_id = run_cli("local", "add", "--type", "risk", "--title", "Deploys", "--body", body, "--json").json()["id"]
    promoted = run_cli("local", "promote", local_id, "--sensitivity", "repo-safe", "--json").json()
    proposed = run_cli(
        "propose",
        "--type",
        "risk",
        "--title",
        "Deploys",
        "--body",
        "Friday deploys break the weekend on-call (flags).",
        "--json",
    ).json()
    shown = {
        pid: frontmatter.parse(run_cli("proposals", "show", pid, "--json").json()["packet"].encode()).data
        for pid in (promoted["id"], proposed["id"])
    }
    for data in shown.values():
        assert list(data) == [key for key in FIELD_ORDER if key in data]
        assert (data["kind"], data["status"], data["timestamp"]) == ("proposal", "proposed", PROPOSED_AT)
        assert data["proposal"]["proposed_at"] == PROPOSED_AT and data["proposal"]["proposed_by"] == "tester"
    assert shown[promoted["id"]]["origin"] == {"origin_key": f"local-promotion:{local_id}", "route": "local_promotion"}
    assert shown[proposed["id"]]["origin"]["origin_key"] == f"proposal:{proposed['id']}"


def test_the_propose_rules_run_without_the_command_line(repo: Repo) -> None:
    """lifecycle.propose.draft judges a ProposeRequest as `propose` judges its flags, with the same messages."""
    ws = Workspace.open()
    made = propose.draft(ws, ProposeRequest(type="risk", title=" Deploys ", body="Friday deploys.", confidence="HIGH"))
    assert made.body == "# Deploys\n\nFriday deploys.\n"
    assert made.fields["proposal"] == {"action": "create", "confidence": "high"}
    assert (made.fields["title"], made.fields["content_class"]) == ("Deploys", "general_repo_knowledge")
    episodic = propose.draft(ws, ProposeRequest(type="risk", lane="episodic", title="T", body="B"))
    assert set(episodic.fields["retention"]) == {"occurred_at"}
    given = {"type": "risk", "title": "T", "body": "B"}
    flags = ("--type", "risk", "--title", "T", "--body", "B")
    refusals = [
        (
            ProposeRequest(**given, target="x"),
            (*flags, "--target", "x"),
            "--target: a create proposal cannot name a target",
        ),
        (
            ProposeRequest(action="tombstone"),
            ("--action", "tombstone"),
            "--target: a tombstone proposal needs the record ID it acts on",
        ),
        (ProposeRequest(**given, route="r"), (*flags, "--route", "r"), "--route needs --origin-key"),
        (
            ProposeRequest(**given, occurred_at=NOW),
            (*flags, "--occurred-at", NOW),
            "--occurred-at applies to the episodic lane only",
        ),
    ]
    for request, argv, message in refusals:
        with pytest.raises(UsageError) as caught:
            propose.draft(ws, request)
        assert caught.value.message == message
        assert run_cli("propose", *argv, expect=2).stderr.strip() == f"git memzoi: {message}"


def test_local_memory_takes_the_same_fields_and_refuses_a_missing_title(repo: Repo) -> None:
    ws = Workspace.open()
    added = memory.add(ws, MemoryFields(title="Deploys", body="Friday deploys.", tags=("ops",)), confidence=0.5)
    record = added.record.record
    assert (record.type, record.lane, record.confidence, record.tags) == ("note", "semantic", 0.5, ["ops"])
    with pytest.raises(UsageError) as caught:
        memory.add(ws, MemoryFields(body="Friday deploys."))
    assert caught.value.field == "title"
