"""Where git looks for this repository's hooks: core.hooksPath, else the common git directory's hooks/."""

from __future__ import annotations

import os
from pathlib import Path

from git_memzoi.gitrepo.repo import GitRepo


def hooks_dir(repo: GitRepo) -> Path:
    """The hooks folder git runs hooks from, resolving core.hooksPath as git does.

    A relative core.hooksPath is taken from where hooks run: the work tree root, or the git
    directory of a bare repository. Linked worktrees share the common directory's hooks/.
    """
    try:
        configured = repo.pygit.config["core.hooksPath"]
    except KeyError:
        configured = None
    if not configured:
        return repo.common_dir / "hooks"
    path = Path(os.path.expanduser(configured))
    if not path.is_absolute():
        path = (repo.workdir if repo.workdir is not None else repo.git_dir) / path
    return Path(os.path.normpath(path))
