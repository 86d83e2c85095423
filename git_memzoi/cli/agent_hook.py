"""`git memzoi agent hook CLIENT [EVENT]` without click: stdin in, the client's hook output out, never blocking."""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import TYPE_CHECKING, Any

from git_memzoi.agents.limits import MAX_EVENT_BYTES
from git_memzoi.errors import EXIT_INTERNAL, MemzoiError
from git_memzoi.layout import MEMZOI_DIR

if TYPE_CHECKING:
    from typing import BinaryIO, TextIO

#: The events whose answer reads the index: their hook starts git's comparison of the record files
#: (index.git_clean) before it loads its modules. Claude Code's and Codex's names, Gemini CLI's, Copilot CLI's.
READING_EVENTS = frozenset(
    {
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "BeforeAgent",
        "BeforeTool",
        "AfterTool",
        "sessionStart",
        "userPromptSubmitted",
        "preToolUse",
    }
)
#: The largest event looked into for its `cwd` before the modules load (the answer parses every event whole).
PREFETCH_BYTES = 64 * 1024


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
    from git_memzoi.agents.hook_core import event_text
    from git_memzoi.runtime.workspace import Workspace

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


def prefetch(data: bytes, event_name: str | None = None) -> None:
    """Start git's comparison of the event's repository's record files, when its answer will read the index and
    git vouches for them (index.git_clean.start), so that it runs while this process loads the hook's modules.
    Never fails: whatever it cannot settle is left to the answer, which reads the event again, whole."""
    if len(data) > PREFETCH_BYTES:
        return
    try:
        event = json.loads(data)
        name = event_name or event.get("hook_event_name")
        cwd = event.get("cwd")
        if name not in READING_EVENTS or not isinstance(cwd, str):
            return
        from git_memzoi.gitrepo.discover import find
        from git_memzoi.index import git_clean
        from git_memzoi.index.staleness import read_check
        from git_memzoi.runtime.home import Layout

        found = find(cwd)
        if found is None or found[2] is None:
            return
        git_dir, common_dir, workdir = found
        layout = Layout.for_paths(git_dir, common_dir, workdir)
        git_clean.start(read_check(layout.index_db), str(git_dir), str(workdir))
    except Exception:  # noqa: BLE001 - a head start only; the answer meets anything here again, and says so
        return


def run(stdin: BinaryIO, stdout: TextIO, stderr: TextIO, client: str = "claude", event_name: str | None = None) -> int:
    """Answer one event; exit 0 whatever memory says (the clients block only on exit 2), 70 if we crash."""
    try:
        data = read_event(stdin)
        prefetch(data, event_name)
        out, err = answer_text(data, client, event_name)
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
