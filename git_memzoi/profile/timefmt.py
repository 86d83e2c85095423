"""RFC 3339 timestamps with a timezone, kept as the exact strings the file holds."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

# RFC 3339 puts no bound on the fraction digits; every digit is kept in the file's string and
# instants are compared to the microsecond (the finest a datetime holds).
_RFC3339 = re.compile(
    r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[Tt]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)"
    r"(\.\d+)?([Zz]|[+-]([01]\d|2[0-3]):[0-5]\d)"
)

#: The latest instant a datetime can hold; retention arithmetic stops here instead of overflowing.
LATEST = datetime.max.replace(tzinfo=UTC)


class OutOfRange(ValueError):
    """A well-formed timestamp whose UTC instant no datetime can hold."""


def is_rfc3339(value: str) -> bool:
    """True when `value` is an RFC 3339 date-time with a timezone that names a real instant."""
    try:
        parse_rfc3339(value)
    except ValueError:
        return False
    return True


def parse_rfc3339(value: str) -> datetime:
    """Parse an RFC 3339 string into an aware UTC datetime (raises ValueError)."""
    if not isinstance(value, str) or not _RFC3339.fullmatch(value):
        raise ValueError(f"{value!r} is not an RFC 3339 date-time with a timezone")
    text = value.replace("t", "T").replace("z", "Z")
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    head, sep, tail = text.partition(".")
    if sep:  # fromisoformat takes at most 6 fractional digits; finer ones cannot change the microsecond
        digits = len(tail) - 6  # the offset is always +HH:MM here
        text = f"{head}.{tail[:digits][:6].ljust(6, '0')}{tail[digits:]}"
    try:
        moment = datetime.fromisoformat(text)
        return moment.astimezone(UTC)
    except OverflowError:
        # In range as written, but its UTC form is not (9999-12-31T23:59:59-23:59).
        raise OutOfRange(f"'{value}' falls outside the years 0001-9999 once converted to UTC") from None


def plus(moment: datetime, delta: timedelta) -> datetime:
    """`moment + delta`, held at LATEST when the sum would pass the last representable instant."""
    try:
        return moment + delta
    except OverflowError:
        return LATEST


def format_rfc3339(moment: datetime) -> str:
    """Render an aware datetime as RFC 3339 UTC with a `Z` (seconds precision unless sub-second)."""
    if moment.tzinfo is None:
        raise ValueError("naive datetime")
    moment = moment.astimezone(UTC)
    # By hand rather than strftime, whose %Y drops the leading zeros of years before 1000.
    text = (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T"
        f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}"
    )
    if moment.microsecond:
        text += f".{moment.microsecond:06d}"
    return text + "Z"
