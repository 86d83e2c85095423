"""Target-unchanged is judged by the target's bytes (its blob OID when proposed), not by commit dates.

History is rewritten and dated with real git (rebase, cherry-pick, commit --amend, a backdated
GIT_COMMITTER_DATE); proposals are made through the CLI, which records the target's blob.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from git_memzoi.index import shared_db
from git_memzoi.profile import frontmatter
from git_memzoi.runtime.workspace import Workspace
from support import Repo, run_cli
from support.lifecycle import PROPOSED_AT, add_record, at, refused, tombstone_packet, write_packet

RID = "session-rule"
CONCEPT = "semantic/decisions/session-rule"
REL = f".memzoi/records/{CONCEPT}.md"
#: After PROPOSED_AT: what a rebase or cherry-pick done today stamps on the commits it writes.
REWRITTEN = "2026-06-01T12:00:00+00:00"
#: Before PROPOSED_AT: a committer date that lies about when a change was made.
BACKDATED = "2026-01-15T12:00:00+00:00"


def git_at(repo: Repo, *args: str, date: str = REWRITTEN) -> str:
    env = dict(os.environ, GIT_COMMITTER_DATE=date, GIT_AUTHOR_DATE=date)
    done = subprocess.run(["git", *args], cwd=repo.path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def propose_tombstone(repo: Repo, *, packet_file: bool = True) -> str:
    """Propose tombstoning RID at PROPOSED_AT through the CLI; return the proposal ID."""
    at(PROPOSED_AT)
    args = ["propose", "--action", "tombstone", "--target", RID, "--reason", "no longer true", "--json"]
    result = run_cli(*args, *(["--packet"] if packet_file else []))
    return str(result.json()["id"])


def head_blob(repo: Repo) -> str:
    return str(repo.git.revparse_single(f"HEAD:{REL}").id)


def apply_ok(pid: str) -> None:
    at("2026-06-02T00:00:00Z")
    result = run_cli("apply", f".memzoi/proposals/pending/{pid}.md", "--json")
    assert result.json()["outcome"] == "applied"


def edit_target(repo: Repo) -> None:
    path = repo.path / REL
    path.write_text(path.read_text().replace(f"The body of {RID}.", "A quietly different body."))


def commit_backdated_edit(repo: Repo) -> None:
    """Change the target and commit it with a date before the proposal was made."""
    edit_target(repo)
    git_at(repo, "commit", "-q", "-am", "quiet edit", date=BACKDATED)


@pytest.fixture
def feature(repo: Repo) -> Repo:
    """main with one more commit, and a branch `feature` (checked out) that adds the target record."""
    git_at(repo, "checkout", "-q", "-b", "feature")
    add_record(repo, CONCEPT, RID)
    git_at(repo, "checkout", "-q", "main")
    repo.write("docs/on-main.md", "main moved on\n")
    git_at(repo, "add", "docs/on-main.md")
    git_at(repo, "commit", "-q", "-m", "main moves on")
    git_at(repo, "checkout", "-q", "feature")
    shared_db.connect(Workspace.open(repo.path).layout.shared_db).close()  # so "nothing changed" covers it
    return repo


def test_propose_records_the_target_blob_in_the_row_and_the_packet(feature: Repo) -> None:
    pid = propose_tombstone(feature)
    blob = head_blob(feature)
    data = frontmatter.parse((feature.path / f".memzoi/proposals/pending/{pid}.md").read_bytes()).data
    assert data["proposal"]["target_blob"] == blob
    conn = sqlite3.connect(Workspace.open(feature.path).layout.shared_db)
    assert conn.execute("SELECT target_blob FROM proposals WHERE id = ?", (pid,)).fetchone()[0] == blob
    conn.close()


def test_rebase_after_proposing_leaves_the_target_applicable(feature: Repo) -> None:
    pid = propose_tombstone(feature)
    before = feature.git.head.target
    git_at(feature, "rebase", "-q", "main")
    assert feature.git.head.target != before  # the commit that added the target was rewritten, later dated
    apply_ok(pid)
    assert "status: tombstoned" in (feature.path / REL).read_text()


def test_cherry_pick_after_proposing_leaves_the_target_applicable(feature: Repo) -> None:
    pid = propose_tombstone(feature)
    git_at(feature, "cherry-pick", "main")
    apply_ok(pid)


def test_amend_of_unrelated_content_leaves_the_target_applicable(feature: Repo) -> None:
    pid = propose_tombstone(feature)
    feature.write("notes.txt", "amended in\n")
    git_at(feature, "add", "notes.txt")
    git_at(feature, "commit", "-q", "--amend", "-m", "add session-rule, with notes")
    apply_ok(pid)


def test_inbox_proposal_survives_a_rebase_too(feature: Repo) -> None:
    pid = propose_tombstone(feature, packet_file=False)
    git_at(feature, "rebase", "-q", "main")
    run_cli("approve", pid)
    at("2026-06-02T00:00:00Z")
    assert run_cli("apply", pid, "--json").json()["outcome"] == "applied"


def test_backdated_commit_of_a_changed_target_is_refused(feature: Repo) -> None:
    pid = propose_tombstone(feature)
    commit_backdated_edit(feature)
    line = refused(
        feature,
        "apply",
        f".memzoi/proposals/pending/{pid}.md",
        needles=(REL, "changed after the proposal", "proposal.target_blob"),
    )
    assert head_blob(feature)[:12] in line


def test_backdated_change_is_refused_for_an_inbox_proposal(feature: Repo) -> None:
    pid = propose_tombstone(feature, packet_file=False)
    run_cli("approve", pid)
    commit_backdated_edit(feature)
    refused(feature, "apply", pid, needles=(f"inbox:{pid}", REL, "changed after the proposal"))


def test_amend_that_changes_the_target_is_refused(feature: Repo) -> None:
    pid = propose_tombstone(feature)
    edit_target(feature)
    git_at(feature, "commit", "-q", "--amend", "-am", "add session-rule", date=BACKDATED)
    refused(feature, "apply", f".memzoi/proposals/pending/{pid}.md", needles=(REL, "changed after the proposal"))


def test_uncommitted_change_is_refused(feature: Repo) -> None:
    pid = propose_tombstone(feature)
    edit_target(feature)
    refused(feature, "apply", f".memzoi/proposals/pending/{pid}.md", needles=(REL, "uncommitted"))


def test_staged_change_with_a_restored_work_tree_is_refused(feature: Repo) -> None:
    pid = propose_tombstone(feature)
    original = (feature.path / REL).read_bytes()
    edit_target(feature)
    git_at(feature, "add", REL)
    (feature.path / REL).write_bytes(original)
    refused(feature, "apply", f".memzoi/proposals/pending/{pid}.md", needles=(REL, "uncommitted"))


def test_a_change_committed_and_reverted_is_judged_by_bytes(feature: Repo) -> None:
    pid = propose_tombstone(feature)
    original = (feature.path / REL).read_bytes()
    edit_target(feature)
    git_at(feature, "commit", "-q", "-am", "edit")
    (feature.path / REL).write_bytes(original)
    git_at(feature, "commit", "-q", "-am", "revert the edit")
    apply_ok(pid)


# --- packets that carry no target blob: the history fallback --------------------------------------------


def _handwritten(repo: Repo) -> str:
    return write_packet(repo, tombstone_packet(RID, pid="mem_2026_03_01_tombstone_abc123"))


def test_fallback_refuses_a_commit_after_proposed_at(feature: Repo) -> None:
    rel = _handwritten(feature)
    edit_target(feature)
    git_at(feature, "commit", "-q", "-am", "edit")
    refused(feature, "apply", rel, needles=(REL, "changed after the proposal", PROPOSED_AT))


def test_fallback_accepts_later_commits_that_leave_the_target_alone(feature: Repo) -> None:
    rel = _handwritten(feature)
    for n in range(3):
        feature.write(f"docs/later-{n}.md", f"later {n}\n")
        git_at(feature, "add", f"docs/later-{n}.md")
        git_at(feature, "commit", "-q", "-m", f"later {n}")
    git_at(feature, "merge", "-q", "--no-ff", "-m", "merge main", "main")
    at("2026-06-02T00:00:00Z")
    assert run_cli("apply", rel, "--json").json()["outcome"] == "applied"


def test_fallback_cannot_see_a_backdated_change(feature: Repo) -> None:
    """Documented limit: without a target blob, a commit dated before proposed_at passes for older."""
    rel = _handwritten(feature)
    commit_backdated_edit(feature)
    at("2026-06-02T00:00:00Z")
    assert run_cli("apply", rel, "--json").json()["outcome"] == "applied"


def test_fallback_treats_a_rewritten_commit_as_a_change(feature: Repo) -> None:
    """Documented limit: without a target blob, a rebase that re-dates the target's commit refuses."""
    rel = _handwritten(feature)
    git_at(feature, "rebase", "-q", "main")
    refused(feature, "apply", rel, needles=(REL, "changed after the proposal"))


# --- the packet field -------------------------------------------------------------------------------------


def test_packet_with_a_wrong_target_blob_is_refused(feature: Repo) -> None:
    data = tombstone_packet(RID)
    data["proposal"] = data["proposal"] | {"target_blob": "0" * 40}
    rel = write_packet(feature, data)
    refused(feature, "apply", rel, needles=(REL, "changed after the proposal", "000000000000"))


@pytest.mark.parametrize("value", ["not-hex", "ABCDEF" * 7, 42])
def test_malformed_target_blob_is_refused(feature: Repo, value: object) -> None:
    data = tombstone_packet(RID)
    data["proposal"] = data["proposal"] | {"target_blob": value}
    rel = write_packet(feature, data)
    refused(feature, "apply", rel, needles=(rel, "proposal.target_blob"))


def test_create_with_a_target_blob_is_refused(repo: Repo) -> None:
    from support.lifecycle import packet

    shared_db.connect(Workspace.open(repo.path).layout.shared_db).close()
    data = packet()
    data["proposal"] = data["proposal"] | {"target_blob": "a" * 40}
    rel = write_packet(repo, data)
    refused(repo, "apply", rel, needles=(rel, "proposal.target_blob"))


def test_propose_from_file_checks_a_given_target_blob(feature: Repo, tmp_path: Path) -> None:
    data = tombstone_packet(RID, pid="mem_2026_03_01_given_abc123")
    data["proposal"] = data["proposal"] | {"target_blob": "b" * 40}
    given = tmp_path / "given.md"
    given.write_text(frontmatter.render(data, "# Tombstone\n\nGone.\n"), encoding="utf-8")
    refused(feature, "propose", "--from-file", str(given), needles=(REL, "changed after the proposal"))
