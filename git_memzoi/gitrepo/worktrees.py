"""The worktrees of a repository that still exist, named by the hash part of their worktree keys."""

from __future__ import annotations

import pygit2

from git_memzoi.gitrepo.discover import runtime_key
from git_memzoi.gitrepo.repo import GitRepo


def live_worktree_hashes(repo: GitRepo) -> set[str]:
    """The 16-hex part of the worktree key of the main worktree and of every linked one git would keep.

    A linked worktree counts while git would not prune it: its folder is there, or it is locked
    (`git worktree lock` keeps one whose folder is on a disk that is away).
    """
    git_dirs = [repo.common_dir]
    for name in repo.pygit.list_worktrees():
        try:
            prunable = repo.pygit.lookup_worktree(name).is_prunable
        except (pygit2.GitError, KeyError, ValueError):
            continue  # an unreadable worktree entry counts as gone
        if not prunable:
            git_dirs.append(repo.common_dir / "worktrees" / name)
    hashes = {runtime_key("", "worktree", git_dir).rsplit("-", 1)[1] for git_dir in git_dirs}
    hashes.add(repo.worktree_key.rsplit("-", 1)[1])
    return hashes
