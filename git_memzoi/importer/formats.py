"""Each source format into items: the Markdown sections, rule files and ADRs that become records (pure)."""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from git_memzoi.errors import FormatError
from git_memzoi.importer import markdown
from git_memzoi.importer.sources import RULE_FORMATS, Loaded, scope_folder
from git_memzoi.profile import oneline

#: ADR statuses imported by default; the others are reported and skipped unless asked for.
IMPORTED_STATUSES = ("accepted",)
ADR_STATUSES = ("accepted", "proposed", "draft", "on hold", "deprecated", "rejected", "superseded")

_WARNING = re.compile(
    r"\b(never|don'?t|do not|must not|mustn'?t|security|secrets?|warnings?|danger|dangerous|forbidden|avoid)\b", re.I
)
_PROCEDURE = re.compile(
    r"\b(setup|set up|install(ation|ing)?|build(ing)?|tests?|testing|release|releasing|deploy(ment|ing)?|"
    r"getting started|commands?|workflows?|ci)\b",
    re.I,
)
_STATUS_LINE = re.compile(r"^\s*(?:[*-]\s*)?\**status\**\s*:\s*\**(.+?)\**\s*$", re.I)
#: A line of nothing but Claude Code `@path` imports (or blank).
_IMPORTS_ONLY = re.compile(r"^\s*(?:@\S+\s*)*$")
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s#]+)[^)]*\)")
#: Headings that speak of the instruction files themselves: their scope, inheritance, precedence, contents.
_META_TITLE = re.compile(
    r"^(?:scopes?(?! of work)|inheritance|precedence|(?:source of truth|scope)\b.*\bprecedence|"
    r"(?:single |canonical )?sources? of truth|applicability|(?:purpose|goals?) (?:and|&) scope|"
    r"(?:(?:instruction|rule|file|document)s? )?hierarchy|last updated|(?:document|revision|version) history|"
    r"when (?:this|these) (?:file|files|rules|instructions|guide) appl(?:y|ies)|"
    r"(?:about|using|how to use|how to read|when to use) (?:this|these) (?:file|files|document|guide|instructions)|"
    r"table of contents|contents|toc|(?:available|related|other|more) (?:skills|instructions|instruction files)|"
    r"skills|this file|file purpose|(?:trust|follow|maintaining|updating) (?:these|this|the) "
    r"(?:instructions|file|files|guide)|(?:pattern|path|file)[- ]based instructions|nested instructions|"
    r"instruction files?)\b",
    re.I,
)
#: Words naming an instruction file, a rule folder or these instructions in a sentence.
_META_WORDS = re.compile(
    r"(?:\b(?:AGENTS|CLAUDE|GEMINI)(?:\.override|\.local)?\.md\b|copilot-instructions|\.instructions\.md|"
    r"\.cursor/rules|\.mdc\b|\.clinerules|\.windsurf/rules|\.claude/rules|\.github/skills|\bskills?\b|"
    r"\b(?:this|these|that|the|its|their) (?:(?:root|nested|closest|applicable|local|parent|own|package's) ){0,2}"
    r"(?:file|files|document|guide|instructions)\b|\binstruction files?\b|\bClaude Code\b|"
    r"\bGitHub Copilot\b|\b(?:these|the following) rules appl(?:y|ies)\b|\binherit(?:s|ed|ing)? (?:from|all|every)\b|"
    r"\b(?:takes?|have|has) precedence\b|\.github/instructions|\.cursorrules|\.windsurfrules)",
    re.I,
)
#: A rule file whose name, title or description says it is about writing or keeping rule files (Cursor's
#: `cursor_rules.mdc`, "Guidelines for creating and maintaining Cursor rules", a `self_improve` rule).
_META_RULE = re.compile(
    r"^(?:cursor|claude|windsurf|cline|copilot) rules?$|^self improve$|"
    r"\b(?:creat|writ|maintain|improv|updat|add|edit|format|structur|organi[sz])\w* (?:new |the |these )?"
    r"(?:(?:cursor|claude|windsurf|cline|copilot|agent) rules\b|rules? files?|\.mdc\b|instruction files?|"
    r"AGENTS\.md|CLAUDE\.md|GEMINI\.md)|\b(?:rules?|instructions?) (?:about|for|on) (?:writing |creating )?"
    r"(?:rules|rule files|instructions)\b",
    re.I | re.M,
)
_SENTENCE = re.compile(r"(?<=[.!?:;])\s+|\n+")
#: Titles that say nothing of their own: the record carries its file's name.
GENERIC_TITLES = frozenset(
    "purpose scope overview introduction intro summary notes general guidelines rules instructions context "
    "background details misc miscellaneous about description important reference references".split()
)
#: A section longer than this is memory, unless nearly all of it (META_LONG_SHARE of its sentences) speaks of the
#: files: a list of the nested instruction files, say.
META_MAX_CHARS = 1200
META_LONG_SHARE = 0.8
_GLOB_CHARS = "*?[{"


@dataclass
class Item:
    """One piece of a source that may become a record, with everything its packet needs."""

    fmt: str
    source: Loaded
    heading: tuple[str, ...]
    title: str
    body: str
    first: int
    last: int
    type: str
    lane: str
    applies_to: tuple[str, ...]
    activation: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    skip: str | None = None  # why it is reported but not imported
    generated: str | None = None  # what generated it, when it is generated content
    adr_status: str | None = None
    superseded_by: tuple[str, ...] = ()  # repository paths of ADRs that replace this one
    supersedes: tuple[str, ...] = ()  # repository paths of ADRs this one replaces
    concept_id: str | None = None  # an OKF bundle record's concept ID: its key, and the ID a create keeps
    kept: dict[str, Any] = field(default_factory=dict)  # an OKF record's fields its packet carries over

    @property
    def where(self) -> str:
        return f"{self.source.named}:{self.first}-{self.last}"


def control_of(item: Item, *, body: bool = True) -> tuple[str, str] | None:
    """(field, character) of the first control character `item` would carry into its packet, or None.

    The profile's rule, as `validate` and `apply` apply it to the packet: one-line fields take
    printable text only; a body may hold newlines and tabs too. `body=False` leaves the body
    out: every body is cut from its source's text, so a source without one has none in them.
    """
    bad = oneline.first_control(item.title)
    if bad is not None:
        return "title", bad
    hit = oneline.first_text_control(item.body) if body else None
    if hit is not None:
        return "the body", hit[1]
    for path in item.applies_to:
        bad = oneline.first_control(path)
        if bad is not None:
            return "applies_to", bad
    if not (item.activation or item.kept):
        return None
    for name, value in {**item.activation, **item.kept}.items():
        for text in _texts(value):
            bad = oneline.first_control(text)
            if bad is not None:
                return name, bad
    return None


def _texts(value: Any) -> list[str]:
    """Every string in a field's value (a string, or lists and mappings of them)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [text for part in value for text in _texts(part)]
    return []


def classify_text(title: str) -> tuple[str, str]:
    """(type, lane) of a section by its title: warning words, then procedure words, else a convention."""
    if _WARNING.search(title):
        return "warning", "semantic"
    if _PROCEDURE.search(title):
        return "procedure", "procedural"
    return "convention", "semantic"


def front_matter(src: Loaded) -> tuple[dict[str, object], list[str], int]:
    """A rule file's front matter as simple `key: value` and `- item` lines, its body lines, and the body's first line.

    Deliberately not YAML: Cursor writes `globs: *.ts`, which YAML reads as an alias. Anything
    that is neither a pair, a list item, a comment nor blank is an error naming the line. A second
    block right after the first (a tool that prepended its own) is front matter too, never the body:
    its keys count where the first block lacks them.
    """
    lines = src.text.split("\n")
    if not lines or lines[0].strip() != "---":
        return {}, lines, 1
    data, end = _block(src, lines, 0, strict=True)
    assert end is not None
    start = end + 1
    while start < len(lines) and not lines[start].strip():
        start += 1
    if start < len(lines) and lines[start].strip() == "---":
        more, close = _block(src, lines, start, strict=False)
        if close is not None and more:
            for key, value in more.items():
                data.setdefault(key, value)
            end = close
    return data, lines[end + 1 :], end + 2


def _block(src: Loaded, lines: list[str], opened: int, *, strict: bool) -> tuple[dict[str, object], int | None]:
    """The `key: value` block opened by `---` at index `opened`, and the index of its closing `---`.

    Not `strict`: a line that is not front matter, or no closing line, gives ({}, None) (the text is a body).
    """
    data: dict[str, object] = {}
    key: str | None = None
    for index in range(opened + 1, len(lines)):
        line = lines[index]
        stripped = line.strip()
        if stripped == "---":
            return data, index
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("- ") and key is not None:
            current = data.get(key)
            values = current if isinstance(current, list) else []
            values.append(_unquote(stripped[2:].strip()))
            data[key] = values
            continue
        name, colon, value = line.partition(":")
        key = name.strip() if colon and not line[0].isspace() else ""
        if key and " " not in key:
            data[key] = _unquote(value.strip()) if value.strip() else []
            continue
        if not strict:
            return {}, None
        problem = f"{line.strip()!r} is not `key: value`" if colon and not line[0].isspace() else None
        raise FormatError(
            "import-front-matter", problem or f"{stripped!r} is not `key: value`", path=src.real, line=index + 1
        )
    if not strict:
        return {}, None
    raise FormatError("import-front-matter", "front matter opened by --- is never closed", path=src.real, line=1)


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _as_list(value: object) -> list[str]:
    """A globs-like value: a list, or a comma-separated string (Cursor and Copilot write both)."""
    if isinstance(value, list):
        parts = [str(v) for v in value]
    elif isinstance(value, str):
        inner = value.strip()
        if inner.startswith("[") and inner.endswith("]"):
            inner = inner[1:-1]
        parts = _commas(inner)
    else:
        return []
    return [_unquote(p.strip()) for p in parts if p.strip()]


def _commas(text: str) -> list[str]:
    """`text` split at the commas outside braces: `src/*.{ts,tsx}, lib/**` is two globs, not three."""
    parts: list[str] = []
    depth, start = 0, 0
    for index, char in enumerate(text):
        if char == "{":
            depth += 1
        elif char == "}":
            depth = max(0, depth - 1)
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


def glob_scope(globs: list[str], folder: str) -> tuple[tuple[str, ...], list[str]]:
    """`applies_to` for globs: each glob's literal directory prefix plus `/**`; each broadening is a warning.

    A glob with no literal folder (`*.ts`, `**/*.py`) matches anywhere: the record then applies
    to the whole repository (or the file's folder).
    """
    out: list[str] = []
    warnings: list[str] = []
    anywhere = False
    for glob in globs:
        pattern = glob.strip().removeprefix("./").lstrip("/")
        if pattern.startswith("!"):
            warnings.append(f"glob {glob!r} excludes files; the record's scope cannot: ignored")
            continue
        cut = min((pattern.index(c) for c in _GLOB_CHARS if c in pattern), default=len(pattern))
        literal = pattern[:cut]
        base = literal.rsplit("/", 1)[0] if "/" in literal else ""
        exact = cut == len(pattern) and not pattern.endswith("/")
        if cut == len(pattern):
            base = pattern.rstrip("/")
        if folder:
            base = f"{folder}/{base}" if base else folder
        if exact and base:  # a path, not a glob: the entry is the path itself (it covers what is below it)
            if base not in out:
                out.append(base)
            continue
        if not base:
            anywhere = True
            where = f"{folder}/**" if folder else "the whole repository"
            warnings.append(f"glob {glob!r} is broadened to {where}")
            continue
        scope = f"{base}/**"
        if pattern.rstrip("/") != scope.removeprefix(folder + "/" if folder else "") and cut != len(pattern):
            warnings.append(f"glob {glob!r} is broadened to {scope}")
        if scope not in out:
            out.append(scope)
    if anywhere:
        return ((f"{folder}/**",) if folder else ()), warnings
    return tuple(out), warnings


def items(src: Loaded, *, folder: str | None = None) -> list[Item]:
    """The items of one source (`folder`: the scope folder, by default the named file's)."""
    scope_dir = scope_folder(src.named, src.fmt) if folder is None else folder
    if src.fmt == "adr":
        return [_adr(src)]
    if src.fmt in RULE_FORMATS:
        return [_rule(src, scope_dir)]
    lines = src.text.split("\n")
    lines, _ = markdown.strip_blocks(src.real, lines)
    applies = (f"{scope_dir}/**",) if scope_dir else ()
    base_title = posixpath.basename(src.named)
    out: list[Item] = []
    sections = markdown.split(lines, 1, base_title)
    groups = sections[0].path[:1] if sections else ()  # the H1: the section that is only it is the file's lead
    for section in sections:
        if not section.body.strip():
            continue
        if src.fmt == "claude-md" and all(_IMPORTS_ONLY.match(line) for line in section.body.split("\n")):
            continue  # `@AGENTS.md` alone: the import is followed, and says nothing of its own
        title = section.title
        if scope_dir and section.title:
            title = f"{scope_dir}: {section.title}"
        elif section.path:
            title = titled(title, src.named)
        kind, lane = classify_text(section.title)
        item = Item(src.fmt, src, section.path, title, section.body, section.first, section.last, kind, lane, applies)
        # a file's introduction: the text under its H1, or before its first heading when it has none
        lead = section.path == groups and (bool(section.path) or len(sections) > 1)
        item.skip = meta_reason(section.title, section.body, lead=lead)
        out.append(item)
    return out


def meta_reason(title: str, body: str, *, lead: bool = False) -> str | None:
    """Why a section is about the instruction files themselves (not memory), or None.

    Its heading names what only instruction files have (scope, inheritance, precedence, a table of
    contents, skills, "this file", applicability, hierarchy, the file's history), or at least half of its
    sentences, its first among them, speak of instruction files ("see AGENTS.md", "this file is…",
    `.cursor/rules`, "inherits from", "takes precedence", "these rules apply…"), the section being short
    or nearly all (META_LONG_SHARE) of it speaking of them.
    `lead`: the text under a file's H1, its introduction: half of its sentences are enough.
    """
    heading = title.strip().strip("*_`:").strip()
    if _META_TITLE.match(heading):
        return f"about the instruction files ({heading!r}): not memory"
    sentences = [s for s in _SENTENCE.split(_prose(body)) if len(re.findall(r"\w+", s)) > 2]
    if not sentences or not (lead or _META_WORDS.search(sentences[0])):
        return None
    speaking = sum(1 for s in sentences if _META_WORDS.search(s))
    if len(body) > META_MAX_CHARS and speaking < META_LONG_SHARE * len(sentences):
        return None
    if 2 * speaking >= len(sentences):
        return f"about the instruction files ({speaking} of {len(sentences)} sentences name them): not memory"
    return None


def _prose(body: str) -> str:
    """`body` as running text: less its opening heading and table rules, quote marks dropped, wrapped lines joined."""
    lines = body.split("\n")
    if lines and lines[0].lstrip().startswith("#"):
        lines = lines[1:]
    outside = markdown.unfenced(lines)
    out: list[str] = []
    for line in (line for index, line in enumerate(lines) if outside[index]):
        text = line.strip().lstrip(">").strip()
        if re.fullmatch(r"[\s|:-]*", text):
            out.append("")
        elif out and out[-1] and not re.match(r"([-*+|#]|\d+[.)])\s*", text):
            out[-1] += " " + text  # a wrapped line goes on its sentence
        else:
            out.append(text)
    return "\n".join(out)


def titled(title: str, named: str) -> str:
    """`title`, with its file's name when the title alone says nothing ("Purpose" of `CLAUDE.md`)."""
    if title.strip().strip("*_`:").strip().lower() in GENERIC_TITLES:
        return f"{title} ({named})"
    return title


def _rule(src: Loaded, folder: str) -> Item:
    """A rule file (Cursor .mdc, Copilot .instructions.md, Claude/Cline/Windsurf rules): one record."""
    data, body_lines, first = front_matter(src)
    activation: dict[str, str] = {}
    globs: list[str] = []
    for key in ("globs", "applyTo", "paths"):
        if key in data:
            globs = _as_list(data[key])
            activation[key] = ",".join(globs)
    for key in ("alwaysApply", "trigger", "description"):
        value = data.get(key)
        if isinstance(value, str) and value:
            activation[key] = value
    applies, warnings = glob_scope(globs, folder) if globs else (((f"{folder}/**",) if folder else ()), [])
    body_lines, _ = markdown.strip_blocks(src.real, body_lines)
    text = "\n".join(body_lines).strip("\n")
    stem = posixpath.basename(src.named)
    for suffix in (".instructions.md", ".mdc", ".md"):
        stem = stem.removesuffix(suffix)
    found = markdown.headings(body_lines)
    h1 = next((h for h in found if h.level == 1 and h.text), None)
    description = activation.get("description")
    title = h1.text if h1 is not None else description if description else stem.replace("-", " ").replace("_", " ")
    kind, lane = classify_text(f"{title} {description or ''} {stem}")
    if not body_lines:  # front matter alone: the item is its closing line
        first = max(1, first - 1)
    last = first + max(len(body_lines), 1) - 1
    while last > first and not body_lines[last - first].strip():
        last -= 1
    # the item is the whole file: its front matter (the rule's activation) is part of what it says
    item = Item(src.fmt, src, (), title, text, 1, last, kind, lane, applies, activation, warnings)
    if not text.strip():
        item.skip = "empty rule"
    elif _META_RULE.search(f"{stem.replace('_', ' ').replace('-', ' ')}\n{title}\n{description or ''}"):
        item.skip = f"a rule about rule files ({title!r}): not memory"
    return item


def _adr_status(lines: list[str], data: dict[str, object]) -> tuple[str | None, int | None]:
    """The ADR's status and its line: front matter, a `Status:` line, or the first line under `## Status`."""
    value = data.get("status")
    if isinstance(value, str) and value.strip():
        return value.strip(), None
    outside = markdown.unfenced(lines)
    in_status = False
    for index, line in enumerate(lines):
        if not outside[index]:
            continue
        found = _STATUS_LINE.match(line)
        if found is not None:
            return found.group(1).strip(), index
        heading = re.match(r"^#{2,6}\s+(.*?)\s*#*\s*$", line)
        if heading is not None:
            in_status = heading.group(1).strip().lower() == "status"
            continue
        if in_status and line.strip():
            return line.strip().lstrip("*- ").strip(), index
    return None, None


def _normal_status(text: str) -> str:
    low = text.lower().strip().strip("*_").strip()
    for status in ADR_STATUSES:
        if low.startswith(status):
            return status
    return low.split()[0] if low.split() else low


def _adr(src: Loaded) -> Item:
    """An ADR (Nygard or MADR, with or without front matter): one decision record, gated by its status."""
    data, lines, first = front_matter(src)
    found = markdown.headings(lines)
    h1 = next((h for h in found if h.level == 1 and h.text), None)
    title = h1.text if h1 is not None else str(data.get("title") or posixpath.basename(src.named)[:-3])
    raw_status, _ = _adr_status(lines, data)
    status = _normal_status(raw_status) if raw_status else "unknown"
    superseded_by: list[str] = []
    supersedes: list[str] = []
    outside = markdown.unfenced(lines)
    for index, line in enumerate(lines):
        if not outside[index]:
            continue
        links: list[str] | None = superseded_by if re.search(r"superseded\s+by", line, re.I) else None
        if links is None and re.search(r"\bsupersedes\b", line, re.I):
            links = supersedes
        if links is not None:
            for link in _LINK.findall(line):
                links.append(posixpath.normpath(posixpath.join(posixpath.dirname(src.real), link)))
    if superseded_by and status != "superseded":
        status = "superseded" if status in ("accepted", "unknown") else status
    body_lines, _ = markdown.strip_blocks(src.real, lines)
    text = "\n".join(body_lines).strip("\n")
    if not lines:  # front matter alone: the item is its closing line, as a rule file's
        first = max(1, first - 1)
    last = first + max(len(lines), 1) - 1
    while last > first and not lines[last - first].strip():
        last -= 1
    item = Item("adr", src, (), title, text, first, last, "decision", "semantic", ())
    item.adr_status = status
    item.superseded_by = tuple(superseded_by)
    item.supersedes = tuple(supersedes)
    if raw_status is None:
        item.warnings.append("no status found: treated as unknown")
    return item
