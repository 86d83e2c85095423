"""`applies_to` entries: the repository path each one is anchored at. Import-light for the read path."""

from __future__ import annotations

SCOPE_SUFFIX = "/**"


def applies_to_base(entry: str) -> str:
    """The path an `applies_to` entry is anchored at: `src/auth/**` and `src/auth/` -> `src/auth`."""
    if entry.endswith(SCOPE_SUFFIX):
        return entry[: -len(SCOPE_SUFFIX)]
    return entry[:-1] if entry.endswith("/") else entry
