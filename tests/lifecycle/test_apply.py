"""apply: create, supersede and tombstone from packet files and the inbox, exactly as the profile maps them."""

from __future__ import annotations

import sqlite3

import pygit2

from git_memzoi.profile import frontmatter
from git_memzoi.runtime.workspace import Workspace
from support import run_cli
from support.lifecycle import (
    APPLIED_AT,
    BODY,
    PROPOSED_AT,
    add_record,
    at,
    packet,
    snapshot,
    states,
    supersede_packet,
    tombstone_packet,
    write_packet,
)

PID = "mem_2026_03_01_auth_abc123"
RECORD = ".memzoi/records/semantic/decisions/protected-routes-must-validate-sessions-server-side.md"
RESOLVED = f".memzoi/proposals/resolved/applied/{PID}.md"


def _front(path) -> dict:
    return frontmatter.parse(path.read_bytes(), str(path)).data


def test_create_from_pending_packet_file(repo) -> None:
    pending = write_packet(repo, packet(PID))
    at(APPLIED_AT)
    result = run_cli("apply", pending, "--reviewer", "alice", "--json").json()
    assert result["outcome"] == "applied" and result["action"] == "create"
    assert result["records"] == [
        {
            "id": "protected-routes-must-validate-sessions-server-side",
            "path": RECORD,
            "status": "active",
            "created": True,
        }
    ]
    data = _front(repo.path / RECORD)
    assert data == {
        "id": "protected-routes-must-validate-sessions-server-side",
        "kind": "memory",
        "profile": "memzoi",
        "type": "decision",
        "lane": "semantic",
        "title": "Protected routes must validate sessions server-side",
        "description": "Protected API routes must validate sessions server-side.",
        "timestamp": APPLIED_AT,
        "status": "active",
        "scope": "repo",
        "visibility": "repo",
        "content_class": "general_repo_knowledge",
        "confidence": 0.7,
        "applies_to": ["src/auth/**"],
        "tags": ["auth", "security"],
        "source": "path",
        "source_ref": "src/auth/session.ts",
        "proposal_id": PID,
        "retention": {},
        "origin": {"origin_key": f"issue:{PID}:proposal", "route": "repository_proposal"},
    }
    assert frontmatter.parse((repo.path / RECORD).read_bytes()).body.strip() == BODY.strip()
    assert not (repo.path / pending).exists()
    resolved = _front(repo.path / RESOLVED)
    assert resolved["status"] == "applied"
    assert resolved["proposal"]["reason"] == "Learned during auth middleware migration."  # review fields kept here
    assert resolved["resolution"] == {
        "outcome": "applied",
        "reviewer": "alice",
        "resolved_at": APPLIED_AT,
        "reason": None,
        "affected_record_ids": ["protected-routes-must-validate-sessions-server-side"],
    }
    log = (repo.path / ".memzoi/log.md").read_text()
    assert log.count(PID) == 1 and f"- {APPLIED_AT} applied {PID} (create)" in log
    assert states(repo.path) == {PID: "applied"}
    run_cli("validate")


def test_create_by_file_id_with_concept_id_override(repo) -> None:
    write_packet(repo, packet(PID))
    result = run_cli("apply", PID, "--concept-id", "security/session-validation", "--json").json()
    assert result["records"][0]["path"] == ".memzoi/records/security/session-validation.md"
    assert result["records"][0]["id"] == "session-validation"
    assert _front(repo.path / ".memzoi/records/security/session-validation.md")["id"] == "session-validation"


def test_missing_evidence_stays_null_and_packet_source_wins(repo) -> None:
    write_packet(repo, packet(PID, sources=None))
    run_cli("apply", PID)
    text = (repo.path / RECORD).read_text()
    assert "source: null\n" in text and "source_ref: null\n" in text
    other = packet(
        "mem_2026_03_01_other_abc123",
        title="Another decision",
        source="issue",
        source_ref="issue://7",
        origin={"origin_key": "issue:7", "route": "repository_proposal"},
    )
    write_packet(repo, other, "# Another decision\n\nSomething else entirely.\n")
    run_cli("apply", "mem_2026_03_01_other_abc123")
    data = _front(repo.path / ".memzoi/records/semantic/decisions/another-decision.md")
    assert (data["source"], data["source_ref"]) == ("issue", "issue://7")


def test_confidence_number_wins_over_label(repo) -> None:
    write_packet(repo, packet(PID, confidence=0.35))
    run_cli("apply", PID)
    assert _front(repo.path / RECORD)["confidence"] == 0.35


def test_supersede_keeps_old_record_and_points_new_one_at_it(repo) -> None:
    old_path = add_record(repo, "semantic/decisions/session-rule", "session-rule")
    old_bytes = (repo.path / old_path).read_bytes()
    write_packet(repo, supersede_packet("session-rule"))
    at(APPLIED_AT)
    result = run_cli("apply", "mem_2026_03_01_supersede_abc123", "--json").json()
    new_path = ".memzoi/records/semantic/decisions/validate-every-session-server-side.md"
    assert [(r["id"], r["status"]) for r in result["records"]] == [
        ("validate-every-session-server-side", "active"),
        ("session-rule", "superseded"),
    ]
    new = _front(repo.path / new_path)
    assert new["supersedes"] == "session-rule" and new["status"] == "active"
    after = (repo.path / old_path).read_bytes()
    changed = [(a, b) for a, b in zip(old_bytes.splitlines(), after.splitlines(), strict=True) if a != b]
    assert changed == [(b"status: active", b"status: superseded")]
    assert len(old_bytes.splitlines()) == len(after.splitlines())
    resolved = _front(repo.path / ".memzoi/proposals/resolved/applied/mem_2026_03_01_supersede_abc123.md")
    assert resolved["resolution"]["affected_record_ids"] == ["validate-every-session-server-side", "session-rule"]
    run_cli("validate")


def test_supersede_with_same_title_gets_a_fresh_concept_id(repo) -> None:
    add_record(
        repo,
        "semantic/decisions/validate-every-session-server-side",
        "validate-every-session-server-side",
        title="Validate every session server-side",
    )
    write_packet(repo, supersede_packet("validate-every-session-server-side"))
    result = run_cli("apply", "mem_2026_03_01_supersede_abc123", "--json").json()
    assert result["records"][0]["path"] == ".memzoi/records/semantic/decisions/validate-every-session-server-side-2.md"
    assert result["records"][0]["id"] == "validate-every-session-server-side-2"


def test_tombstone_changes_only_the_status_line(repo) -> None:
    old_path = add_record(repo, "semantic/decisions/session-rule", "session-rule")
    old_bytes = (repo.path / old_path).read_bytes()
    write_packet(repo, tombstone_packet("session-rule"))
    result = run_cli("apply", "mem_2026_03_01_tombstone_abc123", "--json").json()
    assert [(r["id"], r["status"], r["created"]) for r in result["records"]] == [("session-rule", "tombstoned", False)]
    assert (repo.path / old_path).read_bytes() == old_bytes.replace(b"status: active", b"status: tombstoned")
    assert sorted(p.name for p in (repo.path / ".memzoi/records/semantic/decisions").iterdir()) == ["session-rule.md"]
    run_cli("validate")


def test_inbox_proposal_flow_and_already_applied(repo) -> None:
    at(PROPOSED_AT)
    pid = run_cli(
        "propose", "--type", "convention", "--title", "Use pnpm", "--body", "The repo uses pnpm.", "--json"
    ).json()["id"]
    assert states(repo.path) == {pid: "validated"}
    assert run_cli("apply", pid, expect=1).stderr.count("approved") >= 1
    run_cli("approve", pid)
    assert states(repo.path) == {pid: "approved"}
    at(APPLIED_AT)
    result = run_cli("apply", pid, "--json").json()
    assert result["records"][0]["path"] == ".memzoi/records/semantic/conventions/use-pnpm.md"
    assert (repo.path / f".memzoi/proposals/resolved/applied/{pid}.md").is_file()
    before = snapshot(repo.path)
    again = run_cli("apply", pid)
    assert "already applied" in again.stderr
    assert snapshot(repo.path) == before
    shown = run_cli("proposals", "show", pid, "--json").json()
    assert shown["state"] == "applied" and shown["affected_ids"] == ["use-pnpm"]


def test_applying_a_resolved_file_again_is_nothing_to_do(repo) -> None:
    pending = write_packet(repo, packet(PID))
    run_cli("apply", pending)
    before = snapshot(repo.path)
    for target in (pending, PID, RESOLVED):
        result = run_cli("apply", target)
        assert "nothing to do" in result.stderr and "already applied" in result.stderr
    assert snapshot(repo.path) == before


def test_exact_source_replay_creates_nothing(repo) -> None:
    add_record(
        repo,
        "semantic/decisions/old",
        "old-rule",
        status="expired",
        origin={"origin_key": "issue:9:decision", "route": "repository_proposal"},
    )
    write_packet(repo, packet(PID, origin={"origin_key": "issue:9:decision", "route": "repository_proposal"}))
    result = run_cli("apply", PID, "--json").json()
    assert result["outcome"] == "replay" and result["records"] == []
    assert "exact source replay of record old-rule" in result["message"]
    assert not (repo.path / RECORD).exists()
    resolved = _front(repo.path / RESOLVED)
    assert resolved["resolution"]["affected_record_ids"] == ["old-rule"]
    assert states(repo.path) == {PID: "applied"}


def test_apply_restores_union_merge_attribute(repo) -> None:
    (repo.path / ".gitattributes").write_text("*.png binary\n")
    write_packet(repo, packet(PID))
    files = run_cli("apply", PID, "--json").json()["files"]
    assert ".gitattributes" in files
    assert (repo.path / ".gitattributes").read_text() == "*.png binary\n.memzoi/log.md merge=union\n"


def test_apply_commit_records_exactly_the_touched_files(repo) -> None:
    pending = write_packet(repo, packet(PID))
    repo.commit("add packet", paths=[pending])
    repo.write("README.md", "# staged change\n")
    repo.git.index.add("README.md")
    repo.git.index.write()
    repo.write("notes.txt", "untracked\n")
    head_before = repo.git.head.target
    at(APPLIED_AT)
    result = run_cli("apply", PID, "--commit", "--json").json()
    git = pygit2.Repository(str(repo.path))
    head = git.head.peel(pygit2.Commit)
    assert str(head.id) == result["commit"] and head.message == f"memzoi: apply {PID}\n"  # as git writes it
    assert head.parents[0].id == head_before
    diff = git.diff(head.parents[0], head)
    touched = sorted(
        d.delta.new_file.path if d.delta.status != pygit2.enums.DeltaStatus.DELETED else d.delta.old_file.path
        for d in diff
    )
    assert touched == sorted([RECORD, RESOLVED, pending, ".memzoi/log.md"])
    status = git.status()
    assert status["README.md"] == pygit2.enums.FileStatus.INDEX_MODIFIED  # still staged, not committed
    assert status["notes.txt"] == pygit2.enums.FileStatus.WT_NEW
    assert not any(path.startswith(".memzoi/") for path in status)  # the index matches the new commit
    run_cli("validate", "--rev", "HEAD")


def test_index_is_updated_in_the_same_step(repo) -> None:
    write_packet(repo, packet(PID))
    run_cli("apply", PID)
    ws = Workspace.open(repo.path)
    conn = sqlite3.connect(ws.layout.index_db)
    try:
        ids = {row[0] for row in conn.execute("SELECT record_id FROM records")}
    finally:
        conn.close()
    assert "protected-routes-must-validate-sessions-server-side" in ids


def test_index_failure_is_a_warning_not_an_undo(repo) -> None:
    ws = Workspace.open(repo.path)
    ws.layout.index_db.parent.mkdir(parents=True, exist_ok=True)
    ws.layout.index_db.mkdir()  # a folder where index.db belongs: the index cannot be written
    write_packet(repo, packet(PID))
    result = run_cli("apply", PID, "--json")
    assert result.json()["outcome"] == "applied"
    assert result.json()["warnings"] and "index.db was not updated" in result.stderr
    assert (repo.path / RECORD).is_file() and states(repo.path) == {PID: "applied"}


def test_apply_next_to_published_interop_records_changes_none_of_them(repo) -> None:
    import shutil

    from support import interop_dir

    for path in (interop_dir() / ".memzoi/records").glob("*.md"):
        shutil.copy(path, repo.path / ".memzoi/records" / path.name)
    repo.commit("import published memory")
    before = {p.name: p.read_bytes() for p in (repo.path / ".memzoi/records").glob("*.md")}
    write_packet(repo, supersede_packet("rust-msrv-is-1-96-1", title="Rust MSRV is 1.97"))
    run_cli("apply", "mem_2026_03_01_supersede_abc123")
    after = {p.name: p.read_bytes() for p in (repo.path / ".memzoi/records").glob("*.md")}
    assert after.pop("rust-msrv-is-1-96-1.md") == before.pop("rust-msrv-is-1-96-1.md").replace(
        b"status: active", b"status: superseded"
    )
    assert after == before
    assert (
        _front(repo.path / ".memzoi/records/semantic/decisions/rust-msrv-is-1-97.md")["supersedes"]
        == "rust-msrv-is-1-96-1"
    )
    run_cli("validate")


def test_apply_commit_refuses_to_carry_an_earlier_steps_uncommitted_log_line(repo) -> None:
    other = "mem_2026_03_01_other_abc123"
    committed = [write_packet(repo, packet(PID)), write_packet(repo, packet(other, title="Another rule"))]
    repo.commit("add packets", paths=committed)
    run_cli("reject", other, "--reason", "duplicate")  # no --commit: its log line and resolved packet stay uncommitted
    log_before = (repo.path / ".memzoi/log.md").read_bytes()
    head_before = repo.git.head.target
    at(APPLIED_AT)
    refused = run_cli("apply", PID, "--commit", expect=1)
    assert ".memzoi/log.md has changes that are not committed" in refused.stderr
    assert repo.git.head.target == head_before and (repo.path / ".memzoi/log.md").read_bytes() == log_before
    assert (repo.path / committed[0]).exists() and not (repo.path / RECORD).exists()
    repo.commit("the reject", paths=[".memzoi/log.md", f".memzoi/proposals/resolved/rejected/{other}.md", committed[1]])
    result = run_cli("apply", PID, "--commit", "--json").json()
    head = pygit2.Repository(str(repo.path)).head.peel(pygit2.Commit)
    assert str(head.id) == result["commit"]
