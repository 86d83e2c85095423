"""Git config values as git itself resolves them for this process: `git -c`, env, repository, global."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pygit2

from git_memzoi.gitrepo.repo import GitRepo

_TRUE = ("true", "yes", "on", "1", "")
_FALSE = ("false", "no", "off", "0")


def _from_environment(key: str) -> str | None:
    """A value given on git's command line (`git -c`, GIT_CONFIG_PARAMETERS) or by GIT_CONFIG_COUNT; last wins."""
    found: str | None = None
    wanted = key.lower()
    params = os.environ.get("GIT_CONFIG_PARAMETERS")
    if params:
        try:
            tokens = shlex.split(params)
        except ValueError:
            tokens = []
        for token in tokens:
            name, eq, value = token.partition("=")
            if name.lower() == wanted:
                found = value if eq else ""  # `git -c key` alone means true
    try:
        count = int(os.environ.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        count = 0
    for i in range(count):
        if os.environ.get(f"GIT_CONFIG_KEY_{i}", "").lower() == wanted:
            found = os.environ.get(f"GIT_CONFIG_VALUE_{i}", "")
    return found


def config_value(repo: GitRepo, key: str) -> str | None:
    """A git config value as git itself resolves it, honouring `git -c` and GIT_CONFIG_GLOBAL (libgit2 ignores both)."""
    given = _from_environment(key)
    if given is not None:
        return given if given.strip() else None
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


def config_bool(repo: GitRepo, key: str) -> bool:
    """A boolean git config value (unset or unparseable: false, as git treats an unset one)."""
    given = _from_environment(key)
    value = given if given is not None else config_value(repo, key)
    if value is None:
        return False
    return value.strip().lower() in _TRUE and value.strip().lower() not in _FALSE


def color_choice(repo: GitRepo, command_key: str) -> bool | None:
    """Whether to colour, as git decides for one command: `command_key` (such as color.diff), then color.ui.

    True for `always`, False for `never` or false, None for `auto`, true or unset (the caller
    colours a terminal only, and never where TERM is dumb).
    """
    for key in (command_key, "color.ui"):
        value = config_value(repo, key)
        if value is None:
            continue
        word = value.strip().lower()
        if word == "always":
            return True
        if word == "never" or word in _FALSE:
            return False
        return None
    return None
