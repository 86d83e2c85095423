"""Where runtime state lives under MEMZOI_HOME, exactly as the profile lays it out.

Light to import (no dataclasses, no pygit2): the start-up paths in cli/entry.py find a
worktree's index here too.
"""

from __future__ import annotations

import os
from pathlib import Path

from git_memzoi.layout import (
    AGENT_SESSIONS,
    CITE_TREES,
    DEFAULT_HOME,
    EXPORTS,
    FRESHNESS_DB,
    HOME_ENV,
    HOOK_TREES,
    INDEX_DB,
    INDEX_TEMP_PREFIX,
    JOURNAL,
    LIFECYCLE_LOCK,
    PARSE_CACHE_DB,
    PROJECT_CONFIG,
    PROJECTS,
    REPO_CONFIG,
    SHARED_DB,
    USER_CONFIG,
    WORKTREES,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from git_memzoi.gitrepo import GitRepo


def memzoi_home() -> Path:
    """`$MEMZOI_HOME`, or `~/.memzoi`; a relative `$MEMZOI_HOME` is refused (ConfigError).

    A relative home would be read from the current folder: `hook check` at a checkout's root would
    keep and trust its tree summaries inside the files a pull request's commits bring.
    """
    home = Path(os.environ.get(HOME_ENV) or DEFAULT_HOME).expanduser()
    if not home.is_absolute():
        from git_memzoi.errors import ConfigError

        raise ConfigError(
            f"{HOME_ENV} must be an absolute path, not {str(home)!r}",
            hint=f'set {HOME_ENV} to an absolute folder (e.g. {HOME_ENV}="$PWD/{home}"), or unset it for ~/.memzoi',
        )
    return home


class Layout:
    """Every runtime path for one repository and one of its worktrees (a value: compared by its three fields)."""

    __slots__ = ("home", "repository_key", "worktree_key")

    def __init__(self, home: Path, repository_key: str, worktree_key: str) -> None:
        self.home = home
        self.repository_key = repository_key
        self.worktree_key = worktree_key

    def _fields(self) -> tuple[Path, str, str]:
        return (self.home, self.repository_key, self.worktree_key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Layout) and self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return f"Layout(home={self.home!r}, repository_key={self.repository_key!r}, worktree_key={self.worktree_key!r})"

    @classmethod
    def for_repo(cls, repo: GitRepo) -> Layout:
        return cls(memzoi_home(), repo.repository_key, repo.worktree_key)

    @classmethod
    def for_paths(cls, git_dir: Path, common_dir: Path, workdir: Path | None) -> Layout:
        """The layout of the work tree `gitrepo.discover.find` found, without opening the repository."""
        from git_memzoi.gitrepo.discover import keys

        return cls(memzoi_home(), *keys(git_dir, common_dir, workdir))

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
    def cite_trees(self) -> Path:
        """What each record of a records tree cites, kept by tree OID (index/citation_store.py), shared by worktrees."""
        return self.project / CITE_TREES

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
    def freshness_db(self) -> Path:
        """Each record's freshness at this worktree's HEAD (git_memzoi/freshness/)."""
        return self.worktree / FRESHNESS_DB

    @property
    def exports(self) -> Path:
        return self.worktree / EXPORTS

    @property
    def agent_sessions(self) -> Path:
        """What each agent session of this worktree was already given (agents/sessions.py)."""
        return self.worktree / AGENT_SESSIONS

    def config_files(self, workdir: Path) -> list[Path]:
        """The config files that apply in `workdir`, in precedence order (lowest first)."""
        return [self.user_config, self.project_config, workdir / REPO_CONFIG]

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


def drop_derived(layout: Layout) -> list[Path]:
    """Remove what a rebuild makes again, to give space back after a write failed for want of it: the parse
    cache (with its WAL) and temp indexes. index.db and shared.db stay; a reader that has the parse cache
    open keeps its own copy until it closes it. Returns the files removed."""
    removed: list[Path] = []
    candidates = [Path(f"{layout.parse_cache}{suffix}") for suffix in ("", "-wal", "-shm", "-journal")]
    try:
        candidates += [
            layout.worktree / name for name in os.listdir(layout.worktree) if name.startswith(INDEX_TEMP_PREFIX)
        ]
    except OSError:
        pass
    for path in candidates:
        try:
            path.unlink()
        except OSError:
            continue
        removed.append(path)
    return removed


def stale_worktree_dirs(layout: Layout, repo: GitRepo) -> list[Path]:
    """Runtime folders under `worktrees/` whose worktree no longer exists (removed, pruned or deleted)."""
    if not layout.worktrees.is_dir():
        return []
    from git_memzoi.gitrepo.worktrees import live_worktree_hashes  # pygit2: doctor only (Command start-up: search)

    live = live_worktree_hashes(repo)
    return sorted(
        p
        for p in layout.worktrees.iterdir()
        if p.name.rsplit("-", 1)[-1] not in live and p.is_dir() and not p.is_symlink()
    )


def remove_stale_worktree_dirs(layout: Layout, repo: GitRepo) -> list[str]:
    """Delete the stale worktree folders (their index.db and exports are derived); one line per folder."""
    import shutil

    lines: list[str] = []
    for folder in stale_worktree_dirs(layout, repo):
        shutil.rmtree(folder)
        lines.append(f"removed {folder}: its worktree no longer exists")
    return lines
