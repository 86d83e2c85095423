"""What a coding agent's session did, read from its transcript and kept as a session checkpoint in local memory.

`PreCompact`, `Stop` and `SessionEnd` name the session's transcript: Claude Code's JSONL, and (`Format`)
Codex's rollout JSONL at its `Stop`, Gemini CLI's chat JSONL at `PreCompress` and `AfterAgent`, GitHub
Copilot CLI's `events.jsonl` at `agentStop`. From it the hook keeps the task (the session's first
request, or its own current checkpoint's task), the last request, the repository files the session
edited last and the commands it ran last, each bounded, with anything that looks like a secret left out.
What it reads and parses is bounded, whatever the transcript's size or number of lines (Claude Code
ends a SessionEnd hook after 1.5 s). The transcript itself is never copied anywhere; the checkpoint
lives in shared.db (private, never in the work tree), and the next
SessionStart and `handoff` show it. `Stop`, after every turn, updates the session's
checkpoint in place (or leaves it, when nothing changed); `SessionEnd` then only adds a final line to it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from git_memzoi.agents.blocks import without_blocks
from git_memzoi.errors import UsageError
from git_memzoi.profile import oneline, secrets

if TYPE_CHECKING:
    from git_memzoi.recall.models import Checkpoint
    from git_memzoi.runtime.workspace import Workspace

#: What is read of a transcript, whatever its size: its first part (for the session's first request) and its
#: last (the rest); a transcript no longer than TAIL_BYTES is read whole, once.
HEAD_BYTES, TAIL_BYTES = 256 * 1024, 8 * 1024 * 1024
#: At most this many lines are parsed: of the tail, the newest that may hold a request or a tool_use block
#: (found by a byte search from the end, so that a file of millions of short lines costs no more than one of
#: a few); of the head, the first that may hold a request.
TAIL_ENTRIES, HEAD_ENTRIES = 4_000, 64
#: At most this many tool_use blocks are looked at, and this many distinct paths resolved (a realpath each: a
#: system call per component), each at most MAX_PATH characters (no longer one names a file).
MAX_BLOCKS, MAX_RESOLVED, MAX_PATH = 4_000, 200, 1024
#: A line longer than this (a tool result holding a large file) is skipped unparsed.
MAX_LINE = 2 * 1024 * 1024
#: The bytes that a line holding a request (`"type":"user"`) or a tool call holds; a line that holds a tool
#: result and no tool call is no request, and is never parsed (it carries the files the session read).
_USER, _TOOL_USE, _TOOL_RESULT = b'"user"', b'"tool_use"', b'"tool_result"'
#: What the checkpoint keeps: characters of a request, files, commands and characters of a command.
REQUEST_CHARS, MAX_FILES, MAX_COMMANDS, COMMAND_CHARS = 400, 40, 20, 160
#: Characters kept of the event's trigger (PreCompact) or reason (SessionEnd): a word in Claude Code's events.
TRIGGER_CHARS = 80
#: A session ID kept as it is in a checkpoint's source_ref (Claude Code's are UUIDs); any other is hashed.
_PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
#: The tools whose input names the file they change, and the field that names it.
EDIT_TOOLS = {"Edit": "file_path", "Write": "file_path", "MultiEdit": "file_path", "NotebookEdit": "notebook_path"}
#: The files a patch (Codex's apply_patch) adds, changes, deletes or moves to, one per header line.
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: ([^\n]*)|^\*\*\* Move to: ([^\n]*)", re.M)
#: User text Claude Code writes itself, which is no request of the user's.
_NOT_REQUESTS = ("<command-", "<local-command", "Caveat:", "This session is being continued from a previous")


@dataclass
class Session:
    """What the transcript says the session was asked and did."""

    first_request: str | None = None
    last_request: str | None = None
    files: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    last_answer: str | None = None  # the turn's answer, when the event carries it (Codex's Stop, Gemini's AfterAgent)

    def empty(self) -> bool:
        return self.first_request is None and not self.files and not self.commands and not self.last_answer


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


#: A tool call as a transcript holds it: (tool name, its input object).
ToolCall = tuple[str, dict[str, Any]]


class Format(NamedTuple):
    """One client's transcript: what it is called in a checkpoint, the bytes a line holding a request or a tool
    call holds (a line with none is never parsed), and how an entry gives its request and tool calls."""

    client: str  # in the note: "Captured by Claude Code's Stop hook."
    prefix: str  # the checkpoint's source_ref prefix
    markers: tuple[bytes, ...]  # a request's marker first, then the tool calls'
    request: Callable[[dict[str, Any]], str | None]
    tools: Callable[[dict[str, Any]], list[ToolCall]]
    edit_tools: dict[str, str]
    command_tools: dict[str, str]
    #: A line holding this and no tool call's marker is skipped unparsed (Claude Code's tool results).
    skip: bytes | None = None


def _claude_request(entry: dict[str, Any]) -> str | None:
    return _request(entry.get("message")) if entry.get("type") == "user" else None


def _claude_tools(entry: dict[str, Any]) -> list[ToolCall]:
    message = entry.get("message")
    content = message.get("content") if entry.get("type") == "assistant" and isinstance(message, dict) else None
    return [
        (str(block.get("name", "")), block["input"])
        for block in (content if isinstance(content, list) else ())
        if isinstance(block, dict) and block.get("type") == "tool_use" and isinstance(block.get("input"), dict)
    ]


def _parts_text(content: Any) -> str | None:
    """A message's text: a string, or the `text` of its parts (Gemini CLI's Part list)."""
    if isinstance(content, list):
        content = "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return content if isinstance(content, str) and content.strip() else None


def _gemini_request(entry: dict[str, Any]) -> str | None:
    """A user message's text without the context hooks put in it (`<hook_context>`); none for Gemini CLI's own
    `<session_context>` message or a tool's response."""
    text = _parts_text(entry.get("content")) if entry.get("type") == "user" else None
    if text is None or text.lstrip().startswith("<session_context>"):
        return None
    text = without_blocks(text, "<hook_context>", "</hook_context>")
    return text if text.strip() else None


def _gemini_tools(entry: dict[str, Any]) -> list[ToolCall]:
    calls = entry.get("toolCalls") if entry.get("type") == "gemini" else None
    return [
        (str(call.get("name", "")), call["args"])
        for call in (calls if isinstance(calls, list) else ())
        if isinstance(call, dict) and isinstance(call.get("args"), dict)
    ]


def _codex_request(entry: dict[str, Any]) -> str | None:
    """The user's message: Codex 0.171's `item_completed` event of a `UserMessage` item (the rollout's user
    `message` items also hold Codex's own environment context), or an older `user_message` event."""
    payload = entry.get("payload")
    if entry.get("type") != "event_msg" or not isinstance(payload, dict):
        return None
    item = payload.get("item")
    if payload.get("type") == "item_completed" and isinstance(item, dict) and item.get("type") == "UserMessage":
        return _parts_text(item.get("content"))
    message = payload.get("message") if payload.get("type") == "user_message" else None
    return message if isinstance(message, str) and message.strip() else None


def _codex_tools(entry: dict[str, Any]) -> list[ToolCall]:
    """A rollout's tool call: a shell command (`exec_command`'s `cmd`, `shell`'s `command` list), or a patch
    (`apply_patch`, whose files are read from its header lines), as (tool, input) the reader knows."""
    payload = entry.get("payload")
    if entry.get("type") != "response_item" or not isinstance(payload, dict):
        return []
    kind, name = payload.get("type"), payload.get("name")
    if kind == "custom_tool_call" and name == "apply_patch" and isinstance(payload.get("input"), str):
        named = (a or b for a, b in _PATCH_FILE.findall(payload["input"]))
        return [("apply_patch", {"path": path.rstrip()}) for path in dict.fromkeys(named) if path.strip()]
    if kind != "function_call" or not isinstance(payload.get("arguments"), str):
        return []
    try:
        args = json.loads(payload["arguments"])
    except (ValueError, RecursionError):
        return []
    command = args.get("cmd", args.get("command")) if isinstance(args, dict) else None
    if isinstance(command, list) and all(isinstance(word, str) for word in command):
        command = " ".join(command)
    return [("shell", {"command": command})] if isinstance(command, str) else []


def _copilot_request(entry: dict[str, Any]) -> str | None:
    data = entry.get("data")
    return _parts_text(data.get("content")) if entry.get("type") == "user.message" and isinstance(data, dict) else None


def _copilot_tools(entry: dict[str, Any]) -> list[ToolCall]:
    data = entry.get("data")
    calls = data.get("toolRequests") if entry.get("type") == "assistant.message" and isinstance(data, dict) else None
    return [
        (str(call.get("name", "")), call["arguments"])
        for call in (calls if isinstance(calls, list) else ())
        if isinstance(call, dict) and isinstance(call.get("arguments"), dict)
    ]


CLAUDE = Format(
    "Claude Code",
    "claude-code",
    (_USER, _TOOL_USE),
    _claude_request,
    _claude_tools,
    EDIT_TOOLS,
    {"Bash": "command"},
    _TOOL_RESULT,
)
#: Codex's rollout (`sessions/…/rollout-*.jsonl`): `event_msg` lines of a completed UserMessage item (or an older
#: user_message), `response_item` function_call and custom_tool_call lines.
CODEX = Format(
    "Codex",
    "codex",
    (b'"UserMessage"', b'"user_message"', b'"function_call"', b'"custom_tool_call"'),
    _codex_request,
    _codex_tools,
    {"apply_patch": "path"},
    {"shell": "command"},
)
#: Gemini CLI's chat recording (`chats/session-*.jsonl`, a line per message, rewritten ones repeated by id).
GEMINI = Format(
    "Gemini CLI",
    "gemini-cli",
    (b'"type":"user"', b'"toolCalls"'),
    _gemini_request,
    _gemini_tools,
    {"write_file": "file_path", "replace": "file_path"},
    {"run_shell_command": "command"},
)
#: GitHub Copilot CLI's `session-state/<id>/events.jsonl`: user.message and assistant.message events.
COPILOT = Format(
    "GitHub Copilot CLI",
    "copilot-cli",
    (b'"user.message"', b'"toolRequests"'),
    _copilot_request,
    _copilot_tools,
    {"create": "path", "edit": "path"},
    {"bash": "command"},
)

#: Each client's transcript format, by the name a hook's Dialect gives (`transcript`).
FORMATS = {"claude": CLAUDE, "codex": CODEX, "gemini": GEMINI, "copilot": COPILOT}


class Unreadable(UsageError):
    """A transcript that cannot be read: missing, not a regular file, a link."""


def _read(path: Path) -> tuple[bytes, bytes]:
    """(head, tail) of the transcript, each cut at a line's end: a regular file only (never a FIFO or device),
    never followed through a link. A transcript no longer than TAIL_BYTES is its own tail, and its head too."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise Unreadable(f"transcript {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # before fdopen, which refuses a folder with IsADirectoryError
        os.close(fd)
        raise Unreadable(f"transcript {path}: not a regular file")
    with os.fdopen(fd, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size <= TAIL_BYTES:
            whole = handle.read(TAIL_BYTES)
            return whole, whole
        head = handle.read(HEAD_BYTES)
        handle.seek(size - TAIL_BYTES)
        tail = handle.read(TAIL_BYTES)
    # the head's last line and the tail's first may be cut: neither is read
    return head[: head.rfind(b"\n") + 1], tail[tail.find(b"\n") + 1 :]


def _newest_lines(data: bytes, fmt: Format = CLAUDE) -> list[bytes]:
    """The lines of `data` that hold a request's or a tool call's marker, newest first, at most TAIL_ENTRIES.

    Each marker is searched for from the end, and each search goes on from the start of the line the last
    one found: every byte is read a few times at most, by bytes.rfind, however many lines there are."""
    found: list[bytes] = []
    end = len(data)
    markers = fmt.markers
    hits = [data.rfind(marker, 0, end) for marker in markers]
    while len(found) < TAIL_ENTRIES:
        hit = max(hits)
        if hit < 0:
            break
        start = data.rfind(b"\n", 0, hit) + 1
        stop = data.find(b"\n", hit, end)
        line = data[start : end if stop < 0 else stop]
        if len(line) <= MAX_LINE and (fmt.skip is None or fmt.skip not in line or any(m in line for m in markers[1:])):
            found.append(line)
        end = start
        hits = [data.rfind(marker, 0, end) if at >= start else at for marker, at in zip(markers, hits, strict=True)]
    return found


def _entry(line: bytes) -> dict[str, Any] | None:
    """A transcript line as an object, or None: not JSON, not ours to understand, a subagent's or a meta line."""
    try:
        entry = json.loads(line)
    except (ValueError, RecursionError):
        return None  # a line Claude Code was still writing, or not ours to understand
    if not isinstance(entry, dict) or entry.get("isSidechain") or entry.get("isMeta"):
        return None
    return entry


def _first_request(head: bytes, fmt: Format = CLAUDE) -> str | None:
    """The session's first request, from the first HEAD_ENTRIES lines of `head` that may hold one."""
    at = 0
    for _ in range(HEAD_ENTRIES):
        hit = head.find(fmt.markers[0], at)
        if hit < 0:
            return None
        start, stop = head.rfind(b"\n", 0, hit) + 1, head.find(b"\n", hit)
        if stop < 0:
            stop = len(head)
        line, at = head[start:stop], stop + 1
        entry = _entry(line) if len(line) <= MAX_LINE and (fmt.skip is None or fmt.skip not in line) else None
        text = fmt.request(entry) if entry is not None else None
        if text is not None:
            return text
    return None


class _Reader:
    """What the tail says, read newest first: the last request, the latest edited files and commands."""

    def __init__(self, root: str, fmt: Format = CLAUDE) -> None:
        self.root = root
        self.fmt = fmt
        self.seen: set[str] = set()  # entry IDs read: a rewritten message (Gemini CLI's) counts once, as its newest
        self.found = Session()
        self.oldest_request: str | None = None
        self.blocks = 0
        self.resolved: dict[str, str | None] = {}

    def full(self) -> bool:
        found = self.found
        if self.blocks >= MAX_BLOCKS:
            return True
        return found.last_request is not None and len(found.files) >= MAX_FILES and len(found.commands) >= MAX_COMMANDS

    def entry(self, entry: dict[str, Any]) -> None:
        key = entry.get("id")
        if isinstance(key, str):
            if key in self.seen:
                return
            self.seen.add(key)
        text = self.fmt.request(entry)
        if text is not None:
            self.found.last_request = self.found.last_request or text
            self.oldest_request = text
            return
        for name, given in reversed(self.fmt.tools(entry)):
            self.blocks += 1
            self.tool_use(name, given)
            if self.blocks >= MAX_BLOCKS:
                return

    def tool_use(self, name: str, given: dict[str, Any]) -> None:
        found, edits, commands = self.found, self.fmt.edit_tools, self.fmt.command_tools
        if name in edits and isinstance(given.get(edits[name]), str):
            rel = self.repository_path(given[edits[name]])
            if rel is not None and rel not in found.files and len(found.files) < MAX_FILES:
                found.files.append(rel)
        elif name in commands and len(found.commands) < MAX_COMMANDS:
            command = given.get(commands[name])
            if isinstance(command, str) and command.strip():
                found.commands.append(command)  # whole: cut only once it is scanned

    def repository_path(self, given_path: str) -> str | None:
        """`given_path` relative to the repository (a marker when it looks like it holds a secret); None outside it."""
        if given_path in self.resolved:
            return self.resolved[given_path]
        if len(self.resolved) >= MAX_RESOLVED or len(given_path) > MAX_PATH:
            return None
        target = _visible(given_path)  # a NUL or a terminal code is kept, escaped
        full = os.path.realpath(os.path.join(self.root, target))
        rel = None
        if full.startswith(self.root + os.sep):  # files outside the repository are not its memory
            found_secret = secret_in(given_path)
            rel = os.path.relpath(full, self.root) if found_secret is None else f"[left out: {found_secret}]"
        self.resolved[given_path] = rel
        return rel


def read_transcript(path: Path, workdir: Path, fmt: Format = CLAUDE) -> Session:
    """The session's requests, edited files (repository-relative) and commands, from its JSONL transcript.

    Bounded whatever the transcript: its head and tail only, at most TAIL_ENTRIES lines parsed, newest first,
    MAX_BLOCKS tool calls looked at; the files and commands are the latest, in the order they were last used."""
    head, tail = _read(path)
    reader = _Reader(os.path.realpath(workdir), fmt)
    for line in _newest_lines(tail, fmt):
        entry = _entry(line)
        if entry is not None:
            reader.entry(entry)
            if reader.full():
                break
    found = reader.found
    found.files.reverse()
    found.commands.reverse()
    found.first_request = _first_request(head, fmt) or reader.oldest_request
    return found


def note_lines(session: Session, trigger: str, client: str = CLAUDE.client) -> list[str]:
    """The checkpoint's note, a line per fact, before secrets are taken out: the files edited first, the latest
    first (SessionStart shows the note's start, and after a compaction they are where the work goes on)."""
    lines = [f"Captured by {client}'s {kept(trigger, TRIGGER_CHARS)} hook."]
    if session.files:
        lines += [
            "",
            "Files edited, latest first:",
            *(f"- {kept(path, len(path))}" for path in reversed(session.files)),
        ]
    if session.last_request is not None:
        lines += ["", "Last request: " + kept(session.last_request, REQUEST_CHARS)]
    if session.commands:
        lines += ["", "Commands run:", *(f"- `{kept(command, COMMAND_CHARS)}`" for command in session.commands)]
    if session.last_answer is not None and session.last_answer.strip():
        lines += ["", "Last answer: " + kept(session.last_answer, REQUEST_CHARS)]
    return lines


def without_secrets(lines: list[str]) -> tuple[list[str], int]:
    """`lines` with each one that looks like it holds a secret replaced by a marker; how many were.

    Each line is scanned alone, so that no match runs from one line into the next and leaves that one in."""
    found = secrets.scan_each(lines)
    out = [f"[left out: {hits[0].looks_like}]" if hits else line for line, hits in zip(lines, found, strict=True)]
    return out, sum(1 for hits in found if hits)


def session_ref(session_id: str | None, transcript: str, client: str = "claude-code") -> str:
    """The checkpoint's `source_ref`: the client (`claude-code`, `codex`, `gemini-cli`) and its session ID (a hash
    of it, or of the transcript's path without one, when it is no plain word or looks like a secret), so that a
    session's next capture finds its own."""
    if session_id is not None and _PLAIN_ID.fullmatch(session_id) and secret_in(session_id) is None:
        return f"{client}:{session_id}"
    digest = hashlib.sha256((session_id or transcript).encode("utf-8", "backslashreplace")).hexdigest()
    return f"{client}:sha256-{digest[:32]}"


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


def _facts(note: str) -> list[str]:
    """A checkpoint note's lines but its first (which hook captured it): what a capture found."""
    return note.strip("\n").split("\n")[1:]


def capture(
    ws: Workspace,
    transcript: str,
    trigger: str,
    session_id: str | None = None,
    *,
    in_place: bool = False,
    fmt: Format = CLAUDE,
    turn: tuple[str | None, str | None] = (None, None),
) -> Checkpoint | None:
    """Keep what the session did as a session checkpoint, succeeding the session's own current one (whose task it
    keeps); None when it did nothing. Another session's checkpoint is neither its task nor its predecessor.

    `in_place` (a capture after every turn, `Stop`): the session's own current checkpoint is updated in place
    instead, and left as it is when the capture found what it already holds; one checkpoint per session, not one
    per turn. `fmt`: the transcript's client and format; `turn`: the (request, answer) the event itself carries
    (Gemini CLI's AfterAgent both, Codex's Stop the answer), kept where the transcript has none."""
    session = read_transcript(Path(transcript), ws.repo.require_workdir(), fmt)
    request, session.last_answer = turn
    if request is not None and request.strip():
        session.last_request = session.last_request or request
        session.first_request = session.first_request or request
    if session.empty():
        return None
    from git_memzoi.local import sessions  # only when there is a checkpoint to keep (it loads pydantic and pygit2)

    ref = session_ref(session_id, transcript, fmt.prefix)
    own = _own_current(ws, ref)
    task = own[1] if own is not None else kept(session.first_request or "work in this repository", REQUEST_CHARS)
    (task,), _ = without_secrets([task])
    lines, _ = without_secrets(note_lines(session, trigger, fmt.client))
    note = "\n".join(lines) + "\n"
    if in_place and own is not None:
        return _update(ws, own[0], note)
    return sessions.add(
        ws,
        task=task,
        note=note,
        successor_of=own[0] if own is not None else None,
        source="agent",
        source_ref=ref,
    )


def end_session(
    ws: Workspace, event_name: str, transcript: str | None, reason: str, session_id: str | None = None
) -> Checkpoint | None:
    """`SessionEnd`: a final line on the session's own current checkpoint (kept up to date by `Stop` after every
    turn), so that the answer costs no transcript read; a session with none yet (no `Stop` hook wired) is
    captured as by `capture`."""
    if not transcript:
        raise UsageError(f"{event_name} event has no transcript_path")
    own = _own_current(ws, session_ref(session_id, transcript))
    if own is None:
        return capture(ws, transcript, f"{event_name} ({reason})", session_id)
    from git_memzoi.local import sessions

    note = sessions.show(ws, own[0]).note
    line = f"Session ended ({kept(reason, TRIGGER_CHARS)})."
    if note.endswith(line):
        return None
    return sessions.revise(ws, own[0], f"{note}\n\n{line}\n")


def _update(ws: Workspace, record_id: str, note: str) -> Checkpoint | None:
    """The checkpoint with its note replaced in place; None, and no write, when it holds those facts already."""
    from git_memzoi.local import sessions

    if _facts(sessions.show(ws, record_id).note) == _facts(note):
        return None  # nothing new since the last capture
    return sessions.revise(ws, record_id, note)


def capture_turn(
    ws: Workspace,
    who: tuple[str, str],
    event_name: str,
    session_id: str | None,
    request: str | None,
    answer: str | None,
) -> Checkpoint | None:
    """Codex's `Stop`, Gemini CLI's `AfterAgent` and Copilot CLI's `agentStop` when their transcript cannot be read
    (none named, not written yet, gone): what the event itself carries (the turn's request, when it carries one,
    and the answer), kept in the session's own current checkpoint, in place, or a new one (`hook_core.keep_turn`
    reads the transcript first, in the client's format). `who`: (the client's name in the note, its source_ref
    prefix). None when the event carries nothing, or nothing new."""
    if not session_id:
        raise UsageError(f"{event_name} event has no session_id")
    if not (request or "").strip() and not (answer or "").strip():
        return None
    from git_memzoi.local import sessions

    name, prefix = who
    ref = session_ref(session_id, session_id, prefix)
    lines = [f"Captured by {name}'s {event_name} hook."]
    if request and request.strip():
        lines += ["", "Last request: " + kept(request, REQUEST_CHARS)]
    if answer and answer.strip():
        lines += ["", "Last answer: " + kept(answer, REQUEST_CHARS)]
    lines, _ = without_secrets(lines)
    note = "\n".join(lines) + "\n"
    own = _own_current(ws, ref)
    if own is not None:
        return _update(ws, own[0], note)
    (task,), _ = without_secrets([kept(request or "work in this repository", REQUEST_CHARS)])
    return sessions.add(ws, task=task, note=note, source="agent", source_ref=ref)
