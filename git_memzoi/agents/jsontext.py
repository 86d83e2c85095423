"""Add members to a JSON document as text: every byte of what was there stays as it was.

`agent install` adds its own entries to the user's `.mcp.json` and settings files. Dumping the
parsed object again would re-indent the user's entries (a one-line `"args": [...]` spread over
four lines); here the new members and array items are inserted at the end of the object or array
that receives them, in the layout around them (one line when it is on one line, else the
indentation of its members), and nothing else moves.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


@dataclass
class _Node:
    """Where a value lies in the text: [start, end); an object's members and an array's items by the same."""

    start: int
    end: int
    members: dict[str, _Node] = field(default_factory=dict)
    key_at: dict[str, int] = field(default_factory=dict)  # where each member's key starts
    items: list[_Node] = field(default_factory=list)
    is_object: bool = False
    is_array: bool = False


def _skip(text: str, at: int) -> int:
    match = _SPACE.match(text, at)
    return match.end() if match else at


def _scan(text: str, at: int) -> _Node:
    """The value starting at `at` (no whitespace before it), with the spans of what it holds."""
    if text.startswith("{", at):
        node = _Node(at, at, is_object=True)
        at = _skip(text, at + 1)
        while not text.startswith("}", at):
            key_at = at
            key, at = json.decoder.scanstring(text, at + 1)  # type: ignore[attr-defined]
            at = _skip(text, _skip(text, at) + 1)  # past the colon
            node.members[key] = child = _scan(text, at)
            node.key_at[key] = key_at
            at = _skip(text, child.end)
            if text.startswith(",", at):
                at = _skip(text, at + 1)
        node.end = at + 1
        return node
    if text.startswith("[", at):
        node = _Node(at, at, is_array=True)
        at = _skip(text, at + 1)
        while not text.startswith("]", at):
            child = _scan(text, at)
            node.items.append(child)
            at = _skip(text, child.end)
            if text.startswith(",", at):
                at = _skip(text, at + 1)
        node.end = at + 1
        return node
    _, end = _DECODER.raw_decode(text, at)
    return _Node(at, end)


def _line_indent(text: str, at: int) -> str:
    """The whitespace that starts the line `at` lies on."""
    start = text.rfind("\n", 0, at) + 1
    return _SPACE.match(text, start).group().replace("\n", "").replace("\r", "")  # type: ignore[union-attr]


def _layout(text: str, node: _Node, children: list[_Node]) -> tuple[str | None, str]:
    """(the indentation of the container's members, or None when it is on one line; its own line's)."""
    own = _line_indent(text, node.start)
    if children:
        first = children[0].start if node.is_array else next(iter(node.key_at.values()))
        if "\n" not in text[node.start : first]:
            return None, own
        return _line_indent(text, first), own
    return own + _unit(text), own


def _unit(text: str) -> str:
    """The file's indentation step: the first indented line's whitespace, else two spaces."""
    match = re.search(r"\n([ \t]+)\S", text)
    return match.group(1) if match else "  "


def _render(value: Any, indent: str | None, unit: str) -> str:
    if indent is None:
        return json.dumps(value, ensure_ascii=False)
    return json.dumps(value, ensure_ascii=False, indent=unit).replace("\n", "\n" + indent)


def _insert(text: str, node: _Node, children: list[_Node], pieces: list[str], unit: str) -> tuple[int, str]:
    """(where, what) to insert so that the container ends with `pieces` (member or item texts)."""
    indent, own = _layout(text, node, children)
    if indent is None:
        body = ", ".join(pieces)
        return (children[-1].end, ", " + body) if children else (node.start + 1, body)
    joined = ("," + "\n" + indent).join(pieces)
    if children:
        return children[-1].end, ",\n" + indent + joined
    # an empty container: its members on lines of their own, the closing bracket on its line
    return node.start + 1, "\n" + indent + joined + "\n" + own


def _plan(text: str, node: _Node, old: Any, new: Any, unit: str, out: list[tuple[int, str]]) -> bool:
    """Collect the insertions that take `old` (what `node` holds) to `new`; False when an insertion cannot."""
    if old == new:
        return True
    if node.is_object and isinstance(old, dict) and isinstance(new, dict):
        if any(key not in new for key in old):
            return False
        children = list(node.members.values())
        added = [key for key in new if key not in old]
        if added:
            indent, _ = _layout(text, node, children)
            inner = indent if indent is not None else None
            pieces = [f"{json.dumps(k, ensure_ascii=False)}: {_render(new[k], inner, unit)}" for k in added]
            out.append(_insert(text, node, children, pieces, unit))
        return all(_plan(text, node.members[k], old[k], new[k], unit, out) for k in old)
    if node.is_array and isinstance(old, list) and isinstance(new, list):
        if len(new) < len(old) or any(a != b for a, b in zip(old, new, strict=False)):
            return False
        indent, _ = _layout(text, node, node.items)
        out.append(_insert(text, node, node.items, [_render(v, indent, unit) for v in new[len(old) :]], unit))
        return True
    return False


def add_members(text: str, old: Any, new: Any) -> str | None:
    """`text` (the JSON document `old`) with what `new` adds inserted; None when `new` does more than add.

    Only members added to objects and items appended to arrays are written; every other byte of
    `text` is kept, and the result is read back before it is returned. None asks the caller to
    write the document whole.
    """
    start = _skip(text, 0)
    node = _scan(text, start)
    out: list[tuple[int, str]] = []
    if not _plan(text, node, old, new, _unit(text), out):
        return None
    for at, piece in sorted(out, reverse=True):
        text = text[:at] + piece + text[at:]
    try:  # read back: what is written is exactly `new`, or the caller writes it whole
        return text if json.loads(text) == new else None
    except ValueError:
        return None
