"""Gemini CLI's hook: its events in (JSON on stdin), its hook output out.

Gemini CLI names the moments differently and adds context at different points:
`SessionStart` and `BeforeAgent` (a prompt was submitted) take `hookSpecificOutput.additionalContext`;
`BeforeTool` takes no context, only a decision (`"deny"` with a `reason` the model sees) or a
`systemMessage` the user sees; `AfterTool` appends `hookSpecificOutput.additionalContext` to the
tool's result. So before a tool runs the hook only acts on a risk (deny, or tell the user who is
asked to confirm the call), and after it runs the model gets what applies to the file or command.
Its tools: `write_file` and `replace` (`tool_input.file_path`), `run_shell_command` (`command`).
A prompt that carries an earlier hook's context (`<hook_context>…</hook_context>`, as Gemini CLI
prepends SessionStart's in a non-interactive run) is searched without it. `AfterAgent`, after every
turn, keeps the session's checkpoint up to date in place, read from its chat recording (`transcript_path`,
JSONL) with the turn's `prompt` and `prompt_response`; `PreCompress`, before the history is compressed,
keeps a successor checkpoint from it (Gemini CLI takes no context from either).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from git_memzoi.agents import hook_core as core
from git_memzoi.agents.hook_core import HookEvent

if TYPE_CHECKING:
    from git_memzoi.runtime.workspace import Workspace

DIALECT = core.Dialect(
    client="gemini",
    events={
        "SessionStart": core.SESSION_START,
        "BeforeAgent": core.PROMPT,
        "BeforeTool": core.BEFORE_TOOL,
        "AfterTool": core.AFTER_TOOL,
        "AfterAgent": core.STOP,
        "PreCompress": core.PRE_COMPACT,
    },
    file_tools={"write_file": "file_path", "replace": "file_path"},
    command_tools={"run_shell_command": "command"},
    patch_tools={},
    prompt_noise=("<hook_context>", "</hook_context>"),
    turn_capture=("Gemini CLI", "gemini-cli"),  # AfterAgent's prompt and prompt_response when it names no recording
    transcript="gemini",
    # Gemini CLI documents no inline limit for hook context; the model reads all of it, on every turn it is
    # given, so it gets no more than Claude Code reads inline.
    context_limit=core.CONTEXT_LIMIT,
)
LIMIT = DIALECT.context_limit
#: The BeforeTool and AfterTool matcher `agent install gemini` writes (a regular expression on the tool name).
TOOL_MATCHER = "write_file|replace|run_shell_command"


def parse_event(text: str) -> HookEvent:
    """A hook event from Gemini CLI's stdin JSON; a UsageError naming the field when it is malformed."""
    return core.parse_event(text, DIALECT)


def _context(event: HookEvent, text: str | None) -> dict[str, Any] | None:
    if not text:
        return None
    return {"hookSpecificOutput": {"hookEventName": event.name, "additionalContext": core.clip(text, LIMIT)}}


def _before_tool(found: core.ToolContext | None, risk_decision: str) -> dict[str, Any] | None:
    if found is None or not found.risks or risk_decision == "context":
        return None
    if risk_decision == "deny":
        return {"decision": "deny", "reason": core.clip(found.text, LIMIT)}
    return {"systemMessage": found.reason()}  # "ask": the user, who confirms the call, sees the risk


def answer(event: HookEvent, ws: Workspace, risk_decision: str) -> dict[str, Any] | None:
    """Gemini CLI's hook output for `event`, or None when memory has nothing to say."""
    moment = DIALECT.moment(event.name)
    if moment in (core.STOP, core.PRE_COMPACT):
        core.keep_turn(ws, event, DIALECT)
        return None  # nothing to add: the turn is over, or the history about to be compressed
    if moment == core.SESSION_START:
        return _context(event, core.session_context(ws, event, client="gemini"))
    if moment == core.PROMPT:
        return _context(event, core.prompt_context(ws, event))
    touched = core.subjects(event, DIALECT, ws.repo.require_workdir())
    if not touched:
        return None
    if moment == core.BEFORE_TOOL:  # warnings only: what else applies is told after the tool ran
        return _before_tool(core.tool_context(ws, event, touched, explain=False, client="gemini"), risk_decision)
    found = core.tool_context(ws, event, touched, client="gemini")
    return _context(event, found.text if found else None)
