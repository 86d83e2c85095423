"""Blocks a client put in a user's text (an earlier hook's context), removed before the text is used."""

from __future__ import annotations

__all__ = ["without_blocks"]


def without_blocks(text: str, opener: str, closer: str) -> str:
    """`text` with each block from `opener` to the next `closer` replaced by a space; an unclosed opener and what
    follows it are kept. Linear: `opener.*?closer` would search from every opener to the end."""
    kept: list[str] = []
    at = 0
    while (start := text.find(opener, at)) >= 0:
        end = text.find(closer, start + len(opener))
        if end < 0:
            break  # no closer after this opener, so none after a later one either
        kept += [text[at:start], " "]
        at = end + len(closer)
    return "".join(kept) + text[at:] if kept else text
