"""Codex's hook: its events in (JSON on stdin, the same shape as Claude Code's), its hook output out.

Codex sends `SessionStart`, `UserPromptSubmit` and `PreToolUse` with Claude Code's fields and takes
the same `hookSpecificOutput`; what differs is its tools and one decision. A shell command comes as
tool `Bash` (`tool_input.command`); a file edit as tool `apply_patch`, whose `tool_input.command`
is the patch, so the files are read from its `*** Add File:`, `*** Update File:`, `*** Delete File:`
and `*** Move to:` lines. Codex refuses `permissionDecision: "ask"` from a hook, so a risk under
`risk_decision = "ask"` is given as context only; `"deny"` refuses the tool call as for Claude Code.
`Stop`, after every turn, keeps the session's checkpoint up to date in place, read from its rollout
(`transcript_path`, JSONL) with the turn's answer (`last_assistant_message`); without a rollout, the answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from git_memzoi.agents import hook_core as core
from git_memzoi.agents.claude_hook import tool_output
from git_memzoi.agents.hook_core import HookEvent

if TYPE_CHECKING:
    from git_memzoi.runtime.workspace import Workspace

DIALECT = core.Dialect(
    client="codex",
    events={name: name for name in (core.SESSION_START, core.PROMPT, core.BEFORE_TOOL, core.STOP)},
    file_tools={},
    command_tools={"Bash": "command"},
    patch_tools={"apply_patch": "command"},
    turn_capture=("Codex", "codex"),  # Stop's last_assistant_message, when transcript_path is null
    transcript="codex",
    # Codex puts hook text over 2,500 tokens (estimated as four bytes a token) in a file and shows the model a
    # preview: 9,600 bytes is 2,400 tokens by that estimate.
    context_limit=9_600,
)
LIMIT = DIALECT.context_limit
#: The PreToolUse matcher `agent install codex` writes (Codex also matches Edit and Write to apply_patch).
TOOL_MATCHER = "Bash|apply_patch"


def parse_event(text: str) -> HookEvent:
    """A hook event from Codex's stdin JSON; a UsageError naming the field when it is malformed."""
    return core.parse_event(text, DIALECT)


def answer(event: HookEvent, ws: Workspace, risk_decision: str) -> dict[str, Any] | None:
    """Codex's hook output for `event`, or None when memory has nothing to say."""
    moment = DIALECT.moment(event.name)
    if moment == core.STOP:
        core.keep_turn(ws, event, DIALECT)
        return None  # never blocks the stop
    if moment in (core.SESSION_START, core.PROMPT):
        context: str | None
        if moment == core.SESSION_START:
            context = core.session_context(ws, event, client="codex")
        else:
            context = core.prompt_context(ws, event)
        if not context:
            return None
        return {"hookSpecificOutput": {"hookEventName": event.name, "additionalContext": core.clip(context, LIMIT)}}
    touched = core.subjects(event, DIALECT, ws.repo.require_workdir())
    if not touched:
        return None
    return tool_output(
        core.tool_context(ws, event, touched, client="codex"), "deny" if risk_decision == "deny" else "context", LIMIT
    )
