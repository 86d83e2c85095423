"""RFC 3339 timestamps with a timezone, kept as the exact strings the file holds."""

from __future__ import annotations

import re
from datetime import datetime, timezone

_RFC3339 = re.compile(
    r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)"
    r"(\.\d{1,9})?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)$"
)


def is_rfc3339(value: str) -> bool:
    """True when `value` is an RFC 3339 date-time with a timezone that names a real instant."""
    if not _RFC3339.match(value):
        return False
    try:
        parse_rfc3339(value)
    except ValueError:
        return False
    return True


def parse_rfc3339(value: str) -> datetime:
    """Parse an RFC 3339 string into an aware UTC datetime (raises ValueError)."""
    text = value.replace("t", "T").replace("z", "Z")
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    head, sep, tail = text.partition(".")
    if sep:  # fromisoformat takes at most 6 fractional digits
        digits = re.match(r"\d+", tail)
        assert digits is not None
        frac = digits.group(0)
        text = f"{head}.{frac[:6].ljust(6, '0')}{tail[len(frac):]}"
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        raise ValueError(f"{value!r} has no timezone")
    return moment.astimezone(timezone.utc)


def format_rfc3339(moment: datetime) -> str:
    """Render an aware datetime as RFC 3339 UTC with a `Z` (seconds precision unless sub-second)."""
    if moment.tzinfo is None:
        raise ValueError("naive datetime")
    moment = moment.astimezone(timezone.utc)
    if moment.microsecond:
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
