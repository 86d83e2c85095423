"""Promotion: local memory reaches the repository only as a reviewed proposal, and only when repo-safe."""

from __future__ import annotations

import json
from pathlib import Path

from git_memzoi.profile.document import read_packet, read_record
from git_memzoi.profile.frontmatter import set_top_level_scalar
from support import Repo, run_cli


def add_local(body: str = "Run uv sync before pytest; pip is slow here.", *extra: str, cwd: Path | None = None) -> str:
    return str(
        run_cli(
            "local",
            "add",
            "--type",
            "fact",
            "--title",
            "Tests need uv",
            "--body",
            body,
            "--applies-to",
            "tests/**",
            "--tag",
            "build",
            "--source",
            "agent",
            *extra,
            cwd=cwd,
        ).stdout.strip()
    )


def records_dir(repo: Repo) -> list[Path]:
    return sorted((repo.path / ".memzoi" / "records").rglob("*.md"))


def test_default_promotion_declares_unknown_and_apply_refuses(repo: Repo) -> None:
    local_id = add_local()
    entry = run_cli("local", "promote", local_id, "--json").json()
    assert entry["state"] == "pending" and entry["sensitivity"] == "unknown"
    assert entry["local_record_id"] == local_id and entry["file"] is None
    pid = entry["id"]
    packet = read_packet(run_cli("proposals", "show", pid, "--json").json()["packet"].encode(), "x").packet
    assert packet.sensitivity == "unknown" and packet.status == "proposed"
    assert packet.proposal.action == "create" and packet.proposal.proposed_by == "tester"
    assert packet.proposal.reason == f"promoted from local memory {local_id}"
    assert packet.origin.origin_key == f"local-promotion:{local_id}" and packet.origin.route == "local_promotion"
    assert packet.visibility == "repo" and packet.scope is not None and packet.scope.kind == "project"
    assert packet.scope.paths == ["tests/**"] and packet.tags == ["build"] and packet.source == "agent"
    refused = run_cli("apply", pid, expect=1)
    assert "sensitivity: unknown is not repo-safe" in refused.stderr
    assert "repo-safe" in run_cli("approve", pid, expect=1).stderr  # and it cannot be approved
    assert records_dir(repo) == []
    assert list((repo.path / ".memzoi/proposals").rglob("*.md")) == []


def test_repo_safe_promotion_goes_through_approve_and_apply(repo: Repo) -> None:
    local_id = add_local()
    before = run_cli("local", "show", local_id).stdout
    pid = run_cli("local", "promote", local_id, "--sensitivity", "repo-safe").stdout.strip()
    assert run_cli("proposals", "--json").json()["proposals"][0]["state"] == "validated"
    assert "approve" in run_cli("apply", pid, expect=1).stderr  # review first: manual approval
    run_cli("approve", pid)
    run_cli("apply", pid, "--reviewer", "Reviewer")
    [path] = records_dir(repo)
    record = read_record(path.read_bytes(), str(path)).record
    assert (record.visibility, record.scope, record.status) == ("repo", "repo", "active")
    assert record.proposal_id == pid and record.title == "Tests need uv"
    assert record.origin.origin_key == f"local-promotion:{local_id}"
    assert "Run uv sync before pytest" in path.read_text()
    # the local record is unchanged and still private
    assert run_cli("local", "show", local_id).stdout == before
    events = [json.loads(line) for line in run_cli("events", "--jsonl").stdout.splitlines()]
    link = [e for e in events if e["action"] == "local.promote"]
    assert len(link) == 1 and link[0]["ids"] == [local_id, pid]
    assert link[0]["detail"]["sensitivity"] == "repo-safe"


def test_packet_file_only_for_repo_safe(repo: Repo) -> None:
    local_id = add_local()
    refused = run_cli("local", "promote", local_id, "--packet", expect=1)
    assert "never written into the work tree" in refused.stderr
    assert not list((repo.path / ".memzoi/proposals").rglob("*.md"))
    pid = run_cli("local", "promote", local_id, "--packet", "--sensitivity", "repo-safe").stdout.strip()
    packet_path = repo.path / ".memzoi/proposals/pending" / f"{pid}.md"
    packet = read_packet(packet_path.read_bytes(), str(packet_path)).packet
    assert packet.sensitivity == "repo-safe" and packet.visibility == "repo"
    assert packet_path.read_text().count("# Tests need uv") == 1  # the body opens with its title


def test_apply_refuses_a_promoted_packet_whose_reviewer_declares_it_not_repo_safe(repo: Repo) -> None:
    local_id = add_local()
    pid = run_cli("local", "promote", local_id, "--packet", "--sensitivity", "repo-safe").stdout.strip()
    packet_path = repo.path / ".memzoi/proposals/pending" / f"{pid}.md"
    text = packet_path.read_text()
    packet_path.write_text(set_top_level_scalar(text, "sensitivity", "sensitive"))
    refused = run_cli("apply", str(packet_path), expect=1)
    assert "sensitivity" in refused.stderr and "not repo-safe" in refused.stderr
    assert records_dir(repo) == []
    packet_path.write_text(text)
    run_cli("apply", str(packet_path))
    assert len(records_dir(repo)) == 1


def test_promoting_the_same_record_twice_is_refused_as_a_duplicate(repo: Repo) -> None:
    local_id = add_local()
    first = run_cli("local", "promote", local_id).stdout.strip()
    again = run_cli("local", "promote", local_id, "--sensitivity", "repo-safe", expect=1)
    assert first in again.stderr
    run_cli("reject", first, "--reason", "re-proposing as repo-safe")
    run_cli("local", "promote", local_id, "--sensitivity", "repo-safe")


def test_what_cannot_be_promoted(repo: Repo) -> None:
    missing = run_cli("local", "promote", "loc_missing", expect=1)
    assert "loc_missing" in missing.stderr
    cp = run_cli("checkpoint", "add", "--task", "T", "--note", "n").stdout.strip()
    assert "checkpoints are not promoted" in run_cli("local", "promote", cp, expect=1).stderr
    assert run_cli("proposals", "--json").json() == {"proposals": []}
    local_id = add_local()
    assert "sensitivity" in run_cli("local", "promote", local_id, "--sensitivity", "public", expect=2).stderr


def test_secret_in_local_memory_cannot_be_promoted_as_repo_safe(repo: Repo) -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    result = run_cli("local", "add", "--title", "Token", "--body", f"The CI token is {token}", "--json")
    assert any("looks like a GitHub token" in w for w in result.json()["warnings"])
    local_id = result.json()["id"]
    refused = run_cli("local", "promote", local_id, "--sensitivity", "repo-safe", expect=1)
    assert "GitHub token" in refused.stderr and token not in refused.stderr
    assert records_dir(repo) == []


def test_linked_worktrees_see_the_same_inbox(repo: Repo, tmp_path: Path) -> None:
    linked = repo.add_worktree("agent-b", tmp_path / "agent-b")
    local_id = add_local(cwd=repo.path)
    pid = run_cli("local", "promote", local_id, cwd=linked.path).stdout.strip()
    for where in (repo.path, linked.path):
        listed = run_cli("proposals", "--json", cwd=where).json()["proposals"]
        assert [(p["id"], p["state"]) for p in listed] == [(pid, "pending")]
