"""Where runtime state lives under MEMZOI_HOME, exactly as the profile lays it out."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from git_memzoi.gitrepo import GitRepo
from git_memzoi.layout import (
    DEFAULT_HOME, EXPORTS, HOME_ENV, HOOK_TREES, INDEX_DB, JOURNAL, LIFECYCLE_LOCK, PARSE_CACHE_DB, PROJECT_CONFIG,
    PROJECTS, SHARED_DB, USER_CONFIG, WORKTREES,
)


def memzoi_home() -> Path:
    """`$MEMZOI_HOME`, or `~/.memzoi`."""
    return Path(os.environ.get(HOME_ENV) or DEFAULT_HOME).expanduser()


@dataclass(frozen=True)
class Layout:
    """Every runtime path for one repository and one of its worktrees."""

    home: Path
    repository_key: str
    worktree_key: str

    @classmethod
    def for_repo(cls, repo: GitRepo) -> "Layout":
        return cls(memzoi_home(), repo.repository_key, repo.worktree_key)

    @property
    def user_config(self) -> Path:
        return self.home / USER_CONFIG

    @property
    def project(self) -> Path:
        return self.home / PROJECTS / self.repository_key

    @property
    def project_config(self) -> Path:
        return self.project / PROJECT_CONFIG

    @property
    def shared_db(self) -> Path:
        return self.project / SHARED_DB

    @property
    def lock(self) -> Path:
        return self.project / LIFECYCLE_LOCK

    @property
    def parse_cache(self) -> Path:
        """Content-addressed parse cache keyed by blob OID, shared by linked worktrees."""
        return self.project / PARSE_CACHE_DB

    @property
    def hook_trees(self) -> Path:
        """Validated .memzoi/ trees the client hooks keep by tree OID, shared by linked worktrees."""
        return self.project / HOOK_TREES

    @property
    def journal_dir(self) -> Path:
        """Apply journals, under the repository's runtime directory."""
        return self.project / JOURNAL

    @property
    def worktrees(self) -> Path:
        """The folder of every worktree's runtime folder."""
        return self.project / WORKTREES

    @property
    def worktree(self) -> Path:
        return self.worktrees / self.worktree_key

    @property
    def index_db(self) -> Path:
        return self.worktree / INDEX_DB

    @property
    def exports(self) -> Path:
        return self.worktree / EXPORTS

    def paths(self) -> dict[str, str]:
        """The contract's `paths` object for `doctor --json`."""
        return {
            "home": str(self.home),
            "project": str(self.project),
            "shared_db": str(self.shared_db),
            "index_db": str(self.index_db),
            "exports": str(self.exports),
            "lock": str(self.lock),
        }


def stale_worktree_dirs(layout: Layout, repo: GitRepo) -> list[Path]:
    """Runtime folders under `worktrees/` whose worktree no longer exists (removed, pruned or deleted)."""
    if not layout.worktrees.is_dir():
        return []
    from git_memzoi.gitrepo.worktrees import live_worktree_hashes  # pygit2: only doctor needs it

    live = live_worktree_hashes(repo)
    return sorted(p for p in layout.worktrees.iterdir()
                  if p.name.rsplit("-", 1)[-1] not in live and p.is_dir() and not p.is_symlink())


def remove_stale_worktree_dirs(layout: Layout, repo: GitRepo) -> list[str]:
    """Delete the stale worktree folders (their index.db and exports are derived); one line per folder."""
    lines: list[str] = []
    for folder in stale_worktree_dirs(layout, repo):
        shutil.rmtree(folder)
        lines.append(f"removed {folder}: its worktree no longer exists")
    return lines
