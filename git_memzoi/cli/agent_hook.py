"""`git memzoi agent hook CLIENT [EVENT]` without click: stdin in, the client's hook output out, never blocking."""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import TYPE_CHECKING, Any

from git_memzoi.agents.hook_core import MAX_EVENT_BYTES, event_text
from git_memzoi.errors import EXIT_INTERNAL, MemzoiError
from git_memzoi.layout import MEMZOI_DIR
from git_memzoi.runtime.workspace import Workspace

if TYPE_CHECKING:
    from typing import BinaryIO, TextIO


def adapter_of(client: str) -> Any:
    """The adapter module of `client` (claude, codex, gemini or copilot: a few small functions over hook_core).

    A hook process loads its own client's only."""
    if client == "copilot":
        from git_memzoi.agents import copilot_hook

        return copilot_hook
    if client == "codex":
        from git_memzoi.agents import codex_hook

        return codex_hook
    if client == "gemini":
        from git_memzoi.agents import gemini_hook

        return gemini_hook
    from git_memzoi.agents import claude_hook

    return claude_hook


def read_event(stdin: BinaryIO) -> bytes:
    """The event's bytes, read no further than one byte past the largest event the hook takes."""
    return stdin.read(MAX_EVENT_BYTES + 1)


def answer_text(data: bytes, client: str = "claude", event_name: str | None = None) -> tuple[str | None, str | None]:
    """(stdout JSON line or None, one stderr line or None) for one hook event's bytes; MemzoiErrors become a line.

    `event_name`: the event, for a client whose events do not name themselves (Copilot CLI's)."""
    adapter = adapter_of(client)
    try:
        text = event_text(data)
        event = adapter.parse_event(text, event_name) if client == "copilot" else adapter.parse_event(text)

        ws = Workspace.open(event.cwd)
        ws.verify_runtime()
        if not ws.repo.memzoi_dir.is_dir():
            return None, f"git memzoi: no {MEMZOI_DIR}/ in {ws.repo.workdir}; no project memory to consult"
        answer = adapter.answer(event, ws, ws.config.agents.risk_decision)
    except MemzoiError as exc:
        return None, f"git memzoi: agent hook {client}: " + " ".join(str(exc).split())
    return (json.dumps(answer, ensure_ascii=False) if answer is not None else None), None


def run(stdin: BinaryIO, stdout: TextIO, stderr: TextIO, client: str = "claude", event_name: str | None = None) -> int:
    """Answer one event; exit 0 whatever memory says (the clients block only on exit 2), 70 if we crash."""
    try:
        out, err = answer_text(read_event(stdin), client, event_name)
    except Exception as exc:  # noqa: BLE001 - the one place an unexpected failure becomes a line
        if os.environ.get("MEMZOI_DEBUG") not in (None, "", "0"):
            import traceback  # only with --debug (Agent hook: Claude Code PreToolUse)

            traceback.print_exc(file=stderr)
        stderr.write(f"git memzoi: internal error: {type(exc).__name__}: {exc}\n")
        return EXIT_INTERNAL
    if err is not None:
        stderr.write(err + "\n")
    if out is not None:
        stdout.write(out + "\n")
    return 0


def main(client: str = "claude", event_name: str | None = None) -> None:
    """The console script's fast path for the hook."""
    if hasattr(signal, "SIGPIPE"):
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    code = run(sys.stdin.buffer, sys.stdout, sys.stderr, client, event_name)
    sys.stdout.flush()
    sys.exit(code)
