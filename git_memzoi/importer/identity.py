"""Who an imported item is: its stable key, its origin (key plus normalised content) and its source_ref (pure)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from git_memzoi.importer.formats import Item

#: The origin route of every imported record.
ROUTE = "import"
#: origin_key = `import:<16 hex of the key>:<16 hex of the content>`.
ORIGIN_PREFIX = "import:"


def _hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def key(item: Item, ordinal: int = 1) -> str:
    """(format, source path, heading path): stable while the item's place in its source stays.

    An OKF bundle record's key is its concept ID alone: the same record in a bundle anywhere.
    """
    anchor = "" if item.concept_id is not None else item.source.real
    parts = [item.fmt, anchor, *item.heading]
    if ordinal > 1:
        parts.append(f"#{ordinal}")
    return "\0".join(parts)


#: the whitespace `str.split()` splits an ASCII text at, besides spaces and newlines
_OTHER_ASCII_SPACES = ("\t", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f")


def plain_spaces(text: str) -> bool:
    """Is `text` ASCII with spaces and newlines its only whitespace (as most Markdown is)?"""
    return text.isascii() and not any(space in text for space in _OTHER_ASCII_SPACES)


def collapsed(item: Item, *, plain: bool = False) -> str:
    """The item's body with every run of whitespace made one space: what its text digests are taken over.

    `plain`: the body's source is `plain_spaces`, and so is the body (cut from it); its runs are then
    closed up by `replace`, the same text as `split` and `join` give without a string per word.
    """
    if not plain:
        return " ".join(item.body.split())
    text = item.body.replace("\n\n", "\n").replace("\n", " ")  # a blank line: one pass, not two
    while "  " in text:
        text = text.replace("  ", " ")
    return text.strip(" ")


def normalised(item: Item, body: str | None = None) -> str:
    """What decides whether an item changed: its text with whitespace collapsed, its fields and activation.

    `body` is `collapsed(item)` when the caller has it already (a plan computes it once per item).
    """
    parts: tuple[str, ...] = (
        collapsed(item) if body is None else body,
        item.title,
        item.type,
        item.lane,
        " ".join(item.applies_to),
        _query(sorted(item.activation.items())) if item.activation else "",
    )
    if item.kept:
        parts += (json.dumps(item.kept, sort_keys=True, default=str),)
    return "\0".join(parts)


def _query(pairs: list[tuple[str, str]], safe: str = "") -> str:
    """`urlencode(pairs)`, with urllib loaded only by the items that have activation or make packets."""
    from urllib.parse import urlencode

    return urlencode(pairs, safe=safe)


def text_digest(item: Item, body: str | None = None) -> str:
    """The digest duplicates are found by: the body alone, whitespace collapsed."""
    return _hex(collapsed(item) if body is None else body)


def origin_key(item_key: str, item: Item, body: str | None = None, *, digest: str | None = None) -> str:
    """`import:<key digest>:<content digest>` (`digest`: `key_digest(item_key)` when the caller has it)."""
    content = hashlib.sha256(normalised(item, body).encode("utf-8")).hexdigest()[:16]  # `_hex`, one call fewer
    return f"{ORIGIN_PREFIX}{digest or _hex(item_key)}:{content}"


def key_part(origin: str) -> str | None:
    """The key digest of an imported record's origin_key, or None for any other origin."""
    if not origin.startswith(ORIGIN_PREFIX):
        return None
    parts = origin.split(":")
    return parts[1] if len(parts) == 3 and len(parts[1]) == 16 else None


def key_digest(item_key: str) -> str:
    return hashlib.sha256(item_key.encode("utf-8")).hexdigest()[:16]  # `_hex`, one call fewer


@dataclass(frozen=True)
class SourceRef:
    """What source_ref holds: the source path, its blob, the line span and the activation the source gave."""

    path: str
    blob: str
    first: int
    last: int
    fmt: str
    activation: tuple[tuple[str, str], ...] = ()


def source_ref(item: Item) -> str:
    """`import:<path>?format=F&blob=OID&lines=A-B[&globs=…&alwaysApply=…]`: provenance an export can read back."""
    query = [("format", item.fmt), ("blob", item.source.oid), ("lines", f"{item.first}-{item.last}")]
    query += sorted(item.activation.items())
    from urllib.parse import quote

    return f"import:{quote(item.source.real, safe='/')}?{_query(query, safe='/*,')}"


def parse_source_ref(ref: str | None) -> SourceRef | None:
    """A source_ref written by `source_ref`, or None."""
    if not ref or not ref.startswith("import:") or "?" not in ref:
        return None
    from urllib.parse import parse_qsl, unquote

    path, _, query = ref[len("import:") :].partition("?")
    values = dict(parse_qsl(query, keep_blank_values=True))
    try:
        first, last = (int(n) for n in values.pop("lines", "0-0").split("-", 1))
    except ValueError:
        return None
    fmt = values.pop("format", "")
    blob = values.pop("blob", "")
    return SourceRef(unquote(path), blob, first, last, fmt, tuple(sorted(values.items())))
