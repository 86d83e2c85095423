"""IDs as git takes SHAs, `show`, `status`, supersede inheritance, and the author's identity."""

from __future__ import annotations

import subprocess

import pytest

from git_memzoi.profile import frontmatter
from support import Repo, run_cli
from support.lifecycle import add_record, inbox_ready, propose_decision


@pytest.fixture
def ready(repo: Repo) -> Repo:
    return inbox_ready(repo)


propose = propose_decision


def test_a_unique_prefix_stands_for_the_proposal_and_an_ambiguous_one_lists_candidates(ready: Repo) -> None:
    first = propose("Use postgres for all persistent state")
    second = propose("Use postgres for the job queue")
    common = "mem_2026_03_01_use_postgres_for_"
    assert first.startswith(common) and second.startswith(common)
    refused = run_cli("approve", common, expect=2)
    assert "is ambiguous" in refused.stderr and first in refused.stderr and second in refused.stderr
    assert run_cli("show", second, "--json").json()["state"] == "validated"  # nothing changed
    run_cli("approve", first[: len(common) + 3])
    assert run_cli("proposals", "show", first, "--json").json()["state"] == "approved"
    assert run_cli("proposals", "show", second, "--json").json()["state"] == "validated"
    applied = run_cli("apply", first[: len(common) + 3], "--json").json()
    assert applied["outcome"] == "applied"


def test_unknown_id_gets_a_hint_that_fits(ready: Repo) -> None:
    refused = run_cli("approve", "mem_nothing_like_it", expect=1)
    assert "no inbox proposal has this ID" in refused.stderr
    assert "pull requests" not in refused.stderr and "git memzoi proposals" in refused.stderr


def test_show_prints_records_and_proposals_by_prefix(ready: Repo) -> None:
    add_record(ready, "semantic/decisions/use-postgres", "use-postgres")
    add_record(ready, "semantic/decisions/use-redis", "use-redis")
    shown = run_cli("show", "use-po")
    assert shown.stdout.startswith("record use-postgres  active, current  (.memzoi/records/semantic/decisions/")
    assert "# Record use-postgres" in shown.stdout
    assert run_cli("show", "use-re", "--json").json()["record_id"] == "use-redis"
    ambiguous = run_cli("show", "use-", expect=2)
    assert "use-postgres" in ambiguous.stderr and "use-redis" in ambiguous.stderr
    pid = propose("Cache sessions in redis")
    proposal = run_cli("show", pid[:-3])
    assert proposal.stdout.startswith(f"proposal {pid}  validated")
    assert "title: Cache sessions in redis" in proposal.stdout
    missing = run_cli("show", "zzz", expect=1)
    assert "no proposal, packet or record" in missing.stderr


def test_expiry_and_supersede_targets_take_a_prefix(ready: Repo) -> None:
    add_record(ready, "semantic/decisions/use-postgres", "use-postgres")
    assert run_cli("expiry", "use-pos", "--json").json()["record_id"] == "use-postgres"
    out = run_cli(
        "propose", "--action", "supersede", "--target", "use-pos", "--title", "Postgres 17", "--body", "b",
        "--reason", "upgrade", "--json",
    ).json()  # fmt: skip
    packet = frontmatter.parse(run_cli("show", out["id"], "--json").json()["packet"].encode()).data
    assert packet["supersedes"] == ["use-postgres"]


def test_supersede_inherits_the_targets_fields_unless_a_flag_says_otherwise(ready: Repo) -> None:
    add_record(
        ready,
        "procedural/procedures/release",
        "release-steps",
        type="procedure",
        lane="procedural",
        applies_to=["release/**"],
        tags=["release"],
        visibility="team",
        content_class="release_process",
        confidence=0.9,
    )
    out = run_cli(
        "propose", "--action", "supersede", "--target", "release-steps", "--title", "Release with tags",
        "--body", "Tag first.", "--reason", "new flow", "--json",
    ).json()  # fmt: skip
    data = frontmatter.parse(run_cli("show", out["id"], "--json").json()["packet"].encode()).data
    assert (data["type"], data["lane"], data["scope"]["paths"], data["tags"]) == (
        "procedure",
        "procedural",
        ["release/**"],
        ["release"],
    )
    assert (data["visibility"], data["content_class"], data["confidence"]) == ("team", "release_process", 0.9)
    assert out["state"] == "validated"
    override = run_cli(
        "propose", "--action", "supersede", "--target", "release-steps", "--title", "Release notes",
        "--body", "Notes.", "--reason", "r", "--type", "convention", "--tag", "notes", "--json",
    ).json()  # fmt: skip
    data = frontmatter.parse(run_cli("show", override["id"], "--json").json()["packet"].encode()).data
    assert (data["type"], data["tags"], data["lane"]) == ("convention", ["notes"], "procedural")


def test_status_reports_records_inbox_packets_hooks_and_agents(ready: Repo) -> None:
    add_record(ready, "semantic/decisions/use-postgres", "use-postgres")
    propose("Open question")
    run_cli("propose", "--type", "fact", "--title", "In a packet", "--body", "packet body", "--packet")
    report = run_cli("status", "--json").json()
    assert report["current_records"] == 1 and report["records"] == [
        {"type": "decision", "lane": "semantic", "count": 1}
    ]
    assert report["inbox"] == {"validated": 2} and report["invalid_files"] == 0
    assert report["hooks"] == {"pre-commit": "missing", "pre-push": "missing"}
    assert report["agents"]["claude"] == "not wired"
    assert any("git memzoi hook install" in fix for fix in report["fixes"])
    run_cli("hook", "install")
    run_cli("agent", "install", "claude")
    ready.write(".memzoi/records/semantic/decisions/broken.md", "---\nid: [\n---\n")
    report = run_cli("status", "--json").json()
    assert report["hooks"] == {"pre-commit": "installed", "pre-push": "installed"}
    assert report["agents"]["claude"] == "wired" and report["invalid_files"] == 1
    text = run_cli("status").stdout
    assert "records: 1 current" in text and "inbox: 2 validated" in text and "null" not in text
    assert "  decision  semantic       1" in text


def test_a_proposal_without_any_identity_is_refused_as_git_refuses_a_commit(ready: Repo, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for var in ("MEMZOI_ACTOR", "GIT_AUTHOR_NAME"):
        monkeypatch.delenv(var)
    subprocess.run(["git", "config", "--global", "--unset", "user.name"], cwd=ready.path, check=True)
    refused = run_cli("propose", "--type", "fact", "--title", "Anonymous", "--body", "b", expect=2)
    assert "author identity unknown" in refused.stderr and "git config user.name" in refused.stderr
    assert run_cli("proposals", "--json").json()["proposals"] == []
    subprocess.run(["git", "config", "user.name", "Repo Person"], cwd=ready.path, check=True)
    pid = run_cli("propose", "--type", "fact", "--title", "Named", "--body", "b").stdout.strip()
    data = frontmatter.parse(run_cli("show", pid, "--json").json()["packet"].encode()).data
    assert data["proposal"]["proposed_by"] == "Repo Person"
