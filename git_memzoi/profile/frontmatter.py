"""Split a Markdown file into YAML frontmatter and body, safely, with lines for every error.

Safe YAML only (the C parser where present), no anchors or aliases, no duplicate keys,
timestamps kept as the strings the file holds, and hard limits on size and depth. The parser
and the dumper are profile.safeyaml's, imported on first use: splitting a file, and refusing
one by its size, encoding or fence, loads no PyYAML.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from git_memzoi.errors import FormatError
from git_memzoi.layout import MAX_FILE_BYTES

MAX_FRONTMATTER_BYTES = 64 * 1024
FENCE = "---"

_TAB_INDENT = re.compile(r"^[ ]*\t", re.MULTILINE)


@dataclass(frozen=True)
class Document:
    """A parsed memory file: frontmatter mapping, body, and where each part sits."""

    data: dict[str, Any]
    body: str
    frontmatter_text: str
    body_line: int
    path: str = "<input>"
    _lines: dict[tuple[Any, ...], int] | None = field(default=None, repr=False, compare=False)

    def line_of(self, loc: tuple[Any, ...]) -> int:
        """The 1-based file line of the frontmatter field at `loc` (or its nearest parent)."""
        if self._lines is None:
            from git_memzoi.profile import safeyaml

            object.__setattr__(self, "_lines", safeyaml.field_lines(self.frontmatter_text))
        lines = self._lines
        assert lines is not None
        for end in range(len(loc), 0, -1):
            if loc[:end] in lines:
                return lines[loc[:end]]
        return 1


def split(raw: bytes, path: str = "<input>") -> tuple[str, str, int] | None:
    """Return (frontmatter text, body, body line), or None when the file has no frontmatter fence."""
    if len(raw) > MAX_FILE_BYTES:
        raise FormatError(
            "file-too-large", f"file is {len(raw)} bytes; the limit is {MAX_FILE_BYTES}", path=path, line=1
        )
    if raw.startswith(b"\xef\xbb\xbf") or raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise FormatError(
            "encoding-bom", "file starts with a byte order mark; save it as UTF-8 without BOM", path=path, line=1
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise FormatError("encoding", f"file is not valid UTF-8 (byte {exc.start})", path=path, line=line) from None
    if "\r" in text:
        line = text[: text.index("\r")].count("\n") + 1
        raise FormatError("line-endings", "CR or CRLF line endings; memory files use LF", path=path, line=line)
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise FormatError("encoding", "file contains a NUL byte", path=path, line=line)
    if not (text.startswith(FENCE + "\n") or text == FENCE):
        return None
    end = text.find("\n" + FENCE, len(FENCE))
    while end != -1:
        after = end + 1 + len(FENCE)
        if after == len(text) or text[after] == "\n":
            break
        end = text.find("\n" + FENCE, after)
    if end == -1:
        raise FormatError(
            "frontmatter-unclosed", "frontmatter opened with --- on line 1 is never closed", path=path, line=1
        )
    front = text[len(FENCE) + 1 : end + 1]
    body_start = min(end + 1 + len(FENCE) + 1, len(text))
    body_line = front.count("\n") + 3
    return front, text[body_start:], body_line


def parse(raw: bytes, path: str = "<input>") -> Document:
    """Parse a memory file that must carry frontmatter; every problem is a FormatError with a line."""
    parts = split(raw, path)
    if parts is None:
        raise FormatError("frontmatter-missing", "file must start with a --- frontmatter fence", path=path, line=1)
    front, body, body_line = parts
    return Document(load_frontmatter(front, path), body, front, body_line, path)


def load_frontmatter(front: str, path: str = "<input>") -> dict[str, Any]:
    """Load frontmatter text (without fences) into a mapping of string keys."""
    if len(front.encode("utf-8")) > MAX_FRONTMATTER_BYTES:
        raise FormatError(
            "frontmatter-too-large", f"frontmatter is larger than {MAX_FRONTMATTER_BYTES} bytes", path=path, line=2
        )
    tab = _TAB_INDENT.search(front) if "\t" in front else None
    if tab:
        raise FormatError(
            "yaml-tab",
            "tab used for indentation; YAML indents with spaces",
            path=path,
            line=front[: tab.start()].count("\n") + (tab.group(0).startswith("\n")) + 2,
        )
    from git_memzoi.profile import safeyaml  # PyYAML: once there is frontmatter to parse

    data = safeyaml.load(front, path)
    if data is None:
        raise FormatError("frontmatter-empty", "frontmatter is empty", path=path, line=2)
    if not isinstance(data, dict):
        raise FormatError("frontmatter-not-mapping", "frontmatter must be a YAML mapping of fields", path=path, line=2)
    return data


def render(data: dict[str, Any], body: str) -> str:
    """Render frontmatter and body as a memory file (LF, UTF-8 text, key order kept)."""
    from git_memzoi.profile import safeyaml

    front = safeyaml.dump(data)
    if not body.startswith("\n"):
        body = "\n" + body
    if not body.endswith("\n"):
        body += "\n"
    return f"{FENCE}\n{front}{FENCE}\n{body}"


def set_top_level_scalar(text: str, key: str, value: str) -> str:
    """Rewrite one top-level `key: value` line in a file's frontmatter, leaving every other byte alone.

    Used for status transitions, so that a supersede or tombstone changes one line that the
    server hook can recognise.
    """
    parts = split(text.encode("utf-8"))
    if parts is None:
        raise FormatError("frontmatter-missing", "file has no frontmatter", line=1)
    front, _, _ = parts
    pattern = re.compile(rf"^{re.escape(key)}:[^\n]*$", re.MULTILINE)
    matches = list(pattern.finditer(front))
    if len(matches) != 1:
        raise FormatError("field-missing", f"expected one top-level {key!r} line, found {len(matches)}")
    match = matches[0]
    start = len(FENCE) + 1
    return text[: start + match.start()] + f"{key}: {value}" + text[start + match.end() :]
