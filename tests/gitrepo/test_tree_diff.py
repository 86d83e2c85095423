"""History.changes descends only into the subtrees that differ, and gives what libgit2's whole-tree diff gives."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, cast

import pygit2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pygit2.enums import FileMode

from git_memzoi.gitrepo import open_repo
from git_memzoi.gitrepo.history import _DIFF_FLAGS, History, _changes, _deltas_of

#: Names chosen so that files and folders collide and sort around "/": "a" < "a-b" < "a.b" < "a/…" < "b".
NAMES = st.sampled_from(["a", "a-b", "a.b", "b", "c.md"])
#: (mode, content): a blob, an executable blob, a symlink, a gitlink (content: the commit it names).
LEAF = st.tuples(
    st.sampled_from([FileMode.BLOB, FileMode.BLOB_EXECUTABLE, FileMode.LINK, FileMode.COMMIT]),
    st.sampled_from(["one", "two", "three"]),
)
TREE = st.recursive(
    LEAF, lambda children: st.dictionaries(NAMES, children, min_size=1, max_size=4), max_leaves=12
).filter(lambda t: isinstance(t, dict))


def _build(repo: pygit2.Repository, spec: dict[str, Any]) -> pygit2.Oid:
    builder = repo.TreeBuilder()
    for name, value in spec.items():
        if isinstance(value, dict):
            builder.insert(name, _build(repo, value), FileMode.TREE)
            continue
        mode, content = value
        # a gitlink names a commit that need not be in this repository
        oid = pygit2.hash(content.encode()) if mode == FileMode.COMMIT else repo.create_blob(content.encode())
        builder.insert(name, oid, mode)
    return builder.write()


def _libgit2(history: History, old: str, new: str) -> tuple[list[Any], tuple[str, ...]]:
    """The former code: libgit2's diff of the two whole trees."""
    old_tree = cast(pygit2.Tree, history.git[old])
    return _changes(_deltas_of(old_tree.diff_to_tree(cast(pygit2.Tree, history.git[new]), flags=_DIFF_FLAGS), ""))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(before=TREE, after=TREE, shared=TREE)
def test_changes_equal_libgit2s_whole_tree_diff(
    before: dict[str, Any], after: dict[str, Any], shared: dict[str, Any]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        git = pygit2.init_repository(str(Path(tmp) / "r"), bare=True)
        # a folder both trees share whole, and one each side has its own way
        old = str(_build(git, {"shared": shared, "mine": before, "x.md": (FileMode.BLOB, "one")}))
        new = str(_build(git, {"shared": shared, "mine": after, "x.md": (FileMode.BLOB, "two")}))
        history = History(open_repo(Path(tmp) / "r"))
        got = history.changes(old, new), history.gitlinks(old, new)
        assert got == _libgit2(history, old, new)
        # either way round, and from and to nothing, as before
        assert (History(open_repo(Path(tmp) / "r")).changes(new, old), history.gitlinks(new, old)) == _libgit2(
            history, new, old
        )
        assert [c.status for c in history.changes(None, new)] == ["A"] * len(history.changes(None, new))


def test_a_one_file_change_reads_only_the_folders_on_its_path(tmp_path: Path) -> None:
    """The folders the two trees share are never listed: only the changed file's own folders are."""
    git = pygit2.init_repository(str(tmp_path / "r"), bare=True)
    many = {f"f{n:03d}": {f"r{m:03d}.md": (FileMode.BLOB, "one") for m in range(50)} for n in range(40)}
    old = str(_build(git, many))
    changed = dict(many)
    changed["f007"] = {**many["f007"], "new.md": (FileMode.BLOB, "two")}
    new = str(_build(git, changed))
    history = History(open_repo(tmp_path / "r"))
    listed: list[str] = []
    real = History._tree

    def counting(self: History, oid: str) -> pygit2.Tree:
        listed.append(oid)
        return real(self, oid)

    History._tree = counting  # type: ignore[method-assign]
    try:
        changes = history.changes(old, new)
    finally:
        History._tree = real  # type: ignore[method-assign]
    assert [(c.status, c.path) for c in changes] == [("A", ".memzoi/f007/new.md")]
    assert len(listed) == 4  # the two roots and the two versions of f007, not the 39 shared folders
