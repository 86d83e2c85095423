"""One-line text fields: find and escape the characters that would break a line (import-light)."""

from __future__ import annotations

import re

# C0 and C1 controls (newline, carriage return, escape, DEL...) and the Unicode line and
# paragraph separators: each can end a line or rewrite a terminal, so none belongs in one line.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def first_control(text: str) -> str | None:
    """The first control character in `text`, or None."""
    found = _CONTROL.search(text)
    return found.group(0) if found else None


def escape(text: str) -> str:
    """`text` with every control character written as a visible escape (`\\n`, `\\x1b`, `\\u2028`)."""
    return _CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)
