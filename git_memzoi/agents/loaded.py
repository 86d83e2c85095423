"""The instruction files a client loads itself, so that its hooks do not send their rules a second time.

Claude Code reads every CLAUDE.md (and CLAUDE.local.md) and `.claude/rules/`, and what a CLAUDE.md names with
`@file` (a CLAUDE.md that is a symlink to AGENTS.md is AGENTS.md's text); Codex reads the AGENTS.md chain
(AGENTS.override.md, else AGENTS.md, in each folder from the root down to its working folder, a symlink as the
file it points to, and no more than its 32 KiB of them joined); Gemini CLI reads GEMINI.md files; GitHub Copilot
CLI `.github/copilot-instructions.md` (as `copilot instruction list` shows it).
A record imported from such a file (its `source_ref`) is the client's already while the file in the work
tree still holds the bytes it was imported from (the same blob), or, once the file was edited, while the text the
client reads of it still holds the record's body (whitespace collapsed): an edit of one section, and the re-import
that supersedes that section's record alone, leaves the other sections' records the client's. Stdlib only: the
hooks run this.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, unquote

from git_memzoi.index.activation import matches

if TYPE_CHECKING:
    from git_memzoi.recall.standing import Rule

__all__ = ["LoadedFiles"]

#: Codex's instruction files in one folder, the first non-empty one read; and the most bytes of them it reads,
#: joined from the root down (its `project_doc_max_bytes`, 32 KiB unless configured).
CODEX_FILES = ("AGENTS.override.md", "AGENTS.md")
CODEX_MAX_BYTES = 32 * 1024
#: A rule file's front matter line that scopes it to paths (Claude Code's `paths:`).
_PATHS = re.compile(r"^paths\s*:", re.M)
#: `@path` on a line of its own in a CLAUDE.md: Claude Code imports that file's text.
_AT_IMPORT = re.compile(r"^\s*@(\S+)\s*$", re.M)


#: A record's body, or what gives it when asked (a hook reads a standing rule's row only when its file changed).
Body = str | Callable[[], str] | None


def _collapsed(text: str) -> str:
    """`text` with every run of whitespace made one space: what "the file holds the section" compares."""
    return " ".join(text.split())


def _blob(data: bytes, width: int) -> str:
    import hashlib  # only for a record imported from a file the client loads: hashlib loads OpenSSL (ms)

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
        self._chain: list[tuple[str, bytes]] | None = None
        self._held: dict[str, str] = {}  # path -> the text the client reads of it, whitespace collapsed

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

    def _codex_chain(self) -> list[tuple[str, bytes]]:
        """The files Codex reads, from the root down to its working folder: in each folder AGENTS.override.md, else
        AGENTS.md, when it is not empty; (path, bytes) each."""
        if self._chain is None:
            self._chain = []
            parts = [p for p in self.cwd.split("/") if p not in ("", ".")]
            for depth in range(len(parts) + 1):
                folder = "/".join(parts[:depth])
                for name in CODEX_FILES:
                    rel = posixpath.join(folder, name) if folder else name
                    data = self._read(rel)
                    if data is not None and data.strip():
                        self._chain.append((rel, data))
                        break
        return self._chain

    def _codex_room(self, path: str) -> tuple[str, int] | None:
        """(the chain file through which Codex reads `path`: itself or a link to it, the bytes of it Codex reads
        before CODEX_MAX_BYTES of the files joined), or None: not on the chain (an AGENTS.md beside an
        AGENTS.override.md is not)."""
        try:
            real = (self.workdir / path).resolve()
        except OSError:
            return None
        before = 0
        for rel, data in self._codex_chain():
            try:
                same = (self.workdir / rel).resolve() == real
            except OSError:
                same = False
            if same:
                return rel, CODEX_MAX_BYTES - before
            before += len(data) + 2  # the files are joined with a blank line
        return None

    def _codex_reads(self, path: str, last_line: int | None) -> str | None:
        """The chain file through which Codex reads `path` up to `last_line` (None: anywhere), or None: not on the
        chain, or past CODEX_MAX_BYTES of the files joined, where Codex stops reading."""
        found = self._codex_room(path)
        if found is None or last_line is None:
            return None if found is None else found[0]
        rel, room = found
        data = dict(self._codex_chain())[rel]
        end = sum(len(line) for line in data.splitlines(keepends=True)[:last_line])
        return rel if end <= room else None

    def _reads(self, path: str, last_line: int | None) -> str | None:
        name = posixpath.basename(path)
        if self.client == "claude":
            return self._claude_reads(path)
        if self.client == "codex":
            return self._codex_reads(path, last_line)
        if self.client == "gemini" and name == "GEMINI.md":
            return path
        if self.client == "copilot" and path == ".github/copilot-instructions.md":
            return path
        return None

    def at_tool(self, source_ref: str | None, touched: str | None, body: Body = None) -> str | None:
        """`holding`, at a tool call that touches the repository path `touched` (None: it runs a command).

        Claude Code loads a CLAUDE.md in its working folder or above it, and each `.claude/rules` file without
        `paths:`, when the session starts; a CLAUDE.md below its working folder and a rule with `paths:` only once
        it reads a file there, which it does before changing a file that exists (a new file is written unread)."""
        via = self.holding(source_ref, body)
        if via is None or self.client != "claude":
            return via
        read = touched is not None and (self.workdir / touched).is_file()
        folder = posixpath.dirname(via)
        if posixpath.basename(via) in ("CLAUDE.md", "CLAUDE.local.md"):
            above = not folder or self.cwd == folder or self.cwd.startswith(folder + "/")
            return via if above or (read and str(touched).startswith(folder + "/")) else None
        if not _PATHS.search(self._front_matter(via)):
            return via
        return via if read and touched is not None and matches(source_ref or "", touched) else None

    def _front_matter(self, rel: str) -> str:
        data = self._read(rel) or b""
        text = data.decode("utf-8", "replace")
        if not text.startswith("---"):
            return ""
        end = text.find("\n---", 3)
        return text[3:end] if end > 0 else ""

    def of_rule(self, rule: Rule, body: Body = None) -> str | None:
        """`holding` for a standing rule."""
        return self.holding(rule.source_ref, body)

    def holding(self, source_ref: str | None, body: Body = None) -> str | None:
        """The file this client loads itself that still holds the text `source_ref` was imported from, or None.

        The file holds it while it is the blob `source_ref` names; once edited, while the text the client reads of
        it still holds `body` (the record's, whitespace collapsed; without a body, never)."""
        if not source_ref or not source_ref.startswith("import:") or "?" not in source_ref:
            return None
        quoted, _, query = source_ref[len("import:") :].partition("?")
        path = unquote(quoted)
        fields = dict(parse_qsl(query))
        blob = fields.get("blob", "")
        via = self._reads(path, None) if blob else None  # a file the client does not load is never read
        if via is None:
            return None
        if self._same(path, blob):
            last = fields.get("lines", "").rpartition("-")[2]
            return self._reads(path, int(last) if last.isdigit() else 0)
        if body is None:
            return None
        text = _collapsed(body() if callable(body) else body)
        return via if text and text in self._held_text(path) else None

    def _held_text(self, path: str) -> str:
        """The text of `path` the client reads (Codex: no more than its share of CODEX_MAX_BYTES), collapsed."""
        if path not in self._held:
            data = self._read(path) or b""
            room = self._codex_room(path) if self.client == "codex" else None
            if room is not None:
                data = data[: max(room[1], 0)]
            self._held[path] = _collapsed(data.decode("utf-8", "replace"))
        return self._held[path]
