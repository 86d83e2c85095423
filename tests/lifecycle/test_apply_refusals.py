"""Every bad input to apply gets exit 1, one line naming the field or file, and changes nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from git_memzoi.index import shared_db
from git_memzoi.runtime.workspace import Workspace
from support import run_cli
from support.lifecycle import (
    LATER,
    add_record,
    packet,
    refused,
    supersede_packet,
    tombstone_packet,
    write_packet,
)

PID = "mem_2026_03_01_auth_abc123"
PENDING = f".memzoi/proposals/pending/{PID}.md"


@pytest.fixture
def ready(repo):
    """A repository whose shared.db exists, so 'nothing changed' covers it too."""
    shared_db.connect(Workspace.open(repo.path).layout.shared_db).close()
    return repo


def _proposal(**over):
    base = {"action": "create", "proposed_by": "agent", "proposed_at": "2026-03-01T00:00:00Z"}
    base.update(over)
    return base


@pytest.mark.parametrize(
    "over, needles",
    [
        ({"description": None}, ("description", "field-missing")),
        ({"lane": "semantics"}, ("lane",)),
        ({"confidence": "high"}, ("confidence",)),
        ({"proposal": _proposal(target="session-rule")}, ("proposal-target", "create")),
        (
            {"proposal": _proposal(action="supersede", reason="r"), "supersedes": ["a", "b"]},
            ("supersedes", "exactly one"),
        ),
        ({"proposal": _proposal(action="supersede"), "supersedes": ["session-rule"]}, ("proposal-reason",)),
        ({"proposal": _proposal(action="tombstone", reason="gone")}, ("proposal-target", "tombstone")),
        ({"proposal": _proposal(action="merge")}, ("proposal.action",)),
        ({"proposal": _proposal(action="update")}, ("update",)),
        ({"sensitivity": "classified"}, ("sensitivity",)),
        ({"scope": {"kind": "project", "paths": ["../outside/**"]}}, ("scope.paths",)),
        ({"status": "applied"}, ("resolution",)),
    ],
)
def test_invalid_packet_fields(ready, over, needles) -> None:
    write_packet(ready, packet(PID, **over))
    line = refused(ready, "apply", PENDING, needles=needles)
    assert PENDING in line


def test_empty_body(ready) -> None:
    write_packet(ready, packet(PID), body="\n")
    refused(ready, "apply", PID, needles=(PENDING, "body-empty"))


@pytest.mark.parametrize("sensitivity", ["secret", "local-only", "raw-transcript", "unknown"])
def test_non_repo_safe_sensitivity(ready, sensitivity) -> None:
    write_packet(ready, packet(PID, sensitivity=sensitivity))
    refused(ready, "apply", PID, needles=(PENDING, "sensitivity", sensitivity))


def test_undeclared_sensitivity_is_unknown(ready) -> None:
    write_packet(ready, packet(PID, sensitivity=None))
    refused(ready, "apply", PID, needles=("sensitivity", "unknown (not declared)"))


def test_non_repo_safe_inbox_proposal_is_refused_even_when_approved(ready) -> None:
    run_cli(
        "propose", "--type", "fact", "--title", "A local fact", "--body", "Only for me.", "--sensitivity", "local-only"
    )
    ws = Workspace.open(ready.path)
    conn = sqlite3.connect(ws.layout.shared_db)
    with conn:
        pid = conn.execute("SELECT id FROM proposals").fetchone()[0]
        conn.execute("UPDATE proposals SET state = 'approved'")
    conn.close()
    refused(ready, "apply", pid, needles=(f"inbox:{pid}", "sensitivity", "local-only"))


def test_target_does_not_exist(ready) -> None:
    write_packet(ready, tombstone_packet("no-such-record", pid=PID))
    refused(ready, "apply", PID, needles=(PENDING, "proposal.target", "'no-such-record' does not exist"))


def test_supersede_target_does_not_exist(ready) -> None:
    write_packet(ready, supersede_packet("no-such-record", pid=PID))
    refused(ready, "apply", PID, needles=(PENDING, "supersedes", "does not exist"))


@pytest.mark.parametrize("status", ["superseded", "tombstoned", "expired"])
def test_target_not_active(ready, status) -> None:
    add_record(ready, "semantic/decisions/session-rule", "session-rule", status=status)
    write_packet(ready, tombstone_packet("session-rule", pid=PID))
    refused(ready, "apply", PID, needles=(PENDING, f"is {status}, not active"))


def test_target_committed_after_proposed_at(ready) -> None:
    rel = add_record(ready, "semantic/decisions/session-rule", "session-rule")
    ready.write(rel, (ready.path / rel).read_text().replace("The body", "An edited body"))
    ready.commit("edit", paths=[rel], when=LATER)
    write_packet(ready, tombstone_packet("session-rule", pid=PID))
    refused(ready, "apply", PID, needles=(rel, "changed after the proposal", "2026-03-01T00:00:00Z"))


def test_target_with_uncommitted_change(ready) -> None:
    rel = add_record(ready, "semantic/decisions/session-rule", "session-rule")
    ready.write(rel, (ready.path / rel).read_text().replace("The body", "An edited body"))
    write_packet(ready, supersede_packet("session-rule", pid=PID))
    refused(ready, "apply", PID, needles=(rel, "uncommitted"))


def test_untracked_target(ready) -> None:
    rel = add_record(ready, "semantic/decisions/session-rule", "session-rule", commit=False)
    write_packet(ready, tombstone_packet("session-rule", pid=PID))
    refused(ready, "apply", PID, needles=(rel, "untracked"))


def test_target_scope_kind_differs(ready) -> None:
    add_record(ready, "semantic/decisions/session-rule", "session-rule", scope="local")
    write_packet(ready, tombstone_packet("session-rule", pid=PID))
    refused(ready, "apply", PID, needles=(PENDING, "scope.kind", "'local'"))


def test_target_scope_id_differs(ready) -> None:
    add_record(ready, "semantic/decisions/session-rule", "session-rule")
    write_packet(ready, tombstone_packet("session-rule", pid=PID, scope={"kind": "repo", "id": "another-repo"}))
    refused(ready, "apply", PID, needles=(PENDING, "scope.id", "another-repo"))


def test_concept_id_exists(ready) -> None:
    add_record(ready, "semantic/decisions/protected-routes-must-validate-sessions-server-side", "something-else")
    write_packet(ready, packet(PID))
    refused(ready, "apply", PID, needles=("concept ID", "already exists"))


def test_record_id_taken_by_another_concept(ready) -> None:
    add_record(ready, "semantic/decisions/session-rule", "session-rule")
    write_packet(ready, packet(PID))
    refused(ready, "apply", PID, "--concept-id", "other/session-rule", needles=("record ID 'session-rule'",))


@pytest.mark.parametrize("bad", ["Bad/Upper", "../escape", "a//b", "/abs", "x/index", "x.md"])
def test_concept_id_breaks_the_rules(ready, bad) -> None:
    write_packet(ready, packet(PID))
    refused(ready, "apply", PID, "--concept-id", bad, needles=("--concept-id", "concept ID"), code=2)


def test_packet_id_collides_with_a_resolved_packet(ready) -> None:
    write_packet(ready, packet(PID))
    run_cli("apply", PID)
    write_packet(
        ready,
        packet(PID, title="A different decision", origin={"origin_key": "issue:2", "route": "repository_proposal"}),
    )
    refused(ready, "apply", PENDING, needles=(PID, "collides", "resolved/applied"))


def test_inbox_proposal_that_is_not_approved(ready) -> None:
    pid = run_cli("propose", "--type", "fact", "--title", "Use pnpm", "--body", "pnpm.", "--json").json()["id"]
    refused(ready, "apply", pid, needles=(pid, "validated", "approved"))


@pytest.mark.parametrize("target", ["../outside.md", "/etc/passwd.md", ".memzoi/records/x.md", "src/x.md"])
def test_target_path_that_escapes_pending(ready, target) -> None:
    (ready.path.parent / "outside.md").write_text("x")
    refused(ready, "apply", target, needles=(target,))


def test_symlinked_packet_file(ready, tmp_path: Path) -> None:
    real = tmp_path / "elsewhere.md"
    write_packet(ready, packet(PID))
    real.write_bytes((ready.path / PENDING).read_bytes())
    (ready.path / PENDING).unlink()
    (ready.path / PENDING).symlink_to(real)
    refused(ready, "apply", PENDING, needles=("symlink",))
    refused(ready, "apply", PID, needles=(PID,))


def test_symlinked_records_folder(ready, tmp_path: Path) -> None:
    outside = tmp_path / "outside-records"
    outside.mkdir()
    (ready.path / ".memzoi/records/semantic").symlink_to(outside)
    write_packet(ready, packet(PID))
    refused(ready, "apply", PID, needles=(".memzoi/records/semantic", "symlink"))
    assert list(outside.iterdir()) == []


def test_unknown_target(ready) -> None:
    refused(ready, "apply", "mem_nothing_here", needles=("mem_nothing_here",))


def test_missing_target_argument_is_usage(ready) -> None:
    result = run_cli("apply", expect=2)
    assert "TARGET" in result.stderr
