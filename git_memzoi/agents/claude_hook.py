"""Claude Code hooks: one hook event in (JSON), precheck warnings or a session handoff out.

`PreToolUse` for a file tool (Edit, Write, MultiEdit, NotebookEdit) prechecks the file's
repository path; for Bash it prechecks the command. `SessionStart` answers with a handoff.
The answer is Claude Code's hook output: `hookSpecificOutput` with `hookEventName`, plus
`additionalContext` and, for a `risk` record, `permissionDecision`. Nothing to say is None.
This module stays import-light (no pydantic, YAML or MCP until a warning is rendered), since
Claude Code runs it before every edit.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import UsageError
from git_memzoi.layout import RECORDS
from git_memzoi.profile import oneline
from git_memzoi.recall.precheck import precheck

if TYPE_CHECKING:
    from git_memzoi.runtime.workspace import Workspace

#: File tools and the tool_input field that names the file they change.
FILE_TOOLS = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
COMMAND_TOOLS = {"Bash": "command"}
EVENTS = ("PreToolUse", "SessionStart")
#: Claude Code cuts hook context beyond this many characters; we cut first, and say so.
CONTEXT_LIMIT = 10_000
#: At most this many top-level folders seed a session pack (a huge monorepo root stays cheap).
SESSION_PATHS = 64


@dataclass(frozen=True)
class HookEvent:
    """The parts of a Claude Code hook event the answer depends on."""

    name: str
    cwd: Path
    tool_name: str | None = None
    tool_input: dict[str, Any] | None = None
    source: str | None = None


def parse_event(text: str) -> HookEvent:
    """A hook event from Claude Code's stdin JSON; a UsageError naming the field when it is malformed."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"hook input is not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    if not isinstance(data, dict):
        raise UsageError("hook input is not a JSON object")
    name = data.get("hook_event_name")
    if not isinstance(name, str) or not name:
        raise UsageError("hook input has no hook_event_name")
    cwd = data.get("cwd")
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        raise UsageError(f"{name} event: cwd must be an absolute path, not {cwd!r}")
    tool_name = data.get("tool_name")
    tool_input = data.get("tool_input")
    if name == "PreToolUse":
        if not isinstance(tool_name, str) or not tool_name:
            raise UsageError("PreToolUse event has no tool_name")
        if not isinstance(tool_input, dict):
            raise UsageError(f"PreToolUse event for {tool_name}: tool_input is not an object")
    source = data.get("source")
    return HookEvent(
        name,
        Path(cwd),
        tool_name if isinstance(tool_name, str) else None,
        tool_input if isinstance(tool_input, dict) else None,
        source if isinstance(source, str) else None,
    )


def subject(event: HookEvent, workdir: Path) -> tuple[str, str] | None:
    """("path", repository path) or ("command", text) to precheck, or None when there is nothing to check."""
    if event.tool_name is None or event.tool_input is None:
        return None
    if event.tool_name in COMMAND_TOOLS:
        command = event.tool_input.get(COMMAND_TOOLS[event.tool_name])
        if not isinstance(command, str):
            raise UsageError(f"PreToolUse event for {event.tool_name}: tool_input.command is not a string")
        return ("command", command) if command.strip() else None
    field = FILE_TOOLS.get(event.tool_name)
    if field is None:
        return None
    given = event.tool_input.get(field)
    if not isinstance(given, str) or not given.strip():
        raise UsageError(f"PreToolUse event for {event.tool_name}: tool_input.{field} is not a path")
    rel = repository_path(given, event.cwd, workdir)
    return ("path", rel) if rel is not None else None


def repository_path(given: str, cwd: Path, workdir: Path) -> str | None:
    """`given` (absolute, or relative to the event's cwd) as a repository path; None when outside it."""
    full = Path(os.path.normpath(cwd / given))
    root = Path(os.path.realpath(workdir))
    for candidate in (full, Path(os.path.realpath(full))):
        try:
            rel = candidate.relative_to(root).as_posix()
        except ValueError:
            continue
        # The repository root itself and git's own directory are not files an agent edits.
        if rel in ("", ".") or rel == ".git" or rel.startswith(".git/"):
            return None
        return rel
    return None


def _clip(text: str) -> str:
    if len(text) <= CONTEXT_LIMIT:
        return text
    note = "\n\n[cut to fit Claude Code's hook context limit; run `git memzoi precheck` or `handoff` for all of it]\n"
    return text[: CONTEXT_LIMIT - len(note)].rstrip() + note


def precheck_answer(ws: Workspace, kind: str, value: str, risk_decision: str) -> dict[str, Any] | None:
    """The PreToolUse answer for the warnings on a path or command, or None when there are none."""
    result = precheck(ws, **{kind: value})
    if not result.warnings:
        return None
    what = f"`{result.value}`" if kind == "command" else result.value
    count = len(result.warnings)
    lines = [f"git memzoi: project memory has {count} warning{'s' if count > 1 else ''} for {kind} {what}:", ""]
    for number, w in enumerate(result.warnings, 1):
        lines += [
            oneline.escape(f"{number}. [{w.type}] {w.title} (id: {w.record_id})"),
            oneline.escape(f"   {w.message}"),
            oneline.escape(f"   Next: {w.next_step}"),
        ]
    out: dict[str, Any] = {"hookEventName": "PreToolUse", "additionalContext": _clip("\n".join(lines) + "\n")}
    risks = [w for w in result.warnings if w.type == "risk"]
    if risks and risk_decision != "context":
        more = f" (+{count - 1} more in context)" if count > 1 else ""
        out["permissionDecision"] = risk_decision
        out["permissionDecisionReason"] = oneline.escape(
            " ".join(f"git memzoi risk {risks[0].record_id}: {risks[0].title}{more}".split())
        )
    return {"hookSpecificOutput": out}


def session_task(ws: Workspace) -> str:
    """What a new session is about: the current checkpoint's task, else the branch being worked on."""
    # SessionStart only: PreToolUse never loads the inbox (Agent hook: Claude Code PreToolUse)
    from git_memzoi.recall.handoff import latest_checkpoint

    checkpoint = latest_checkpoint(ws)
    if checkpoint is not None and checkpoint.current:
        return checkpoint.task
    branch = ws.repo.branch_name()
    return f"work on {branch}" if branch else "work on a detached HEAD"


def top_level_paths(workdir: Path) -> list[str]:
    """The work tree's visible top-level entries, so a session pack holds every path-bound record, risks first."""
    try:
        names = sorted(n for n in os.listdir(workdir) if not n.startswith("."))
    except OSError:
        return []
    return names[:SESSION_PATHS]


def session_answer(ws: Workspace) -> dict[str, Any]:
    """The SessionStart answer: a handoff (context pack, open inbox, checkpoint) within the context budget."""
    # SessionStart only: PreToolUse never loads the inbox (Agent hook: Claude Code PreToolUse)
    from git_memzoi.recall.handoff import build_handoff

    handoff = build_handoff(ws, session_task(ws), top_level_paths(ws.repo.require_workdir()))
    text = (
        f"git memzoi: this repository keeps reviewed project memory under {RECORDS}/. "
        "Before risky changes, run `git memzoi precheck`; search it with `git memzoi search`.\n\n" + handoff.text
    )
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": _clip(text)}}


def answer(event: HookEvent, ws: Workspace, risk_decision: str) -> dict[str, Any] | None:
    """Claude Code's hook output for `event`, or None when memory has nothing to say."""
    if event.name == "SessionStart":
        return session_answer(ws)
    if event.name != "PreToolUse":
        raise UsageError(f"unsupported hook event {event.name!r}; use one of {', '.join(EVENTS)}")
    found = subject(event, ws.repo.require_workdir())
    if found is None:
        return None
    return precheck_answer(ws, found[0], found[1], risk_decision)
