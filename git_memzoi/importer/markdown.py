"""Markdown as an importer reads it: headings outside fenced code, sections by heading, generated blocks.

Pure: text in, line-numbered pieces out. Line numbers are 1-based and count the lines of the
file as read (front matter included), so `path:line-line` points at the source.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from git_memzoi.errors import FormatError

#: A section larger than this splits once more at its next heading level.
SPLIT_BYTES = 8 * 1024

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")

#: The Rust Memzoi's managed block (also what `export --into` writes), and Ruler's segment marker.
BLOCK_START = "<!-- memzoi:start -->"
BLOCK_END = "<!-- memzoi:end -->"
_CLAUDE_IMPORT = re.compile(r"(?:^|(?<=\s))@([A-Za-z0-9_./-]+)")
_CODE_SPAN = re.compile(r"`[^`]*`")
_RULER_SOURCE = re.compile(r"^\s*<!--\s*Source:\s*(.+?)\s*-->\s*$")


@dataclass(frozen=True)
class Heading:
    """An ATX heading outside fenced code: its level, text and 1-based line."""

    level: int
    text: str
    line: int


@dataclass(frozen=True)
class Section:
    """A piece of a file that becomes one record: its heading path, its Markdown and its line span."""

    path: tuple[str, ...]  # heading texts from the top: (H1, H2) or (H1,) or ()
    title: str
    body: str
    first: int
    last: int


def headings(lines: list[str], offset: int = 0) -> list[Heading]:
    """ATX headings of `lines` that are not inside a fenced code block (a `# comment` in a shell fence is not one)."""
    out: list[Heading] = []
    fence: str | None = None
    for index, line in enumerate(lines):
        marker = _FENCE.match(line)
        if marker is not None:
            run = marker.group(1)
            if fence is None:
                if not (run[0] == "`" and "`" in marker.group(2)):
                    fence = run
                continue
            if run[0] == fence[0] and len(run) >= len(fence) and not marker.group(2).strip():
                fence = None
            continue
        if fence is not None:
            continue
        found = _ATX.match(line)
        if found is not None:
            out.append(Heading(len(found.group(1)), (found.group(2) or "").strip(), index + 1 + offset))
    return out


def unfenced(lines: list[str]) -> list[bool]:
    """For each line, True when it is outside fenced code (fence lines themselves count as inside)."""
    out: list[bool] = []
    fence: str | None = None
    for line in lines:
        marker = _FENCE.match(line)
        if marker is not None:
            run = marker.group(1)
            if fence is None and not (run[0] == "`" and "`" in marker.group(2)):
                fence = run
                out.append(False)
                continue
            if fence is not None and run[0] == fence[0] and len(run) >= len(fence) and not marker.group(2).strip():
                fence = None
                out.append(False)
                continue
        out.append(fence is None)
    return out


def strip_blocks(path: str, lines: list[str]) -> tuple[list[str], list[tuple[int, int]]]:
    """The lines with every managed `memzoi:start`…`memzoi:end` block blanked, and the blocks' spans.

    Blanking (not removing) keeps every other line's number. An unbalanced pair is an error naming its line.
    """
    out = list(lines)
    spans: list[tuple[int, int]] = []
    if not any("memzoi:" in line for line in lines):
        return out, spans
    outside = unfenced(lines)
    start: int | None = None
    for index, line in enumerate(lines):
        if not outside[index]:
            continue
        text = line.strip()
        if text == BLOCK_START:
            if start is not None:
                raise FormatError(
                    "import-marker", f"a second {BLOCK_START} before {BLOCK_END}", path=path, line=index + 1
                )
            start = index
        elif text == BLOCK_END:
            if start is None:
                raise FormatError("import-marker", f"{BLOCK_END} without {BLOCK_START}", path=path, line=index + 1)
            for blank in range(start, index + 1):
                out[blank] = ""
            spans.append((start + 1, index + 1))
            start = None
    if start is not None:
        raise FormatError("import-marker", f"{BLOCK_START} is never closed by {BLOCK_END}", path=path, line=start + 1)
    return out, spans


def ruler_sources(lines: list[str]) -> list[tuple[int, str]]:
    """Ruler's `<!-- Source: path -->` markers outside fences: (line, the source path it names)."""
    if not any("Source:" in line for line in lines):
        return []
    outside = unfenced(lines)
    out: list[tuple[int, str]] = []
    for index, line in enumerate(lines):
        found = _RULER_SOURCE.match(line) if outside[index] else None
        if found is not None:
            out.append((index + 1, found.group(1)))
    return out


def _text(lines: list[str], first: int, last: int, base: int) -> str:
    """Lines `first`..`last` (1-based, file numbering) as text, trimmed of blank lines at both ends."""
    return "\n".join(lines[first - base : last - base + 1]).strip("\n")


def _span(lines: list[str], first: int, last: int, base: int) -> tuple[int, int]:
    """The span without blank lines at its ends."""
    while first < last and not lines[first - base].strip():
        first += 1
    while last > first and not lines[last - base].strip():
        last -= 1
    return first, last


def split(lines: list[str], base: int, title: str) -> list[Section]:
    """Sections of a Markdown body whose first line is line `base` of the file.

    One section per H2; the first H1 is the group (its title prefixes nothing, it heads the path)
    and the text under it before the first H2 is a section of its own; a file without H2 splits
    at its shallowest heading; a section over SPLIT_BYTES splits once more at its next level.
    `title` names what has no heading (the file).
    """
    end = base + len(lines) - 1
    found = headings(lines, base - 1)
    h1 = next((h for h in found if h.level == 1), None)
    group = (h1.text,) if h1 is not None and h1.text else ()
    levels = sorted({h.level for h in found if h is not h1})
    if not levels:
        return _whole(lines, base, end, h1.text if h1 and h1.text else title, group, h1)
    cut = 2 if 2 in levels else levels[0]
    marks = [h for h in found if h.level <= cut and h is not h1]
    out: list[Section] = []
    lead_first = h1.line + 1 if h1 is not None and h1.line < marks[0].line else base
    if h1 is not None and h1.line > marks[0].line:
        lead_first = base
    lead = [n for n in range(lead_first, marks[0].line) if h1 is None or n != h1.line]
    if lead and any(lines[n - base].strip() for n in lead):
        first, last = _span(lines, lead[0], lead[-1], base)
        body = "\n".join(lines[n - base] for n in range(first, last + 1) if h1 is None or n != h1.line).strip("\n")
        if h1 is not None and h1.line < first:  # the text under the H1 is the H1's section: its span holds it
            first = h1.line
        out.append(Section(group, group[0] if group else title, body, first, last))
    for index, mark in enumerate(marks):
        stop = marks[index + 1].line - 1 if index + 1 < len(marks) else end
        if h1 is not None and mark.line < h1.line <= stop:
            stop = h1.line - 1
        first, last = _span(lines, mark.line, stop, base)
        body = _text(lines, first, last, base)
        path = (*group, mark.text or f"line {mark.line}")
        section = Section(path, mark.text or title, body, first, last)
        out.extend(_split_big(lines, base, section, mark.level))
    return out


def _whole(
    lines: list[str], base: int, end: int, title: str, group: tuple[str, ...], h1: Heading | None
) -> list[Section]:
    if not any(line.strip() for line in lines):
        return []
    first, last = _span(lines, base, end, base)
    if h1 is not None and first == h1.line:
        if first == last:
            return []
        inner, last = _span(lines, first + 1, last, base)
        return [Section(group, title, _text(lines, inner, last, base), first, last)]  # the span holds its H1
    return [Section(group, title, _text(lines, first, last, base), first, last)]


def _split_big(lines: list[str], base: int, section: Section, level: int) -> list[Section]:
    """`section` itself, or its pieces at the next heading level when it is over SPLIT_BYTES."""
    if len(section.body.encode("utf-8")) <= SPLIT_BYTES:
        return [section]
    inner = headings(lines[section.first - base + 1 : section.last - base + 1], section.first)
    deeper = sorted({h.level for h in inner if h.level > level})
    if not deeper:
        return [section]
    marks = [h for h in inner if h.level == deeper[0]]
    out: list[Section] = []
    head_last = marks[0].line - 1
    first, last = _span(lines, section.first, head_last, base)
    out.append(Section(section.path, section.title, _text(lines, first, last, base), first, last))
    for index, mark in enumerate(marks):
        stop = marks[index + 1].line - 1 if index + 1 < len(marks) else section.last
        first, last = _span(lines, mark.line, stop, base)
        title = f"{section.title}: {mark.text}" if mark.text else section.title
        out.append(Section((*section.path, mark.text), title, _text(lines, first, last, base), first, last))
    return out


def claude_imports(lines: list[str], folder: str) -> list[str]:
    """Claude Code's `@path` imports outside code, as repository paths (relative to `folder`, the file's own).

    Home-relative and absolute paths (`@~/…`, `@/…`) and paths leaving the repository are left out:
    personal files never become repository memory.
    """
    outside = unfenced(lines)
    out: list[str] = []
    for index, line in enumerate(lines):
        if not outside[index] or "@" not in line:
            continue
        for name in _CLAUDE_IMPORT.findall(_CODE_SPAN.sub("", line)):
            name = name.rstrip(".")
            if name.startswith("/") or "." not in posixpath.basename(name):
                continue
            path = posixpath.normpath(posixpath.join(folder, name))
            if path.startswith("../") or path == ".." or path in out:
                continue
            out.append(path)
    return out
