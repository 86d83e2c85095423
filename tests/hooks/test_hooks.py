"""The server hook through real `git push`: valid memory is accepted, each rejected case leaves refs alone."""

from __future__ import annotations

import json
from pathlib import Path

import pygit2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_memzoi.hooks.checks import _scan_lines
from git_memzoi.hooks.refrules import transition_to
from git_memzoi.profile.frontmatter import set_top_level_scalar
from support import AUTHOR, git, memzoi_exe, run_cli
from support.hooks import Remote, make_remote, packet, record, record_path, retire_packet

pytestmark = pytest.mark.slow


def test_install_in_bare_repository_writes_an_executable_pre_receive(tmp_path: Path) -> None:
    bare = tmp_path / "server.git"
    git("init", "--bare", "-q", str(bare), cwd=tmp_path)
    installed = git("memzoi", "hook", "install", cwd=bare)  # real git finds git-memzoi on PATH
    hook = bare / "hooks" / "pre-receive"
    assert f"pre-receive hook created: {hook}" in installed.stderr
    text = hook.read_text()
    assert text.startswith("#!/bin/sh\n") and "hook pre-receive" in text and memzoi_exe() in text
    assert hook.stat().st_mode & 0o111


def test_valid_create_is_accepted(remote: Remote) -> None:
    sha = remote.commit(
        {
            record_path("use-redis"): record("use-redis"),
            ".memzoi/proposals/resolved/applied/mem_1.md": packet("mem_1", status="applied", affected="use-redis"),
        }
    )
    result = remote.accepted()
    assert "memory OK" in result.stderr
    assert remote.refs()["refs/heads/main"] == sha


def test_invalid_tree_is_rejected(remote: Remote) -> None:
    broken = record("use-redis").replace("lane: semantic\n", "")
    remote.commit({record_path("use-redis"): broken})
    remote.rejected(f"{record_path('use-redis')}:1: field-missing: required field 'lane' is missing", "push rejected")


def test_body_edit_in_place_is_rejected(remote: Remote) -> None:
    edited = record("use-postgres", body="Use Postgres, except on Tuesdays.")
    remote.commit({record_path("use-postgres"): edited})
    stderr = remote.rejected(
        f"{record_path('use-postgres')}:24: record-edited: record 'use-postgres' is edited in place"
    )
    assert "remote: " in stderr and "allow_in_place_edits" in stderr


def test_evidence_edit_in_place_is_rejected(remote: Remote) -> None:
    remote.commit({record_path("use-postgres"): record("use-postgres", source_ref="issue://2")})
    remote.rejected(f"{record_path('use-postgres')}:16: record-edited")


def test_status_edit_other_than_apply_transition_is_rejected(remote: Remote) -> None:
    text = record("use-postgres")
    # a status change plus any other byte is an edit
    changed = set_top_level_scalar(text, "status", "superseded").replace("confidence: 1.0", "confidence: 0.5")
    remote.commit({record_path("use-postgres"): changed})
    remote.rejected("record-edited")


def test_deletion_is_rejected(remote: Remote) -> None:
    remote.commit({record_path("use-postgres"): None})
    remote.rejected(f"{record_path('use-postgres')}:1: record-deleted: record 'use-postgres' is deleted")


def test_rename_is_a_deletion(remote: Remote) -> None:
    remote.commit({record_path("use-postgres"): None, ".memzoi/records/project/database.md": record("use-postgres")})
    remote.rejected("record-deleted")


def test_supersede_by_apply_is_accepted(remote: Remote) -> None:
    old = record("use-postgres")
    remote.commit(
        {
            record_path("use-postgres"): set_top_level_scalar(old, "status", "superseded"),
            record_path("use-postgres-16"): record("use-postgres-16", extra="supersedes: use-postgres\n"),
            ".memzoi/proposals/resolved/applied/mem_3.md": retire_packet(
                "mem_3", "supersede", "use-postgres", "use-postgres-16"
            ),
        }
    )
    remote.accepted()


def test_tombstone_by_apply_is_accepted(remote: Remote) -> None:
    remote.commit(
        {
            record_path("use-postgres"): set_top_level_scalar(record("use-postgres"), "status", "tombstoned"),
            ".memzoi/proposals/resolved/applied/mem_4.md": retire_packet("mem_4", "tombstone", "use-postgres"),
        }
    )
    remote.accepted()


def test_expiry_past_the_records_own_boundary_needs_no_packet(remote: Remote) -> None:
    text = record("use-redis").replace("retention: {}\n", "retention:\n  explicit_expires_at: 2026-01-02T00:00:00Z\n")
    remote.commit({record_path("use-redis"): text})
    remote.accepted()
    remote.commit({record_path("use-redis"): set_top_level_scalar(text, "status", "expired")})
    remote.accepted()


def test_expiry_before_the_records_own_boundary_is_refused(remote: Remote) -> None:
    remote.commit({record_path("use-postgres"): set_top_level_scalar(record("use-postgres"), "status", "expired")})
    remote.rejected("unreviewed-expiry")


def test_transition_from_a_retired_record_is_rejected(remote: Remote) -> None:
    text = set_top_level_scalar(record("use-postgres"), "status", "tombstoned")
    remote.commit(
        {
            record_path("use-postgres"): text,
            ".memzoi/proposals/resolved/applied/mem_6.md": retire_packet("mem_6", "tombstone", "use-postgres"),
        }
    )
    remote.accepted()
    remote.commit({record_path("use-postgres"): set_top_level_scalar(text, "status", "active")})
    remote.rejected("record-edited")


def test_repository_config_relaxes_the_edit_rule(remote: Remote) -> None:
    remote.commit({".memzoi/config.toml": "[hooks]\nallow_in_place_edits = true\n"})
    remote.accepted()
    remote.commit({record_path("use-postgres"): record("use-postgres", body="Reworded in place.")})
    remote.commit({record_path("use-postgres"): None})
    remote.accepted()


def test_bad_repository_config_is_rejected(remote: Remote) -> None:
    remote.commit({".memzoi/config.toml": "[hooks]\nallow_everything = true\n"})
    remote.rejected(".memzoi/config.toml:1: config: unknown key 'hooks.allow_everything'")


def test_resolved_packet_without_its_record_is_rejected(remote: Remote) -> None:
    remote.commit(
        {".memzoi/proposals/resolved/applied/mem_9.md": packet("mem_9", status="applied", affected="never-created")}
    )
    remote.rejected("mem_9.md:25: resolution-orphan: applied packet names record 'never-created'")


def test_non_repo_safe_packet_is_rejected(remote: Remote) -> None:
    remote.commit({".memzoi/proposals/pending/mem_2.md": packet("mem_2", sensitivity="private-personal-data")})
    remote.rejected("mem_2.md:19: sensitivity: sensitivity private-personal-data must not be committed")


@pytest.mark.parametrize(
    "secret, kind",
    [
        ("-----BEGIN OPENSSH PRIVATE KEY-----", "a private key"),
        ("aws key AKIAABCDEFGHIJKLMNOP here", "an AWS access key"),
        ("token ghp_" + "a1B2" * 9, "a GitHub token"),
        ("db at postgres://admin:hunter2hunter2@db.internal/app", "a password in a URL"),
    ],
)
def test_secret_in_memory_is_rejected(remote: Remote, secret: str, kind: str) -> None:
    body = f"Connect like this.\n\n{secret}\n"
    remote.commit({record_path("connect-db"): record("connect-db", body=body)})
    stderr = remote.rejected(f"{record_path('connect-db')}:26: secret: looks like {kind}")
    assert secret not in stderr  # findings never echo the secret


def test_secret_added_to_log_is_found_on_its_line(remote: Remote) -> None:
    log = (remote.work.path / ".memzoi/log.md").read_text()
    remote.commit({".memzoi/log.md": log + "- applied mem_1\n- password=Sup3rS3cretValue99\n"})
    lines = log.count("\n") + 2
    remote.rejected(f".memzoi/log.md:{lines}: secret: looks like a password or secret assignment")


def test_new_branch_is_checked_from_its_fork_point(remote: Remote) -> None:
    remote.work.git.branches.local.create("topic", remote.work.git.head.peel(pygit2.Commit))
    remote.work.git.checkout("refs/heads/topic")
    remote.commit({record_path("use-postgres"): record("use-postgres", body="edited on a branch")})
    remote.rejected("record-edited", args=("topic",))
    assert "refs/heads/topic" not in remote.refs()


def test_new_branch_at_a_known_commit_needs_no_check(remote: Remote) -> None:
    result = remote.accepted("main:refs/heads/copy")
    assert "checked" not in result.stderr  # nothing new: no commit was read


def test_tag_of_a_bad_commit_is_rejected(remote: Remote) -> None:
    sha = remote.commit({record_path("use-postgres"): None})
    remote.work.git.create_tag("v1", pygit2.Oid(hex=sha), pygit2.enums.ObjectType.COMMIT, AUTHOR, "release")
    remote.rejected("record-deleted", args=("refs/tags/v1",))
    assert "refs/tags/v1" not in remote.refs()


def test_deleting_a_ref_is_allowed_by_the_hook(remote: Remote) -> None:
    # install leaves receive.denyDeletes as the server has it (unset: deletions allowed)
    remote.accepted("main:refs/heads/old")
    remote.accepted(":refs/heads/old")
    assert "refs/heads/old" not in remote.refs()


def test_force_push_checks_only_commits_the_server_lacks(remote: Remote) -> None:
    first = remote.refs()["refs/heads/main"]
    remote.commit({"notes.txt": "code only\n"})
    remote.accepted()
    # rewinding to a known commit brings nothing new
    result = remote.accepted(f"+{first}:refs/heads/main")
    assert "checked" not in result.stderr
    # rewinding past a record drops it: a deletion from what the ref holds
    remote.commit({record_path("use-redis"): record("use-redis")})
    remote.accepted()
    remote.rejected(f"{record_path('use-redis')}:1: record-deleted", args=(f"+{first}:refs/heads/main",))
    # a rewritten history that edits a record in place is refused
    remote.work.git.reset(pygit2.Oid(hex=first), pygit2.enums.ResetMode.HARD)
    remote.commit({record_path("use-postgres"): record("use-postgres", body="rewritten")})
    remote.rejected("record-edited", args=("+main",))


def test_merge_of_valid_branches_is_accepted(remote: Remote) -> None:
    git_repo = remote.work.git
    base = git_repo.head.peel(pygit2.Commit)
    git_repo.branches.local.create("topic", base)
    remote.commit({record_path("use-redis"): record("use-redis")})
    git_repo.checkout("refs/heads/topic")
    remote.commit(
        {
            record_path("use-kafka"): record("use-kafka"),
            record_path("use-postgres"): set_top_level_scalar(record("use-postgres"), "status", "tombstoned"),
            ".memzoi/proposals/resolved/applied/mem_5.md": retire_packet("mem_5", "tombstone", "use-postgres"),
        }
    )
    git_repo.checkout("refs/heads/main")
    merged = git("merge", "-q", "--no-edit", "topic", cwd=remote.work.path, check=False)
    assert merged.returncode == 0, merged.stderr
    result = remote.accepted()
    assert "3 changes to .memzoi/ checked" in result.stderr


def test_merge_that_drops_a_record_is_rejected(remote: Remote) -> None:
    git_repo = remote.work.git
    git_repo.branches.local.create("topic", git_repo.head.peel(pygit2.Commit))
    remote.commit({record_path("use-redis"): record("use-redis")})
    git_repo.checkout("refs/heads/topic")
    remote.commit({"notes.txt": "topic work\n"})
    git_repo.checkout("refs/heads/main")
    git("merge", "-q", "--no-commit", "topic", cwd=remote.work.path)
    git("rm", "-q", record_path("use-redis"), cwd=remote.work.path)
    git("commit", "-q", "-m", "evil merge", cwd=remote.work.path)
    remote.rejected(f"{record_path('use-redis')}:1: record-deleted")


def test_sibling_commits_are_each_validated_in_full(remote: Remote) -> None:
    git_repo = remote.work.git
    remote.commit({record_path("use-redis"): record("use-redis")})
    git_repo.branches.local.create("topic", git_repo.head.peel(pygit2.Commit))
    remote.commit({record_path("use-kafka"): record("use-kafka")})
    git_repo.checkout("refs/heads/topic")
    remote.commit({".memzoi/records/project/cache.md": record("use-redis", title="Cache")})
    git_repo.checkout("refs/heads/main")
    git("merge", "-q", "--no-edit", "topic", cwd=remote.work.path)
    stderr = remote.rejected(
        ".memzoi/records/project/use-redis.md:2: id-duplicate: record ID 'use-redis' is "
        "also used by .memzoi/records/project/cache.md"
    )
    assert stderr.count("id-duplicate") == 1


def test_each_problem_is_reported_once_for_a_many_commit_push(remote: Remote) -> None:
    remote.commit({record_path("use-redis"): record("use-redis").replace("lane: semantic\n", "")})
    for n in range(3):
        remote.commit({f".memzoi/records/project/extra-{n}.md": record(f"extra-{n}")})
    stderr = remote.rejected("field-missing")
    assert stderr.count("field-missing") == 1


def test_quarantined_objects_are_what_the_hook_reads(tmp_path: Path) -> None:
    r = make_remote(tmp_path, hook="none")
    seen = tmp_path / "env.txt"
    hook = r.bare / "hooks" / "pre-receive"
    hook.write_text(
        f'#!/bin/sh\nenv | grep -E "^GIT_(QUARANTINE_PATH|DIR)=" > {seen}\nexec {memzoi_exe()} hook pre-receive\n'
    )
    hook.chmod(0o755)
    r.accepted()
    r.commit({record_path("use-postgres"): None})
    r.rejected("record-deleted")
    env = seen.read_text()
    assert "GIT_QUARANTINE_PATH=" in env and "GIT_DIR=" in env


def test_update_hook_rejects_per_ref(tmp_path: Path) -> None:
    r = make_remote(tmp_path, hook="none")
    hook = r.bare / "hooks" / "update"
    hook.write_text(f'#!/bin/sh\nexec {memzoi_exe()} hook update "$@"\n')
    hook.chmod(0o755)
    r.accepted()
    r.commit({record_path("use-postgres"): record("use-postgres", body="edited")})
    before = r.refs()
    result = r.push()
    assert result.returncode != 0 and "(hook declined)" in result.stderr
    assert "record-edited" in result.stderr and r.refs() == before


def _dangling_commits(bare: Path, count: int, touch: bool) -> tuple[str, str]:
    """Write `count` commits on top of main directly into the bare repository, with no ref."""
    repo = pygit2.Repository(str(bare))
    parent = repo.references["refs/heads/main"].peel(pygit2.Commit)
    old = str(parent.id)
    for n in range(count):
        builder = repo.TreeBuilder(parent.tree)
        builder.insert(f"file-{n}.txt", repo.create_blob(f"{n}\n".encode()), pygit2.enums.FileMode.BLOB)
        if touch:
            memzoi = repo.TreeBuilder(repo[parent.tree[".memzoi"].id])
            memzoi.insert(f"note-{n}.txt", repo.create_blob(b"x\n"), pygit2.enums.FileMode.BLOB)
            builder.insert(".memzoi", memzoi.write(), pygit2.enums.FileMode.TREE)
        oid = repo.create_commit(None, AUTHOR, AUTHOR, f"commit {n}", builder.write(), [parent.id])
        parent = repo[oid]
    return old, str(parent.id)


def test_push_that_leaves_memzoi_alone_reads_no_memory(remote: Remote) -> None:
    old, new = _dangling_commits(remote.bare, 40, touch=False)
    result = run_cli("hook", "pre-receive", "--json", input=f"{old} {new} refs/heads/main\n", cwd=remote.bare)
    report = json.loads(result.stdout)
    assert report == {
        "ok": True,
        "commits_walked": 40,
        "commits_checked": 0,
        "trees_validated": 0,
        "problems": [],
        "invalidated": [],  # files added, none gone: no record file is read for freshness either
    }


def test_push_touching_memzoi_validates_each_distinct_tree_once(remote: Remote) -> None:
    old, new = _dangling_commits(remote.bare, 5, touch=True)
    result = run_cli("hook", "update", "refs/heads/main", old, new, "--json", cwd=remote.bare)
    assert result.json()["commits_checked"] == 5 and result.json()["trees_validated"] == 5


def test_malformed_hook_input_is_a_usage_error(remote: Remote) -> None:
    result = run_cli("hook", "pre-receive", input="not a ref line\n", cwd=remote.bare, expect=2)
    assert "hook input line 1" in result.stderr


# the rules themselves, in-process ------------------------------------------------------------

ACTIVE = record("use-postgres")


@pytest.mark.parametrize(
    "new_status, allowed",
    [
        ("superseded", True),
        ("tombstoned", True),
        ("expired", True),
        ("redacted", False),
        ("active", False),
    ],
)
def test_only_apply_status_transitions_are_allowed(new_status: str, allowed: bool) -> None:
    new = set_top_level_scalar(ACTIVE, "status", new_status)
    assert (transition_to(ACTIVE.encode(), new.encode(), "active") is not None) is allowed


def test_transition_must_leave_every_other_byte_alone() -> None:
    new = set_top_level_scalar(ACTIVE, "status", "tombstoned")
    assert not transition_to(ACTIVE.encode(), (new + "\n").encode(), "active")
    assert not transition_to(
        ACTIVE.encode(), new.replace("status: tombstoned", "status:  tombstoned").encode(), "active"
    )
    assert not transition_to(
        ACTIVE.encode(),
        new.replace("kind: memory\n", "kind: memory\nupdated: '2026-02-01T00:00:00Z'\n").encode(),
        "active",
    )
    retired = set_top_level_scalar(ACTIVE, "status", "superseded")
    assert not transition_to(
        retired.encode(), set_top_level_scalar(retired, "status", "tombstoned").encode(), "superseded"
    )


@settings(max_examples=200, deadline=None)
@given(position=st.integers(min_value=0, max_value=len(ACTIVE)), char=st.characters(codec="utf-8"))
def test_any_inserted_character_is_an_edit(position: int, char: str) -> None:
    for status in ("superseded", "tombstoned", "expired"):
        new = set_top_level_scalar(ACTIVE, "status", status)
        edited = new[:position] + char + new[position:]
        assert not transition_to(ACTIVE.encode(), edited.encode(), "active")


def test_added_lines_are_scanned_with_their_own_line_numbers() -> None:
    lines = [(3, "nothing here"), (4, "key AKIAABCDEFGHIJKLMNOP"), (9, "-----BEGIN RSA PRIVATE KEY-----")]
    assert [(f.kind, f.line) for f in _scan_lines(lines)] == [("aws-access-key", 4), ("private-key", 9)]
    assert _scan_lines([]) == []
