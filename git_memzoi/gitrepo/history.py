"""History for the hooks: the commits a push brings, .memzoi/ tree diffs, staged trees, added lines."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NamedTuple, cast

import pygit2
from pygit2.enums import DeltaStatus, DiffOption, FileMode, ObjectType, SortMode

from git_memzoi.errors import MemzoiError, UsageError
from git_memzoi.gitrepo import promised
from git_memzoi.gitrepo.repo import GitRepo
from git_memzoi.gitrepo.treeshape import ROOT_FAULTS, ROOT_MEMZOI, TreeEntry, entry_fault, malformed, parse_tree, show
from git_memzoi.layout import MAX_FILE_BYTES, MEMZOI_DIR, REPO_CONFIG
from git_memzoi.profile.folding import folds_to_memzoi

ChangeStatus = Literal["A", "D", "M", "T"]
_STATUS: dict[int, ChangeStatus] = {
    DeltaStatus.ADDED: "A",
    DeltaStatus.DELETED: "D",
    DeltaStatus.MODIFIED: "M",
    DeltaStatus.TYPECHANGE: "T",
}
_DIFF_FLAGS = DiffOption.INCLUDE_TYPECHANGE | DiffOption.SKIP_BINARY_CHECK


def is_zero(sha: str) -> bool:
    """True for git's all-zero object name (a created or deleted ref), SHA-1 or SHA-256."""
    return bool(sha) and not sha.strip("0")  # strip, not set(): a push of many refs asks once per ref


def touches_memzoi(memzoi: str | None, parent_memzoi: tuple[str | None, ...]) -> bool:
    """Whether a commit with subtree `memzoi` over parents with `parent_memzoi` changes .memzoi/.

    A merge is compared with its first parent only: taking the other side's .memzoi/ whole can
    still drop what the first parent added since the fork, so it gets checked file by file.
    """
    if not parent_memzoi:
        return memzoi is not None
    return memzoi != parent_memzoi[0]


class PushedCommit(NamedTuple):
    """A commit a push brings, with its .memzoi/ subtree OID and its parents' (None: no .memzoi/).

    A named tuple, not a frozen dataclass: a push of a long chain makes one per commit.
    """

    sha: str
    memzoi: str | None
    parents: tuple[str, ...]
    parent_memzoi: tuple[str | None, ...]

    @property
    def touches_memzoi(self) -> bool:
        """False when .memzoi/ is identical to the first parent's (or absent in both)."""
        return touches_memzoi(self.memzoi, self.parent_memzoi)


@dataclass(frozen=True)
class TreeChange:
    """One file that differs between two .memzoi/ trees, with repository-root paths."""

    status: ChangeStatus
    path: str
    old_oid: str | None
    new_oid: str | None
    old_symlink: bool = False
    new_symlink: bool = False


class FileEntry(NamedTuple):
    """A file in a .memzoi/ tree: blob OID and whether git stores it as a symlink (a tuple: a tree's worth is cheap)."""

    oid: str
    is_symlink: bool


class History:
    """Read-only access to commits, trees and blobs of one repository, with small caches."""

    def __init__(self, repo: GitRepo) -> None:
        self.repo = repo
        self.git = repo.pygit
        self._memzoi_of: dict[str, str | None] = {}
        self._odd: dict[str, str] = {}
        self._twins: dict[str, tuple[str, ...]] = {}
        #: per root tree: (.memzoi/ subtree OID, odd kind, folded twins)
        self._roots: dict[bytes, tuple[str | None, str | None, tuple[str, ...]]] = {}
        #: per root entry name: what it is to the hooks (see _name_kind)
        self._names: dict[bytes, int] = {}
        self._gitlinks: dict[tuple[str | None, str | None], tuple[str, ...]] = {}
        self._changes: dict[tuple[str | None, str | None], list[TreeChange]] = {}
        self._sound_trees: set[str] = set()

    # refs and commits ---------------------------------------------------------
    def summary(self, sha: str) -> str:
        """The first line of commit `sha`'s message, as a report names the commit (read when asked:
        most commits of a push are never named)."""
        return _summary(cast(pygit2.Commit, self.git[sha]))

    def commit_sha(self, rev: str) -> str | None:
        """The commit an object name or ref peels to, or None when it names no commit (a tree or blob tag)."""
        if len(rev) in (40, 64):
            # a full object name, as hooks read them: one lookup, no rev parsing (a push of
            # many refs asks once per ref)
            try:
                found = self.git.get(rev)
            except ValueError:
                found = None
            if found is not None and found.type == _COMMIT:
                return str(found.id)
        try:
            obj = self.git.revparse_single(rev)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
            raise UsageError(f"unknown object {rev!r}: it is not in this repository") from None
        try:
            return str(obj.peel(pygit2.Commit).id)
        except (pygit2.GitError, pygit2.InvalidSpecError, ValueError):
            return None

    def has_object(self, sha: str) -> bool:
        """True when the object database holds `sha`."""
        try:
            return pygit2.Oid(hex=sha) in self.git.odb
        except ValueError:
            return False

    def ref_commits(self, prefixes: Iterable[str] = ("refs/",)) -> set[str]:
        """The commits every ref under `prefixes` points at (peeling tags; skipping refs to non-commits)."""
        out: set[str] = set()
        wanted = tuple(prefixes)
        for name in self.git.references:
            if not name.startswith(wanted):
                continue
            try:
                out.add(str(self.git.references[name].peel(pygit2.Commit).id))
            except (pygit2.GitError, pygit2.InvalidSpecError, ValueError, KeyError):
                continue
        return out

    def memzoi_of(self, sha: str) -> str | None:
        """The .memzoi/ subtree OID of commit `sha` (cached); None when absent or not a directory."""
        try:
            return self._memzoi_of[sha]  # asked several times for each commit of a push: one lookup
        except KeyError:
            memzoi = self._memzoi_of[sha] = self._root_memzoi(sha, cast(pygit2.Commit, self.git[sha]))
            return memzoi

    def first_parent(self, sha: str) -> str | None:
        """The first parent of commit `sha`, or None for a root commit."""
        parents = cast(pygit2.Commit, self.git[sha]).parent_ids
        return str(parents[0]) if parents else None

    def odd_memzoi(self, sha: str) -> str | None:
        """What `.memzoi` is in commit `sha` when it is there but not a directory: symlink, gitlink or file."""
        if sha not in self._memzoi_of:
            self.memzoi_of(sha)
        return self._odd.get(sha)

    def _root_memzoi(self, sha: str, commit: pygit2.Commit) -> str | None:
        """The .memzoi/ subtree OID of a commit, None (and an odd kind) when git would check out another."""
        key = commit.tree_id.raw
        root = self._roots.get(key)
        if root is None:
            root = self._roots[key] = self._root(commit)
        memzoi, odd, twins = root
        if odd is not None:
            self._odd[sha] = odd
        if twins:
            self._twins[sha] = twins
        return memzoi

    def _root(self, commit: pygit2.Commit) -> tuple[str | None, str | None, tuple[str, ...]]:
        """(.memzoi/ subtree OID, odd kind, twins) of a commit's root tree, from its entries' names.

        The tree object libgit2 parsed (and keeps) is read, not the raw object: its entries come
        in the order stored, duplicates and all. Each name is classified once per History (the
        kinds of a root's names are read in one pass, then counted: most name nothing). The raw
        tree is searched (_root_fault) only when a `.memzoi` entry is there but not as the one
        entry libgit2's lookup finds.
        """
        try:
            tree = commit.tree
            names = [entry.raw_name or b"" for entry in tree]
        except pygit2.GitError:
            return None, self._root_fault(commit), ()  # libgit2 cannot parse the root: nothing in it is read
        kinds = list(map(self._names.get, names))
        if None in kinds:  # a name not seen yet in this push
            kinds = [self._kind_of(name) for name in names]
        memzoi, under = kinds.count(_MEMZOI), kinds.count(_UNDER)
        twins = _twins(names, kinds) if _TWIN in kinds else ()
        entry = None
        if memzoi:
            try:
                entry = tree[MEMZOI_DIR]
            except KeyError:
                pass
        if (memzoi or under) and not (memzoi == 1 and not under and entry is not None):
            fault = self._root_fault(commit)
            if fault is not None:
                return None, fault, ()
        if entry is not None and entry.type == _TREE:  # most roots: a .memzoi/ folder, no twin
            return str(entry.id), None, twins
        return (*_memzoi_entry(entry), twins)

    def _kind_of(self, name: bytes) -> int:
        """What a root entry's name is to the hooks (see _name_kind), classified once per History."""
        kind = self._names.get(name)
        if kind is None:
            kind = self._names[name] = _name_kind(name)
        return kind

    def _root_fault(self, commit: pygit2.Commit) -> str | None:
        """Why the root tree's .memzoi entry is not the one libgit2 finds: duplicate, invalid-name, unsorted.

        The raw tree is searched for the name first; it is parsed whole only when the name is there
        more than once, under a longer name, or where libgit2's lookup does not find it.
        """
        raw = self.git.odb.read(commit.tree_id)[1]
        hits = ROOT_MEMZOI.findall(raw)
        if not hits:
            return None
        try:
            seen: bytes | None = commit.tree[MEMZOI_DIR].id.raw
        except KeyError:
            seen = None
        except pygit2.GitError:
            return "unreadable"  # libgit2 cannot parse the root: .memzoi cannot be read as git checks it out
        if hits == [f" {MEMZOI_DIR}\x00".encode()] and seen is not None:
            return None  # the one .memzoi entry, and libgit2 finds it
        try:
            entries = parse_tree(raw, len(commit.tree_id.raw))
        except ValueError:
            return "unreadable"
        named = [e for e in entries if e.name == MEMZOI_DIR.encode() or e.name.startswith(f"{MEMZOI_DIR}/".encode())]
        if any(e.name != MEMZOI_DIR.encode() for e in named):
            return "invalid-name"
        if len(named) > 1:
            return "duplicate"
        if named and named[0].oid != seen:
            return "unsorted"
        return None

    def shape_fault(self, sha: str) -> tuple[str, str] | None:
        """(path, message) when commit `sha`'s .memzoi/ is not what git checks out (validate --rev), else None.

        Its root tree's .memzoi entry first, then every tree under it, read whole.
        """
        memzoi = self.memzoi_of(sha)
        kind = self._odd.get(sha)
        if kind in ROOT_FAULTS:
            return MEMZOI_DIR, ROOT_FAULTS[kind]
        fault = self.tree_fault(memzoi, None)
        return (fault[0], malformed(fault[1])) if fault is not None else None

    def tree_fault(self, new: str | None, old: str | None) -> tuple[str, str] | None:
        """The first tree under .memzoi/ subtree `new` that git would not have written: (path, why), or None.

        Trees are read raw (see treeshape). A subtree equal to the one `old` (the first parent's
        .memzoi/, already accepted) holds at the same path is not read again, nor is one this
        History found sound before: only what a push changes under .memzoi/ is examined.
        """
        if new is None:
            return None
        size = len(pygit2.Oid(hex=new).raw)
        nodes: list[tuple[int, str]] = [(-1, MEMZOI_DIR)]
        stack: list[tuple[str, str | None, int]] = [(new, old, 0)]
        added: list[str] = []
        while stack:
            oid, before, node = stack.pop()
            if oid == before or oid in self._sound_trees:
                continue
            entries, fault = self._raw_tree(oid, size)
            if fault is not None:
                # a tree is sound only with all it holds: undo what this walk vouched for
                self._sound_trees.difference_update(added)
                return _node_path(nodes, node), fault
            self._sound_trees.add(oid)
            added.append(oid)
            subtrees = [e for e in entries if e.is_tree]
            if not subtrees:
                continue
            previous = self._subtree_ids(before, size) if before is not None else {}
            for entry in subtrees:
                nodes.append((node, show(entry.name)))
                stack.append((entry.oid.hex(), previous.get(entry.name), len(nodes) - 1))
        return None

    def _raw_tree(self, oid: str, size: int) -> tuple[list[TreeEntry], str | None]:
        try:
            kind, raw = self.git.odb.read(oid)
        except (KeyError, ValueError, pygit2.GitError):
            return [], "is missing from the object database"
        if kind != ObjectType.TREE:
            return [], "is not a tree object"
        try:
            entries = parse_tree(raw, size)
        except ValueError as exc:
            return [], f"is not a well-formed tree object ({exc})"
        return entries, entry_fault(entries)

    def _subtree_ids(self, oid: str, size: int) -> dict[bytes, str]:
        """The subtrees of an accepted tree by name (empty when it cannot be read: everything is examined)."""
        entries, fault = self._raw_tree(oid, size)
        return {} if fault is not None else {e.name: e.oid.hex() for e in entries if e.is_tree}

    def plain_root(self, sha: str) -> bool:
        """True when commit `sha`'s root holds `.memzoi` as git checks it out (or not at all): no
        odd kind, no twins (one question for the walk's every commit, after `memzoi_of`)."""
        if sha not in self._memzoi_of:
            self.memzoi_of(sha)
        return sha not in self._odd and sha not in self._twins

    def memzoi_twins(self, sha: str) -> tuple[str, ...]:
        """Root entries of commit `sha` (or "index") that macOS or Windows would check out as `.memzoi`."""
        if sha != "index" and sha not in self._memzoi_of:
            self.memzoi_of(sha)
        return self._twins.get(sha, ())

    def _subtree(self, sha: str, tree: pygit2.Tree) -> str | None:
        """The .memzoi/ subtree OID of a root tree (noting its twins and odd kind under `sha`)."""
        twins = tuple(
            name.decode("utf-8", "surrogateescape")
            for name in (entry.raw_name or b"" for entry in tree)
            if _name_kind(name) == _TWIN
        )
        if twins:
            self._twins[sha] = twins
        try:
            entry = tree[MEMZOI_DIR]
        except KeyError:
            return None
        memzoi, odd = _memzoi_entry(entry)
        if odd is not None:
            self._odd[sha] = odd
        return memzoi

    def new_commits(self, tips: Iterable[str], hide: Iterable[str]) -> Iterator[PushedCommit]:
        """Commits reachable from `tips` but from none of `hide`, parents before children."""
        tips = [t for t in tips if t]
        if not tips:
            return
        walker = self.git.walk(None, SortMode.TOPOLOGICAL | SortMode.REVERSE)
        for tip in tips:
            walker.push(tip)  # a full object name as it is: no Oid made for each of many tips
        for sha in hide:
            walker.hide(sha)
        known = self._memzoi_of
        for commit in walker:
            sha = str(commit.id)
            if sha in known:
                memzoi = known[sha]
            else:
                memzoi = known[sha] = self._root_memzoi(sha, commit)
            ids = commit.parent_ids
            if len(ids) == 1:  # most commits: the parent was walked just before, or is known
                parent = str(ids[0])
                yield PushedCommit(
                    sha, memzoi, (parent,), (known[parent] if parent in known else self.memzoi_of(parent),)
                )
            else:
                parents = tuple(map(str, ids))
                yield PushedCommit(sha, memzoi, parents, tuple(map(self.memzoi_of, parents)))

    def symbolic_tip(self, name: str) -> str | None:
        """The commit a symbolic ref (HEAD, refs/remotes/R/HEAD) points to through its branch, or None."""
        try:
            ref = self.git.references[name]
            return str(ref.resolve().peel(pygit2.Commit).id)
        except (KeyError, pygit2.GitError, pygit2.InvalidSpecError, ValueError):
            return None

    def tree_memzoi(self, sha: str) -> str | None:
        """The object ID of the `.memzoi` entry (any kind) of the tree `sha` peels to; None: no tree, or none held.

        For a tag of a tree. Each entry is looked at by name, so a crafted tree's twin or
        out-of-order `.memzoi` is not missed (the last one found counts; any differs from a
        checked tree's ID).
        """
        try:
            tree = self.git[sha].peel(pygit2.Tree)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
            return None
        found = [str(entry.id) for entry in tree if entry.name == MEMZOI_DIR]
        if len(found) > 1:
            return "twins:" + ",".join(found)
        return found[0] if found else None

    def symbolic_target(self, name: str) -> str | None:
        """The ref a symbolic ref (HEAD, refs/remotes/R/HEAD) names, or None when it is not one."""
        try:
            target = self.git.references[name].target
        except (KeyError, pygit2.GitError, pygit2.InvalidSpecError, ValueError):
            return None
        return target if isinstance(target, str) else None

    def merge_base(self, a: str, b: str) -> str | None:
        """The best common ancestor of two commits, or None when their histories are unrelated."""
        base = self.git.merge_base(pygit2.Oid(hex=a), pygit2.Oid(hex=b))
        return str(base) if base is not None else None

    def merge_heads(self) -> list[str]:
        """The commits an in-progress merge will add as parents (MERGE_HEAD), if any."""
        path = self.repo.git_dir / "MERGE_HEAD"
        try:
            lines = path.read_text().split()
        except OSError:
            return []
        return [line for line in lines if self.has_object(line)]

    def amended_parents(self) -> tuple[str, ...]:
        """HEAD's parents when the commit being made may replace HEAD (`git commit --amend`), else ().

        git tells a pre-commit hook nothing of --amend but the author it will write: HEAD's own,
        date to the second (`GIT_AUTHOR_DATE=@<seconds> <zone>`), where a new commit gets the time it
        is made. A new commit made in HEAD's second by HEAD's author, or `-C HEAD`, looks the same;
        it is then judged against HEAD's parents as well, which refuses only what HEAD brought.
        """
        head = self.repo.head_commit()
        if head is None or not head.parents:
            return ()
        author = head.author
        zone = f"{'-' if author.offset < 0 else '+'}{abs(author.offset) // 60:02d}{abs(author.offset) % 60:02d}"
        env = os.environ
        if (
            env.get("GIT_AUTHOR_DATE") != f"@{author.time} {zone}"
            or env.get("GIT_AUTHOR_NAME", author.name) != author.name
            or env.get("GIT_AUTHOR_EMAIL", author.email) != author.email
        ):
            return ()
        return tuple(str(parent) for parent in head.parent_ids)

    # trees ---------------------------------------------------------------------
    def changes(self, old: str | None, new: str | None) -> list[TreeChange]:
        """Files that differ between two .memzoi/ subtrees (None: absent), without rename detection."""
        if old == new:
            return []
        key = (old, new)
        if key in self._changes:  # a hook asks for the same pair twice: to update a tree, to check it
            return self._changes[key]
        found, gitlinks = self._diff(old, new)
        self._changes[key] = found
        self._gitlinks[key] = gitlinks
        while len(self._changes) > 4:
            del self._changes[next(iter(self._changes))]
        return found

    def _diff(self, old: str | None, new: str | None) -> tuple[list[TreeChange], tuple[str, ...]]:
        if new is None:
            return [TreeChange("D", c.path, c.new_oid, None, c.new_symlink, False) for c in self.changes(None, old)], ()
        if old is None:
            return _changes(_deltas_of(self._tree(new).diff_to_tree(flags=_DIFF_FLAGS, swap=True), ""))
        deltas: list[_Delta] = []
        self._subtree_deltas(self._tree(old), self._tree(new), "", deltas)
        deltas.sort(key=lambda d: d[1])  # git's order: a tree's entries sort as if its name ended in "/"
        return _changes(deltas)

    def _subtree_deltas(self, old: pygit2.Tree, new: pygit2.Tree, prefix: str, out: list[_Delta]) -> None:
        """The file deltas between two trees, as libgit2's tree diff gives them (with typechanges),
        descending only into the subtrees whose IDs differ: libgit2 walks every entry of both
        trees, which at 50,000 records is most of a one-record check (a shared folder costs
        nothing here). Two trees of files alone (a folder of records, thousands of entries) are
        left to libgit2's diff, which pairs them in C and has no subtree to descend into."""
        if not (_may_hold_trees(old) or _may_hold_trees(new)):
            out.extend(_deltas_of(old.diff_to_tree(new, flags=_DIFF_FLAGS), prefix))
            return
        olds = {entry.name or "": entry for entry in old}
        news = {entry.name or "": entry for entry in new}
        for name in olds.keys() | news.keys():
            was, now = olds.get(name), news.get(name)
            if was is not None and now is not None and was.id == now.id and was.filemode == now.filemode:
                continue
            was_tree = was is not None and was.filemode == FileMode.TREE
            now_tree = now is not None and now.filemode == FileMode.TREE
            if was_tree and now_tree:
                assert was is not None and now is not None
                self._subtree_deltas(self._tree(str(was.id)), self._tree(str(now.id)), f"{prefix}{name}/", out)
                continue
            if was is not None and now is not None and not was_tree and not now_tree:
                status: ChangeStatus = "M" if _kind(was.filemode) == _kind(now.filemode) else "T"
                out.append((status, prefix + name, str(was.id), str(now.id), was.filemode, now.filemode))
                continue
            sides: tuple[tuple[Literal["A", "D"], pygit2.Object | None, bool], ...] = (
                ("D", was, was_tree),
                ("A", now, now_tree),
            )
            for side, entry, is_tree in sides:
                if entry is None:
                    continue
                if is_tree:  # a folder on one side only: every file in it, by libgit2's own walk
                    self._whole_tree(str(entry.id), side, f"{prefix}{name}/", out)
                elif side == "D":
                    out.append(("D", prefix + name, str(entry.id), None, entry.filemode, 0))
                else:
                    out.append(("A", prefix + name, None, str(entry.id), 0, entry.filemode))

    def _whole_tree(self, oid: str, side: Literal["A", "D"], prefix: str, out: list[_Delta]) -> None:
        """Every file of tree `oid` as added (`A`) or deleted (`D`), by libgit2's own walk of it."""
        out.extend(_deltas_of(self._tree(oid).diff_to_tree(flags=_DIFF_FLAGS, swap=side == "A"), prefix))

    def gitlinks(self, old: str | None, new: str | None) -> tuple[str, ...]:
        """Repository-root paths of the submodule entries (gitlinks) that `new` adds or changes over `old`.

        Read off the same tree diff `changes` makes (which leaves them out), at no extra cost.
        """
        if old == new:
            return ()
        if (old, new) not in self._gitlinks:
            self._changes.pop((old, new), None)
            self.changes(old, new)
        return self._gitlinks.get((old, new), ())

    def has_path(self, memzoi: str | None, path: str) -> bool:
        """Whether a .memzoi/ subtree holds `path` (a repository-root path under .memzoi/)."""
        if memzoi is None or not path.startswith(MEMZOI_DIR + "/"):
            return False
        try:
            self._tree(memzoi)[path[len(MEMZOI_DIR) + 1 :]]
        except KeyError:
            return False
        return True

    def listing(self, memzoi: str | None) -> dict[str, FileEntry]:
        """Every file of a .memzoi/ subtree, by repository-root path."""
        return {c.path: FileEntry(c.new_oid or "", c.new_symlink) for c in self.changes(None, memzoi)}

    def _tree(self, oid: str) -> pygit2.Tree:
        return cast(pygit2.Tree, self.git[oid])

    def blob(self, oid: str) -> bytes:
        """A blob's bytes (a partial clone's promised blob fetched through git first: gitrepo.promised)."""
        try:
            return cast(pygit2.Blob, self.git[oid]).data
        except KeyError:
            self._fetch(oid)
            return cast(pygit2.Blob, self.git[oid]).data

    def size(self, oid: str) -> int:
        """A blob's size in bytes, from its object header: the blob itself is not inflated."""
        try:
            return self.git.odb.read_header(pygit2.Oid(hex=oid))[1]
        except KeyError:
            self._fetch(oid)
            return self.git.odb.read_header(pygit2.Oid(hex=oid))[1]

    def _fetch(self, oid: str) -> None:
        """Fetch a missing blob and every one the .memzoi/ trees read so far lack (StateError, 3: still missing)."""
        promised.fetch(self.git, oid, sorted({tree for tree in self._memzoi_of.values() if tree is not None}))

    def added_lines(self, old: str, new: str) -> list[tuple[int, str]]:
        """(line number in `new`, text) of the lines `new` adds over `old`; every line when binary."""
        patch = cast(pygit2.Blob, self.git[old]).diff(  # type: ignore[call-arg]  # the stub lacks it
            cast(pygit2.Blob, self.git[new]), context_lines=0
        )
        if patch.delta.is_binary:
            text = self.blob(new).decode("utf-8", "replace")
            return list(enumerate(text.split("\n"), start=1))
        return [
            (line.new_lineno, line.content.rstrip("\n"))
            for hunk in patch.hunks
            for line in hunk.lines
            if line.origin == "+"
        ]

    def config_blob(self, sha: str, relpath: str) -> tuple[str, bytes] | None:
        """(blob OID, bytes) of `relpath` in commit `sha`'s tree, or None."""
        try:
            entry = cast(pygit2.Commit, self.git[sha]).tree[relpath]
        except KeyError:
            return None
        if entry.type != ObjectType.BLOB or self.size(str(entry.id)) > MAX_FILE_BYTES:
            return None  # an oversized config.toml is not read: the tree check refuses it by size
        return str(entry.id), self.blob(str(entry.id))

    # the index -----------------------------------------------------------------
    def staged_memzoi(self) -> tuple[str | None, bytes | None]:
        """The .memzoi/ subtree OID of what is staged, and the staged .memzoi/config.toml.

        Writes the index as tree objects (as `git write-tree` does), honouring GIT_INDEX_FILE,
        which git sets for `git commit -a` and `git commit PATH`.
        """
        index_file = os.environ.get("GIT_INDEX_FILE")
        try:
            if index_file:
                path = Path(index_file)
                if not path.is_absolute():
                    path = (self.repo.workdir or Path.cwd()) / path
                index = pygit2.Index(str(path))
            else:
                index = self.git.index
            tree = cast(pygit2.Tree, self.git[index.write_tree(self.git)])
        except pygit2.GitError as exc:
            raise MemzoiError(
                f"cannot read the staged tree: {exc}", hint="resolve merge conflicts and stage the result first"
            ) from None
        memzoi = self._subtree("index", tree)
        config = None
        try:
            entry = tree[REPO_CONFIG]
            if self.size(str(entry.id)) <= MAX_FILE_BYTES:  # else not read: the tree check refuses it
                config = self.blob(str(entry.id))
        except KeyError:
            pass
        return memzoi, config


#: what a root entry's name is to the hooks: another name, `.memzoi`, `.memzoi/…` (never
#: written by git), or a name a macOS or Windows checkout writes as `.memzoi`
_OTHER, _MEMZOI, _UNDER, _TWIN = 0, 1, 2, 3
_TREE = int(ObjectType.TREE)  # an entry's `type` is a plain int, its `filemode` an enum made per call
_COMMIT = int(ObjectType.COMMIT)  # an enum member costs a lookup each time: once per pushed ref


def _name_kind(name: bytes) -> int:
    if name == MEMZOI_DIR.encode():
        return _MEMZOI
    if name.startswith(f"{MEMZOI_DIR}/".encode()):
        return _UNDER
    return _TWIN if folds_to_memzoi(name.decode("utf-8", "surrogateescape")) else _OTHER


def _twins(names: list[bytes], kinds: list[int | None]) -> tuple[str, ...]:
    """The names of a root's entries that macOS or Windows would check out as `.memzoi`."""
    return tuple(
        name.decode("utf-8", "surrogateescape") for name, kind in zip(names, kinds, strict=True) if kind == _TWIN
    )


def _memzoi_entry(entry: pygit2.Object | None) -> tuple[str | None, str | None]:
    """(subtree OID, None) for a `.memzoi` directory entry; (None, odd kind) for another kind; None: no entry."""
    if entry is None:
        return None, None
    if entry.type == _TREE:  # a tree entry's mode is 040000 (libgit2 reads any other 04xxxx as it)
        return str(entry.id), None
    # A symlinked or submodule .memzoi would make git serve memory from outside the tree:
    # it holds no memory here, and the hooks refuse it by name.
    return None, {FileMode.LINK: "symlink", FileMode.COMMIT: "gitlink"}.get(entry.filemode, "file")


def _node_path(nodes: list[tuple[int, str]], node: int) -> str:
    """The repository-root path of a node of tree_fault's walk."""
    names = []
    while node >= 0:
        parent, name = nodes[node]
        names.append(name)
        node = parent
    return "/".join(reversed(names))


#: One file delta: status, path under .memzoi/, old and new blob IDs, old and new file modes (0: none).
_Delta = tuple[ChangeStatus, str, "str | None", "str | None", int, int]


def _kind(mode: int) -> int:
    """What a tree entry holds, as a typechange tells kinds apart: a blob (either mode), a link, a gitlink."""
    return FileMode.BLOB if mode == FileMode.BLOB_EXECUTABLE else mode


def _may_hold_trees(tree: pygit2.Tree) -> bool:
    """Whether a tree may hold a subtree: its raw bytes hold the mode git writes for one.

    It only picks the cheaper diff: libgit2's diff of two trees descends into any subtree
    itself (one written with an odd mode such as `40755` included), so a wrong False costs a
    walk, never a delta; a True may be an object name's bytes, and the walk here is as exact.
    """
    return _SUBTREE_MODE in tree.read_raw()


#: How a subtree entry starts in a raw tree object (git writes `40000`; `040000` holds it too).
_SUBTREE_MODE = b"40000 "


def _deltas_of(diff: pygit2.Diff, prefix: str) -> Iterator[_Delta]:
    """A libgit2 tree diff's file deltas, their paths under `prefix`."""
    for delta in diff.deltas:
        status = _STATUS.get(delta.status)
        if status is None:
            continue
        old_f, new_f = delta.old_file, delta.new_file
        path = prefix + (new_f.path if status != "D" else old_f.path)
        yield status, path, str(old_f.id), str(new_f.id), old_f.mode, new_f.mode


def _changes(deltas: Iterable[_Delta]) -> tuple[list[TreeChange], tuple[str, ...]]:
    """File deltas as changes, and the gitlinks among them (which are no memory file)."""
    out: list[TreeChange] = []
    gitlinks: list[str] = []
    for delta in deltas:
        _add_change(out, gitlinks, delta)
    return out, tuple(gitlinks)


def _add_change(out: list[TreeChange], gitlinks: list[str], delta: _Delta) -> None:
    status, path, old_oid, new_oid, old_mode, new_mode = delta
    if FileMode.COMMIT in (old_mode, new_mode):
        if status != "D" and new_mode == FileMode.COMMIT:
            gitlinks.append(f"{MEMZOI_DIR}/{path}")
        return  # a submodule entry is not a memory file: the hooks refuse it by name
    out.append(
        TreeChange(
            status,
            f"{MEMZOI_DIR}/{path}",
            None if status == "A" else old_oid,
            None if status == "D" else new_oid,
            status != "A" and old_mode == FileMode.LINK,
            status != "D" and new_mode == FileMode.LINK,
        )
    )


def _summary(commit: pygit2.Commit) -> str:
    try:
        message = commit.message
    except (UnicodeDecodeError, LookupError):
        message = commit.raw_message.decode("utf-8", "replace")
    return message.split("\n", 1)[0][:72]
