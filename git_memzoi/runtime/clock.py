"""The one clock every retention and lifecycle decision reads, so tests can move time.

`MEMZOI_NOW` (RFC 3339) pins the clock for a whole process, which is how subprocess tests
and the demo move it; in-process tests call `set_now`.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

from git_memzoi.errors import UsageError
from git_memzoi.profile.timefmt import parse_rfc3339

_pinned: datetime | None = None


def now() -> datetime:
    """The current instant, aware and in UTC."""
    if _pinned is not None:
        return _pinned
    env = os.environ.get("MEMZOI_NOW")
    if env:
        try:
            return parse_rfc3339(env)
        except ValueError:
            raise UsageError(f"MEMZOI_NOW={env!r} is not an RFC 3339 date-time with a timezone") from None
    return datetime.now(UTC)


def set_now(moment: datetime | None) -> None:
    """Pin the clock (None releases it)."""
    global _pinned
    if moment is not None and moment.tzinfo is None:
        raise ValueError("the clock needs an aware datetime")
    _pinned = moment.astimezone(UTC) if moment is not None else None
