"""Commit exactly the given paths on HEAD with pygit2, leaving everything else the user staged alone."""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import pygit2
from pygit2.enums import FileMode

from git_memzoi.errors import MemzoiError, Refused
from git_memzoi.gitrepo.repo import GitRepo


def config_value(repo: GitRepo, key: str) -> str | None:
    """A git config value as git itself resolves it, honouring GIT_CONFIG_GLOBAL (which libgit2 ignores)."""
    files = [repo.git_dir / "config.worktree", repo.common_dir / "config"]
    override = os.environ.get("GIT_CONFIG_GLOBAL")
    if override:
        files.append(Path(override))
    for path in files:
        if path.is_file():
            try:
                value = pygit2.Config(str(path))[key]
            except (KeyError, ValueError, pygit2.GitError):
                continue
            if isinstance(value, str) and value.strip():
                return value
    if override:
        return None  # git reads no other global file then; libgit2's own lookup would
    try:
        value = repo.pygit.config[key]
    except (KeyError, ValueError, pygit2.GitError):
        return None
    return value if isinstance(value, str) and value.strip() else None


def _identity(repo: GitRepo, role: str) -> tuple[str, str]:
    """Name and email as git picks them: GIT_<ROLE>_NAME/EMAIL, else user.name/user.email."""
    name = os.environ.get(f"GIT_{role}_NAME") or config_value(repo, "user.name")
    email = os.environ.get(f"GIT_{role}_EMAIL") or config_value(repo, "user.email")
    if not name or not email:
        raise Refused("cannot commit: git has no user.name / user.email",
                      hint='git config user.name "Your Name" && git config user.email you@example.com')
    return name, email


def _signature(repo: GitRepo, role: str, when: datetime) -> pygit2.Signature:
    name, email = _identity(repo, role)
    offset = when.utcoffset()
    minutes = int(offset.total_seconds() // 60) if offset is not None else 0
    return pygit2.Signature(name, email, int(when.timestamp()), minutes)


def commit_paths(repo: GitRepo, paths: Sequence[str], message: str, *, when: datetime) -> str:
    """Record the work-tree state of `paths` (present or deleted) in one commit on HEAD; return its ID.

    The new tree is HEAD's tree with only those paths changed, and only those entries of the
    index are updated, so whatever else is staged stays staged and out of this commit.
    """
    root = repo.require_workdir()
    git = repo.pygit
    head = repo.head_commit()
    staged = pygit2.Index()
    if head is not None:
        staged.read_tree(head.tree)
    index = git.index
    updates: list[tuple[str, pygit2.Oid | None, FileMode]] = []
    for rel in paths:
        full = root / rel
        if full.is_symlink() or (full.exists() and not full.is_file()):
            raise Refused(f"cannot commit {rel}: not a regular file")
        if full.exists():
            oid = git.create_blob(full.read_bytes())
            mode = FileMode.BLOB_EXECUTABLE if os.access(full, os.X_OK) else FileMode.BLOB
            staged.add(pygit2.IndexEntry(rel, oid, mode))
            updates.append((rel, oid, mode))
        else:
            if rel in staged:
                staged.remove(rel)
            updates.append((rel, None, FileMode.BLOB))
    try:
        tree = staged.write_tree(git)
        parents = [head.id] if head is not None else []
        sig_author = _signature(repo, "AUTHOR", when)
        sig_committer = _signature(repo, "COMMITTER", when)
        oid = git.create_commit("HEAD", sig_author, sig_committer, message, tree, parents)
        index.read()
        for rel, blob, mode in updates:
            if blob is None:
                if rel in index:
                    index.remove(rel)
            else:
                index.add(pygit2.IndexEntry(rel, blob, mode))
        index.write()
    except pygit2.GitError as exc:
        raise MemzoiError(f"git commit failed: {exc}") from None
    return str(oid)
