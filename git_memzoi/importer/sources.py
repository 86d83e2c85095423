"""Which files hold agent memory, and their text: discovery in the tracked tree, symlinks, limits, encodings."""

from __future__ import annotations

import errno
import os
import posixpath
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from git_memzoi.errors import FormatError, Refused, UsageError
from git_memzoi.gitrepo import files as gitfiles
from git_memzoi.gitrepo.files import Tracked
from git_memzoi.gitrepo.repo import GitRepo
from git_memzoi.layout import MEMZOI_DIR
from git_memzoi.runtime.atomic import refuse_symlinks

#: A source larger than this is refused (the profile's own file limit).
MAX_SOURCE_BYTES = 1024 * 1024
#: How many symlinks a source may pass through before it counts as a loop.
MAX_LINKS = 8

#: The folder `export cursor-rules` owns: what it holds is generated, never imported.
CURSOR_DIR = ".cursor/rules/memzoi"
ADR_DIRS = ("doc/adr", "docs/adr", "docs/decisions", "doc/decisions")
#: Folders whose files configure a tool: a file there applies to the whole repository, not to its folder.
TOOL_DIRS = (".cursor", ".github", ".claude", ".windsurf", ".clinerules", ".ruler")
FORMATS = (
    "agents-md",
    "claude-md",
    "claude-rule",
    "gemini-md",
    "cursor-rule",
    "cursorrules",
    "copilot",
    "copilot-rule",
    "windsurf-rule",
    "cline",
    "cline-rule",
    "adr",
    "okf",
)
#: Formats whose file is one record (a rule), not split by heading.
RULE_FORMATS = ("claude-rule", "cursor-rule", "copilot-rule", "windsurf-rule", "cline-rule")
_NOT_ADRS = ("readme.md", "index.md", "template.md", "adr-template.md")


_BY_NAME = {
    "CLAUDE.local.md": "personal",
    "AGENTS.md": "agents-md",
    "AGENTS.override.md": "agents-md",
    "CLAUDE.md": "claude-md",
    "GEMINI.md": "gemini-md",
}
_BY_PATH = {".cursorrules": "cursorrules", ".github/copilot-instructions.md": "copilot", ".clinerules": "cline"}
#: (folder prefix, file name ending, format) of the rule folders.
_BY_FOLDER = (
    (".claude/rules/", ".md", "claude-rule"),
    (".cursor/rules/", ".mdc", "cursor-rule"),
    (".github/instructions/", ".instructions.md", "copilot-rule"),
    (".windsurf/rules/", ".md", "windsurf-rule"),
    (".clinerules/", ".md", "cline-rule"),
)
#: An OKF bundle as `export okf` writes it: `okf/index.md` and `okf/records/<concept-id>.md`.
BUNDLE_NAME = "okf"
BUNDLE_INDEX = "index.md"
BUNDLE_RECORDS = "records"


def bundle_roots(paths: Iterable[str]) -> frozenset[str]:
    """The bundles among `paths`: every `okf/` folder (at any depth) that holds an `index.md`."""
    roots = {posixpath.dirname(p) for p in paths if posixpath.basename(p) == BUNDLE_INDEX}
    return frozenset(r for r in roots if posixpath.basename(r) == BUNDLE_NAME)


def in_bundle(path: str, roots: frozenset[str]) -> bool:
    """Is `path` a record file (`<bundle>/records/….md`) of one of the bundles `roots`?"""
    head, sep, _ = path.partition("/" + BUNDLE_RECORDS + "/")
    return bool(sep) and head in roots and path.endswith(".md")


def classify(path: str, adr_dirs: tuple[str, ...] = ADR_DIRS, bundles: frozenset[str] = frozenset()) -> str | None:
    """The format a tracked path is read as, `personal` for files never imported, or None."""
    if path.startswith(MEMZOI_DIR + "/"):
        return None
    name = posixpath.basename(path)
    fmt = _BY_NAME.get(name) or _BY_PATH.get(path)
    if fmt is not None:
        return fmt
    found = rule_folder(path)
    if found is not None:
        rule, ending = found
        if name.endswith(ending):
            return rule
        return None if path.startswith(CURSOR_DIR + "/") else UNREAD
    if bundles and in_bundle(path, bundles):
        return "okf"
    if posixpath.dirname(path) in adr_dirs and name.endswith(".md") and name.lower() not in _NOT_ADRS:
        return "adr"
    return None


#: Formats whose file governs the folder it is in, wherever that is (the clients read them so).
_OWN_FOLDER = ("agents-md", "claude-md", "gemini-md")
#: Files of those formats that a client reads as the repository's own (Claude Code's `.claude/CLAUDE.md`).
_ROOT_FILES = (".claude/CLAUDE.md",)


def glob_regex(glob: str) -> re.Pattern[str]:
    """A repository-path glob as a regular expression: `**` any folders, `*` and `?` within a name, `[…]` a set.

    A glob without a `/` matches a name at any depth (as .gitignore does); one ending in `/` or
    naming a folder matches everything under it.
    """
    pattern = glob.strip().removeprefix("./")
    anchored = "/" in pattern.rstrip("/")
    pattern = pattern.strip("/")
    out: list[str] = [] if anchored else ["(?:.*/)?"]
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
            continue
        if pattern.startswith("**", index):
            out.append(".*")
            index += 2
            continue
        close = pattern.find("]", index + 2) if char == "[" else -1
        if char == "[" and close > 0:
            inner = pattern[index + 1 : close]
            out.append("[" + ("^" + inner[1:] if inner.startswith("!") else inner).replace("\\", "\\\\") + "]")
            index = close + 1
            continue
        out.append({"*": "[^/]*", "?": "[^/]"}.get(char, re.escape(char)))
        index += 1
    return re.compile("".join(out) + "(?:/.*)?")


def excluded_by(path: str, globs: tuple[re.Pattern[str], ...], given: tuple[str, ...]) -> str | None:
    """The glob (of `given`, compiled as `globs`) that leaves `path` out of an import, or None."""
    for glob, regex in zip(given, globs, strict=True):
        if regex.fullmatch(path):
            return glob
    return None


#: The format `classify` gives a file in a client's rule folder that the client (and so the import) does not read.
UNREAD = "unread"
#: Rule folders a client also reads below the repository's top (in a package: `packages/x/.cursor/rules/`).
_NESTED = (".cursor/rules/", ".windsurf/rules/", ".claude/rules/")


def rule_folder(path: str) -> tuple[str, str] | None:
    """(format, the file name ending it reads) of the client rule folder `path` is in, or None."""
    for prefix, ending, rule in _BY_FOLDER:
        if path.startswith(prefix) or (prefix in _NESTED and "/" + prefix in path):
            return rule, ending
    return None


def _nested_base(path: str) -> str | None:
    """The folder holding the nested rule folder `path` is in (`packages/x` of `packages/x/.cursor/rules/a.mdc`)."""
    for prefix in _NESTED:
        head, sep, _ = path.partition("/" + prefix)
        if sep:
            return head
    return None


def scope_folder(named: str, fmt: str) -> str:
    """The folder a file's memory applies to: its own, except for tool configuration folders (the root)."""
    folder = posixpath.dirname(named)
    if fmt in RULE_FORMATS:
        nested = _nested_base(named)  # a package's .cursor/rules governs the package
        if nested is not None:
            return nested
    if fmt in _OWN_FOLDER and named not in _ROOT_FILES:  # an AGENTS.md governs its folder, `.github/` too
        return folder
    if fmt == "adr" or any(folder == d or folder.startswith(d + "/") for d in TOOL_DIRS):
        return ""
    return folder


@dataclass(frozen=True)
class Loaded:
    """One source as read: the path it was named by, the file its bytes came from, its text and blob OID."""

    named: str
    real: str
    fmt: str
    text: str
    oid: str

    @property
    def via_link(self) -> bool:
        return self.named != self.real


class Tree:
    """The tracked files a run reads: the work tree (through git's index) or a commit's tree (`rev`)."""

    def __init__(self, repo: GitRepo, rev: str | None) -> None:
        self.repo = repo
        self.rev = rev
        self.root: Path | None = None if rev is not None else repo.require_workdir()
        self.entries: dict[str, Tracked] = gitfiles.tracked(repo, rev)
        self._resolved: dict[str, str] = {}  # named path -> the file it leads to (`resolve`)
        # A sparse checkout leaves tracked files out of the work tree: they are not gone (--prune
        # would tombstone their records), so they are read from the index, as --rev reads a commit.
        self.left_out: set[str] = set()
        if rev is None:
            from git_memzoi.gitrepo import sparse

            self.left_out = set(sparse.skipped(repo, ""))

    def adr_dirs(self) -> tuple[str, ...]:
        """The ADR folders: the usual ones plus the one `.adr-dir` names (adr-tools)."""
        extra: tuple[str, ...] = ()
        if ".adr-dir" in self.entries:
            try:
                named = self._raw(".adr-dir").decode("utf-8").strip().strip("/")
            except (UnicodeDecodeError, OSError):
                named = ""
            if named and not named.startswith("..") and not os.path.isabs(named):
                extra = (posixpath.normpath(named),)
        return ADR_DIRS + extra

    def discover(self) -> list[tuple[str, str]]:
        """(path, format) of every tracked file in a known location, personal files included, by path."""
        dirs, bundles = self.adr_dirs(), bundle_roots(self.entries)
        found = [(path, classify(path, dirs, bundles)) for path in sorted(self.entries)]
        return [(path, fmt) for path, fmt in found if fmt is not None and self.exists(path)]

    def _in_worktree(self, path: str) -> bool:
        return self.root is not None and not (path in self.left_out and not os.path.lexists(self.root / path))

    def _is_link(self, path: str) -> bool:
        if self.root is None or not self._in_worktree(path):
            return self.entries[path].link
        return os.path.islink(os.path.join(self.root, path))

    def _raw(self, path: str) -> bytes:
        if self.root is None or not self._in_worktree(path):
            oid = self.entries[path].oid
            assert oid is not None
            return gitfiles.blob_bytes(self.repo, oid)
        full = self._worktree(path)
        if full.is_symlink():
            return os.readlink(full).encode("utf-8", "surrogateescape")
        return read_regular(full, MAX_SOURCE_BYTES + 1)

    def _worktree(self, path: str) -> Path:
        """`root/path`, once no folder on its way is a symlink (FormatError naming it otherwise).

        git tracks no file below a symlink, so a folder of a tracked path that is a link was made
        in the work tree, and reading through it would read outside the repository.
        """
        assert self.root is not None
        folder = posixpath.dirname(path)
        if folder:
            try:
                refuse_symlinks(self.root, folder, "an import reads no file through it")
            except Refused as exc:
                raise FormatError("import-symlink", exc.message, path=path) from None
        return self.root / path

    def exists(self, path: str) -> bool:
        if path not in self.entries:
            return False
        return self.root is None or path in self.left_out or os.path.lexists(os.path.join(self.root, path))

    def resolve(self, named: str) -> str:
        """The tracked regular file `named` leads to through its symlinks, refusing escapes and loops."""
        real = self._resolved.get(named)
        if real is None:
            real = self._resolved[named] = self._follow(named)
        return real

    def _follow(self, named: str) -> str:
        seen = [named]
        path = named
        while self._is_link(path):
            target = self._raw(path).decode("utf-8", "replace")
            if os.path.isabs(target):
                raise FormatError("import-symlink", f"symlink to {target} leaves the repository", path=named)
            joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
            if joined == ".." or joined.startswith("../"):
                raise FormatError("import-symlink", f"symlink to {target} leaves the repository", path=named)
            if joined in seen or len(seen) > MAX_LINKS:
                raise FormatError("import-symlink", "symlinks loop: " + " -> ".join([*seen, joined]), path=named)
            if not self.exists(joined):
                raise FormatError("import-symlink", f"symlink to {joined}, which git does not track", path=named)
            seen.append(joined)
            path = joined
        return path

    def load(self, named: str, fmt: str) -> Loaded:
        """The text of source `named`: at most MAX_SOURCE_BYTES of UTF-8 (a BOM is dropped, CRLF made LF)."""
        real = self.resolve(named)
        try:
            if self.root is None or not self._in_worktree(real):
                raw = self._raw(real)
            else:  # no link (resolved): at most one byte more than a source may hold, from a regular file
                raw = read_regular(self._worktree(real), MAX_SOURCE_BYTES + 1)
        except OSError as exc:
            raise FormatError("import-unreadable", f"cannot read: {exc.strerror or exc}", path=real) from None
        if len(raw) > MAX_SOURCE_BYTES:
            raise FormatError("import-too-large", f"larger than {MAX_SOURCE_BYTES} bytes", path=named)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = raw.count(b"\n", 0, exc.start) + 1
            raise FormatError("import-encoding", "not UTF-8 text", path=real, line=line) from None
        if "\x00" in text:
            raise FormatError("import-encoding", "holds NUL bytes: not a text file", path=real)
        oid = gitfiles.blob_oid(raw)
        # Memory files are LF (the profile's line-endings rule): a CRLF source's sections made
        # packets that fail validation. A stray CR becomes a space, so line numbers stay git's.
        if "\r" in text:  # a memchr: the two-character search reads every character, even in an LF file
            text = text.replace("\r\n", "\n").replace("\r", " ")
        return Loaded(named, real, fmt, text.removeprefix("\ufeff"), oid)

    def named(self, given: list[str], cwd: Path, forced: str | None) -> list[tuple[str, str]]:
        """(path, format) of the SOURCEs given on the command line, as repository paths."""
        dirs, bundles = self.adr_dirs(), bundle_roots(self.entries)
        out: list[tuple[str, str]] = []
        for source in given:
            rel = self._relative(source, cwd)
            if rel == MEMZOI_DIR or rel.startswith(MEMZOI_DIR + "/"):
                # Records and packets are already memory: read as instructions, memory would import itself.
                raise UsageError(f"{source}: git memzoi's own memory, never an import source")
            if rel in self.entries and not self.exists(rel):
                raise UsageError(f"{source}: tracked, but missing from the work tree")
            if rel not in self.entries:
                out.extend(self._under(source, rel, forced, dirs, bundles))
                continue
            fmt = forced or classify(rel, dirs, bundles)
            if fmt is None:
                raise UsageError(f"{source}: not a known memory file; name its format with --from", field="from")
            out.append((rel, fmt))
        return out

    def _under(
        self, source: str, rel: str, forced: str | None, dirs: tuple[str, ...], bundles: frozenset[str]
    ) -> list[tuple[str, str]]:
        """(path, format) of the memory files git tracks in folder SOURCE (`rel` from the top)."""
        folder = "" if rel == "." else rel.rstrip("/") + "/"
        under = [p for p in sorted(self.entries) if p.startswith(folder) and not p.startswith(MEMZOI_DIR + "/")]
        if not under:
            raise UsageError(f"{source}: not a file git tracks")
        if forced == "okf":  # a bundle's record files, not its index
            under = [p for p in under if p.endswith(".md") and (p.startswith("records/") or "/records/" in p)]
        found = [(p, forced or classify(p, dirs, bundles)) for p in under]
        return [(p, f) for p, f in found if f is not None and self.exists(p)]

    def tracks_under(self, folder: Path) -> bool:
        """Does git track any file in `folder` (False for a folder outside the repository)?"""
        root = self.root if self.root is not None else self.repo.workdir
        if root is None:
            return False
        try:
            rel = folder.relative_to(root).as_posix()
        except ValueError:
            return False
        prefix = "" if rel == "." else rel + "/"
        return any(p.startswith(prefix) for p in self.entries)

    def repo_path(self, source: str, cwd: Path) -> str | None:
        """SOURCE as a repository path, or None when it lies outside the repository."""
        try:
            return self._relative(source, cwd)
        except UsageError:
            return None

    def has_on_disk(self, rel: str) -> bool:
        """Is there anything at the repository path `rel` in the work tree (always False for a commit's tree)?"""
        return self.root is not None and (rel == "." or os.path.lexists(self.root / rel))

    def _relative(self, source: str, cwd: Path) -> str:
        # With --rev in a checkout a SOURCE is still relative to the cwd, as git's pathspecs are.
        root = self.root if self.root is not None else self.repo.workdir
        if root is None:  # a bare repository: paths from the top
            return posixpath.normpath(source).lstrip("/")
        full = Path(os.path.abspath(cwd / source))
        try:
            rel = full.relative_to(root).as_posix()
        except ValueError:
            if not os.path.lexists(full):
                raise UsageError(f"{source}: no such file or folder") from None
            raise UsageError(
                f"{source}: outside the repository", hint="from outside it, only an OKF bundle folder is read"
            ) from None
        return rel


def read_regular(full: Path, limit: int) -> bytes:
    """At most `limit` bytes of the regular file `full`; OSError for anything else in its place.

    A FIFO or a device where git tracks a file would block the reader (or never end): it is opened
    without waiting, and refused by what the open file is, not by what a stat before it said.
    """
    fd = os.open(full, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a FIFO, a device or a folder)", str(full))
        # a buffer of the file's size and one byte more (the byte says it grew), not of `limit`: a
        # read of a megabyte maps and unmaps a megabyte for a file of a few kilobytes
        size = min(limit, info.st_size + 1)
        data = handle.read(size)
        return data + handle.read(limit - size) if len(data) == size < limit else data
