"""The instruction files a client loads itself, so that its hooks do not send their rules a second time.

Claude Code reads every CLAUDE.md (and CLAUDE.local.md) and `.claude/rules/`, and what a CLAUDE.md names with
`@file` (a CLAUDE.md that is a symlink to AGENTS.md is AGENTS.md's text); Codex reads the AGENTS.md chain
(AGENTS.override.md or AGENTS.md from the root down to its working folder); Gemini CLI reads GEMINI.md files;
GitHub Copilot CLI `.github/copilot-instructions.md` (as `copilot instruction list` shows it).
A record imported from such a file (its `source_ref`) is the client's already while the file in the work
tree still holds the bytes it was imported from (the same blob). Stdlib only: the hooks run this.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, unquote

if TYPE_CHECKING:
    from git_memzoi.recall.standing import Rule

__all__ = ["LoadedFiles"]

#: `@path` on a line of its own in a CLAUDE.md: Claude Code imports that file's text.
_AT_IMPORT = re.compile(r"^\s*@(\S+)\s*$", re.M)


def _blob(data: bytes, width: int) -> str:
    header = b"blob %d\0" % len(data)
    digest = hashlib.sha256 if width == 64 else hashlib.sha1
    return digest(header + data).hexdigest()


class LoadedFiles:
    """For one client in one work tree: which file (if any) the client loads itself that holds a record's text."""

    def __init__(self, client: str, workdir: Path, cwd: Path) -> None:
        self.client = client
        self.workdir = workdir
        try:
            self.cwd = cwd.resolve().relative_to(workdir.resolve()).as_posix()
        except (OSError, ValueError):
            self.cwd = ""
        self._blobs: dict[tuple[str, int], str | None] = {}
        self._texts: dict[str, str] = {}

    def _read(self, rel: str) -> bytes | None:
        try:
            path = self.workdir / rel
            real = path.resolve()
            real.relative_to(self.workdir.resolve())
            return real.read_bytes() if real.is_file() else None
        except (OSError, ValueError):
            return None

    def _same(self, rel: str, blob: str) -> bool:
        key = (rel, len(blob))
        if key not in self._blobs:
            data = self._read(rel)
            self._blobs[key] = None if data is None else _blob(data, len(blob))
        return self._blobs[key] == blob

    def _claude_reads(self, path: str) -> str | None:
        """The file through which Claude Code reads `path`: itself, a CLAUDE.md linking to it or importing it."""
        name = posixpath.basename(path)
        if name in ("CLAUDE.md", "CLAUDE.local.md") or path.startswith(".claude/rules/") or "/.claude/rules/" in path:
            return path
        folder = posixpath.dirname(path)
        claude = posixpath.join(folder, "CLAUDE.md") if folder else "CLAUDE.md"
        try:
            linked = (self.workdir / claude).resolve() == (self.workdir / path).resolve()
        except OSError:
            linked = False
        if linked:
            return claude
        if claude not in self._texts:
            data = self._read(claude)
            self._texts[claude] = data.decode("utf-8", "replace") if data is not None else ""
        targets = {posixpath.normpath(posixpath.join(folder, t)) for t in _AT_IMPORT.findall(self._texts[claude])}
        return claude if path in targets else None

    def _reads(self, path: str) -> str | None:
        name = posixpath.basename(path)
        folder = posixpath.dirname(path)
        if self.client == "claude":
            return self._claude_reads(path)
        if self.client == "codex" and name in ("AGENTS.md", "AGENTS.override.md"):
            on_chain = not folder or self.cwd == folder or self.cwd.startswith(folder + "/")
            return path if on_chain else None
        if self.client == "gemini" and name == "GEMINI.md":
            return path
        if self.client == "copilot" and path == ".github/copilot-instructions.md":
            return path
        return None

    def of_rule(self, rule: Rule) -> str | None:
        """`holding` for a standing rule."""
        return self.holding(rule.source_ref)

    def holding(self, source_ref: str | None) -> str | None:
        """The file this client loads itself that still holds the text `source_ref` was imported from, or None."""
        if not source_ref or not source_ref.startswith("import:") or "?" not in source_ref:
            return None
        quoted, _, query = source_ref[len("import:") :].partition("?")
        path = unquote(quoted)
        blob = dict(parse_qsl(query)).get("blob", "")
        via = self._reads(path)
        return via if via is not None and blob and self._same(path, blob) else None
