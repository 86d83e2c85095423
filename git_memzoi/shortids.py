"""IDs as git takes object names: a unique prefix stands for the whole ID; an ambiguous one lists its candidates."""

from __future__ import annotations

from collections.abc import Iterable

from git_memzoi.errors import Ambiguous, UsageError

#: How many candidates an ambiguous prefix lists (git lists every candidate; these IDs are long).
LISTED = 10


def expand(name: str, candidates: Iterable[str], what: str) -> str:
    """The one candidate `name` is a prefix of (`name` itself when it is one, or when none matches)."""
    if not name.strip():
        # Every ID begins with "": an unset shell variable (`approve "$ID"`) would stand for the
        # only proposal there is. git refuses an empty object name too.
        raise UsageError(f"an empty {what} ID", hint="give the ID or a unique prefix of it")
    found = sorted({c for c in candidates if c.startswith(name)})
    if name in found or not found:
        return name
    if len(found) == 1:
        return found[0]
    shown = found[:LISTED]
    more = f"\n  ... and {len(found) - LISTED} more" if len(found) > LISTED else ""
    listed = "".join(f"\n  {candidate}" for candidate in shown)
    raise Ambiguous(
        f"{name!r} is ambiguous: {len(found)} {what} IDs begin with it; the candidates are:{listed}{more}",
        hint="give more of the ID",
    )
