"""The only package that imports pygit2 (lazily): discovery, keys, trees at a revision, history, commits."""

from git_memzoi.gitrepo.repo import GitRepo, open_repo

__all__ = ["GitRepo", "open_repo"]
