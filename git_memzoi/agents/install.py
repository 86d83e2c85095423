"""Client configuration for coding agents: merge git memzoi's MCP server and hooks into what is there.

Claude Code: the project's `.mcp.json` (server `memzoi`) and `.claude/settings.json` (the
SessionStart, UserPromptSubmit and PreToolUse hooks). Codex: `[mcp_servers.memzoi]` in `$CODEX_HOME/config.toml`
(default `~/.codex/config.toml`), added as text so comments and layout stay, and read back
with tomllib to prove the result. Every plan is computed first; nothing is written when an
entry named `memzoi` that we did not write is in the way, and a second run changes no byte.

A file inside the repository is read and written only when no component of its path, from the
work tree root, is a symlink: a clone can commit `.mcp.json` or `.claude` as a link to a file of
the user's, and install must neither read it (nor show it in a diff) nor write through it.
"""

from __future__ import annotations

import difflib
import json
import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_memzoi.errors import ConfigError, Refused, UsageError
from git_memzoi.runtime.atomic import read_inside, write_atomic, write_inside

SERVER_NAME = "memzoi"
#: Portable: found through git on PATH in every checkout, so `.mcp.json` can be committed.
SERVER_COMMAND = "git"
SERVER_ARGS = ["memzoi", "mcp", "serve"]
HOOK_COMMAND = "git memzoi agent hook claude"
PRETOOLUSE_MATCHER = "Edit|Write|MultiEdit|NotebookEdit|Bash"
CLIENTS = ("claude", "codex")
#: What a refused symlink's message adds.
REAL_FILES = "agent install reads and writes only real files inside the repository, never through a link"


@dataclass(frozen=True)
class FileChange:
    """One configuration file: its bytes before (None when missing) and after."""

    path: Path
    label: str  # how to show it: repository-relative, or the Codex path as given
    before: bytes | None
    after: bytes
    #: The work tree `path` lies in and its path there, or None for a file outside any work tree.
    root: Path | None = None
    rel: str | None = None

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        """A unified diff of the change ('' when nothing changes)."""
        if not self.changed:
            return ""
        old = (self.before or b"").decode("utf-8").splitlines(keepends=True)
        new = self.after.decode("utf-8").splitlines(keepends=True)
        # git's a/ b/ prefixes for repository files; a file outside (Codex's config) by its own path
        a, b = ("", "") if os.path.isabs(self.label) else ("a/", "b/")
        lines = difflib.unified_diff(
            old, new, "/dev/null" if self.before is None else f"{a}{self.label}", f"{b}{self.label}"
        )
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)

    def as_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "created": self.before is None, "changed": self.changed, "diff": self.diff()}


def _read(path: Path, root: Path | None, rel: str) -> bytes | None:
    try:
        if root is not None:
            return read_inside(root, rel, REAL_FILES)
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None


def _text(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None


def _json_object(path: Path, data: bytes | None) -> dict[str, Any]:
    if data is None or not data.strip():
        return {}
    try:
        value = json.loads(_text(path, data))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply to read") from None
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: not a JSON object")
    return value


def _section(path: Path, data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.setdefault(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{path}: {key} is not a JSON object")
    return value


def _dump(data: dict[str, Any]) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def claude_server() -> dict[str, Any]:
    """The `.mcp.json` entry for the server."""
    return {"type": "stdio", "command": SERVER_COMMAND, "args": list(SERVER_ARGS)}


def plan_mcp_json(path: Path, label: str, root: Path | None = None) -> FileChange:
    """`.mcp.json` with server `memzoi` added (other servers and keys kept)."""
    before = _read(path, root, label)
    data = _json_object(path, before)
    servers = _section(path, data, "mcpServers")
    existing = servers.get(SERVER_NAME)
    if existing is not None and existing != claude_server():
        raise Refused(
            f"{label}: mcpServers already has a server named {SERVER_NAME!r} that agent install did not "
            f"write: {json.dumps(existing, ensure_ascii=False)}",
            hint=f"remove or rename that entry, then rerun; ours is {json.dumps(claude_server())}",
        )
    if existing is not None:
        return FileChange(path, label, before, before or b"", root, label if root else None)
    servers[SERVER_NAME] = claude_server()
    return FileChange(path, label, before, _dump(data), root, label if root else None)


def _has_our_hook(path: Path, groups: list[Any], event: str) -> bool:
    for group in groups:
        if not isinstance(group, dict):
            raise ConfigError(f"{path}: hooks.{event} holds something that is not a matcher object")
        hooks = group.get("hooks", [])
        if not isinstance(hooks, list):
            raise ConfigError(f"{path}: hooks.{event}[].hooks is not a list")
        if any(isinstance(h, dict) and h.get("command") == HOOK_COMMAND for h in hooks):
            return True
    return False


def plan_settings_json(path: Path, label: str, root: Path | None = None) -> FileChange:
    """`.claude/settings.json` with the hooks `agent install claude` wires added (everything else kept)."""
    before = _read(path, root, label)
    data = _json_object(path, before)
    hooks = _section(path, data, "hooks")
    ours = {"type": "command", "command": HOOK_COMMAND}
    wanted = {
        "SessionStart": {"hooks": [ours]},
        "UserPromptSubmit": {"hooks": [ours]},
        "PreToolUse": {"matcher": PRETOOLUSE_MATCHER, "hooks": [ours]},
        "PreCompact": {"hooks": [ours]},
        "SessionEnd": {"hooks": [ours]},
    }
    changed = False
    for event, group in wanted.items():
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise ConfigError(f"{path}: hooks.{event} is not a list")
        if not _has_our_hook(path, groups, event):
            groups.append(group)
            changed = True
    if not changed:
        return FileChange(path, label, before, before or b"", root, label if root else None)
    return FileChange(path, label, before, _dump(data), root, label if root else None)


def _deep(path: Path, make: Callable[[], FileChange]) -> FileChange:
    """`make()`, with a value nested past Python's recursion limit reported as a bad file, not a crash."""
    try:
        return make()
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply to read") from None


def plan_claude(workdir: Path) -> list[FileChange]:
    """The Claude Code project files: `.mcp.json` and `.claude/settings.json`."""
    mcp, settings = workdir / ".mcp.json", workdir / ".claude" / "settings.json"
    return [
        _deep(mcp, lambda: plan_mcp_json(mcp, ".mcp.json", workdir)),
        _deep(settings, lambda: plan_settings_json(settings, ".claude/settings.json", workdir)),
    ]


def codex_home() -> Path:
    """`$CODEX_HOME`, else `~/.codex`."""
    home = os.environ.get("CODEX_HOME")
    return Path(home).expanduser() if home else Path.home() / ".codex"


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def codex_server(env: dict[str, str]) -> dict[str, Any]:
    """The `[mcp_servers.memzoi]` table, as tomllib reads it back."""
    entry: dict[str, Any] = {"command": SERVER_COMMAND, "args": list(SERVER_ARGS)}
    if env:
        entry["env"] = dict(sorted(env.items()))
    return entry


def codex_table(env: dict[str, str]) -> str:
    """The TOML text of the `[mcp_servers.memzoi]` table."""
    lines = [
        "# git memzoi: project memory over MCP for the repository Codex runs in",
        f"[mcp_servers.{SERVER_NAME}]",
        f"command = {_toml_string(SERVER_COMMAND)}",
        "args = [" + ", ".join(_toml_string(a) for a in SERVER_ARGS) + "]",
    ]
    if env:
        pairs = ", ".join(f"{k} = {_toml_string(v)}" for k, v in sorted(env.items()))
        lines.append(f"env = {{ {pairs} }}")
    return "\n".join(lines) + "\n"


def _toml(path: Path, text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply to read") from None


def inside(path: Path, workdir: Path | None) -> str | None:
    """`path` relative to the work tree `workdir` (both taken as written, not resolved), or None outside it."""
    if workdir is None:
        return None
    try:
        rel = Path(os.path.normpath(os.path.abspath(path))).relative_to(os.path.normpath(os.path.abspath(workdir)))
    except ValueError:
        return None
    return rel.as_posix() if rel.parts else None


def plan_codex(config: Path, env: dict[str, str], workdir: Path | None = None) -> list[FileChange]:
    """Codex's config.toml with `[mcp_servers.memzoi]` appended as text (comments and layout kept).

    A `$CODEX_HOME` inside the repository `workdir` (a per-project Codex home) is held to the
    repository's rule: no symlink on the way from the work tree root.
    """
    return [_deep(config, lambda: _plan_codex(config, env, workdir))]


def _plan_codex(config: Path, env: dict[str, str], workdir: Path | None) -> FileChange:
    rel = inside(config, workdir)
    root = Path(os.path.normpath(os.path.abspath(workdir))) if rel is not None and workdir is not None else None
    before = _read(config, root, rel or "")
    text = _text(config, before) if before is not None else ""
    data = _toml(config, text)
    servers = data.get("mcp_servers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f"{config}: mcp_servers is not a table")
    existing = servers.get(SERVER_NAME)
    if existing is not None:
        if existing != codex_server(env):
            raise Refused(
                f"{config}: [mcp_servers.{SERVER_NAME}] is already there and agent install did not write "
                f"it: {json.dumps(existing, ensure_ascii=False)}",
                hint="remove or rename that table, then rerun",
            )
        return FileChange(config, str(config), before, before or b"", root, rel if root else None)
    head = text if not text or text.endswith("\n") else text + "\n"
    after = head + ("\n" if head.strip() else "") + codex_table(env)
    expected = dict(data)
    expected["mcp_servers"] = {**servers, SERVER_NAME: codex_server(env)}
    try:
        result = tomllib.loads(after)
    except tomllib.TOMLDecodeError:
        result = None
    if result != expected:
        # e.g. mcp_servers is an inline table, which a later [mcp_servers.memzoi] header cannot extend
        raise Refused(
            f"{config}: cannot add [mcp_servers.{SERVER_NAME}] without rewriting the file's own layout",
            hint="add this table by hand:\n" + codex_table(env).rstrip("\n"),
        )
    return FileChange(config, str(config), before, after.encode("utf-8"), root, rel if root else None)


#: Codex's project-scoped configuration, read for a project Codex trusts (as `codex mcp list` shows).
CODEX_PROJECT_CONFIG = ".codex/config.toml"


def plan(client: str, workdir: Path | None, env: dict[str, str], *, user_wide: bool = False) -> list[FileChange]:
    """Every file change `agent install CLIENT` makes, planned before anything is written.

    `workdir` is the work tree the command runs in (None outside one). Codex gets the project's
    own `.codex/config.toml`, portable like Claude's files (no machine's MEMZOI_HOME in it);
    `user_wide` writes `$CODEX_HOME/config.toml` instead, for every directory Codex runs in.
    """
    if client not in CLIENTS:
        raise UsageError(f"unknown client {client!r}; use one of {', '.join(CLIENTS)}")
    if client == "codex" and user_wide:
        return plan_codex(codex_home() / "config.toml", env, workdir)
    if workdir is None:
        raise UsageError(
            f"agent install {client} writes project files: run it inside a work tree"
            + (" (or --global for Codex's own config.toml)" if client == "codex" else "")
        )
    if client == "claude":
        return plan_claude(workdir)
    return plan_codex(workdir / CODEX_PROJECT_CONFIG, {}, workdir)


def install(changes: list[FileChange]) -> None:
    """Write each changed file atomically, keeping an existing file's permissions."""
    for change in changes:
        if not change.changed:
            continue
        try:
            if change.root is not None and change.rel is not None:
                write_inside(change.root, change.rel, change.after, REAL_FILES)
                continue
            mode = change.path.stat().st_mode & 0o777 if change.before is not None else 0o644
            # The user's own config (outside any repository) may be a link into a dotfiles
            # repository: write through it, as `git config --global` does, rather than replace it.
            write_atomic(Path(os.path.realpath(change.path)), change.after, mode=mode)
        except OSError as exc:
            raise ConfigError(f"{change.path}: cannot write: {exc.strerror}") from None
