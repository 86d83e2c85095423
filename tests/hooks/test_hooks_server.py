"""Server rules a hostile pusher cannot get around, through real `git push`, and `hook check RANGE`."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest
from pygit2.enums import FileMode

from git_memzoi.profile.frontmatter import set_top_level_scalar
from support import AUTHOR, git, run_cli
from support.hooks import Remote, packet, record, record_path, retire_packet

pytestmark = pytest.mark.slow

APPLIED = ".memzoi/proposals/resolved/applied"


def orphan_merge(r: Remote, files: dict[str, str | None]) -> str:
    """Make main a merge of a parentless commit R holding the changed tree and main's tip.

    `git commit-tree T -p R -p main` where R has tree T and no parent: a fast-forward of main
    whose first parent shows no change to .memzoi/.
    """
    cwd = r.work.path
    for rel, text in files.items():
        if text is None:
            git("rm", "-q", rel, cwd=cwd)
        else:
            r.work.write(rel, text)
            git("add", rel, cwd=cwd)
    tree = git("write-tree", cwd=cwd).stdout.strip()
    root = git("commit-tree", tree, "-m", "unrelated root", cwd=cwd).stdout.strip()
    merge = git("commit-tree", tree, "-p", root, "-p", "HEAD", "-m", "merge", cwd=cwd).stdout.strip()
    git("update-ref", "refs/heads/main", merge, cwd=cwd)
    return merge


def push_tree(
    r: Remote,
    edit: callable[[pygit2.TreeBuilder, pygit2.Repository], None],  # type: ignore[valid-type]
    message: str = "odd tree",
) -> str:
    """Commit on main a tree made by editing the tip's root tree with a TreeBuilder (for symlinks, gitlinks)."""
    repo = r.work.git
    tip = repo.head.peel(pygit2.Commit)
    builder = repo.TreeBuilder(tip.tree)
    edit(builder, repo)
    return str(repo.create_commit("refs/heads/main", AUTHOR, AUTHOR, message, builder.write(), [tip.id]))


# 1. no parent the pusher chose launders a change -------------------------------------------


def test_orphan_first_parent_cannot_launder_an_edit(remote: Remote) -> None:
    orphan_merge(remote, {record_path("use-postgres"): record("use-postgres", body="Edited behind a merge.")})
    remote.rejected(f"{record_path('use-postgres')}:24: record-edited", "what refs/heads/main would hold")


def test_orphan_first_parent_cannot_launder_a_deletion(remote: Remote) -> None:
    remote.commit(
        {
            record_path("use-redis"): record("use-redis"),
            f"{APPLIED}/mem_1.md": packet("mem_1", status="applied", affected="use-redis"),
        }
    )
    remote.accepted()
    orphan_merge(remote, {record_path("use-redis"): None, f"{APPLIED}/mem_1.md": None})
    remote.rejected(
        f"{record_path('use-redis')}:1: record-deleted",
        f"{APPLIED}/mem_1.md:1: packet-deleted: resolved packet 'mem_1' is deleted",
    )


def test_orphan_first_parent_on_a_new_branch_is_judged_from_the_default_branch(remote: Remote) -> None:
    orphan_merge(remote, {record_path("use-postgres"): None})
    remote.rejected("record-deleted", args=("main:refs/heads/topic",))


# 2. lifecycle rules -------------------------------------------------------------------------


def test_status_flip_without_its_packet_is_rejected(remote: Remote) -> None:
    remote.commit({record_path("use-postgres"): set_top_level_scalar(record("use-postgres"), "status", "tombstoned")})
    remote.rejected(
        f"{record_path('use-postgres')}:10: unreviewed-transition: record 'use-postgres' becomes "
        "tombstoned without the applied tombstone packet that names it"
    )


def test_status_flip_needs_the_packet_of_its_own_action(remote: Remote) -> None:
    remote.commit(
        {
            record_path("use-postgres"): set_top_level_scalar(record("use-postgres"), "status", "superseded"),
            f"{APPLIED}/mem_7.md": retire_packet("mem_7", "tombstone", "use-postgres"),
        }
    )
    remote.rejected("unreviewed-transition")


def test_status_flip_whose_packet_is_already_on_the_ref_is_accepted(remote: Remote) -> None:
    remote.commit({f"{APPLIED}/mem_8.md": retire_packet("mem_8", "tombstone", "use-postgres")})
    remote.accepted()
    remote.commit({record_path("use-postgres"): set_top_level_scalar(record("use-postgres"), "status", "tombstoned")})
    remote.accepted()


def test_allow_in_place_edits_keeps_the_packet_rules(remote: Remote) -> None:
    remote.commit({".memzoi/config.toml": "[hooks]\nallow_in_place_edits = true\n"})
    remote.accepted()
    remote.commit({record_path("use-postgres"): set_top_level_scalar(record("use-postgres"), "status", "tombstoned")})
    remote.rejected("unreviewed-transition")


def test_new_records_need_no_packet_by_default(remote: Remote) -> None:
    remote.commit({record_path("imported"): record("imported")})
    remote.accepted()


def test_require_proposals_asks_each_new_record_for_its_packet(remote: Remote) -> None:
    remote.commit({".memzoi/config.toml": "[hooks]\nrequire_proposals = true\n"})
    remote.accepted()
    remote.commit({record_path("use-redis"): record("use-redis")})
    remote.rejected(
        f"{record_path('use-redis')}:1: unreviewed-record: new record 'use-redis' has no applied packet naming it"
    )
    remote.commit({f"{APPLIED}/mem_1.md": packet("mem_1", status="applied", affected="use-redis")})
    remote.accepted()


def test_a_push_cannot_relax_its_own_edit_policy(remote: Remote) -> None:
    remote.commit({".memzoi/config.toml": "[hooks]\nallow_in_place_edits = true\n"})
    remote.commit({record_path("use-postgres"): record("use-postgres", body="Reworded in the same push.")})
    remote.rejected("record-edited")


def test_a_push_cannot_drop_require_proposals(remote: Remote) -> None:
    remote.commit({".memzoi/config.toml": "[hooks]\nrequire_proposals = true\n"})
    remote.accepted()
    remote.commit(
        {".memzoi/config.toml": "[hooks]\nrequire_proposals = false\n", record_path("use-redis"): record("use-redis")}
    )
    remote.rejected("unreviewed-record")


def test_a_new_branch_takes_its_policy_from_the_default_branch(remote: Remote) -> None:
    remote.commit({".memzoi/config.toml": "[hooks]\nrequire_proposals = true\n"})
    remote.accepted()
    remote.commit({".memzoi/config.toml": "[hooks]\n", record_path("use-redis"): record("use-redis")})
    remote.rejected("unreviewed-record", args=("main:refs/heads/topic",))
    assert "refs/heads/topic" not in remote.refs()


def test_server_config_sets_the_default_policy(remote: Remote, hermetic: Path) -> None:
    (hermetic / ".memzoi").mkdir(exist_ok=True)
    (hermetic / ".memzoi" / "config.toml").write_text("[hooks]\nrequire_proposals = true\n")
    remote.commit({record_path("use-redis"): record("use-redis")})
    remote.rejected("unreviewed-record")


@pytest.mark.parametrize(
    "change, needle",
    [
        (
            lambda text: text.replace("reviewer: alice", "reviewer: mallory"),
            "packet-edited: resolved packet 'mem_1' is edited",
        ),
        (lambda text: None, "packet-deleted: resolved packet 'mem_1' is deleted; resolved packets are append-only"),
    ],
)
def test_resolved_packets_are_append_only(remote: Remote, change, needle: str) -> None:  # type: ignore[no-untyped-def]
    applied = packet("mem_1", status="applied", affected="use-postgres")
    remote.commit({f"{APPLIED}/mem_1.md": applied})
    remote.accepted()
    remote.commit({f"{APPLIED}/mem_1.md": change(applied)})
    remote.rejected(needle)


def test_a_resolved_packet_cannot_move_back_to_pending(remote: Remote) -> None:
    remote.commit({f"{APPLIED}/mem_1.md": packet("mem_1", status="applied", affected="use-postgres")})
    remote.accepted()
    remote.commit({f"{APPLIED}/mem_1.md": None, ".memzoi/proposals/pending/mem_1.md": packet("mem_1")})
    remote.rejected("packet-deleted: resolved packet 'mem_1' is deleted (moved back to pending)")


# 4. .memzoi must be a directory of regular files ----------------------------------------------


def _symlinked_memzoi(builder: pygit2.TreeBuilder, repo: pygit2.Repository) -> None:
    builder.insert(".memzoi", repo.create_blob(b"/srv/elsewhere"), FileMode.LINK)


def _gitlinked_memzoi(builder: pygit2.TreeBuilder, repo: pygit2.Repository) -> None:
    builder.insert(".memzoi", pygit2.Oid(hex="1" * 40), FileMode.COMMIT)  # a commit this repository lacks


@pytest.mark.parametrize(
    "edit, needle",
    [
        (_symlinked_memzoi, ".memzoi:1: symlink: .memzoi must be a real folder, not a symlink"),
        (_gitlinked_memzoi, ".memzoi:1: gitlink: .memzoi must be a real folder, not a submodule (gitlink)"),
    ],
)
def test_memzoi_that_is_not_a_directory_is_rejected(remote: Remote, edit, needle: str) -> None:  # type: ignore[no-untyped-def]
    push_tree(remote, edit)
    stderr = remote.rejected(needle, "record-deleted")
    assert "unexpected" not in stderr and "Traceback" not in stderr
    validated = run_cli("validate", "--rev", "HEAD", expect=None)
    assert validated.code in (0, 1) and "Traceback" not in validated.stderr


def test_memzoi_that_is_not_a_directory_on_a_fresh_repository_is_rejected(tmp_path: Path) -> None:
    from support.hooks import make_remote

    r = make_remote(tmp_path)
    git("rm", "-q", "-r", ".memzoi", cwd=r.work.path)
    git("commit", "-q", "--amend", "-m", "initial", cwd=r.work.path)
    push_tree(r, _symlinked_memzoi)
    r.rejected(".memzoi:1: symlink")


def test_gitlink_inside_memzoi_is_rejected(remote: Remote) -> None:
    def edit(builder: pygit2.TreeBuilder, repo: pygit2.Repository) -> None:
        memzoi = repo.TreeBuilder(repo[builder.get(".memzoi").id])
        memzoi.insert("vendored", repo.head.target, FileMode.COMMIT)
        builder.insert(".memzoi", memzoi.write(), FileMode.TREE)

    push_tree(remote, edit)
    remote.rejected(".memzoi/vendored:1: gitlink: a submodule entry (gitlink) has no place in memory")


def test_symlink_inside_memzoi_is_rejected(remote: Remote) -> None:
    def edit(builder: pygit2.TreeBuilder, repo: pygit2.Repository) -> None:
        memzoi = repo.TreeBuilder(repo[builder.get(".memzoi").id])
        memzoi.insert("log.md", repo.create_blob(b"/etc/passwd"), FileMode.LINK)
        builder.insert(".memzoi", memzoi.write(), FileMode.TREE)

    push_tree(remote, edit)
    remote.rejected(".memzoi/log.md:1: symlink: memory files must be regular files")


# 5. hook check RANGE -------------------------------------------------------------------------


def test_check_range_accepts_a_valid_branch(remote: Remote) -> None:
    remote.commit({record_path("use-redis"): record("use-redis")})
    result = run_cli("hook", "check", "origin/main..HEAD", "--json")
    assert result.json()["ok"] is True and result.json()["commits_checked"] == 1
    assert "memory OK" in run_cli("hook", "check", "origin/main..HEAD").stderr


def test_check_range_reports_like_pre_receive(remote: Remote) -> None:
    bad = remote.commit({record_path("use-postgres"): record("use-postgres", body="edited")})
    result = run_cli("hook", "check", "origin/main..HEAD", expect=1)
    assert f"{record_path('use-postgres')}:24: record-edited" in result.stderr
    assert "range rejected" in result.stderr
    problems = run_cli("hook", "check", "origin/main..HEAD", "--json", expect=1).json()["problems"]
    assert [(p["commit"], p["code"]) for p in problems] == [(bad, "record-edited")]


def test_check_range_takes_its_policy_from_the_base(remote: Remote) -> None:
    remote.commit({".memzoi/config.toml": "[hooks]\nallow_in_place_edits = true\n"})
    remote.commit({record_path("use-postgres"): record("use-postgres", body="Relaxed on the branch itself.")})
    result = run_cli("hook", "check", "origin/main..HEAD", expect=1)
    assert "record-edited" in result.stderr


def test_check_range_judges_a_branch_behind_its_base_from_the_fork_point(remote: Remote) -> None:
    fork = remote.work.git.head.peel(pygit2.Commit)
    remote.commit({record_path("use-redis"): record("use-redis")})
    remote.accepted()
    remote.work.git.branches.local.create("topic", fork)
    remote.work.git.checkout("refs/heads/topic")
    remote.commit({record_path("use-kafka"): record("use-kafka")})
    run_cli("hook", "check", "origin/main..topic")  # use-redis is not "deleted" by the branch


def test_check_range_sees_through_an_orphan_first_parent(remote: Remote) -> None:
    orphan_merge(remote, {record_path("use-postgres"): None})
    result = run_cli("hook", "check", "origin/main..HEAD", expect=1)
    assert "record-deleted" in result.stderr


@pytest.mark.parametrize("spec", ["HEAD", "origin/main...HEAD", "nope..HEAD", "origin/main..HEAD..x"])
def test_check_bad_range_is_a_usage_error(remote: Remote, spec: str) -> None:
    result = run_cli("hook", "check", spec, expect=2)
    assert spec in result.stderr or "nope" in result.stderr


# 3. receipts are checked as receipts -------------------------------------------------------

REJECTED = ".memzoi/proposals/resolved/rejected"


def genuine_receipt() -> tuple[str, str]:
    """(path, text) of the hash-only receipt reject writes for a secret packet."""
    from git_memzoi.lifecycle.packets import receipt_text

    rid, raw, _ = receipt_text(
        proposal_id="mem_secret",
        file_id="mem_secret",
        content=b"hunter2 body",
        sensitivity="secret",
        reviewer="alice",
        resolved_at="2026-01-02T00:00:00Z",
    )
    return f"{REJECTED}/{rid}.md", raw.decode()


def _receipt_problems(path: str, text: str) -> list[tuple[int, str]]:
    from git_memzoi.profile.tree import SourceFile, validate_tree

    report = validate_tree([SourceFile(path, text.encode)], mode="committed")
    return [(p.line, p.code) for p in report.errors]


def _secret_packet_with_a_receipt_block() -> str:
    """A secret packet that keeps its ID, title and body, and adds a well-formed receipt: block."""
    _, text = genuine_receipt()
    block = text[text.index("receipt:\n") : text.index("resolution:\n")]
    rejected = packet("mem_secret", sensitivity="secret").replace("status: proposed", "status: rejected")
    resolution = (
        "resolution:\n  outcome: rejected\n  reviewer: alice\n  resolved_at: 2026-01-02T00:00:00Z\n"
        "  affected_record_ids: []\n"
    )
    return rejected.replace("---\n# Packet", f"{block}{resolution}---\n# Packet").replace(
        "Review context for mem_secret.", "The staging password is Zanzibar-Quokka."
    )


def test_a_genuine_receipt_validates() -> None:
    assert _receipt_problems(*genuine_receipt()) == []


@pytest.mark.parametrize(
    "tamper, line",
    [
        (lambda t: t.replace("title: Rejected proposal (hash-only receipt)", "title: Staging password"), 11),
        (lambda t: t + "The password was Zanzibar-Quokka.\n", 32),
        (lambda t: t.replace("lane: semantic\n", "lane: semantic\ntags:\n- staging\n"), 11),
        (lambda t: t.replace("sensitivity: secret\n", "sensitivity: repo-safe\n"), 19),
    ],
)
def test_a_tampered_receipt_is_invalid(tamper, line: int) -> None:  # type: ignore[no-untyped-def]
    path, text = genuine_receipt()
    problems = _receipt_problems(path, tamper(text))
    assert problems and all(code == "receipt-invalid" for _, code in problems), problems
    assert line in [n for n, _ in problems]


def test_a_secret_packet_is_not_a_receipt_because_it_has_a_receipt_block(remote: Remote) -> None:
    text = _secret_packet_with_a_receipt_block()
    assert "receipt-invalid" in [code for _, code in _receipt_problems(f"{REJECTED}/mem_secret.md", text)]
    remote.commit({f"{REJECTED}/mem_secret.md": text})
    validated = run_cli("validate", "--rev", "HEAD", expect=1)
    assert f"{REJECTED}/mem_secret.md:2: receipt-invalid: field 'id' differs" in validated.stdout
    assert "Zanzibar" not in validated.stdout + validated.stderr
    stderr = remote.rejected(f"{REJECTED}/mem_secret.md:2: receipt-invalid")
    assert "Zanzibar" not in stderr


def test_pre_commit_takes_its_policy_from_head(repo) -> None:  # type: ignore[no-untyped-def]
    repo.write(record_path("use-postgres"), record("use-postgres"))
    repo.commit("add a record")
    repo.write(".memzoi/config.toml", "[hooks]\nallow_in_place_edits = true\n")
    repo.write(record_path("use-postgres"), record("use-postgres", body="Reworded with the policy change."))
    repo.git.index.add_all()
    repo.git.index.write()
    assert "record-edited" in run_cli("hook", "pre-commit", expect=1).stderr
    git("reset", "-q", "--", record_path("use-postgres"), cwd=repo.path)
    repo.commit("relax the policy", paths=[".memzoi/config.toml"])
    git("add", record_path("use-postgres"), cwd=repo.path)
    run_cli("hook", "pre-commit")
