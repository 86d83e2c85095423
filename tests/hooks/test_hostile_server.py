"""Crafted trees and refs against the server hook, through real `git push` to a bare repository.

Trees git itself would never write (two entries of one name, entries out of order, `..`), a
replacement ref over the default branch, an orphan commit with no fork point, and the same
objects through `hook check` and the pre-push hook.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest
from pygit2.enums import FileMode

from support import AUTHOR, git, memzoi_exe, run_cli
from support.hooks import Remote, make_remote, record, record_path

pytestmark = pytest.mark.slow

PROJECT = ".memzoi/records/project"


def hash_tree(cwd: Path, entries: list[tuple[str, bytes, str]]) -> str:
    """Write a tree object of exactly these (mode, name, object) entries, in this order, as git stores it."""
    raw = b"".join(mode.encode() + b" " + name + b"\x00" + bytes.fromhex(oid) for mode, name, oid in entries)
    done = subprocess.run(
        ["git", "hash-object", "-t", "tree", "--literally", "-w", "--stdin"],
        cwd=cwd,
        input=raw,
        capture_output=True,
        check=True,
    )
    return done.stdout.decode().strip()


def blob(r: Remote, text: str) -> str:
    return str(r.work.git.create_blob(text.encode()))


def entries_of(tree: pygit2.Tree) -> list[tuple[str, bytes, str]]:
    """A tree's entries as hash_tree takes them, in git's order."""
    return [(f"{e.filemode:o}", e.name.encode(), str(e.id)) for e in tree]


def commit_with_tree_at(r: Remote, path: str, tree: str, message: str = "crafted tree") -> str:
    """Commit on main the tip's root tree with the folder at `path` replaced by the tree object `tree`."""
    repo = r.work.git
    tip = repo.head.peel(pygit2.Commit)

    def rebuild(current: pygit2.Tree | None, parts: list[str]) -> pygit2.Oid:
        builder = repo.TreeBuilder(current) if current is not None else repo.TreeBuilder()
        name, rest = parts[0], parts[1:]
        if not rest:
            builder.insert(name, pygit2.Oid(hex=tree), FileMode.TREE)
        else:
            child = current[name] if current is not None and name in current else None
            below = repo[child.id] if child is not None else None
            builder.insert(name, rebuild(below, rest), FileMode.TREE)  # type: ignore[arg-type]
        return builder.write()

    root = rebuild(tip.tree, path.split("/"))
    return commit_root(r, str(root), message)


def commit_root(r: Remote, root: str, message: str = "crafted root") -> str:
    repo = r.work.git
    tip = repo.head.peel(pygit2.Commit)
    return str(repo.create_commit("refs/heads/main", AUTHOR, AUTHOR, message, pygit2.Oid(hex=root), [tip.id]))


def no_fsck(r: Remote) -> None:
    """The server as git ships it, said out loud: the hook must not lean on git's own object checks."""
    for key in ("receive.fsckObjects", "transfer.fsckObjects"):
        git("config", key, "false", cwd=r.bare)


def fresh_checkout(r: Remote, tmp_path: Path) -> Path:
    clone = tmp_path / "fresh"
    git("clone", "-q", str(r.bare), str(clone), cwd=tmp_path)
    return clone


# 1. trees git would not write ------------------------------------------------------------------


def twin_record_tree(r: Remote, edited_first: bool = False) -> tuple[str, str]:
    """records/project with use-postgres.md twice: the accepted blob and an edited one. (tree, edited text)"""
    original = str(r.work.git.head.peel(pygit2.Commit).tree[record_path("use-postgres")].id)
    text = record("use-postgres", body="Edited behind a twin entry.")
    edited = blob(r, text)
    twins = [("100644", b"use-postgres.md", original), ("100644", b"use-postgres.md", edited)]
    return hash_tree(r.work.path, twins[::-1] if edited_first else twins), text


@pytest.mark.parametrize("edited_first", [False, True])
def test_a_records_tree_with_twin_entries_is_refused(remote: Remote, edited_first: bool, tmp_path: Path) -> None:
    no_fsck(remote)
    tree, _ = twin_record_tree(remote, edited_first)
    bad = commit_with_tree_at(remote, PROJECT, tree)
    stderr = remote.rejected(
        f"remote: git memzoi: commit {bad[:12]} (crafted tree):",
        f"remote: {PROJECT}:1: malformed-tree: the tree holds two entries named 'use-postgres.md'",
    )
    assert "Traceback" not in stderr
    assert stderr.count("malformed-tree") == 1
    checked = run_cli("hook", "check", "origin/main..HEAD", expect=1)
    assert f"{PROJECT}:1: malformed-tree" in checked.stderr and bad[:12] in checked.stderr
    validated = run_cli("validate", "--rev", "HEAD", expect=1)
    assert f"{PROJECT}:1: malformed-tree: the tree holds two entries named 'use-postgres.md'" in validated.stdout


def test_without_the_hook_git_checks_out_the_twin_the_checks_did_not_see(tmp_path: Path) -> None:
    """Why the rule exists: git accepts the tree and a fresh clone gets the edited record."""
    r = make_remote(tmp_path, hook="none")
    r.accepted()
    tree, text = twin_record_tree(r)
    commit_with_tree_at(r, PROJECT, tree)
    r.accepted()
    assert (fresh_checkout(r, tmp_path) / record_path("use-postgres")).read_text() == text


@pytest.mark.parametrize(
    "names, needle",
    [
        ([b"use-redis.md", b"use-postgres.md"], "holds entry 'use-postgres.md' out of git's order"),
        ([b"use-postgres.md", b"."], "holds an entry named '.', which git never writes"),
        ([b"..", b"use-postgres.md"], "holds an entry named '..', which git never writes"),
        ([b"use-postgres.md", b"x/use-redis.md"], "holds an entry named 'x/use-redis.md', which git never writes"),
        ([b".GIT", b"use-postgres.md"], "holds an entry named '.GIT', which git never writes"),
    ],
)
def test_a_records_tree_with_a_name_git_never_writes_is_refused(
    remote: Remote, names: list[bytes], needle: str
) -> None:
    no_fsck(remote)
    original = str(remote.work.git.head.peel(pygit2.Commit).tree[record_path("use-postgres")].id)
    redis = blob(remote, record("use-redis"))
    tree = hash_tree(
        remote.work.path, [("100644", name, original if name == b"use-postgres.md" else redis) for name in names]
    )
    bad = commit_with_tree_at(remote, PROJECT, tree)
    remote.rejected(f"commit {bad[:12]}", f"{PROJECT}:1: malformed-tree: the tree {needle}")


def test_a_file_and_a_folder_of_one_name_are_twins(remote: Remote) -> None:
    no_fsck(remote)
    head = remote.work.git.head.peel(pygit2.Commit).tree
    original = str(head[record_path("use-postgres")].id)
    inner = hash_tree(remote.work.path, [("100644", b"note.md", blob(remote, record("use-redis")))])
    tree = hash_tree(remote.work.path, [("100644", b"use-postgres.md", original), ("40000", b"use-postgres.md", inner)])
    commit_with_tree_at(remote, PROJECT, tree)
    remote.rejected(f"{PROJECT}:1: malformed-tree: the tree holds two entries named 'use-postgres.md'")


def test_a_deep_twin_is_named_by_its_path(remote: Remote) -> None:
    no_fsck(remote)
    note = blob(remote, "# notes\n")
    inner = hash_tree(remote.work.path, [("100644", b"a.md", note), ("100644", b"a.md", note)])
    commit_with_tree_at(remote, f"{PROJECT}/deeper/still", inner)
    remote.rejected(f"{PROJECT}/deeper/still:1: malformed-tree: the tree holds two entries named 'a.md'")


def test_a_well_formed_tree_built_the_same_way_is_accepted(remote: Remote) -> None:
    no_fsck(remote)
    original = str(remote.work.git.head.peel(pygit2.Commit).tree[record_path("use-postgres")].id)
    tree = hash_tree(
        remote.work.path,
        [("100644", b"use-postgres.md", original), ("100644", b"use-redis.md", blob(remote, record("use-redis")))],
    )
    commit_with_tree_at(remote, PROJECT, tree)
    assert "memory OK" in remote.accepted().stderr


def root_with(r: Remote, entries: list[tuple[str, bytes, str]]) -> str:
    return hash_tree(r.work.path, entries)


def edited_memzoi(r: Remote, body: str = "Edited.") -> str:
    """A .memzoi tree like the tip's, with use-postgres edited."""
    repo = r.work.git
    tip = repo.head.peel(pygit2.Commit).tree
    project = repo.TreeBuilder(repo[tip[PROJECT].id])
    project.insert("use-postgres.md", pygit2.Oid(hex=blob(r, record("use-postgres", body=body))), FileMode.BLOB)
    records = repo.TreeBuilder(repo[tip[".memzoi/records"].id])
    records.insert("project", project.write(), FileMode.TREE)
    memzoi = repo.TreeBuilder(repo[tip[".memzoi"].id])
    memzoi.insert("records", records.write(), FileMode.TREE)
    return str(memzoi.write())


def test_a_root_tree_with_two_memzoi_entries_is_refused(remote: Remote, tmp_path: Path) -> None:
    no_fsck(remote)
    entries = entries_of(remote.work.git.head.peel(pygit2.Commit).tree)
    at = next(i for i, e in enumerate(entries) if e[1] == b".memzoi")
    entries.insert(at + 1, ("40000", b".memzoi", edited_memzoi(remote)))
    bad = commit_root(remote, root_with(remote, entries))
    needle = ".memzoi:1: malformed-tree: the root tree holds two entries named .memzoi; git checks out one unseen"
    remote.rejected(f"commit {bad[:12]}", needle)
    assert needle in run_cli("validate", "--rev", "HEAD", expect=1).stdout


def test_a_root_entry_named_into_memzoi_is_refused(remote: Remote) -> None:
    no_fsck(remote)
    entries = entries_of(remote.work.git.head.peel(pygit2.Commit).tree)
    entries.insert(0, ("100644", record_path("use-postgres").encode(), blob(remote, record("use-postgres", body="X"))))
    commit_root(remote, root_with(remote, entries))
    remote.rejected(".memzoi:1: malformed-tree: the root tree holds an entry named .memzoi/..., which git never writes")


def test_a_root_tree_hiding_memzoi_out_of_order_is_refused(remote: Remote) -> None:
    no_fsck(remote)
    entries = [e for e in entries_of(remote.work.git.head.peel(pygit2.Commit).tree) if e[1] != b".memzoi"]
    filler = blob(remote, "filler\n")
    entries += [("100644", name, filler) for name in (b"x1", b"x2", b"x3", b"x4")]
    entries.append(("40000", b".memzoi", edited_memzoi(remote)))  # last, where a binary search never looks
    commit_root(remote, root_with(remote, entries))
    remote.rejected(".memzoi:1: malformed-tree: the root tree holds .memzoi out of git's order")


def test_a_malformed_tree_already_held_is_not_read_again(tmp_path: Path) -> None:
    """Only what a push changes under .memzoi/ is examined: a code commit over an old twin passes."""
    r = make_remote(tmp_path, hook="none")
    r.accepted()
    tree, _ = twin_record_tree(r)
    commit_with_tree_at(r, PROJECT, tree)
    r.accepted()
    assert "pre-receive hook created" in run_cli("hook", "install", cwd=r.bare).stderr
    r.work.git.reset(r.work.git.head.target, pygit2.enums.ResetMode.HARD)
    r.commit({"src/app.py": "print('hi')\n"})
    r.accepted()


# 2. refs/replace/ and refs without a fork point -------------------------------------------------


def orphan_edit(r: Remote, body: str = "Edited on an orphan.") -> str:
    """A parentless commit whose tree is main's with use-postgres edited (main is left where it is)."""
    repo = r.work.git
    builder = repo.TreeBuilder(repo.head.peel(pygit2.Commit).tree)
    builder.insert(".memzoi", pygit2.Oid(hex=edited_memzoi(r, body)), FileMode.TREE)
    return str(repo.create_commit(None, AUTHOR, AUTHOR, "orphan", builder.write(), []))


def test_a_replacement_of_the_default_branch_is_refused(remote: Remote, tmp_path: Path) -> None:
    tip = str(remote.work.git.head.target)
    orphan = orphan_edit(remote)
    stderr = remote.rejected(
        f"remote: git memzoi: refs/replace/{tip} at {orphan[:12]}:",
        f"remote: refs/replace/{tip}:1: replace-ref: replacement refs make git show another object",
        args=(f"{orphan}:refs/replace/{tip}",),
    )
    assert "Traceback" not in stderr
    # the server's own view of main is unchanged
    shown = git("show", f"main:{record_path('use-postgres')}", cwd=remote.bare).stdout
    assert "Edited on an orphan" not in shown


def test_any_replacement_ref_is_refused_even_of_code(remote: Remote) -> None:
    code = remote.commit({"src/app.py": "print('hi')\n"})
    remote.rejected("replace-ref", args=(f"{code}:refs/replace/{'1' * 40}",))


def test_an_orphan_branch_is_judged_against_the_default_branch(remote: Remote) -> None:
    orphan = orphan_edit(remote)
    remote.rejected(
        f"refs/heads/orphan at {orphan[:12]}, against {str(remote.work.git.head.target)[:12]}",
        f"{record_path('use-postgres')}:24: record-edited",
        args=(f"{orphan}:refs/heads/orphan",),
    )


def test_an_orphan_branch_without_memory_is_accepted(remote: Remote) -> None:
    repo = remote.work.git
    builder = repo.TreeBuilder()
    builder.insert("index.html", pygit2.Oid(hex=blob(remote, "<p>site</p>\n")), FileMode.BLOB)
    pages = repo.create_commit(None, AUTHOR, AUTHOR, "pages", builder.write(), [])
    remote.accepted(f"{pages}:refs/heads/gh-pages")


def test_an_orphan_branch_that_keeps_memory_as_is_is_accepted(remote: Remote) -> None:
    repo = remote.work.git
    tip = repo.head.peel(pygit2.Commit)
    builder = repo.TreeBuilder(tip.tree)
    builder.insert("NOTES.md", pygit2.Oid(hex=blob(remote, "notes\n")), FileMode.BLOB)
    orphan = repo.create_commit(None, AUTHOR, AUTHOR, "orphan, memory untouched", builder.write(), [])
    remote.accepted(f"{orphan}:refs/heads/fresh-start")


def test_pre_push_refuses_a_replacement_ref(tmp_path: Path) -> None:
    r = make_remote(tmp_path, hook="none")
    r.accepted()
    run_cli("hook", "install", "--pre-push", cwd=r.work.path)
    code = r.commit({"src/app.py": "print('hi')\n"})
    target = f"refs/replace/{r.work.git.head.peel(pygit2.Commit).parents[0].id}"
    result = r.push(f"{code}:{target}")
    assert result.returncode != 0
    assert f"{target}:1: replace-ref" in result.stderr
    assert target not in r.refs()
    r.accepted()  # the same commit to main: code, accepted


# 9. hook check with no fork point, or an empty side -------------------------------------------


def test_check_range_judges_an_unrelated_tip_against_base(remote: Remote) -> None:
    orphan = orphan_edit(remote)
    result = run_cli("hook", "check", f"origin/main..{orphan}", expect=1)
    assert f"{record_path('use-postgres')}:24: record-edited" in result.stderr
    base = str(remote.work.git.references["refs/remotes/origin/main"].target)
    assert f"against {base[:12]}" in result.stderr


def test_check_range_accepts_an_unrelated_tip_that_keeps_memory(remote: Remote) -> None:
    repo = remote.work.git
    builder = repo.TreeBuilder(repo.head.peel(pygit2.Commit).tree)
    builder.insert("NOTES.md", pygit2.Oid(hex=blob(remote, "notes\n")), FileMode.BLOB)
    orphan = repo.create_commit(None, AUTHOR, AUTHOR, "orphan", builder.write(), [])
    run_cli("hook", "check", f"origin/main..{orphan}")


@pytest.mark.parametrize("spec", ["..HEAD", "origin/main..", "..", " ..HEAD"])
def test_check_range_with_an_empty_side_is_a_usage_error(remote: Remote, spec: str) -> None:
    result = run_cli("hook", "check", spec, expect=2)
    assert f"range {spec!r} has an empty side" in result.stderr


def test_check_range_with_an_unset_variable_through_the_installed_command(remote: Remote) -> None:
    done = subprocess.run(
        ["sh", "-c", 'git memzoi hook check "$BASE_SHA..HEAD"'],
        cwd=remote.work.path,
        capture_output=True,
        text=True,
        env={k: v for k, v in __import__("os").environ.items() if k != "BASE_SHA"},
    )
    assert done.returncode == 2, done.stderr
    assert "range '..HEAD' has an empty side" in done.stderr


# 6. a new ref at every commit of a chain ----------------------------------------------------------


def test_a_ref_at_every_commit_walks_the_chain_once(tmp_path: Path) -> None:
    """1,000 new refs on a code-only chain: one walk, each commit read once, through a real push."""
    r = make_remote(tmp_path)
    r.accepted()
    base = str(r.work.git.head.target)
    shas = [r.commit({"src/app.py": f"x = {n}\n"}) for n in range(1000)]
    lines = "".join(f"create refs/heads/r{n:04d} {sha}\n" for n, sha in enumerate(shas))
    git("update-ref", "--stdin", cwd=r.work.path, input=lines)
    result = r.accepted("refs/heads/*:refs/heads/*")
    assert len([k for k in r.refs() if k.startswith("refs/heads/r")]) == 1000, result.stderr
    from git_memzoi.gitrepo import open_repo
    from git_memzoi.gitrepo.history import History
    from git_memzoi.hooks.run import Gate, RefUpdate, check_push

    repo = open_repo(r.work.path)
    calls = 0
    original = History.new_commits

    def counting(self, tips, hide):  # type: ignore[no-untyped-def]
        nonlocal calls
        calls += 1
        yield from original(self, tips, hide)

    History.new_commits = counting  # type: ignore[method-assign]
    try:
        updates = [RefUpdate(f"refs/heads/r{n:04d}", "0" * 40, sha) for n, sha in enumerate(shas)]
        report = check_push(repo, updates, {base}, Gate(default_tip=base))
    finally:
        History.new_commits = original  # type: ignore[method-assign]
    assert report.ok and report.commits_walked == 1000 and calls == 1


def _server_commit(bare: pygit2.Repository, tree: pygit2.Oid, parents: list[pygit2.Oid], files: dict[str, str]) -> str:
    """A commit in the bare repository with no ref to it (what a hook sees of a push): `tree` with `files` written."""
    index = pygit2.Index()
    index.read_tree(bare[tree])
    for rel, text in files.items():
        index.add(pygit2.IndexEntry(rel, bare.create_blob(text.encode()), FileMode.BLOB))
    return str(bare.create_commit(None, AUTHOR, AUTHOR, "server side", index.write_tree(bare), parents))


def test_refs_pushed_together_are_each_judged_as_judgement_says(tmp_path: Path) -> None:
    """One push of refs of every kind: each ref judged against what `judgement` gives it alone.

    A new ref's base is found as the walk passes its tip: at every commit of a chain, at a tip
    the server already has (not walked), from an older fork point, with no history in common, with no
    .memzoi/ at all. Refs refused on their own (a replacement ref, the default branch deleted, a
    tag of a tree) are refused and judged no further.
    """
    from git_memzoi.gitrepo import open_repo
    from git_memzoi.gitrepo.history import History
    from git_memzoi.hooks.run import RefUpdate, check_server_push, judgement

    r = make_remote(tmp_path)
    r.commit({"src/app.py": "main\n"})
    r.accepted()
    bare = pygit2.Repository(str(r.bare))
    main = bare.references["refs/heads/main"].target
    before = bare[main].parent_ids[0]  # main's parent: the fork point of a branch started there
    root = bare[main].tree_id
    chain = [str(main)]
    for n in range(30):
        chain.append(
            _server_commit(bare, bare[chain[-1]].tree_id, [pygit2.Oid(hex=chain[-1])], {"src/app.py": f"{n}\n"})
        )
    new_record = {record_path("use-redis"): record("use-redis")}
    forked = _server_commit(bare, bare[before].tree_id, [before], new_record)
    orphan = _server_commit(bare, root, [], new_record)
    pages = str(bare.create_commit(None, AUTHOR, AUTHOR, "pages", bare.TreeBuilder().write(), []))
    tag = str(bare.create_tag("v1", pygit2.Oid(hex=chain[7]), pygit2.enums.ObjectType.COMMIT, AUTHOR, "release"))
    bare.references.delete("refs/tags/v1")  # the tag object alone, as a push brings it
    bare.references.create("refs/heads/topic", main)
    edited = bare[_server_commit(bare, root, [], {record_path("use-postgres"): record("use-postgres", body="Edited.")})]
    zero = "0" * 40
    updates = [RefUpdate(f"refs/heads/r{n:02d}", zero, sha) for n, sha in enumerate(chain[1:])]
    updates += [
        RefUpdate("refs/heads/at-main", zero, str(main)),
        RefUpdate("refs/heads/topic", str(main), chain[4]),
        RefUpdate("refs/heads/lost", "1" * 40, chain[12]),  # an old tip the server lacks: a new ref
        RefUpdate("refs/heads/forked", zero, forked),
        RefUpdate("refs/heads/orphan", zero, orphan),
        RefUpdate("refs/heads/pages", zero, pages),
        RefUpdate("refs/tags/v1", zero, tag),
        RefUpdate(f"refs/replace/{main}", zero, chain[3]),
        RefUpdate("refs/heads/main", str(main), zero),
        RefUpdate("refs/tags/tree", zero, str(edited.tree_id)),
    ]
    report = check_server_push(open_repo(r.bare), updates)

    history = History(open_repo(r.bare))
    refused = {"refs/heads/main", "refs/tags/tree", f"refs/replace/{main}"}
    expected = {}
    for update in updates:
        if update.ref not in refused:
            tip = history.commit_sha(update.new)
            assert tip is not None
            expected[update.ref] = (judgement(history, update, tip, str(main)).base, tip)
    assert report.refs == expected
    assert expected["refs/heads/r05"] == (str(main), chain[6])
    assert expected["refs/heads/forked"][0] == str(before)
    assert expected["refs/heads/orphan"][0] == str(main)
    assert expected["refs/heads/pages"][0] is None
    assert expected["refs/tags/v1"] == (str(main), chain[7])
    assert expected["refs/heads/topic"] == (str(main), chain[4])
    assert expected["refs/heads/at-main"] == (str(main), str(main))
    assert report.commits_walked == 30 + 3  # the chain, forked, orphan, pages: main and before are the server's
    codes = {(f.ref, f.problem.code) for f in report.findings}
    assert codes == {
        ("refs/heads/main", "default-branch-deleted"),
        ("refs/tags/tree", "tree-tag"),
        (f"refs/replace/{main}", "replace-ref"),
    }


# 10. git commit --amend over an edit that arrived without pre-commit -----------------------------


def cherry_picked_edit(tmp_path: Path, script: str = "installed") -> Remote:
    """A clone whose HEAD is an in-place record edit brought by `git cherry-pick` (which runs no pre-commit).

    script: the pre-commit hook `hook install` writes, or a bare `git-memzoi hook pre-commit` (as a
    hook manager runs it: no shell quick path, hooks.quick asks git itself).
    """
    r = make_remote(tmp_path, hook="none")  # no server hook: what refuses is the checkout's hooks
    r.accepted()
    run_cli("hook", "install", cwd=r.work.path)
    if script == "bare":
        hook = r.work.path / ".git" / "hooks" / "pre-commit"
        hook.write_text(f"#!/bin/sh\nexec '{memzoi_exe()}' hook pre-commit\n")
    side = edited_memzoi(r, "Edited on a side branch.")
    repo = r.work.git
    builder = repo.TreeBuilder(repo.head.peel(pygit2.Commit).tree)
    builder.insert(".memzoi", pygit2.Oid(hex=side), FileMode.TREE)
    edit = repo.create_commit("refs/heads/side", AUTHOR, AUTHOR, "side edit", builder.write(), [repo.head.target])
    git("cherry-pick", str(edit), cwd=r.work.path)
    return r


@pytest.mark.parametrize("script", ["installed", "bare"])
@pytest.mark.parametrize(
    "extra",
    [
        (),  # the amend keeps HEAD's .memzoi/ as it is
        ("README.md",),  # and changes code too
        (record_path("use-redis"),),  # and adds a record (what hooks.fastcommit judges alone)
    ],
)
def test_pre_commit_refuses_an_amend_of_an_in_place_edit_it_never_saw(
    tmp_path: Path, script: str, extra: tuple[str, ...]
) -> None:
    """git tells pre-commit nothing of --amend but HEAD's author date: the change is then over HEAD's parent."""
    r = cherry_picked_edit(tmp_path, script)
    cwd = r.work.path
    head = git("rev-parse", "HEAD", cwd=cwd).stdout.strip()
    for rel in extra:
        r.work.write(rel, record("use-redis") if rel.endswith(".md") and rel != "README.md" else "# changed\n")
        git("add", rel, cwd=cwd)
    amended = git("commit", "--amend", "-m", "reworded", cwd=cwd, check=False)
    assert amended.returncode == 1, amended.stderr
    assert f"{record_path('use-postgres')}:24: record-edited" in amended.stderr
    assert "Traceback" not in amended.stderr
    assert git("rev-parse", "HEAD", cwd=cwd).stdout.strip() == head  # nothing committed
    # pre-push refuses what --no-verify lets through, as before
    git("commit", "--amend", "--no-verify", "-m", "reworded", cwd=cwd)
    pushed = r.push()
    assert pushed.returncode != 0 and f"{record_path('use-postgres')}:24: record-edited" in pushed.stderr


def test_a_new_commit_on_an_unchecked_edit_is_left_to_pre_push(tmp_path: Path) -> None:
    """Not an amend (a new commit gets the time it is made): pre-commit judges its own change; pre-push the rest."""
    r = cherry_picked_edit(tmp_path)
    cwd = r.work.path
    r.work.write("README.md", "# changed\n")
    git("add", "README.md", cwd=cwd)
    git("commit", "-m", "code", cwd=cwd)
    pushed = r.push()
    assert pushed.returncode != 0 and f"{record_path('use-postgres')}:24: record-edited" in pushed.stderr


def test_an_amend_of_an_honest_commit_is_pushed(tmp_path: Path) -> None:
    r = make_remote(tmp_path, hook="none")
    r.accepted()
    run_cli("hook", "install", cwd=r.work.path)
    r.work.write(record_path("use-redis"), record("use-redis"))
    git("add", record_path("use-redis"), cwd=r.work.path)
    git("commit", "-m", "add a record", cwd=r.work.path)
    git("commit", "--amend", "-m", "add the redis record", cwd=r.work.path)
    assert "memory OK" in r.accepted().stderr


def test_a_twin_under_a_zero_padded_tree_mode_is_found(remote: Remote) -> None:
    """git and libgit2 read mode 040000 as a tree: the walk must descend into it too."""
    no_fsck(remote)
    original = str(remote.work.git.head.peel(pygit2.Commit).tree[record_path("use-postgres")].id)
    note = blob(remote, "# notes\n")
    twins = hash_tree(remote.work.path, [("100644", b"a.md", note), ("100644", b"a.md", note)])
    tree = hash_tree(remote.work.path, [("100644", b"use-postgres.md", original), ("040000", b"zz", twins)])
    commit_with_tree_at(remote, PROJECT, tree)
    remote.rejected(f"{PROJECT}/zz:1: malformed-tree: the tree holds two entries named 'a.md'")
