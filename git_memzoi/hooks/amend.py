"""Whether the commit a pre-commit hook judges may be `git commit --amend` of HEAD (import-light: os, subprocess)."""

from __future__ import annotations

import os
import subprocess


def amending_head() -> bool:
    """Whether the commit being made may be `git commit --amend` of HEAD.

    git tells a pre-commit hook nothing of --amend but the author date it will write, HEAD's own
    (`GIT_AUTHOR_DATE=@<seconds> <zone>`), where a new commit gets the time it is made
    (gitrepo.history.History.amended_parents answers the same for the full check).
    """
    author_date = os.environ.get("GIT_AUTHOR_DATE")
    return (
        author_date is not None and author_date == f"@{_git_line('show', '-s', '--format=%ad', '--date=raw', 'HEAD')}"
    )


def _git_line(*args: str) -> str | None:
    """git's one line of output, or None when it fails."""
    try:
        done = subprocess.run(["git", *args], capture_output=True, check=False)
    except OSError:
        return None
    return done.stdout.decode("utf-8", "replace").strip() if done.returncode == 0 else None
