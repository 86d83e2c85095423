"""pre-commit validates the staged tree as a delta of HEAD's kept tree, and reports what a full validate does."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import cast

import pygit2
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from git_memzoi.gitrepo import open_repo
from git_memzoi.hooks.fastcommit import accept_staged
from git_memzoi.hooks.run import CheckReport, check_staged
from git_memzoi.hooks.treecache import DELTA_FORMAT, FORMAT
from git_memzoi.hooks.verdicts import blob_oid, read_tree_ids, read_verdicts, remember_written, write_tree_ids
from git_memzoi.profile.tree import SourceFile, validate_tree
from git_memzoi.runtime.home import Layout
from support import Repo, git, make_repo
from support.hooks import packet, record

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


@pytest.mark.slow
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
    # the duplicate, and r12: dup.md comes first in path order, so the problem is r12's, and its
    # line is read from r12 parsed again (the kept facts hold no lines); new.md is not parsed
    # again: its one-file tree was kept as a delta of the thirty, with new.md's facts
    assert third.files_parsed == 2


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
    kept = list(Layout.for_repo(open_repo(repo.path)).hook_trees.glob("*.tree"))
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


# ranges: hook check (and pre-receive) on histories with branches, merges and deletions ----------

#: one step of a history: write or delete a file on main or on the side branch, merge the side
#: branch into main, or start the side branch again from main
history_step = st.one_of(
    st.tuples(st.just("write"), st.sampled_from(["main", "side"]), st.sampled_from(RECORD_PATHS), record_text),
    st.tuples(st.just("write"), st.sampled_from(["main", "side"]), st.sampled_from(PACKET_PATHS), packet_text),
    st.tuples(
        st.just("write"), st.sampled_from(["main", "side"]), st.sampled_from(RECORD_PATHS), st.just("not: [a record\n")
    ),
    st.tuples(
        st.just("delete"), st.sampled_from(["main", "side"]), st.sampled_from(RECORD_PATHS + PACKET_PATHS), st.just("")
    ),
    st.tuples(st.just("merge"), st.just("main"), st.just(""), st.just("")),
    st.tuples(st.just("branch"), st.just("side"), st.just(""), st.just("")),
)
SIG = pygit2.Signature("Test", "test@example.com", 1767225600, 0)


def commit_files(git: pygit2.Repository, files: dict[str, str], parents: list[str]) -> str:
    """A commit holding exactly `files` (path: text), on `parents`, made from an in-memory index."""
    index = pygit2.Index()
    for path, text in files.items():
        index.add(pygit2.IndexEntry(path, git.create_blob(text.encode()), pygit2.enums.FileMode.BLOB))
    tree = index.write_tree(git)
    return str(git.create_commit(None, SIG, SIG, "step", tree, [pygit2.Oid(hex=p) for p in parents]))


def replay(git: pygit2.Repository, start: dict[str, str], steps: list[tuple[str, str, str, str]]) -> tuple[str, str]:
    """Commit `start`, then each step on its branch; returns (the first commit, main's last)."""
    base = commit_files(git, start, [])
    tips = {"main": (base, dict(start)), "side": (base, dict(start))}
    for action, branch, path, text in steps:
        sha, files = tips[branch]
        files = dict(files)
        if action == "write":
            files[path] = text
        elif action == "delete":
            files.pop(path, None)
        elif action == "branch":
            tips["side"] = tips["main"]
            continue
        parents = [sha]
        if action == "merge":  # main's files, then every file the side branch holds
            files.update(tips["side"][1])
            parents.append(tips["side"][0])
        tips[branch] = (commit_files(git, files, parents), files)
    return base, tips["main"][0]


def validation_of(git: pygit2.Repository, sha: str) -> set[str]:
    """`validate --rev SHA`'s errors, from scratch, with the hook's own change rules left out."""
    files = []
    tree = cast(pygit2.Commit, git[sha]).tree

    def walk(folder: pygit2.Tree, prefix: str) -> None:
        for entry in folder:
            path = f"{prefix}/{entry.name}" if prefix else entry.name
            if isinstance(entry, pygit2.Tree):
                walk(entry, path)
            elif path.startswith(".memzoi/"):
                blob = cast(pygit2.Blob, entry)
                files.append(SourceFile(path, lambda b=blob: b.data))

    walk(tree, "")
    report = validate_tree(sorted(files, key=lambda f: f.path), "committed")
    return {str(p) for p in report.errors if p.code not in CHANGE_RULES}


def expected_range_findings(git: pygit2.Repository, base: str, tip: str) -> set[str]:
    """What a full validation of every commit the range brings that changes .memzoi/ finds (and of the tip)."""
    found: set[str] = set()
    for sha in git_lines(Path(git.path), "rev-list", f"{base}..{tip}"):
        commit = cast(pygit2.Commit, git[sha])
        memzoi = commit.tree[".memzoi"].id if ".memzoi" in commit.tree else None
        parent = commit.parents[0].tree if commit.parents else None
        if parent is None or memzoi != (parent[".memzoi"].id if ".memzoi" in parent else None):
            found |= validation_of(git, sha)
    return found


def range_findings(path: Path, spec: str) -> set[str]:
    from git_memzoi.hooks.run import check_range

    report = check_range(open_repo(path), spec)
    return {str(f.problem) for f in report.findings if f.problem.code not in CHANGE_RULES and f.ref is None}


def damage_kept_trees(folder: Path, how: str, trees: list[str]) -> None:
    """Alter the kept tree summaries and deltas so that, read as they are, they would say something else.

    "edit": an ID in a body or a summary's database becomes another (still readable, another
    verdict); "swap": a kept file is also stored under the name of every other tree of the history;
    "version": one of another validator; "truncate": one cut short. Deltas alone: "rebase": each
    names another summary as its base, with that base's checksum (a delta of the wrong tree,
    consistent in itself); "rows": each one's rows name other blobs holding other IDs (digest
    recomputed: rows that do not match its tree);
    "unbase": every summary deleted (each delta's base pruned).
    """
    if how in ("rebase", "rows", "unbase"):
        damage_deltas(folder, how)
        return
    kept = sorted(folder.glob("*.tree"))
    for path in kept:
        raw = path.read_bytes()
        head, _, body = raw.partition(b"\n")
        if how == "edit":
            for old, new in ((b'"alpha"', b'"gamma"'), (b'"beta"', b'"alpha"'), (b'"mem_1"', b'"mem_2"')):
                body = body.replace(old, new)
            path.write_bytes(head + b"\n" + body.replace(b'"records/', b'"records/x'))
            damage_database(path.with_suffix(".db"), how)
        elif how == "swap":
            for tree in trees:
                if tree != path.stem:
                    (folder / f"{tree}.tree").write_bytes(raw)
                    if path.with_suffix(".db").exists():
                        shutil.copyfile(path.with_suffix(".db"), folder / f"{tree}.db")
        elif how == "version":
            path.write_bytes(head.replace(b'"memzoi-tree-state', b'"memzoi-tree-state-old') + b"\n" + body)
        elif how == "truncate":
            path.write_bytes(raw[: len(raw) // 2])
            damage_database(path.with_suffix(".db"), how)


def damage_database(database: Path, how: str) -> None:
    """A summary's database with its IDs swapped in place (SQLite reads it as well as before), or cut short."""
    if not database.exists():
        return
    data = database.read_bytes()
    if how == "truncate":
        database.write_bytes(data[:4096])
        return
    for old, new in ((b"alpha", b"gamma"), (b"beta", b"zeta"), (b"mem_1", b"mem_2")):
        data = data.replace(old, new)
    database.write_bytes(data)


def damage_deltas(folder: Path, how: str) -> None:
    kept = {path: path.read_bytes().partition(b"\n") for path in sorted(folder.glob("*.tree"))}
    headers = {path: json.loads(head) for path, (head, _, _) in kept.items()}
    summaries = [path for path, header in headers.items() if header[0] == FORMAT]
    deltas = [path for path, header in headers.items() if header[0] == DELTA_FORMAT]
    for n, path in enumerate(deltas):
        header, body = headers[path], kept[path][2]
        if how == "unbase":
            for summary in summaries:
                summary.unlink(missing_ok=True)
            return
        if how == "rebase":
            others = [s for s in summaries if s.stem != header[3]]
            if not others:
                continue
            header[3:5] = [others[n % len(others)].stem, headers[others[n % len(others)]][3]]  # its checksum
        else:  # its rows name other blobs, holding other IDs
            data = json.loads(body)
            data["oids"] = ["0" * 40 if oid else oid for oid in data["oids"]]
            body = json.dumps(data).encode()
            for old, new in ((b'"alpha"', b'"gamma"'), (b'"beta"', b'"alpha"'), (b'"mem_1"', b'"mem_2"')):
                body = body.replace(old, new)
            header[-1] = hashlib.sha256(body).hexdigest()
        path.write_bytes(json.dumps(header).encode() + b"\n" + body)


def kept_deltas(folder: Path) -> int:
    """How many of the kept trees are deltas."""
    return sum(json.loads(path.read_bytes().partition(b"\n")[0])[0] == DELTA_FORMAT for path in folder.glob("*.tree"))


def memzoi_trees(git: pygit2.Repository, tip: str) -> list[str]:
    trees = []
    for sha in git_lines(Path(git.path), "rev-list", tip):
        tree = cast(pygit2.Commit, git[sha]).tree
        if ".memzoi" in tree:
            trees.append(str(tree[".memzoi"].id))
    return trees


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    start=st.lists(st.tuples(st.sampled_from(RECORD_PATHS), record_text), max_size=3),
    steps=st.lists(history_step, min_size=1, max_size=10),
)
@example(
    start=[],
    steps=[
        ("write", "main", A, record("alpha")),
        ("write", "main", B, record("alpha")),
        ("write", "side", D, record("beta")),
        ("merge", "main", "", ""),
        ("delete", "main", B, ""),
    ],
)
@example(  # a kept start: each later commit's tree is kept as a delta of a summary
    start=[(A, record("alpha"))],
    steps=[
        ("write", "main", B, record("beta")),
        ("write", "side", D, record("beta")),
        ("write", "main", RECORD_PATHS[2], record("gamma", extra="supersedes: alpha\n")),
        ("merge", "main", "", ""),
        ("delete", "main", A, ""),
        ("write", "main", APPLIED_1, packet("mem_1", status="applied", affected="gamma")),
    ],
)
def test_hook_check_of_a_range_equals_full_validation_of_its_commits_whatever_the_cache_holds(
    start: list[tuple[str, str]], steps: list[tuple[str, str, str, str]]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "project"
        git = pygit2.init_repository(str(path), initial_head="main")
        base, tip = replay(git, {"README.md": "# project\n", **dict(start)}, steps)
        git.references.create("refs/heads/main", tip, force=True)
        expected = expected_range_findings(git, base, tip)
        event(f"validation finds {'something' if expected else 'nothing'}")
        event(f"{'with' if any(s[0] == 'merge' for s in steps) else 'without'} a merge")
        spec = f"{base}..{tip}"
        # each commit on its own too (a push of one commit): for a commit that is no merge, exactly
        # what validate --rev finds in it; where the range brings several commits, the union
        commits = git_lines(path, "rev-list", "--reverse", "--topo-order", spec)
        each = {sha: expected_range_findings(git, f"{sha}^", sha) for sha in commits}

        def checked(where: Path) -> tuple[set[str], dict[str, set[str]]]:
            return range_findings(where, spec), {sha: range_findings(where, f"{sha}^..{sha}") for sha in commits}

        assert checked(path) == (expected, each)  # nothing kept at first: trees from scratch, then kept
        kept = Layout.for_repo(open_repo(path)).hook_trees
        assert checked(path) == (expected, each)  # from the trees kept (the last checks' tips as deltas)
        event(f"{'with' if kept_deltas(kept) else 'without'} deltas kept")
        pristine = Path(folder) / "pristine"
        kept.mkdir(parents=True, exist_ok=True)  # a history with no .memzoi/ keeps nothing
        shutil.copytree(kept, pristine)
        for damage in ("edit", "swap", "version", "truncate", "rebase", "rows", "unbase"):
            shutil.rmtree(kept)
            shutil.copytree(pristine, kept)
            damage_kept_trees(kept, damage, memzoi_trees(git, tip))
            assert checked(path) == (expected, each), damage  # a damaged cache is ignored, or cannot mislead
        # the same trees kept by another clone (another repository key): the key names the content
        other = Path(folder) / "clone"
        subprocess.run(["git", "clone", "-q", "--no-local", str(path), str(other)], check=True)
        for one in kept.glob("*.json"):
            one.unlink()
        assert checked(other) == (expected, each)
        theirs = Layout.for_repo(open_repo(other)).hook_trees
        kept.mkdir(parents=True, exist_ok=True)
        for one in theirs.glob("*.json"):
            (kept / one.name).write_bytes(one.read_bytes())
        assert checked(path) == (expected, each)


def git_lines(path: Path, *args: str) -> list[str]:
    return subprocess.run(["git", *args], cwd=path, capture_output=True, text=True, check=True).stdout.split()


def test_a_range_starts_from_a_kept_tree_that_is_no_ancestor(repo: Repo) -> None:
    """After a squash merge, the kept tree of the pull request's tip is the nearest by content."""
    from git_memzoi.hooks.run import check_range

    for n in range(40):
        repo.write(f".memzoi/records/project/r{n:02d}.md", record(f"r{n:02d}"))
    base = repo.commit("forty records")
    repo.write(".memzoi/records/project/side.md", record("side"))
    side = repo.commit("on a branch")
    first = check_range(open_repo(repo.path), f"{base}..{side}")
    assert first.ok and first.files_parsed >= 41  # nothing kept: the whole tree once, then kept
    # a squash of the same change onto base: a new commit whose tree is side's, and one more on top
    squash = commit_files(repo.git, _files_of(repo.git, side), [base])
    repo.git.references.create("refs/heads/main", squash, force=True)
    repo.git.checkout("refs/heads/main", strategy=pygit2.enums.CheckoutStrategy.FORCE)
    repo.write(".memzoi/records/project/next.md", record("next"))
    tip = repo.commit("next")
    second = check_range(open_repo(repo.path), f"{squash}..{tip}")
    assert second.ok and second.files_parsed == 1  # next.md alone


def _files_of(git: pygit2.Repository, sha: str) -> dict[str, str]:
    files: dict[str, str] = {}

    def walk(folder: pygit2.Tree, prefix: str) -> None:
        for entry in folder:
            path = f"{prefix}/{entry.name}" if prefix else entry.name
            if isinstance(entry, pygit2.Tree):
                walk(entry, path)
            else:
                files[path] = cast(pygit2.Blob, entry).data.decode()

    walk(cast(pygit2.Commit, git[sha]).tree, "")
    return files


def _kept_then_one_record(repo: Repo, records: int) -> tuple[str, str]:
    """A commit of `records` records whose tree `hook install` keeps, then one adding a record: (base, tip)."""
    from git_memzoi.hooks.run import keep_tree

    for n in range(records):
        repo.write(f".memzoi/records/project/r{n:02d}.md", record(f"r{n:02d}"))
    base = repo.commit(f"{records} records")
    kept = keep_tree(open_repo(repo.path), "HEAD")
    files = git("ls-tree", "-r", "--name-only", "HEAD", ".memzoi", cwd=repo.path).stdout.split()
    assert kept is not None and kept.kept and kept.files == len(files)
    repo.write(".memzoi/records/project/new.md", record("new"))
    return base, repo.commit("one record")


def test_hook_install_keeps_heads_tree_so_the_first_check_costs_its_change(repo: Repo) -> None:
    from git_memzoi.hooks.run import check_range

    base, tip = _kept_then_one_record(repo, 30)
    report = check_range(open_repo(repo.path), f"{base}..{tip}")
    assert report.ok and report.files_parsed == 1
    staged = staged_check(repo, {"dup.md": record("r03")})
    assert [f.problem.code for f in staged.findings] == ["id-duplicate"]
