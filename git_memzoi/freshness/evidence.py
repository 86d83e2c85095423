"""What a record cites, derived from its text (pure): repository paths, `applies_to` scopes and code identifiers.

Paths come from the record's `applies_to` entries, a `source_ref` that reads as a path, and
backticked spans of its body that read as paths (a `/` or a file extension, no spaces); code
identifiers from backticked spans that are one name (`validateSession`, `parse_rows()`).
Nothing here says a path exists: the judge keeps only what the commit that wrote the record held,
so a backticked word that never named a file or a name in the code is not evidence.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from git_memzoi.profile.applies import applies_to_base

#: `applies_to` entries that cover the whole repository (no path to check).
WHOLE = frozenset({"**", "./**", ".", "./", "/**", "*"})
_BACKTICKED = re.compile(r"(?<!`)`([^`\n]{2,200})`(?!`)")
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,99}")
_PATH = re.compile(r"[A-Za-z0-9_.@+\-][A-Za-z0-9_.@+\-/]*")
_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,8}$")
_REF_TAIL = re.compile(r"(#.*|:\d.*)$")
#: The names and the paths one record's body counts, the first cited (a body citing 100,000 names made every git
#: grep of a judging pass try each of them on every line of the code: minutes; a claim cites a handful).
MAX_CITED = 200
#: Words too common to be a claim about the code.
_NOT_NAMES = frozenset({"true", "false", "null", "None", "True", "False", "nil", "self", "this", "and", "the"})


class Evidence(NamedTuple):
    """What one record cites: scopes (`applies_to` bases), paths and identifiers, each in first-seen order."""

    scopes: tuple[str, ...]
    paths: tuple[str, ...]
    identifiers: tuple[str, ...]

    @property
    def empty(self) -> bool:
        """Nothing to check against the code."""
        return not (self.scopes or self.paths or self.identifiers)


def _as_path(text: str) -> str | None:
    """A repository path from a cited span (`./src/x.py`, `src/auth/`), or None when it does not read as one."""
    text = text.strip()
    if "://" in text or text.startswith(("/", "~", "-")) or " " in text:
        return None
    text = _REF_TAIL.sub("", text)
    while text.startswith("./"):
        text = text[2:]
    text = text.rstrip("/")
    if not text or not _PATH.fullmatch(text) or ".." in text.split("/"):
        return None
    if "/" not in text and not _EXTENSION.search(text):
        return None
    return text


def _as_identifier(text: str) -> str | None:
    text = text.strip()
    if text.endswith("()"):
        text = text[:-2]
    if not _IDENTIFIER.fullmatch(text) or text in _NOT_NAMES:
        return None
    return text


def extract(applies_to: list[str], source_ref: str | None, body: str) -> Evidence:
    """The evidence a record's `applies_to`, `source_ref` and body cite."""
    scopes = [applies_to_base(entry) for entry in applies_to if entry.strip() not in WHOLE]
    scopes = [scope for scope in (s.strip().strip("/") for s in scopes) if scope and "*" not in scope]
    paths: list[str] = []
    if source_ref:
        ref_path = _as_path(source_ref)
        if ref_path is not None:
            paths.append(ref_path)
    identifiers: list[str] = []
    if "```" in body or "~~~" in body:
        body = _FENCE.sub("", body)
    for match in _BACKTICKED.finditer(body) if "`" in body else ():
        span = match.group(1)
        name = _as_identifier(span)
        if name is not None:
            identifiers.append(name)
            continue
        path = _as_path(span)
        if path is not None:
            paths.append(path)
    scope_set = set(scopes)
    return Evidence(
        scopes=tuple(dict.fromkeys(scopes))[:MAX_CITED],
        paths=tuple(p for p in dict.fromkeys(paths) if p not in scope_set)[:MAX_CITED],
        identifiers=tuple(dict.fromkeys(identifiers))[:MAX_CITED],
    )
