"""Client configuration for coding agents: merge git memzoi's MCP server and hooks into what is there.

Claude Code: the project's `.mcp.json` (server `memzoi`) and `.claude/settings.json` (its hooks).
Codex: `[mcp_servers.memzoi]` in the project's `.codex/config.toml` (or `$CODEX_HOME/config.toml`),
added as text so comments and layout stay, and read back with tomllib to prove the result; its
hooks in `hooks.json` beside it. Gemini CLI: server and hooks in the project's `.gemini/settings.json`.
GitHub Copilot CLI: the project's `.mcp.json` (as Claude Code's) and its hooks in `.github/hooks/memzoi.json`.
Every plan is computed first; nothing is written when an entry named `memzoi` that we did not
write is in the way, and a second run changes no byte. Entries are added as text
(agents/jsontext.py): every byte of the user's own entries stays as it was.

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

from git_memzoi.agents.jsontext import add_members
from git_memzoi.errors import ConfigError, Refused, UsageError
from git_memzoi.runtime.atomic import read_inside, write_atomic, write_inside
from git_memzoi.runtime.config import loads_toml

SERVER_NAME = "memzoi"
#: Portable: found through git on PATH in every checkout, so `.mcp.json` can be committed.
SERVER_COMMAND = "git"
SERVER_ARGS = ["memzoi", "mcp", "serve"]
HOOK_COMMAND = "git memzoi agent hook claude"
CODEX_HOOK_COMMAND = "git memzoi agent hook codex"
GEMINI_HOOK_COMMAND = "git memzoi agent hook gemini"
#: Copilot CLI's events do not name themselves: each hook runs this with its event as the last argument.
COPILOT_HOOK_COMMAND = "git memzoi agent hook copilot"
PRETOOLUSE_MATCHER = "Edit|Write|MultiEdit|NotebookEdit|Bash"
#: The events each client's hook is wired to, with the tool matcher of a tool event.
CLAUDE_EVENTS: dict[str, str | None] = {
    "SessionStart": None,
    "UserPromptSubmit": None,
    "PreToolUse": PRETOOLUSE_MATCHER,
    "PreCompact": None,
    "Stop": None,
    "SessionEnd": None,
}
#: Codex matches Edit and Write to apply_patch too; its shell tools all come as Bash.
CODEX_EVENTS: dict[str, str | None] = {
    "SessionStart": None,
    "UserPromptSubmit": None,
    "PreToolUse": "Bash|apply_patch",
    "Stop": None,
}
GEMINI_TOOLS = "write_file|replace|run_shell_command"
GEMINI_EVENTS: dict[str, str | None] = {
    "SessionStart": None,
    "BeforeAgent": None,
    "BeforeTool": GEMINI_TOOLS,
    "AfterTool": GEMINI_TOOLS,
    "AfterAgent": None,
    "PreCompress": None,
}
#: Copilot CLI's events `agent install copilot` wires (it runs every hook of a tool event for every tool; the
#: hook answers nothing for a tool that neither edits a file nor runs a command).
COPILOT_EVENTS = ("sessionStart", "userPromptSubmitted", "preToolUse", "agentStop")
#: Copilot CLI's repository hooks file that `agent install copilot` writes.
COPILOT_HOOKS = ".github/hooks/memzoi.json"
CLIENTS = ("claude", "codex", "gemini", "copilot")
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


def gemini_server() -> dict[str, Any]:
    """The `mcpServers` entry of Gemini CLI's settings.json (a stdio server: command and args)."""
    return {"command": SERVER_COMMAND, "args": list(SERVER_ARGS)}


#: One change to a JSON configuration (its path for messages, the object read): True when it changed it.
Edit = Callable[[Path, str, dict[str, Any]], bool]


def add_server(entry: dict[str, Any]) -> Edit:
    """The edit that adds server `memzoi` to `mcpServers` (other servers and keys kept); refused when a
    `memzoi` entry that is not `entry` is there."""

    def edit(path: Path, label: str, data: dict[str, Any]) -> bool:
        servers = _section(path, data, "mcpServers")
        existing = servers.get(SERVER_NAME)
        if existing is not None and existing != entry:
            raise Refused(
                f"{label}: mcpServers already has a server named {SERVER_NAME!r} that agent install did not "
                f"write: {json.dumps(existing, ensure_ascii=False)}",
                hint=f"remove or rename that entry, then rerun; ours is {json.dumps(entry)}",
            )
        if existing is not None:
            return False
        servers[SERVER_NAME] = entry
        return True

    return edit


def _has_our_hook(path: Path, groups: list[Any], event: str, command: str) -> bool:
    for group in groups:
        if not isinstance(group, dict):
            raise ConfigError(f"{path}: hooks.{event} holds something that is not a matcher object")
        hooks = group.get("hooks", [])
        if not isinstance(hooks, list):
            raise ConfigError(f"{path}: hooks.{event}[].hooks is not a list")
        if any(isinstance(h, dict) and h.get("command") == command for h in hooks):
            return True
    return False


def add_hooks(wanted: dict[str, dict[str, Any]], command: str) -> Edit:
    """The edit that adds each event's matcher group in `wanted` to `hooks` unless a hook running `command` is
    already there (every other hook and key kept)."""

    def edit(path: Path, label: str, data: dict[str, Any]) -> bool:
        hooks = _section(path, data, "hooks")
        changed = False
        for event, group in wanted.items():
            groups = hooks.setdefault(event, [])
            if not isinstance(groups, list):
                raise ConfigError(f"{path}: hooks.{event} is not a list")
            if not _has_our_hook(path, groups, event, command):
                groups.append(group)
                changed = True
        return changed

    return edit


def plan_json(path: Path, label: str, root: Path | None, edits: list[Edit], rel: str | None = None) -> FileChange:
    """A JSON configuration file with `edits` made (a file that needs none is left byte for byte).

    With a `root` (the work tree), the file is read and written as `rel` inside it (default `label`)."""
    rel = rel or label
    before = _read(path, root, rel)
    data = _json_object(path, before)
    changed = [edit(path, label, data) for edit in edits]
    after = _merged(path, before, data) if any(changed) else before or b""
    return FileChange(path, label, before, after, root, rel if root else None)


def _merged(path: Path, before: bytes | None, data: dict[str, Any]) -> bytes:
    """The file with `data`'s additions inserted as text (the user's own bytes kept); a new or empty file whole."""
    if before is None or not before.strip():
        return _dump(data)
    text = _text(path, before)
    inserted = add_members(text, _json_object(path, before), data)
    return inserted.encode("utf-8") if inserted is not None else _dump(data)


def plan_mcp_json(path: Path, label: str, root: Path | None = None) -> FileChange:
    """`.mcp.json` with server `memzoi` added (other servers and keys kept)."""
    return plan_json(path, label, root, [add_server(claude_server())])


def hook_groups(hook: dict[str, Any], events: dict[str, str | None]) -> dict[str, dict[str, Any]]:
    """The matcher group running `hook` per event (event: its tool matcher, or None for every occurrence)."""
    return {
        event: ({"matcher": matcher} if matcher else {}) | {"hooks": [dict(hook)]} for event, matcher in events.items()
    }


def add_our_hooks(hook: dict[str, Any], events: dict[str, str | None]) -> Edit:
    """The edit that wires `hook` to `events` (see hook_groups), once."""
    return add_hooks(hook_groups(hook, events), hook["command"])


def plan_settings_json(path: Path, label: str, root: Path | None = None) -> FileChange:
    """`.claude/settings.json` with the hooks `agent install claude` wires added (everything else kept)."""
    return plan_json(path, label, root, [add_our_hooks({"type": "command", "command": HOOK_COMMAND}, CLAUDE_EVENTS)])


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


def toml_server_table(name: str, command: str, args: list[str], env: dict[str, str]) -> list[str]:
    """The lines of a Codex `[mcp_servers.NAME]` table: its command, its arguments, its environment when given."""
    lines = [
        f"[mcp_servers.{name}]",
        f"command = {_toml_string(command)}",
        "args = [" + ", ".join(_toml_string(a) for a in args) + "]",
    ]
    if env:
        pairs = ", ".join(f"{k} = {_toml_string(v)}" for k, v in sorted(env.items()))
        lines.append(f"env = {{ {pairs} }}")
    return lines


def codex_table(env: dict[str, str]) -> str:
    """The TOML text of the `[mcp_servers.memzoi]` table."""
    header = "# git memzoi: project memory over MCP for the repository Codex runs in"
    return "\n".join([header, *toml_server_table(SERVER_NAME, SERVER_COMMAND, SERVER_ARGS, env)]) + "\n"


def _toml(path: Path, text: str) -> dict[str, Any]:
    return loads_toml(str(path), text)


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

    Then `hooks.json` beside it with the SessionStart, UserPromptSubmit and PreToolUse hooks
    (`git memzoi agent hook codex`), merged like Claude Code's settings.json. A `$CODEX_HOME`
    inside the repository `workdir` (a per-project Codex home) is held to the repository's rule:
    no symlink on the way from the work tree root.
    """
    hooks = config.parent / "hooks.json"
    return [
        _deep(config, lambda: _plan_codex(config, env, workdir)),
        _deep(hooks, lambda: _plan_codex_hooks(hooks, workdir)),
    ]


def _plan_codex_hooks(path: Path, workdir: Path | None) -> FileChange:
    rel = inside(path, workdir)
    root = Path(os.path.normpath(os.path.abspath(workdir))) if rel is not None and workdir is not None else None
    edit = add_our_hooks({"type": "command", "command": CODEX_HOOK_COMMAND}, CODEX_EVENTS)
    return plan_json(path, rel if root is not None and rel else str(path), root, [edit], rel)


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
        return FileChange(config, _label(config, root, rel), before, before or b"", root, rel if root else None)
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
    return FileChange(config, _label(config, root, rel), before, after.encode("utf-8"), root, rel if root else None)


def _label(path: Path, root: Path | None, rel: str | None) -> str:
    """How a Codex file is shown: relative to the work tree inside it, as the other clients' are; else its path."""
    return rel if root is not None and rel else str(path)


#: Codex's project-scoped configuration, read for a project Codex trusts (as `codex mcp list` shows).
CODEX_PROJECT_CONFIG = ".codex/config.toml"
#: Gemini CLI's project settings (read in a folder it trusts).
GEMINI_SETTINGS = ".gemini/settings.json"


def plan_gemini(workdir: Path) -> list[FileChange]:
    """Gemini CLI's project `.gemini/settings.json`: server `memzoi` in `mcpServers` and the hooks, merged."""
    path = workdir / GEMINI_SETTINGS
    hook = {"name": SERVER_NAME, "type": "command", "command": GEMINI_HOOK_COMMAND}  # `/hooks disable memzoi`
    edits = [add_server(gemini_server()), add_our_hooks(hook, GEMINI_EVENTS)]
    return [_deep(path, lambda: plan_json(path, GEMINI_SETTINGS, workdir, edits))]


def copilot_hook(event: str) -> dict[str, Any]:
    """The `.github/hooks/*.json` entry that runs the hook for `event` (the same command under bash and PowerShell)."""
    command = f"{COPILOT_HOOK_COMMAND} {event}"
    return {"type": "command", "bash": command, "powershell": command}


def add_copilot_hooks(path: Path, label: str, data: dict[str, Any]) -> bool:
    """Copilot CLI's hooks file (`version: 1`, a list of entries per event) with ours added unless an entry
    running our command is there; every other entry and key kept. A `version` other than 1 is refused."""
    changed = "version" not in data
    version = data.setdefault("version", 1)
    if version != 1:
        raise ConfigError(f"{label}: version is {json.dumps(version)}; Copilot CLI's hooks files are version 1")
    hooks = _section(path, data, "hooks")
    for event in COPILOT_EVENTS:
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise ConfigError(f"{label}: hooks.{event} is not a list")
        ours = copilot_hook(event)
        if not any(isinstance(e, dict) and e.get("bash") == ours["bash"] for e in entries):
            entries.append(ours)
            changed = True
    return changed


def plan_copilot(workdir: Path) -> list[FileChange]:
    """GitHub Copilot CLI's project files: `.mcp.json` (it reads Claude Code's) and `.github/hooks/memzoi.json`."""
    mcp, hooks = workdir / ".mcp.json", workdir / COPILOT_HOOKS
    return [
        _deep(mcp, lambda: plan_mcp_json(mcp, ".mcp.json", workdir)),
        _deep(hooks, lambda: plan_json(hooks, COPILOT_HOOKS, workdir, [add_copilot_hooks])),
    ]


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
    if client == "gemini":
        return plan_gemini(workdir)
    if client == "copilot":
        return plan_copilot(workdir)
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
