"""pre-commit validates the staged tree as a delta of HEAD's kept tree, and reports what a full validate does."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path
from typing import cast

import pygit2
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from conftest import Repo, make_repo
from git_memzoi.gitrepo import open_repo
from git_memzoi.hooks.fastcommit import accept_staged
from git_memzoi.hooks.run import CheckReport, check_staged
from git_memzoi.hooks.verdicts import blob_oid, read_tree_ids, read_verdicts, remember_written, write_tree_ids
from git_memzoi.profile.tree import SourceFile, validate_tree
from git_memzoi.runtime.home import Layout
from test_hooks import packet, record

RECORD_PATHS = [
    ".memzoi/records/project/a.md",
    ".memzoi/records/project/b.md",
    ".memzoi/records/project/deep/c.md",
    ".memzoi/records/project/d.md",
]
PACKET_PATHS = [
    ".memzoi/proposals/resolved/applied/mem_1.md",
    ".memzoi/proposals/resolved/applied/mem_2.md",
    ".memzoi/proposals/pending/mem_3.md",
]
IDS = ["alpha", "beta", "gamma"]
#: The hook's own rules on a change (not tree validation); the comparison leaves them out.
CHANGE_RULES = {"record-edited", "record-deleted", "packet-edited", "packet-deleted", "gitlink", "secret", "config"}

record_text = st.builds(
    lambda rid, sup, status: record(rid, status=status, extra=f"supersedes: {sup}\n" if sup else ""),
    st.sampled_from(IDS),
    st.sampled_from([None, *IDS, "delta"]),
    st.sampled_from(["active", "superseded", "tombstoned"]),
)
packet_text = st.builds(
    lambda pid, status, rid: packet(pid, status=status, affected=rid),
    st.sampled_from(["mem_1", "mem_2", "mem_3"]),
    st.sampled_from(["applied", "proposed"]),
    st.sampled_from([*IDS, "delta"]),
)
edit = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(RECORD_PATHS), record_text),
    st.tuples(st.just("write"), st.sampled_from(PACKET_PATHS), packet_text),
    st.tuples(st.just("write"), st.sampled_from(RECORD_PATHS + PACKET_PATHS), st.just("---\nnot: [a record\n")),
    st.tuples(st.just("delete"), st.sampled_from(RECORD_PATHS + PACKET_PATHS), st.just("")),
    st.tuples(st.just("rename"), st.sampled_from(RECORD_PATHS + PACKET_PATHS), st.sampled_from(RECORD_PATHS)),
)
#: A step stages a few edits, then runs the hook, commits without it (--no-verify), or both; with
#: `written`, the files it writes are judged as apply judges what it writes (hooks.verdicts), so
#: that pre-commit's fast path (hooks.fastcommit) may decide instead of the full check.
step = st.tuples(
    st.lists(edit, min_size=1, max_size=3), st.sampled_from(["hook", "commit", "hook+commit"]), st.booleans()
)


def stage(repo: Repo, edits: list[tuple[str, str, str]], written: bool = False) -> None:
    for action, path, arg in edits:
        target = repo.path / path
        if action == "write":
            repo.write(path, arg)
            if written:
                remember_written(hook_trees(repo), [(path, arg.encode())])
        elif action == "delete" and target.exists():
            target.unlink()
        elif action == "rename" and target.exists() and arg != path:
            (repo.path / arg).parent.mkdir(parents=True, exist_ok=True)
            target.rename(repo.path / arg)
    index = repo.git.index
    index.add_all([".memzoi"])
    index.write()


def full_validation(repo: Repo) -> list[str]:
    """What `validate` reports for the staged tree, validated from scratch."""
    tree = cast(pygit2.Tree, repo.git[repo.git.index.write_tree()])
    memzoi = cast(pygit2.Tree, tree[".memzoi"])
    files = []

    def walk(folder: pygit2.Tree, prefix: str) -> None:
        for entry in folder:
            path = f"{prefix}/{entry.name}"
            if isinstance(entry, pygit2.Tree):
                walk(entry, path)
            else:
                blob = cast(pygit2.Blob, entry)
                files.append(SourceFile(path, lambda b=blob: b.data, entry.filemode == pygit2.enums.FileMode.LINK))

    walk(memzoi, ".memzoi")
    report = validate_tree(sorted(files, key=lambda f: f.path), "committed")
    return sorted(str(p) for p in report.errors)


def staged_differs(repo: Repo) -> bool:
    head = repo.git.head.peel(pygit2.Commit).tree
    staged = cast(pygit2.Tree, repo.git[repo.git.index.write_tree()])
    return bool(head[".memzoi"].id != staged[".memzoi"].id)


def hook_trees(repo: Repo) -> Path:
    return Layout.for_repo(open_repo(repo.path)).hook_trees


def fast_accepts(repo: Repo) -> bool:
    """hooks.fastcommit's answer for what is staged, asked from the work tree as git runs the hook."""
    old = os.getcwd()
    os.chdir(repo.path)
    try:
        return accept_staged()
    finally:
        os.chdir(old)


A, B, D = RECORD_PATHS[0], RECORD_PATHS[1], RECORD_PATHS[3]
APPLIED_1 = PACKET_PATHS[0]


def staged_check(repo: Repo, files: dict[str, str]) -> CheckReport:
    """Write `files` (name in .memzoi/records/project/: text), stage everything, and run the pre-commit check."""
    for name, text in files.items():
        repo.write(f".memzoi/records/project/{name}", text)
    repo.git.index.add_all()
    repo.git.index.write()
    return check_staged(open_repo(repo.path))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(step, min_size=1, max_size=6))
@example(
    steps=[
        ([("write", A, record("alpha"))], "hook+commit", False),
        (
            [("write", B, record("beta")), ("write", APPLIED_1, packet("mem_1", status="applied", affected="beta"))],
            "hook+commit",
            True,
        ),
        ([("write", D, record("gamma", extra="supersedes: delta\n"))], "hook", True),
    ]
)
@example(
    steps=[([("write", A, record("alpha"))], "hook+commit", True), ([("write", B, record("alpha"))], "hook", True)]
)
@example(
    steps=[
        ([("write", A, record("alpha"))], "hook+commit", True),
        ([("write", APPLIED_1, packet("mem_1", status="applied", affected="delta"))], "hook", True),
    ]
)
@example(
    steps=[
        ([("write", A, record("alpha"))], "hook+commit", True),
        ([("write", APPLIED_1, packet("mem_1", status="applied", affected="alpha"))], "commit", True),
        ([("write", PACKET_PATHS[1], packet("mem_1", status="applied", affected="alpha"))], "hook", True),
    ]
)
def test_incremental_pre_commit_equals_full_validation(
    steps: list[tuple[list[tuple[str, str, str]], str, bool]],
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        repo = make_repo(Path(folder) / "project")
        for edits, then, written in steps:
            stage(repo, edits, written)
            if "hook" in then:
                fast = fast_accepts(repo)  # before the full check, which keeps the staged tree's IDs
                report = check_staged(open_repo(repo.path))
                event(f"fast path {'accepted' if fast else 'declined'}")
                if fast:  # the fast path accepts only what the full check accepts
                    assert report.ok and full_validation(repo) == []
                found = sorted(str(f.problem) for f in report.findings if f.problem.code not in CHANGE_RULES)
                if staged_differs(repo):
                    assert found == full_validation(repo)
                else:
                    assert report.commits_checked == 0 and found == []
            if "commit" in then:
                repo.commit("step", paths=None)


def test_the_next_commit_parses_only_what_it_changes(repo: Repo) -> None:
    first = staged_check(repo, {f"r{n:02d}.md": record(f"r{n:02d}") for n in range(30)})
    assert first.ok and first.files_parsed >= 30
    repo.commit("thirty records")
    assert (Layout.for_repo(open_repo(repo.path)).hook_trees).is_dir()

    second = staged_check(repo, {"new.md": record("new", extra="supersedes: r07\n")})
    assert second.ok
    assert second.files_parsed == 1  # the new record: r07, whose ID it refers to, is judged by its kept facts
    repo.commit("one more")

    third = staged_check(repo, {"dup.md": record("r12")})
    assert [f.problem.code for f in third.findings] == ["id-duplicate"]
    # new.md again (its one-file tree was not worth keeping: the delta starts from the thirty),
    # the duplicate, and r12: dup.md comes first in path order, so the problem is r12's, and its
    # line is read from r12 parsed again (the kept facts hold no lines)
    assert third.files_parsed == 3


def test_after_commits_the_hook_never_saw_it_starts_from_the_nearest_kept_tree(repo: Repo) -> None:
    assert staged_check(repo, {f"r{n:02d}.md": record(f"r{n:02d}") for n in range(20)}).ok
    repo.commit("twenty records")
    # two commits made with --no-verify (or pulled): their trees were never kept
    repo.write(".memzoi/records/project/s1.md", record("s1"))
    repo.commit("unchecked one")
    repo.write(".memzoi/records/project/s2.md", record("r03"))
    repo.commit("unchecked two: a duplicate ID")
    report = staged_check(repo, {"s3.md": record("s3")})
    assert [str(f.problem).split(":")[0] for f in report.findings] == [".memzoi/records/project/s2.md"]
    assert report.files_parsed == 3  # s1, s2, s3 against the kept tree (r03, which shares s2's ID, by its facts)


def test_a_damaged_kept_tree_is_validated_from_scratch(repo: Repo) -> None:
    assert staged_check(repo, {"one.md": record("one")}).ok
    repo.commit("one")
    kept = list(Layout.for_repo(open_repo(repo.path)).hook_trees.glob("*.json"))
    assert len(kept) == 1
    kept[0].write_text('{"version": "')
    report = staged_check(repo, {"two.md": record("one")})
    assert [f.problem.code for f in report.findings] == ["id-duplicate"]


def test_pre_push_reuses_the_tree_pre_commit_kept(repo: Repo) -> None:
    from git_memzoi.hooks.run import RefUpdate, check_client_push

    assert staged_check(repo, {f"r{n}.md": record(f"r{n}") for n in range(10)}).ok
    parent = str(repo.git.head.target)
    tip = repo.commit("ten records")
    report = check_client_push(open_repo(repo.path), [RefUpdate("refs/heads/main", parent, tip)], {parent})
    assert report.ok and report.commits_checked == 1
    assert report.files_parsed == 0  # the pushed tree's errors come from what pre-commit kept


def commit_checked_alpha(repo: Repo) -> None:
    """Commit record alpha through the full check, which keeps the tree's IDs."""
    stage(repo, [("write", A, record("alpha"))])
    assert check_staged(open_repo(repo.path)).ok
    repo.commit("alpha")


def test_a_commit_of_files_apply_judged_is_accepted_without_the_full_check(repo: Repo) -> None:
    stage(repo, [("write", A, record("alpha"))], written=True)
    assert not fast_accepts(repo)  # HEAD's tree was never accepted here: nothing to start from
    commit_checked_alpha(repo)
    stage(
        repo,
        [
            ("write", B, record("beta")),
            ("write", APPLIED_1, packet("mem_1", status="applied", affected="beta")),
            ("write", ".memzoi/log.md", "# Memory log\n\n- applied mem_1\n"),
        ],
        written=True,
    )
    assert fast_accepts(repo)
    repo.commit("beta, as apply writes it")
    # the next commit starts from the IDs the fast path kept: a duplicate is left to the full check
    stage(repo, [("write", D, record("beta"))], written=True)
    assert not fast_accepts(repo)
    assert [f.problem.code for f in check_staged(open_repo(repo.path)).findings] == ["id-duplicate"]


def test_the_fast_path_judges_a_hand_written_record_alone_and_declines_what_it_cannot_judge(repo: Repo) -> None:
    commit_checked_alpha(repo)
    stage(repo, [("write", B, record("beta"))])  # written by hand: no verdict kept, check_file judges it alone
    assert fast_accepts(repo)
    stage(repo, [("write", B, record("alpha"))])  # alpha's ID again: the kept tree's IDs refuse it
    assert not fast_accepts(repo)
    assert [f.problem.code for f in check_staged(open_repo(repo.path)).findings] == ["id-duplicate"]
    stage(repo, [("write", B, record("beta", status="bogus"))])  # not a valid record
    assert not fast_accepts(repo)
    assert not check_staged(open_repo(repo.path)).ok
    stage(repo, [("write", B, record("beta", body="key AKIAABCDEFGHIJKLMNOP"))])  # a secret in its body
    assert not fast_accepts(repo)
    assert "secret" in [f.problem.code for f in check_staged(open_repo(repo.path)).findings]
    stage(repo, [("write", B, record("beta"))], written=True)
    assert fast_accepts(repo)
    # a secret-looking line in log.md, which check_file does not scan: apply keeps no verdict for
    # it, so the fast path declines and the full check reports it
    leaky = "# Memory log\n\n- key AKIAABCDEFGHIJKLMNOP\n"
    stage(repo, [("write", ".memzoi/log.md", leaky)], written=True)
    assert not read_verdicts(hook_trees(repo), [(".memzoi/log.md", blob_oid(leaky.encode()))])
    assert not fast_accepts(repo)
    assert [f.problem.code for f in check_staged(open_repo(repo.path)).findings] == ["secret"]


def test_commits_made_without_the_hook_are_judged_from_the_kept_tree_before_them(repo: Repo) -> None:
    commit_checked_alpha(repo)
    stage(repo, [("write", B, record("beta"))], written=True)
    repo.commit("beta, with --no-verify")  # no tree IDs kept for this one
    stage(repo, [("write", D, record("delta"))], written=True)
    assert fast_accepts(repo)
    assert check_staged(open_repo(repo.path)).ok
    repo.commit("delta")
    stage(repo, [("write", RECORD_PATHS[2], record("gamma"))], written=True)
    repo.commit("gamma, with --no-verify")
    # gamma edited in place on top of the commit that added it: the kept tree has no gamma, HEAD has
    stage(repo, [("write", RECORD_PATHS[2], record("gamma", body="Edited in place."))], written=True)
    assert not fast_accepts(repo)
    assert "record-edited" in [f.problem.code for f in check_staged(open_repo(repo.path)).findings]


def test_pre_push_after_fast_commits_starts_from_the_nearest_kept_tree(repo: Repo) -> None:
    from git_memzoi.hooks.run import RefUpdate, check_client_push

    stage(repo, [("write", f".memzoi/records/project/r{n:02d}.md", record(f"r{n:02d}")) for n in range(20)])
    assert check_staged(open_repo(repo.path)).ok
    base = repo.commit("twenty records")
    for rid, path in (("beta", B), ("delta", D)):
        stage(repo, [("write", path, record(rid))], written=True)
        assert fast_accepts(repo)  # keeps no summary of the tree it accepts
        repo.commit(rid)
    tip = str(repo.git.head.target)
    report = check_client_push(open_repo(repo.path), [RefUpdate("refs/heads/main", base, tip)], {base})
    assert report.ok and report.commits_checked == 2
    assert report.files_parsed == 2  # beta and delta, not the twenty records again


def test_kept_tree_ids_round_trip_and_refuse_what_does_not_fit(tmp_path: Path) -> None:
    write_tree_ids(tmp_path, "t1", "sig", ["a", "b"], ["mem_1"])
    assert read_tree_ids(tmp_path, "t1", "sig") == ({"a", "b"}, {"mem_1"})
    assert read_tree_ids(tmp_path, "t1", "other-config") is None
    write_tree_ids(tmp_path, "t2", "sig", [], ["mem_1", "mem_2"])
    assert read_tree_ids(tmp_path, "t2", "sig") == (set(), {"mem_1", "mem_2"})
    write_tree_ids(tmp_path, "t3", "sig", [], [])
    assert read_tree_ids(tmp_path, "t3", "sig") == (set(), set())
    write_tree_ids(tmp_path, "t4", "sig", ["a\nb"], [])
    assert not (tmp_path / "t4.ids").exists()  # a newline cannot be kept as a line
    kept = tmp_path / "t1.ids"
    kept.write_text(kept.read_text(encoding="utf-8")[:-3], encoding="utf-8")  # torn
    assert read_tree_ids(tmp_path, "t1", "sig") is None


def test_the_fast_path_finds_the_kept_trees_from_a_linked_worktree_and_under_git_dir(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The repository's hook-trees folder is found from a gitfile without git, and through git when GIT_DIR is set."""
    commit_checked_alpha(repo)
    where = tmp_path / "linked"
    repo.git.add_worktree("linked", str(where), repo.git.branches.local.create("linked", repo.git.head.peel()))
    linked = open_repo(where)
    assert Layout.for_repo(linked).hook_trees == hook_trees(repo)  # one store for every worktree
    text = record("beta")
    (where / B).parent.mkdir(parents=True, exist_ok=True)
    (where / B).write_text(text, encoding="utf-8")
    remember_written(hook_trees(repo), [(B, text.encode())])
    subprocess.run(["git", "add", B], cwd=where, check=True)
    monkeypatch.chdir(where)
    assert accept_staged()
    monkeypatch.setenv("GIT_DIR", str(repo.path / ".git" / "worktrees" / "linked"))
    monkeypatch.setenv("GIT_WORK_TREE", str(where))
    assert accept_staged()
    (where / B).write_text(record("alpha"), encoding="utf-8")  # alpha's ID again, judged by hand: no verdict
    subprocess.run(["git", "add", B], cwd=where, check=True)
    assert not accept_staged()
