"""Who is acting, for the audit log: MEMZOI_ACTOR, else git's user.name and user.email, else the OS user."""

from __future__ import annotations

import getpass
import os

from git_memzoi.gitrepo.commit import config_value
from git_memzoi.gitrepo.repo import GitRepo


def os_user() -> str | None:
    """The login name of this process, or None when the system cannot say."""
    try:
        return getpass.getuser() or None
    except (OSError, KeyError, ImportError):  # no USER/LOGNAME and no passwd entry (e.g. a bare container uid)
        return None


def actor(repo: GitRepo | None) -> str:
    """MEMZOI_ACTOR; else `Name <email>` as git resolves user.name/user.email for `repo`; else the OS user."""
    named = os.environ.get("MEMZOI_ACTOR", "").strip()
    if named:
        return named
    if repo is not None:
        name = (config_value(repo, "user.name") or "").strip()
        email = (config_value(repo, "user.email") or "").strip()
        if name and email:
            return f"{name} <{email}>"
        if name or email:
            return name or f"<{email}>"
    return os_user() or "unknown"
