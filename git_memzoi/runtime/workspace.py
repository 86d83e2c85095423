"""The environment every command works in: the repository, its runtime layout and its config."""

from __future__ import annotations

import os
from functools import cached_property

from git_memzoi.gitrepo import GitRepo, open_repo
from git_memzoi.layout import REPO_CONFIG
from git_memzoi.runtime import config as configmod
from git_memzoi.runtime.home import Layout


class Workspace:
    """An opened repository plus where its runtime state lives; built once per command.

    A plain class (the hooks' path avoids loading dataclasses: agents.hook_core.Dialect)."""

    def __init__(self, repo: GitRepo, layout: Layout) -> None:
        self.repo = repo
        self.layout = layout

    def __repr__(self) -> str:
        return f"Workspace(repo={self.repo!r}, layout={self.layout!r})"

    @classmethod
    def open(cls, start: str | os.PathLike[str] | None = None) -> Workspace:
        repo = open_repo(start)
        return cls(repo, Layout.for_repo(repo))

    def verify_runtime(self) -> None:
        """Refuse (StateError, exit 3) when this path's shared.db belongs to another repository.

        Reads one small file in the git directory and, when shared.db exists, its meta table.
        """
        if self.layout.shared_db.exists():
            from git_memzoi.index.shared_db import verify_for  # only when there is state to protect

            verify_for(self.layout.shared_db, self.repo.common_dir)

    def config_sources(self) -> list[configmod.ConfigSource]:
        """The config files in precedence order, lowest first."""
        if self.repo.workdir is not None:
            return [configmod.file_source(path) for path in self.layout.config_files(self.repo.workdir)]
        head = self.repo.head_commit()
        data = None
        if head is not None:
            try:
                data = self.repo.pygit[head.tree[REPO_CONFIG].id].read_raw()
            except KeyError:
                data = None
        return [
            configmod.file_source(self.layout.user_config),
            configmod.file_source(self.layout.project_config),
            configmod.ConfigSource(f"HEAD:{REPO_CONFIG}", data),
        ]

    @cached_property
    def config(self) -> configmod.Config:
        return configmod.load(self.config_sources())
