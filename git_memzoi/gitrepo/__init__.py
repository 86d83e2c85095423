"""The only package that imports pygit2 (lazily): discovery, keys, trees at a revision, history, commits.

`GitRepo` and `open_repo` load `gitrepo.repo` on first use, so that a start-up path can import
`gitrepo.discover` alone.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from git_memzoi.gitrepo.repo import GitRepo, open_repo

__all__ = ["GitRepo", "open_repo"]


def __getattr__(name: str) -> object:
    if name in __all__:
        from git_memzoi.gitrepo import repo

        return getattr(repo, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
