"""Discover a repository from any directory and read it through pygit2.

pygit2 is imported on first use, not with this module: most read commands only need the
repository's paths (see `gitrepo.discover`), and importing pygit2 costs more than their work.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from git_memzoi.errors import (
    MemzoiError,
    NoWorkTree,
    RepositoryNotFound,
    StateError,
    UnsupportedRepository,
    UsageError,
)
from git_memzoi.gitrepo.discover import find, keys, repository_name
from git_memzoi.layout import MEMZOI_DIR

if TYPE_CHECKING:
    import pygit2


class TreeFile(NamedTuple):
    """A blob in a git tree: its path from the repository root, OID, and a way to read it."""

    path: str
    oid: str
    repo: pygit2.Repository

    def read(self) -> bytes:
        import pygit2  # pygit2 on first use (Command start-up: search)

        try:
            blob = self.repo[self.oid]
        except KeyError:
            raise missing_object(self.repo, self.path, self.oid) from None
        assert isinstance(blob, pygit2.Blob)
        return blob.data

    def size(self) -> int:
        """The blob's size from its object header, without inflating it."""
        import pygit2  # pygit2 on first use (Command start-up: search)

        try:
            return int(self.repo.odb.read_header(pygit2.Oid(hex=self.oid))[1])
        except KeyError:
            raise missing_object(self.repo, self.path, self.oid) from None

    def chunks(self) -> Iterator[bytes]:
        """The blob a piece at a time (log.md has no size limit), sliced from libgit2's buffer, never copied whole."""
        import pygit2  # pygit2 on first use (Command start-up: search)

        from git_memzoi.profile.tree import log_chunks

        try:
            blob = self.repo[self.oid]
        except KeyError:
            raise missing_object(self.repo, self.path, self.oid) from None
        assert isinstance(blob, pygit2.Blob)
        yield from log_chunks(memoryview(blob))


def missing_object(repo: pygit2.Repository, path: str, oid: str) -> StateError:
    """The one line for a blob the tree names but the object database lacks (gitrepo.promised.missing_object)."""
    from git_memzoi.gitrepo.promised import missing_object as line

    return line(repo, path, oid)


class GitRepo:
    """One opened repository: a work tree (possibly linked) or a bare repository."""

    def __init__(
        self, git_dir: Path, common_dir: Path, workdir: Path | None, repo: pygit2.Repository | None = None
    ) -> None:
        """Canonical paths; without `repo`, pygit2 opens the repository on first use."""
        self._pygit = repo
        self.git_dir, self.common_dir, self.workdir = git_dir, common_dir, workdir

    @classmethod
    def at(cls, git_dir: Path, common_dir: Path, workdir: Path | None) -> GitRepo:
        """A repository whose paths are already known (canonical); pygit2 opens it on first use."""
        return cls(git_dir, common_dir, workdir)

    @classmethod
    def opened(cls, repo: pygit2.Repository) -> GitRepo:
        """A repository pygit2 has opened, with the paths it found."""
        git_dir = Path(os.path.realpath(repo.path))
        commondir_file = git_dir / "commondir"
        common_dir = (
            Path(os.path.realpath(git_dir / commondir_file.read_text().strip()))
            if commondir_file.is_file()
            else git_dir
        )
        workdir = Path(os.path.realpath(repo.workdir)) if repo.workdir else None
        return cls(git_dir, common_dir, workdir, repo)

    @property
    def pygit(self) -> pygit2.Repository:
        """The pygit2 repository (opened, and pygit2 imported, on first use)."""
        if self._pygit is None:
            import pygit2  # pygit2 on first use (Command start-up: search)

            try:
                repo = pygit2.Repository(str(self.git_dir))
                # opened on the git directory, libgit2 guesses the work tree is its parent, which is wrong
                # for a `.git` file (`--separate-git-dir`) and for GIT_WORK_TREE: tell it the one found
                if self.workdir is not None and os.path.realpath(repo.workdir or "") != str(self.workdir):
                    repo.workdir = str(self.workdir)
            except pygit2.GitError as exc:
                raise open_failure(exc) from None
            self._pygit = repo
        return self._pygit

    # identity -----------------------------------------------------------------
    @property
    def is_bare(self) -> bool:
        return self.workdir is None

    @property
    def name(self) -> str:
        """The repository's readable name: its main folder, or the bare directory without .git."""
        return repository_name(self.common_dir)

    @property
    def repository_key(self) -> str:
        """Shared by the main worktree and every linked worktree."""
        return keys(self.git_dir, self.common_dir, self.workdir)[0]

    @property
    def worktree_key(self) -> str:
        """Distinct per worktree, derived from the worktree's own git directory."""
        return keys(self.git_dir, self.common_dir, self.workdir)[1]

    def require_workdir(self) -> Path:
        if self.workdir is None:
            raise NoWorkTree(
                "this command needs a work tree; the repository is bare",
                hint="run it in a checkout, or use --rev for read-only checks",
            )
        return self.workdir

    @property
    def memzoi_dir(self) -> Path:
        return self.require_workdir() / MEMZOI_DIR

    # revisions and trees ------------------------------------------------------
    def resolve(self, rev: str) -> pygit2.Commit:
        """The commit a revision names (raises UsageError with the revision)."""
        import pygit2  # pygit2 on first use (Command start-up: search)

        try:
            obj = self.pygit.revparse_single(rev)
            commit = obj.peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError) as exc:
            raise UsageError(f"unknown revision {rev!r}: {exc}") from None
        return commit

    def head_commit(self) -> pygit2.Commit | None:
        import pygit2  # pygit2 on first use (Command start-up: search)

        if self.pygit.head_is_unborn:
            return None
        return self.pygit.head.peel(pygit2.Commit)

    def branch_name(self) -> str | None:
        """The checked-out branch's short name (also for an unborn branch), or None when HEAD is detached."""
        if self.pygit.head_is_detached:
            return None
        target = self.pygit.references["HEAD"].target
        name = target if isinstance(target, str) else ""
        return name.removeprefix("refs/heads/") or None

    def tree_files(self, tree: pygit2.Tree, prefix: str = MEMZOI_DIR) -> Iterator[TreeFile]:
        """Every blob under `prefix` in `tree`, depth first, with repository-root paths."""
        import pygit2  # pygit2 on first use (Command start-up: search)

        try:
            entry = tree[prefix] if prefix else tree
        except KeyError:
            return
        if prefix and entry.filemode == pygit2.enums.FileMode.COMMIT:
            return  # a submodule's commit is not in this repository: nothing here to read (the hooks refuse it)
        start = self.pygit[entry.id] if prefix else tree
        if not isinstance(start, pygit2.Tree):
            if prefix and entry.filemode == pygit2.enums.FileMode.LINK:  # a symlinked folder: reported, not followed
                yield TreeFile(prefix, "symlink", self.pygit)
            return
        stack: list[tuple[str, pygit2.Tree]] = [(prefix, start)]
        while stack:
            base, node = stack.pop()
            for item in node:
                name = item.name or ""
                path = f"{base}/{name}" if base else name
                if item.type == pygit2.enums.ObjectType.TREE:
                    sub = self.pygit[item.id]
                    assert isinstance(sub, pygit2.Tree)
                    stack.append((path, sub))
                elif item.type == pygit2.enums.ObjectType.BLOB and item.filemode != pygit2.enums.FileMode.LINK:
                    yield TreeFile(path, str(item.id), self.pygit)
                elif item.filemode == pygit2.enums.FileMode.LINK:
                    yield TreeFile(path, "symlink", self.pygit)

    # work tree ---------------------------------------------------------------
    def is_clean(self, relpath: str) -> bool:
        """True when the work-tree file equals HEAD and nothing about it is staged."""
        from pygit2.enums import FileStatus  # pygit2 on first use (Command start-up: search)

        try:
            flags = self.pygit.status_file(relpath)
        except KeyError:
            return True
        return flags == FileStatus.CURRENT

    # history -----------------------------------------------------------------
    def head_blob(self, relpath: str) -> str | None:
        """The blob OID `relpath` has in HEAD's tree, or None (unborn HEAD, absent, or not a regular file)."""
        import pygit2  # pygit2 on first use (Command start-up: search)

        head = self.head_commit()
        if head is None:
            return None
        try:
            entry = head.tree[relpath]
        except KeyError:
            return None
        if entry.type != pygit2.enums.ObjectType.BLOB or entry.filemode == pygit2.enums.FileMode.LINK:
            return None
        return str(entry.id)

    def matches_head(self, relpath: str, data: bytes | None) -> bool:
        """True when HEAD holds exactly `data` at `relpath` as a regular file (None: HEAD has no such file)."""
        import pygit2  # pygit2 on first use (Command start-up: search)

        held = self.head_blob(relpath)
        if data is None:
            return held is None
        return held == str(pygit2.hash(data))

    def change_after(self, relpath: str, since: datetime) -> tuple[str, datetime] | None:
        """A commit on HEAD's simplified history of `relpath` that changed it and is dated after `since`.

        History is followed as `git log -- PATH` simplifies it: from HEAD, each step goes to the
        first parent holding the same blob at `relpath` (TREESAME); a commit matching none of its
        parents, or a root commit, changed it. The walk stops at the first commit whose committer
        time is not after `since`, so it costs the commits made since then, never the whole graph.
        """
        commit = self.head_commit()
        if commit is None:
            return None

        def blob_at(candidate: pygit2.Commit) -> str | None:
            try:
                return str(candidate.tree[relpath].id)
            except KeyError:
                return None

        mine = blob_at(commit)  # every commit on the followed line holds this same blob
        while True:
            when = datetime.fromtimestamp(commit.commit_time, tz=UTC)
            if when <= since:
                return None
            same = next((parent for parent in commit.parents if blob_at(parent) == mine), None)
            if same is None:
                return str(commit.id), when
            commit = same


def open_repo(start: str | os.PathLike[str] | None = None) -> GitRepo:
    """Open the repository that contains `start` (default: the environment, then the cwd).

    GIT_DIR / GIT_WORK_TREE are honoured as git honours them, so hooks and `git -C` work.
    The common layouts are found without pygit2 (`gitrepo.discover`); pygit2 decides the rest.
    """
    found_fast = find(start)
    if found_fast is not None:
        return GitRepo.at(*found_fast)
    return open_with_pygit2(start)


def open_with_pygit2(start: str | os.PathLike[str] | None = None) -> GitRepo:
    """`open_repo` as pygit2 (libgit2) discovers repositories: every layout, every GIT_* variable."""
    import pygit2  # pygit2 on first use (Command start-up: search)

    try:
        if start is None and os.environ.get("GIT_DIR"):
            return GitRepo.opened(_from_git_dir(os.environ["GIT_DIR"]))
        where = os.fspath(start) if start is not None else os.getcwd()
        found = pygit2.discover_repository(where)
        if found is None:
            raise RepositoryNotFound(
                f"not a git repository (or any parent up to /): {where}",
                hint="run it inside a git repository, or name one: git -C DIR memzoi ...",
            )
        # opened from `where`, not from the git directory found: a gitfile's work tree is where the file is
        return GitRepo.opened(pygit2.Repository(where))
    except pygit2.GitError as exc:
        raise open_failure(exc) from None


def open_failure(exc: Exception) -> MemzoiError:
    """What libgit2's refusal to open a repository is to the user: a SHA-256 repository is
    UnsupportedRepository (128, as git for a repository it cannot open), anything else unexpected (70)."""
    text = str(exc)
    if "unknown object format" in text:
        import pygit2

        where, _, _ = text.partition(": unknown object format")
        return UnsupportedRepository(
            f"{where}: a SHA-256 repository (extensions.objectFormat), which git memzoi cannot read",
            hint=f"git memzoi reads SHA-1 repositories only: the libgit2 it runs on ({pygit2.LIBGIT2_VERSION}) "
            "has no SHA-256 support",
        )
    return MemzoiError(f"cannot open the git repository: {text}")


def _from_git_dir(git_dir: str) -> pygit2.Repository:
    """The repository GIT_DIR names; RepositoryNotFound (128, as git says it) when it names none."""
    import pygit2  # pygit2 on first use (Command start-up: search)
    from pygit2.enums import RepositoryOpenFlag

    try:
        return pygit2.Repository(git_dir, RepositoryOpenFlag.FROM_ENV)
    except pygit2.GitError as exc:
        if "not found" not in str(exc):
            raise
        raise RepositoryNotFound(
            f"not a git repository: {git_dir} (GIT_DIR)",
            hint="unset GIT_DIR, or point it at a repository's git directory",
        ) from None
