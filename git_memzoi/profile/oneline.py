"""One-line text fields: find and escape the characters that would break a line (import-light)."""

from __future__ import annotations

import re

# C0 and C1 controls (newline, carriage return, tab, escape, DEL, CSI...), the Unicode line and
# paragraph separators, and the bidirectional embeddings, overrides and isolates: each can end a
# line, rewrite a terminal (clear it, set its title, write the clipboard) or show text in another
# order than it is stored, so none belongs in one line.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# A multi-line text (a record's body, a packet's reason) may hold newlines and tabs, and the
# bidirectional marks right-to-left prose needs; no other control.
_TEXT_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


#: the characters _CONTROL matches in an ASCII text
_ASCII_CONTROLS = tuple(chr(c) for c in (*range(0x00, 0x20), 0x7F))
#: the characters _TEXT_CONTROL matches, those of an ASCII text first
_ASCII_TEXT_CONTROLS = tuple(chr(c) for c in (*range(0x00, 0x09), *range(0x0B, 0x20), 0x7F))
_TEXT_CONTROLS = _ASCII_TEXT_CONTROLS + tuple(chr(c) for c in range(0x80, 0xA0))
#: a text longer than this is first searched for each control character (a memchr each, many times
#: faster than the regex's character class): a source file of an import, a record's body, an
#: import's titles joined
_LONG_TEXT = 512


def first_control(text: str) -> str | None:
    """The first control character in `text`, or None."""
    if len(text) > _LONG_TEXT and text.isascii() and not any(char in text for char in _ASCII_CONTROLS):
        return None
    found = _CONTROL.search(text)
    return found.group(0) if found else None


def first_text_control(text: str) -> tuple[int, str] | None:
    """(offset, character) of the first control character a multi-line text may not hold, or None."""
    if len(text) > _LONG_TEXT:
        controls = _ASCII_TEXT_CONTROLS if text.isascii() else _TEXT_CONTROLS
        if not any(char in text for char in controls):
            return None
    found = _TEXT_CONTROL.search(text)
    return (found.start(), found.group(0)) if found else None


def escape(text: str) -> str:
    """`text` with every control character written as a visible escape (`\\n`, `\\x1b`, `\\u2028`)."""
    return _CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


def shown(char: str) -> str:
    """One control character as its escape, for a message (`\\x1b`)."""
    return char.encode("unicode_escape").decode("ascii")


def escape_text(text: str) -> str:
    """Multi-line `text` with every control character but newline and tab written as a visible escape."""
    return _TEXT_CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)
