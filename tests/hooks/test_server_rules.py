"""Server rules through real `git push` to a bare repository with the installed hook.

Each rule is shown refused, with one line naming the rule and the commit or ref, next to its
honest counterpart, accepted: an expiry before the record's own retention says so, the packet
rules under allow_in_place_edits.
"""

from __future__ import annotations

import re
from pathlib import Path

import pygit2
import pytest
import yaml

from git_memzoi.profile.frontmatter import set_top_level_scalar
from support import AUTHOR, Repo, git, run_cli
from support.hooks import Remote, packet, record, record_path, retire_packet

pytestmark = pytest.mark.slow

APPLIED = ".memzoi/proposals/resolved/applied"
RELAXED = "[hooks]\nallow_in_place_edits = true\n"


def expiring(rid: str, expires_at: str) -> str:
    """A semantic record whose own retention ends ordinary recall at `expires_at`."""
    return record(rid).replace("retention: {}\n", f"retention:\n  explicit_expires_at: {expires_at}\n")


def status(text: str, value: str) -> str:
    return set_top_level_scalar(text, "status", value)


# 1. expired only when the record's own retention says so ---------------------------------------


def test_an_active_record_flipped_to_expired_without_a_boundary_is_refused(remote: Remote) -> None:
    tip = remote.commit({record_path("use-postgres"): status(record("use-postgres"), "expired")}, "Silence it")
    remote.rejected(
        f"remote: git memzoi: refs/heads/main at {tip[:12]}",
        f"remote: {record_path('use-postgres')}:10: unreviewed-expiry: record 'use-postgres' becomes expired "
        "while its own retention keeps it current: semantic records have no age limit",
    )
    checked = run_cli("hook", "check", "origin/main..HEAD", expect=1)
    assert "unreviewed-expiry" in checked.stderr


def test_an_expiry_before_its_explicit_expires_at_is_refused(remote: Remote) -> None:
    remote.commit({record_path("use-redis"): expiring("use-redis", "2999-01-01T00:00:00Z")})
    remote.accepted()
    remote.commit({record_path("use-redis"): status(expiring("use-redis", "2999-01-01T00:00:00Z"), "expired")})
    stderr = remote.rejected("unreviewed-expiry: record 'use-redis' becomes expired")
    assert "current until 2999-01-01T00:00:00Z (explicit_expires_at 2999-01-01T00:00:00Z)" in stderr


def test_an_expiry_past_its_explicit_expires_at_is_accepted(remote: Remote) -> None:
    remote.commit({record_path("use-redis"): expiring("use-redis", "2026-01-02T00:00:00Z")})
    remote.accepted()
    remote.commit({record_path("use-redis"): status(expiring("use-redis", "2026-01-02T00:00:00Z"), "expired")})
    remote.accepted()


# 2. allow_in_place_edits lifts the record rules only ---------------------------------------------


def relaxed(remote: Remote) -> None:
    remote.commit({".memzoi/config.toml": RELAXED})
    remote.accepted()


def test_allow_in_place_edits_keeps_the_retirement_packet_rule(remote: Remote) -> None:
    relaxed(remote)
    tip = remote.commit({record_path("use-postgres"): status(record("use-postgres"), "tombstoned")}, "Bury it")
    remote.rejected(
        f"remote: git memzoi: refs/heads/main at {tip[:12]}",
        "unreviewed-transition: record 'use-postgres' becomes tombstoned without the applied tombstone packet",
    )
    # an edited body along with the flip needs the same packet
    remote.commit({record_path("use-postgres"): status(record("use-postgres", body="Reworded."), "tombstoned")})
    remote.rejected("unreviewed-transition")


def test_allow_in_place_edits_with_the_packet_accepts_the_retirement(remote: Remote) -> None:
    relaxed(remote)
    remote.commit(
        {
            record_path("use-postgres"): status(record("use-postgres", body="Reworded."), "tombstoned"),
            f"{APPLIED}/mem_4.md": retire_packet("mem_4", "tombstone", "use-postgres"),
        }
    )
    remote.accepted()


def test_allow_in_place_edits_keeps_resolved_packets_append_only(remote: Remote) -> None:
    remote.commit(
        {
            record_path("use-postgres"): status(record("use-postgres"), "tombstoned"),
            f"{APPLIED}/mem_4.md": retire_packet("mem_4", "tombstone", "use-postgres"),
            ".memzoi/config.toml": RELAXED,
        }
    )
    remote.accepted()
    bad = remote.commit({f"{APPLIED}/mem_4.md": None}, "Drop the packet")
    remote.rejected(
        f"remote: git memzoi: commit {bad[:12]} (Drop the packet):",
        f"remote: {APPLIED}/mem_4.md:1: packet-deleted: resolved packet 'mem_4' is deleted",
    )


def test_allow_in_place_edits_still_lifts_the_in_place_edit_rule(remote: Remote) -> None:
    relaxed(remote)
    remote.commit({record_path("use-postgres"): record("use-postgres", body="Reworded in place.")})
    remote.accepted()


# 3. pre-push runs the ref-level rules on every push --------------------------------------------


def client_hooks(remote: Remote) -> None:
    run_cli("hook", "install", cwd=remote.work.path)


def refused_by_pre_push(remote: Remote, *args: str) -> str:
    """Push with the client's pre-push on: refused before anything leaves, the remote's refs unmoved."""
    before = remote.refs()
    result = remote.push(*args)
    assert result.returncode != 0, result.stderr
    assert "remote:" not in result.stderr  # the server was never asked
    assert remote.refs() == before
    return result.stderr


def test_pre_push_refuses_a_force_push_that_drops_a_record_without_new_commits(remote: Remote) -> None:
    older = str(remote.work.git.head.target)
    remote.commit({record_path("use-redis"): record("use-redis")})
    remote.accepted()
    client_hooks(remote)
    git("reset", "-q", "--hard", older, cwd=remote.work.path)  # a commit the remote has: nothing to walk
    stderr = refused_by_pre_push(remote, "--force", "main")
    assert f"git memzoi: refs/heads/main at {older[:12]}, against " in stderr
    assert f"{record_path('use-redis')}:1: record-deleted: record 'use-redis' is deleted" in stderr
    # the server says the same without the client's hook
    remote.rejected("record-deleted", args=("--no-verify", "--force", "main"))


def test_pre_push_lets_a_force_push_that_keeps_memory_through(remote: Remote) -> None:
    older = str(remote.work.git.head.target)
    remote.commit({"src/app.py": "print(1)\n"})
    remote.accepted()
    client_hooks(remote)
    git("reset", "-q", "--hard", older, cwd=remote.work.path)
    remote.accepted("--force", "main")


def test_deleting_the_default_branch_is_refused_and_another_branch_is_not(remote: Remote) -> None:
    for key, value in (("receive.denyDeleteCurrent", "ignore"), ("receive.denyDeletes", "false")):
        git("config", key, value, cwd=remote.bare)  # git's own guards, lifted
    remote.accepted("main:topic")
    tip = str(remote.work.git.head.target)
    remote.rejected(
        f"remote: git memzoi: refs/heads/main at {tip[:12]}:",
        "remote: refs/heads/main:1: default-branch-deleted: the default branch gives every new ref its policy",
        args=(":main",),
    )
    client_hooks(remote)
    # pre-push knows the remote's default branch from refs/remotes/origin/HEAD (a clone of an
    # empty repository has none yet; without it, the server alone refuses)
    git("remote", "set-head", "origin", "--auto", cwd=remote.work.path)
    stderr = refused_by_pre_push(remote, ":main")
    assert "refs/heads/main:1: default-branch-deleted" in stderr
    remote.accepted(":topic")


# 4. a new branch: every commit no existing ref reaches, however many ----------------------------


def chain(remote: Remote, first: dict[str, str], count: int) -> tuple[str, str]:
    """On a new branch `topic` off main: one commit writing `first`, then count - 1 commits of code. (first, tip)"""
    repo = remote.work.git
    git("checkout", "-q", "-b", "topic", cwd=remote.work.path)
    oldest = remote.commit(first, "The oldest")
    parent = repo.get(oldest)
    for number in range(count - 1):
        builder = repo.TreeBuilder(parent.tree)
        builder.insert("counter.txt", repo.create_blob(f"{number}\n".encode()), pygit2.enums.FileMode.BLOB)
        sha = repo.create_commit(None, AUTHOR, AUTHOR, f"code {number}", builder.write(), [parent.id])
        parent = repo.get(sha)
    repo.references["refs/heads/topic"].set_target(parent.id)
    git("reset", "-q", "--hard", "topic", cwd=remote.work.path)
    return oldest, str(parent.id)


def test_a_new_branch_of_300_commits_is_judged_down_to_its_oldest(remote: Remote, tmp_path: Path) -> None:
    oldest, _ = chain(remote, {record_path("use-postgres"): record("use-postgres", body="Edited long ago.")}, 300)
    remote.rejected(
        f"remote: git memzoi: commit {oldest[:12]} (The oldest):",
        f"remote: {record_path('use-postgres')}:24: record-edited",
        args=("--no-verify", "topic"),
    )
    # pre-push, pushing by URL to a repository nothing here says anything about: walked whole
    fresh = tmp_path / "fresh.git"
    git("init", "--bare", "-q", str(fresh), cwd=tmp_path)
    client_hooks(remote)
    done = git("push", str(fresh), "topic", cwd=remote.work.path, check=False)
    assert done.returncode == 1, done.stderr
    assert f"git memzoi: commit {oldest[:12]} (The oldest):" in done.stderr
    assert "record-edited" in done.stderr
    assert git("for-each-ref", cwd=fresh).stdout == ""


def test_a_new_branch_of_300_honest_commits_is_accepted(remote: Remote) -> None:
    chain(remote, {record_path("use-redis"): record("use-redis")}, 300)
    client_hooks(remote)
    remote.accepted("topic")


# 5. tags: of trees, and of commits no branch holds ----------------------------------------------


def edited_tree(remote: Remote) -> str:
    """main's root tree with use-postgres edited in place (a tree no commit vouches for)."""
    remote.work.write(record_path("use-postgres"), record("use-postgres", body="Edited under a tag."))
    git("add", "-A", cwd=remote.work.path)
    tree = git("write-tree", cwd=remote.work.path).stdout.strip()
    git("reset", "-q", "--hard", "HEAD", cwd=remote.work.path)
    return tree


@pytest.mark.parametrize("annotated", [False, True])
def test_a_tag_of_a_tree_with_another_memzoi_is_refused(remote: Remote, annotated: bool) -> None:
    tree = edited_tree(remote)
    git("tag", *(["-a", "-m", "tree"] if annotated else []), "v-tree", tree, cwd=remote.work.path)
    tag = git("rev-parse", "v-tree", cwd=remote.work.path).stdout.strip()
    remote.rejected(
        f"remote: git memzoi: refs/tags/v-tree at {tag[:12]}:",
        "remote: refs/tags/v-tree:1: tree-tag: a tag of a tree holds a .memzoi that is not the one the default branch",
        args=("--no-verify", "v-tree"),
    )
    client_hooks(remote)
    assert "refs/tags/v-tree:1: tree-tag" in refused_by_pre_push(remote, "v-tree")


def test_a_tag_of_a_tree_holding_what_main_holds_is_accepted(remote: Remote) -> None:
    remote.work.write("src/app.py", "print(1)\n")
    git("add", "-A", cwd=remote.work.path)
    tree = git("write-tree", cwd=remote.work.path).stdout.strip()
    git("tag", "-a", "-m", "code only", "v-code", tree, cwd=remote.work.path)
    client_hooks(remote)
    # what main holds is what pre-push compares the tree with (unknown, a tree tag is refused)
    git("remote", "set-head", "origin", "--auto", cwd=remote.work.path)
    remote.accepted("v-code")


@pytest.mark.parametrize("orphan", [False, True])
def test_a_tag_of_a_commit_no_branch_holds_is_judged_like_a_branch(remote: Remote, orphan: bool) -> None:
    tree = edited_tree(remote)
    parents = [] if orphan else ["-p", "HEAD"]
    commit = git("commit-tree", tree, *parents, "-m", "tagged only", cwd=remote.work.path).stdout.strip()
    git("tag", "-a", "-m", "release", "v-edit", commit, cwd=remote.work.path)
    stderr = remote.rejected(
        f"{record_path('use-postgres')}:24: record-edited", args=("--no-verify", "refs/tags/v-edit")
    )
    assert commit[:12] in stderr
    # the same commit with a new record instead of the edit is accepted
    remote.work.write(record_path("use-redis"), record("use-redis"))
    git("add", "-A", cwd=remote.work.path)
    honest = git(
        "commit-tree",
        git("write-tree", cwd=remote.work.path).stdout.strip(),
        *parents,
        "-m",
        "new",
        cwd=remote.work.path,
    ).stdout.strip()
    git("tag", "-a", "-m", "release", "v-new", honest, cwd=remote.work.path)
    remote.accepted("refs/tags/v-new")


# 6. a floor the administrator sets in the bare repository's git config -------------------------


def test_the_server_floor_keeps_in_place_edits_refused_after_a_branch_relaxes_them(remote: Remote) -> None:
    git("config", "memzoi.hooks.allowInPlaceEdits", "false", cwd=remote.bare)
    relaxed(remote)  # the first push: the branch says yes, and lands
    tip = remote.commit({record_path("use-postgres"): record("use-postgres", body="Reworded.")}, "Reword")
    remote.rejected(
        f"remote: git memzoi: commit {tip[:12]} (Reword):",
        f"remote: {record_path('use-postgres')}:24: record-edited",
    )


def test_without_the_floor_the_two_pushes_relax_the_rule(remote: Remote) -> None:
    relaxed(remote)
    remote.commit({record_path("use-postgres"): record("use-postgres", body="Reworded.")})
    remote.accepted()


def test_the_server_floor_asks_every_new_record_for_its_packet(remote: Remote) -> None:
    git("config", "memzoi.hooks.requireProposals", "true", cwd=remote.bare)
    remote.commit({".memzoi/config.toml": "[hooks]\nrequire_proposals = false\n"})
    remote.accepted()
    remote.commit({record_path("use-redis"): record("use-redis")})
    remote.rejected(f"{record_path('use-redis')}:1: unreviewed-record: new record 'use-redis' has no applied packet")
    remote.commit({f"{APPLIED}/mem_1.md": packet("mem_1", status="applied", affected="use-redis")})
    remote.accepted()


def test_a_floor_that_is_not_a_boolean_fails_the_hook_naming_the_key(remote: Remote) -> None:
    git("config", "memzoi.hooks.allowInPlaceEdits", "maybe", cwd=remote.bare)
    remote.commit({"src/app.py": "print(1)\n"})
    stderr = remote.rejected("git config memzoi.hooks.allowInPlaceEdits: 'maybe' is not a boolean")
    assert "Traceback" not in stderr


# 7. hook install in a bare repository sets git's own guards -------------------------------------


def test_install_in_a_bare_repository_sets_fsck_and_leaves_deletes_alone(tmp_path: Path) -> None:
    bare = tmp_path / "server.git"
    git("init", "--bare", "-q", str(bare), cwd=tmp_path)
    installed = run_cli("hook", "install", cwd=bare)
    assert "git memzoi: git config receive.fsckObjects = true set (was unset)" in installed.stderr
    assert "receive.denyDeletes untouched" in installed.stderr
    assert "the hook refuses deleting the default branch" in installed.stderr
    assert git("config", "--bool", "receive.fsckObjects", cwd=bare).stdout.strip() == "true"
    assert git("config", "receive.denyDeletes", cwd=bare, check=False).returncode == 1
    again = run_cli("hook", "install", "--json", cwd=bare).json()
    assert [(g["key"], g["action"]) for g in again["git_config"]] == [("receive.fsckObjects", "unchanged")]


def test_install_with_deny_deletes_sets_it(tmp_path: Path) -> None:
    bare = tmp_path / "server.git"
    git("init", "--bare", "-q", str(bare), cwd=tmp_path)
    git("config", "receive.denyDeletes", "false", cwd=bare)
    installed = run_cli("hook", "install", "--deny-deletes", cwd=bare)
    assert "git memzoi: git config receive.denyDeletes = true set (was false)" in installed.stderr
    assert "untouched" not in installed.stderr
    for key in ("receive.fsckObjects", "receive.denyDeletes"):
        assert git("config", "--bool", key, cwd=bare).stdout.strip() == "true"
    again = run_cli("hook", "install", "--deny-deletes", "--json", cwd=bare).json()
    assert [(g["key"], g["action"]) for g in again["git_config"]] == [
        ("receive.fsckObjects", "unchanged"),
        ("receive.denyDeletes", "unchanged"),
    ]
    run_cli("hook", "install", "--deny-deletes", "--no-git-config", cwd=bare, expect=2)


def test_deny_deletes_is_for_a_server(repo: Repo) -> None:
    result = run_cli("hook", "install", "--deny-deletes", expect=2)
    assert "--deny-deletes sets a server's git config" in result.stderr
    assert git("config", "receive.denyDeletes", cwd=repo.path, check=False).returncode == 1


def test_install_with_no_git_config_leaves_and_reports_them(tmp_path: Path) -> None:
    bare = tmp_path / "server.git"
    git("init", "--bare", "-q", str(bare), cwd=tmp_path)
    installed = run_cli("hook", "install", "--no-git-config", cwd=bare)
    assert "git config receive.fsckObjects is unset, left as it is (--no-git-config); true is recommended" in (
        installed.stderr
    )
    assert git("config", "receive.fsckObjects", cwd=bare, check=False).returncode == 1


def test_a_code_branch_is_deleted_by_push_after_install_and_main_is_not(remote: Remote) -> None:
    """Without --deny-deletes the server keeps its policy: a merged code branch can be deleted."""
    remote.commit({"src/feature.py": "print(1)\n"})
    remote.accepted("main:feature")
    pushed = remote.push("--delete", "feature")
    assert pushed.returncode == 0, pushed.stderr
    assert "refs/heads/feature" not in remote.refs()
    # reviewed memory stays: deleting the default branch is refused (git's denyDeleteCurrent lifted)
    git("config", "receive.denyDeleteCurrent", "ignore", cwd=remote.bare)
    stderr = remote.rejected("default-branch-deleted", args=("--delete", "main"))
    assert "refs/heads/main" in remote.refs() and "rejected" in stderr


def test_with_deny_deletes_a_deleted_branch_cannot_be_pushed_back_squashed(remote: Remote) -> None:
    """What --deny-deletes adds: the branch that carried an edit cannot be deleted and re-created."""
    run_cli("hook", "install", "--deny-deletes", cwd=remote.bare)
    remote.accepted("main:topic")
    stderr = remote.push(":topic").stderr
    assert "deletion prohibited" in stderr
    assert "refs/heads/topic" in remote.refs()


# 8. the generated workflow pins its actions by commit and keeps no credentials ------------------


def test_the_workflow_pins_actions_by_commit_and_persists_no_credentials(repo: Repo) -> None:
    run_cli("hook", "install", "--ci", "github", "--install-spec", "git-memzoi")
    text = (repo.path / ".github/workflows/memzoi.yml").read_text()
    uses = re.findall(r"uses: (\S+)@(\S+) # (v\S+)\n", text)
    assert [(action, tag) for action, _, tag in uses] == [
        ("actions/checkout", "v4.4.0"),
        ("actions/setup-python", "v5.6.0"),
        ("actions/cache", "v4.2.3"),
    ]
    assert all(re.fullmatch(r"[0-9a-f]{40}", sha) for _, sha, _ in uses)
    steps = yaml.safe_load(text)["jobs"]["memory"]["steps"]
    assert steps[0]["with"]["persist-credentials"] is False
