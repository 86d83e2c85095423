"""`applies_to` matching as the profile defines it: exact paths, path prefixes, trailing `/**` scopes.

Every entry is compared segment by segment: `src/auth`, `src/auth/**` and an exact file path
`src/auth/session.ts` each cover themselves and everything below them, never `src/authz`.
There is no general glob syntax: brackets and braces (`app/[id]/page.tsx`) are ordinary
characters, and the profile's validator refuses `*` and `?` in records except in the trailing `/**`.
"""

from __future__ import annotations

import os
from pathlib import Path

from git_memzoi.errors import UsageError
from git_memzoi.profile.applies import SCOPE_SUFFIX


def ancestors(path: str) -> list[str]:
    """`a/b/c` -> [`a/b/c`, `a/b`, `a`]: every entry base that would cover `path`."""
    parts = path.split("/")
    return ["/".join(parts[:end]) for end in range(len(parts), 0, -1)]


def normalise(given: str, workdir: Path | None = None) -> str:
    """A repository-relative path from what a user typed (`./src//auth/`, an absolute path, `src/**`).

    Relative paths are taken from the repository root, like `applies_to` entries themselves.
    """
    text = given.strip()
    if not text:
        raise UsageError("must not be empty", field="path")
    if os.path.isabs(text):
        if workdir is None:
            raise UsageError(f"{given}: give a repository-relative path")
        try:
            text = Path(os.path.abspath(text)).relative_to(workdir).as_posix()
        except ValueError:
            try:
                text = Path(os.path.realpath(text)).relative_to(os.path.realpath(workdir)).as_posix()
            except ValueError:
                raise UsageError(f"{given}: outside this work tree ({workdir})") from None
    if text.endswith(SCOPE_SUFFIX):
        text = text[: -len(SCOPE_SUFFIX)]
    parts = [part for part in text.split("/") if part not in ("", ".")]
    if ".." in parts:
        raise UsageError(f"{given}: a path with .. segments is not a repository path")
    if not parts:
        raise UsageError(f"{given}: name a path inside the repository, not its root")
    return "/".join(parts)
