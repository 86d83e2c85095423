"""What a Claude Code session did, read from its transcript and kept as a session checkpoint in local memory.

`PreCompact` and `SessionEnd` name the session's transcript (Claude Code's JSONL). From it the hook
keeps the task (the session's first request, or the current checkpoint's task), the last request,
the repository files the session edited and the commands it ran, each bounded, with any line that
looks like a secret left out. The transcript itself is never copied anywhere; the checkpoint lives
in shared.db (private, never in the work tree), and the next SessionStart and `handoff` show it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import UsageError
from git_memzoi.profile import oneline, secrets

if TYPE_CHECKING:
    from git_memzoi.recall.models import Checkpoint
    from git_memzoi.runtime.workspace import Workspace

#: A transcript up to this size is read whole; past it, its first and last parts only.
WHOLE_BYTES = 64 * 1024 * 1024
HEAD_BYTES, TAIL_BYTES = 1024 * 1024, 16 * 1024 * 1024
#: A line longer than this (a tool result holding a large file) is skipped unparsed.
MAX_LINE = 2 * 1024 * 1024
#: What the checkpoint keeps: characters of a request, files, commands and characters of a command.
REQUEST_CHARS, MAX_FILES, MAX_COMMANDS, COMMAND_CHARS = 400, 40, 20, 160
#: Characters kept of the event's trigger (PreCompact) or reason (SessionEnd): a word in Claude Code's events.
TRIGGER_CHARS = 80
#: A session ID kept as it is in a checkpoint's source_ref (Claude Code's are UUIDs); any other is hashed.
_PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
#: The tools whose input names the file they change, and the field that names it.
EDIT_TOOLS = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
#: User text Claude Code writes itself, which is no request of the user's.
_NOT_REQUESTS = ("<command-", "<local-command", "Caveat:", "This session is being continued from a previous")


@dataclass
class Session:
    """What the transcript says the session was asked and did."""

    first_request: str | None = None
    last_request: str | None = None
    files: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)

    def empty(self) -> bool:
        return self.first_request is None and not self.files and not self.commands


def _visible(text: str) -> str:
    """`text` with each control character (a terminal's escape codes, NUL) and each unpaired surrogate (JSON's
    `\\ud800`, which no UTF-8 file can hold) written as a visible escape, as every one-line field is."""
    if not text.isascii():
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return oneline.escape(text)


#: What a terminal shows as nothing inside a secret (`ghp_AB\x1b[8m\x1b[0mCD` reads `ghp_ABCD`): its escape
#: sequences (CSI, OSC, the two-character ones), other control characters and invisible marks.
_INVISIBLE = re.compile(
    "\x1b\\[[0-?]*[ -/]*[@-~]|\x1b\\][^\x07\x1b]*(?:\x07|\x1b\\\\)?|\x1b[@-_]"
    "|[\x00-\x08\x0e-\x1b\x7f-\x9f\u00ad\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]"
)


def _forms(text: str) -> tuple[str, ...]:
    """`text` as the scan sees it, and as a reader may: without what a terminal hides, and with each word
    joined to the next (a token the terminal it was pasted from wrapped over two lines)."""
    shown = _INVISIBLE.sub("", text)
    words = shown.split()
    if len(words) < 2:
        return (text, shown)
    pairs = (" ".join(a + b for a, b in zip(words[start::2], words[start + 1 :: 2], strict=False)) for start in (0, 1))
    return (text, shown, *pairs)


def secret_in(text: str) -> str | None:
    """What `text` looks like it holds (`looks like a GitHub token`) in any of its `_forms`; None when none does."""
    for form in _forms(text):
        found = secrets.scan(form)
        if found:
            return found[0].looks_like
    return None


def kept(text: str, limit: int) -> str:
    """`text` as the checkpoint keeps it: on one line, escaped and cut to `limit` characters; or, when the whole
    text looks like it holds a secret, a marker in its place (scanned before the cut, so that no cut keeps a part)."""
    found = secret_in(text)
    return f"[left out: {found}]" if found is not None else _one_line(text, limit)


def _one_line(text: str, limit: int) -> str:
    flat = _visible(" ".join(text.split()))
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _request(message: Any) -> str | None:
    """The user's own words in a transcript `message`, or None for tool results and Claude Code's notes."""
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, list):
        if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
            return None
        content = "\n".join(
            b["text"]
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        )
    if not isinstance(content, str) or not content.strip() or content.lstrip().startswith(_NOT_REQUESTS):
        return None
    return content


def _read_lines(path: Path) -> list[bytes]:
    """The transcript's lines, bounded: a regular file only (never a FIFO or device), never followed through a link."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise UsageError(f"transcript {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # before fdopen, which refuses a folder with IsADirectoryError
        os.close(fd)
        raise UsageError(f"transcript {path}: not a regular file")
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if info.st_size <= WHOLE_BYTES:
            return handle.read(WHOLE_BYTES).split(b"\n")
        head = handle.read(HEAD_BYTES).split(b"\n")[:-1]  # the last piece may be cut
        handle.seek(info.st_size - TAIL_BYTES)
        tail = handle.read(TAIL_BYTES).split(b"\n")[1:]
        return head + tail


def read_transcript(path: Path, workdir: Path) -> Session:
    """The session's requests, edited files (repository-relative) and commands, from its JSONL transcript."""
    found = Session()
    root = os.path.realpath(workdir)
    for raw in _read_lines(path):
        if not raw.strip() or len(raw) > MAX_LINE:
            continue
        try:
            entry = json.loads(raw)
        except (ValueError, RecursionError):
            continue  # a line Claude Code was still writing, or not ours to understand
        if not isinstance(entry, dict) or entry.get("isSidechain") or entry.get("isMeta"):
            continue
        message = entry.get("message")
        if entry.get("type") == "user":
            text = _request(message)
            if text is not None:
                found.first_request = found.first_request or text
                found.last_request = text
        elif entry.get("type") == "assistant" and isinstance(message, dict):
            for block in message.get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    _tool_use(found, block, root)
    return found


def _tool_use(found: Session, block: dict[str, Any], root: str) -> None:
    name, given = block.get("name"), block.get("input")
    if not isinstance(given, dict):
        return
    if name in EDIT_TOOLS and isinstance(given.get(EDIT_TOOLS[name]), str):
        given_path = given[EDIT_TOOLS[name]]
        target = _visible(given_path)  # a NUL or a terminal code is kept, escaped
        full = os.path.realpath(os.path.join(root, target))
        if full.startswith(root + os.sep):  # files outside the repository are not its memory
            found_secret = secret_in(given_path)
            rel = os.path.relpath(full, root) if found_secret is None else f"[left out: {found_secret}]"
            if rel in found.files:
                found.files.remove(rel)
            found.files.append(rel)
            del found.files[:-MAX_FILES]
    elif name == "Bash" and isinstance(given.get("command"), str) and given["command"].strip():
        found.commands.append(given["command"])  # whole: cut only once it is scanned
        del found.commands[:-MAX_COMMANDS]


def note_lines(session: Session, trigger: str) -> list[str]:
    """The checkpoint's note, a line per fact, before secrets are taken out."""
    lines = [f"Captured by Claude Code's {kept(trigger, TRIGGER_CHARS)} hook."]
    if session.last_request is not None:
        lines += ["", "Last request: " + kept(session.last_request, REQUEST_CHARS)]
    if session.files:
        lines += ["", "Files edited:", *(f"- {kept(path, len(path))}" for path in session.files)]
    if session.commands:
        lines += ["", "Commands run:", *(f"- `{kept(command, COMMAND_CHARS)}`" for command in session.commands)]
    return lines


def without_secrets(lines: list[str]) -> tuple[list[str], int]:
    """`lines` with each one that looks like it holds a secret replaced by a marker; how many were.

    Each line is scanned alone, so that no match runs from one line into the next and leaves that one in."""
    found = secrets.scan_each(lines)
    out = [f"[left out: {hits[0].looks_like}]" if hits else line for line, hits in zip(lines, found, strict=True)]
    return out, sum(1 for hits in found if hits)


def session_ref(session_id: str | None, transcript: str) -> str:
    """The checkpoint's `source_ref`: `claude-code:` and the client's session ID (a hash of it, or of the
    transcript's path without one, when it is no plain word), so that a session's next capture finds its own."""
    if session_id is not None and _PLAIN_ID.fullmatch(session_id):
        return f"claude-code:{session_id}"
    digest = hashlib.sha256((session_id or transcript).encode("utf-8", "backslashreplace")).hexdigest()
    return f"claude-code:sha256-{digest[:32]}"


def _own_current(ws: Workspace, ref: str) -> tuple[str, str] | None:
    """(record ID, task) of this session's newest current checkpoint, or None: another session's is not its own."""
    from git_memzoi.index import queries
    from git_memzoi.recall.records import index_connection, now

    with index_connection(ws) as conn:
        rows = queries.records(conn, queries.Filter(now=now()[1], shared=False, stores=("session",)))
    ours = [row for row in rows if row.source_ref == ref]
    if not ours:
        return None
    newest = max(ours, key=lambda row: (json.loads(row.retention).get("started_at") or "", row.record_id))
    return newest.record_id, newest.title


def capture(
    ws: Workspace, event_name: str, transcript: str | None, trigger: str, session_id: str | None = None
) -> Checkpoint | None:
    """Keep what the session did as a session checkpoint, succeeding the session's own current one (whose task it
    keeps); None when it did nothing. Another session's checkpoint is neither its task nor its predecessor."""
    from git_memzoi.local import sessions  # only on the rare capture events

    if not transcript:
        raise UsageError(f"{event_name} event has no transcript_path")
    session = read_transcript(Path(transcript), ws.repo.require_workdir())
    if session.empty():
        return None
    ref = session_ref(session_id, transcript)
    own = _own_current(ws, ref)
    task = own[1] if own is not None else kept(session.first_request or "work in this repository", REQUEST_CHARS)
    (task,), _ = without_secrets([task])
    lines, _ = without_secrets(note_lines(session, trigger))
    return sessions.add(
        ws,
        task=task,
        note="\n".join(lines) + "\n",
        successor_of=own[0] if own is not None else None,
        source="agent",
        source_ref=ref,
    )
