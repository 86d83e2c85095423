"""GitHub Copilot CLI's hook: its events in (JSON on stdin), its hook output out.

Copilot CLI runs the repository's `.github/hooks/*.json` hooks (`version: 1`, one list of
`{"type": "command", "bash": …}` entries per event) and sends each a camelCase object that does not
name its event (`sessionId`, `cwd`, `prompt`, `toolName`, `toolArgs`, `transcriptPath`), so the
event comes as the command's argument: `git memzoi agent hook copilot sessionStart`. Its output is
one object: `additionalContext` (sessionStart, userPromptSubmitted and preToolUse all hand it to the
model: the first as a message of its own, the second inside the prompt's `<system_reminder>`, the
third as a message after the tool's result) and, for preToolUse, `permissionDecision: "deny"` with
a `permissionDecisionReason` the model reads as the tool's result. Its tools: `create` and `edit`
(`toolArgs.path`), `bash` (`toolArgs.command`). `agentStop`, after every turn, keeps the session's
checkpoint from its transcript (`events.jsonl`, agents/capture.py).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from git_memzoi.agents import hook_core as core
from git_memzoi.agents.hook_core import HookEvent
from git_memzoi.errors import UsageError

if TYPE_CHECKING:
    from git_memzoi.runtime.workspace import Workspace

DIALECT = core.Dialect(
    client="copilot",
    events={
        "sessionStart": core.SESSION_START,
        "userPromptSubmitted": core.PROMPT,
        "preToolUse": core.BEFORE_TOOL,
        "agentStop": core.STOP,
    },
    file_tools={"create": "path", "edit": "path"},
    command_tools={"bash": "command"},
    patch_tools={},
    turn_capture=("GitHub Copilot CLI", "copilot-cli"),
    transcript="copilot",
    # Copilot CLI 1.0.102 sends the model all of a hook's additionalContext (68,000 characters were sent whole);
    # it gets no more than Claude Code reads inline.
    context_limit=core.CONTEXT_LIMIT,
)
LIMIT = DIALECT.context_limit
#: Copilot CLI's field for each of Claude Code's that the event parser reads.
_FIELDS = {
    "cwd": "cwd",
    "session_id": "sessionId",
    "prompt": "prompt",
    "source": "source",
    "tool_name": "toolName",
    "tool_input": "toolArgs",
    "transcript_path": "transcriptPath",
    "trigger": "stopReason",
}


def parse_event(text: str, event_name: str | None = None) -> HookEvent:
    """A hook event from Copilot CLI's stdin JSON and the event named on the command line; a UsageError naming
    the field when it is malformed."""
    if event_name is None:
        raise UsageError(f"agent hook copilot needs the event as its argument: one of {', '.join(DIALECT.events)}")
    DIALECT.moment(event_name)
    data = core.load_event(text)
    fields: dict[str, Any] = {"hook_event_name": event_name}
    for ours, theirs in _FIELDS.items():
        if theirs in data:
            fields[ours] = data[theirs]
    args = fields.get("tool_input")
    if isinstance(args, str):  # a JSON text in earlier Copilot CLI versions, an object in 1.0
        if core.too_deep(args.encode("utf-8", "surrogatepass")):
            raise UsageError(
                f"{event_name} event: toolArgs nests arrays and objects more than {core.MAX_EVENT_DEPTH} deep"
            )
        try:
            fields["tool_input"] = json.loads(args)
        except ValueError:
            raise UsageError(f"{event_name} event: toolArgs is not JSON") from None
    return core.event_of(fields, DIALECT)


def _context(text: str | None) -> dict[str, Any] | None:
    return {"additionalContext": core.clip(text, LIMIT)} if text else None


def answer(event: HookEvent, ws: Workspace, risk_decision: str) -> dict[str, Any] | None:
    """Copilot CLI's hook output for `event`, or None when memory has nothing to say."""
    moment = DIALECT.moment(event.name)
    if moment == core.STOP:
        core.keep_turn(ws, event, DIALECT)
        return None  # never asks for another turn
    if moment == core.SESSION_START:
        return _context(core.session_context(ws, event, client="copilot"))
    if moment == core.PROMPT:
        return _context(core.prompt_context(ws, event))
    touched = core.subjects(event, DIALECT, ws.repo.require_workdir())
    found = core.tool_context(ws, event, touched, client="copilot") if touched else None
    if found is None:
        return None
    out: dict[str, Any] = {"additionalContext": core.clip(found.text, LIMIT)}
    if found.risks and risk_decision == "deny":  # Copilot CLI asks no one from a hook: a risk is context, or denied
        out["permissionDecision"] = "deny"
        out["permissionDecisionReason"] = found.reason()
    return out
