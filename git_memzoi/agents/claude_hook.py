"""Claude Code's hook: its events in (JSON on stdin), its hook output out; the memory itself is hook_core's.

`SessionStart` gets the standing rules, checkpoint and inbox; `UserPromptSubmit` a context pack;
`PreToolUse` for a file tool (Edit, Write, MultiEdit, NotebookEdit) or Bash the warnings on the
file or command and what else applies to it; `Stop` (after every turn, in place), `PreCompact`
and `SessionEnd` keep a session checkpoint. The answer is `hookSpecificOutput` with `hookEventName`
and `additionalContext`, plus `permissionDecision` for a `risk` record. Nothing to say is None.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from git_memzoi.agents import hook_core as core
from git_memzoi.agents.hook_core import CONTEXT_LIMIT, HookEvent, event_text
from git_memzoi.agents.limits import MAX_EVENT_BYTES

if TYPE_CHECKING:
    from git_memzoi.runtime.workspace import Workspace

__all__ = ["CONTEXT_LIMIT", "DIALECT", "MAX_EVENT_BYTES", "answer", "event_text", "parse_event"]

#: File tools and the tool_input field that names the file they change.
FILE_TOOLS = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
DIALECT = core.Dialect(
    client="claude",
    events={
        name: name
        for name in (core.BEFORE_TOOL, core.SESSION_START, core.PROMPT, core.PRE_COMPACT, core.STOP, core.SESSION_END)
    },
    file_tools=FILE_TOOLS,
    command_tools={"Bash": "command"},
    patch_tools={},
    context_limit=CONTEXT_LIMIT,  # Claude Code keeps 10,000 characters of hook context inline, a preview past that
)
LIMIT = DIALECT.context_limit


def parse_event(text: str) -> HookEvent:
    """A hook event from Claude Code's stdin JSON; a UsageError naming the field when it is malformed."""
    return core.parse_event(text, DIALECT)


def _output(event: HookEvent, context: str | None) -> dict[str, Any] | None:
    if context is None:
        return None
    return {"hookSpecificOutput": {"hookEventName": event.name, "additionalContext": core.clip(context, LIMIT)}}


def tool_output(
    found: core.ToolContext | None, risk_decision: str, limit: int = CONTEXT_LIMIT
) -> dict[str, Any] | None:
    """Claude Code's PreToolUse output (Codex's too): the context within `limit` bytes, and for a risk the
    permission decision."""
    if found is None:
        return None
    out: dict[str, Any] = {"hookEventName": core.BEFORE_TOOL, "additionalContext": core.clip(found.text, limit)}
    if found.risks and risk_decision != "context":
        out["permissionDecision"] = risk_decision
        out["permissionDecisionReason"] = found.reason()
    return {"hookSpecificOutput": out}


def answer(event: HookEvent, ws: Workspace, risk_decision: str) -> dict[str, Any] | None:
    """Claude Code's hook output for `event`, or None when memory has nothing to say."""
    moment = DIALECT.moment(event.name)
    if moment == core.SESSION_START:
        return _output(event, core.session_context(ws, event, client="claude"))
    if moment == core.PROMPT:
        return _output(event, core.prompt_context(ws, event))
    if moment in core.CAPTURE_MOMENTS:
        core.keep_session(ws, event)
        return None
    touched = core.subjects(event, DIALECT, ws.repo.require_workdir())
    return tool_output(core.tool_context(ws, event, touched, client="claude"), risk_decision) if touched else None
