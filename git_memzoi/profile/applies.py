"""`applies_to` entries: the repository path each one is anchored at. Import-light for the read path."""

from __future__ import annotations

SCOPE_SUFFIX = "/**"


def applies_to_base(entry: str) -> str:
    """The path an `applies_to` entry is anchored at: `src/auth/**` and `src/auth/` -> `src/auth`."""
    if entry.endswith(SCOPE_SUFFIX):
        return entry[: -len(SCOPE_SUFFIX)]
    return entry[:-1] if entry.endswith("/") else entry


def applies_to_problem(entry: str) -> tuple[str, str] | None:
    """(problem code, message template with `{value}`) when the profile refuses `entry` as an `applies_to` path."""
    path = applies_to_base(entry)
    if not path or path.startswith("/") or "\\" in path:
        return "applies-to", "'{value}' must be a repository-relative path"
    if any(part in ("", ".", "..") for part in path.split("/")):
        return "applies-to", "'{value}' has an empty, . or .. segment"
    # The matcher has no glob syntax: brackets and braces are ordinary characters (Next.js
    # `app/[id]/page.tsx`). `*` and `?` are refused because no portable file name holds them, so
    # such an entry is a glob that would silently match nothing.
    if any(ch in path for ch in "*?"):
        return "applies-to-glob", "'{value}' uses glob syntax; only exact paths, prefixes and a trailing /** scope"
    return None
