"""What every client's hook shares: one event model, its bounds, and the memory each moment gets.

A client's hook (Claude Code's, Codex's, Gemini CLI's) is a thin adapter: a `Dialect` names the
client's events, and which of its tools change a file or run a command; `parse_event` turns the
client's stdin JSON into a `HookEvent` whose `moment` is one of MOMENTS; the answers here give
the text each moment gets (`session_context`, `prompt_context`, `tool_context`), and the adapter
writes it in the client's output fields. This module stays import-light (no pydantic, YAML or
MCP until a warning is rendered), since the clients run it before every prompt and edit.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import sys
from collections.abc import Callable
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from git_memzoi.agents.blocks import without_blocks
from git_memzoi.agents.limits import MAX_EVENT_BYTES
from git_memzoi.agents.loaded import LoadedFiles
from git_memzoi.agents.sessions import SessionMemory
from git_memzoi.errors import UsageError
from git_memzoi.freshness import state as freshness
from git_memzoi.index import queries
from git_memzoi.index.index_db import RecordRow
from git_memzoi.index.queries import Filter
from git_memzoi.layout import RECORDS
from git_memzoi.profile import oneline
from git_memzoi.recall import paths as pathmatch
from git_memzoi.recall import standing
from git_memzoi.recall.context import candidates, unverified_note
from git_memzoi.recall.precheck import by_command, by_path_words, precheck
from git_memzoi.recall.records import index_connection, now

if TYPE_CHECKING:
    from git_memzoi.recall.models import PrecheckWarning
    from git_memzoi.runtime.workspace import Workspace

#: The moments a hook answers, whatever the client calls them.
SESSION_START, PROMPT, BEFORE_TOOL, AFTER_TOOL = "SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse"
PRE_COMPACT, STOP, SESSION_END = "PreCompact", "Stop", "SessionEnd"
MOMENTS = (SESSION_START, PROMPT, BEFORE_TOOL, AFTER_TOOL, PRE_COMPACT, STOP, SESSION_END)
#: The moments that keep what the session did as a session checkpoint (agents/capture.py): `Stop` after every
#: turn updates it in place, `PreCompact` starts a successor, `SessionEnd` adds a final line.
CAPTURE_MOMENTS = (PRE_COMPACT, STOP, SESSION_END)
#: The most hook text any client reads inline, in UTF-8 bytes (never fewer than its characters, its UTF-16 units or
#: four times a byte-estimated token count): Claude Code keeps 10,000 characters inline and spills the rest to a
#: file. Each client's own cap is its Dialect's `context_limit`; every answer is cut to it first, and says so.
CONTEXT_LIMIT = 10_000
#: The deepest nesting of arrays and objects parsed. The clients' events nest 4 deep at most.
MAX_EVENT_DEPTH = 64

#: A JSON string once its escaped backslashes and quotes are gone (or an unterminated one, to the end).
_STRING = re.compile(rb'"[^"]*(?:"|\Z)')
#: Every byte but the brackets, dropped; `{` and `}` counted as `[` and `]`.
_BRACKETS = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = [0] * 256
_STEP[ord("[")], _STEP[ord("]")] = 1, -1
_ROUNDS = 2
#: Kinds of record PreToolUse adds as guidance for a path or command (precheck gives the warnings), in the
#: order they come at one depth of scope: the rules to follow, then what happened and what is known there.
GUIDANCE_TYPES = (
    "constraint",
    "convention",
    "decision",
    "preference",
    "procedure",
    "runbook",
    "incident",
    "fact",
    "note",
    "summary",
)
#: At most this many guidance records for one command (its words match loosely; the best few).
COMMAND_GUIDANCE = 6
#: At most this many guidance records for a path by its words (`by_path_words`), after those whose scope covers it.
PATH_GUIDANCE = 3
#: At most this many records answer a prompt (the best; the budget may stop earlier): the first in full
#: while FULL_SHARE of the budget lasts, the rest as one line each.
PROMPT_RECORDS = 16
#: The share of a hook's character budget that records in full may take; the rest names records in one line each.
FULL_SHARE = 0.4
#: SessionStart names at most this many records for the checkpoint's task, one line each.
CHECKPOINT_RECORDS = 6
#: SessionStart shows this much of a checkpoint's note (the open inbox as handoff lists it).
CHECKPOINT_NOTE = 600
#: A prompt's paths: at most this many are used, this many candidates checked, each at most this long.
NAMED_PATHS, NAMED_CHECKED, PATH_MAX = 8, 64, 1024
#: A path a prompt names: segments joined by slashes, or a file name with an extension. A match starts only
#: where a run of the characters either side of the lookbehind starts (`@` among them: were it not, each `@`
#: of `@a/@a/…` would start a try to the run's end, and a 64 KB prompt cost minutes), so the cost is linear.
_PATHLIKE = re.compile(r"(?<![\w:/.@-])((?:[\w.@-]+/)+[\w.@-]+|[\w-]+\.[A-Za-z]\w{0,9})(?![\w/])")
#: The files a patch (Codex's apply_patch) adds, changes, deletes or moves to, one per header line.
#: The rest of its line is taken whole, and its trailing whitespace dropped afterwards: `(.+?)\s*$` retried a
#: long run of spaces from each of them (a megabyte of them took hours).
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: ([^\n]*)|^\*\*\* Move to: ([^\n]*)", re.M)
#: At most this many files of one patch are prechecked.
PATCH_FILES = 8


class Dialect(NamedTuple):
    """How one client speaks: its event names (each mapped to one of MOMENTS) and the tool_input field that
    names the file a tool changes, the command it runs, or the patch it applies.

    NamedTuples here, not dataclasses: the hooks run as a process per event, and loading dataclasses
    (with inspect behind it) and building its classes costs about a sixth of a hook's own time."""

    client: str  # as in `agent hook CLIENT`
    events: dict[str, str]
    file_tools: dict[str, str]
    command_tools: dict[str, str]
    patch_tools: dict[str, str]
    #: Blocks removed from a prompt before it is searched, as (opener, closer): text the client itself put there
    #: (an earlier hook's context).
    prompt_noise: tuple[str, str] | None = None
    #: (the client's name, its checkpoints' source_ref prefix) when its capture events may come without a
    #: transcript and then keep what the event carries (Codex's Stop, Gemini CLI's AfterAgent, Copilot CLI's
    #: agentStop); None: a transcript is required (Claude Code's).
    turn_capture: tuple[str, str] | None = None
    #: The format of the client's transcript (a name in agents/capture.py's FORMATS).
    transcript: str = "claude"
    #: The most hook text (UTF-8 bytes) this client reads inline; every answer is cut to it, whatever
    #: `[agents] session_budget` and `prompt_budget` say (see docs/agents.md).
    context_limit: int = CONTEXT_LIMIT

    def moment(self, name: str) -> str:
        """The moment the client's event `name` is; a UsageError for an event this client's hook does not answer."""
        found = self.events.get(name)
        if found is None:
            raise UsageError(f"unsupported hook event {name!r}; use one of {', '.join(self.events)}")
        return found


class HookEvent(NamedTuple):
    """The parts of a hook event the answer depends on; `name` as the client sent it, `moment` what it is."""

    name: str
    cwd: Path
    tool_name: str | None = None
    tool_input: dict[str, Any] | None = None
    source: str | None = None
    session_id: str | None = None
    prompt: str | None = None
    transcript_path: str | None = None
    trigger: str | None = None  # PreCompact's trigger (manual, auto) or SessionEnd's reason
    moment: str = ""
    answer: str | None = None  # the turn's last answer, at a turn's end (Codex's Stop, Gemini CLI's AfterAgent)


class ToolContext(NamedTuple):
    """What applies before (or after) a tool call: the context text, and the warnings it holds (a risk first)."""

    text: str
    warnings: list[PrecheckWarning]

    @property
    def risks(self) -> list[PrecheckWarning]:
        return [w for w in self.warnings if w.type == "risk"]

    def reason(self) -> str:
        """One line naming the first risk (and how many more warnings the context holds)."""
        risk, count = self.risks[0], len(self.warnings)
        more = f" (+{count - 1} more in context)" if count > 1 else ""
        return oneline.escape(" ".join(f"git memzoi risk {risk.record_id}: {risk.title}{more}".split()))


def event_text(data: bytes) -> str:
    """The event's text once its size and nesting are within bounds, checked before any parsing.

    A UsageError (the hook's one-line, fail-open answer) for an event over MAX_EVENT_BYTES (the
    reader stops one byte past it), nested deeper than MAX_EVENT_DEPTH, or not UTF-8.
    """
    if len(data) > MAX_EVENT_BYTES:
        raise UsageError(f"hook input is larger than {MAX_EVENT_BYTES} bytes; not read further")
    if too_deep(data):
        raise UsageError(f"hook input nests arrays and objects more than {MAX_EVENT_DEPTH} deep")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError("hook input is not UTF-8 text") from None


def too_deep(data: bytes, limit: int = MAX_EVENT_DEPTH) -> bool:
    """Does JSON `data` nest arrays and objects more than `limit` deep (brackets in strings not counted)?

    Linear in the size, and most of it in C: strings are dropped, a long run of openers answers
    at once, two rounds of removing innermost pairs shrink wide shallow shapes (each round lowers
    the depth by one), and the depth of what is left is its deepest running count.
    """
    # Escapes go first, pairs of backslashes before escaped quotes, so that what is left of each
    # string is a plain run between two quotes that one simple pattern removes.
    unescaped = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    brackets = _STRING.sub(b"", unescaped).translate(_BRACKETS, _NOT_BRACKETS)
    if b"[" * (limit + 1) in brackets:  # the usual shape of a deep one
        return True
    for removed in range(_ROUNDS):
        if not brackets:
            return removed > limit
        brackets = brackets.replace(b"[]", b"")
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0) + _ROUNDS > limit


def _plain(value: str, where: str) -> str:
    """`value`, or a UsageError when it holds a NUL or an unpaired surrogate: neither names a file nor prints."""
    if "\x00" in value:
        raise UsageError(f"{where} holds a NUL character")
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise UsageError(f"{where} holds an unpaired surrogate") from None
    return value


def load_event(text: str) -> dict[str, Any]:
    """The event's JSON object; a UsageError when it is not JSON or not an object."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"hook input is not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except ValueError:  # Python's bound on an integer's digits, which no event of a client comes near
        limit = sys.get_int_max_str_digits()
        raise UsageError(f"hook input holds an integer of more than {limit} digits; not read") from None
    if not isinstance(data, dict):
        raise UsageError("hook input is not a JSON object")
    return data


def _text_field(data: dict[str, Any], key: str, where: str) -> str | None:
    value = data.get(key)
    return _plain(value, f"{where}: {key}") if isinstance(value, str) else None


def _tool_fields(data: dict[str, Any], name: str, moment: str) -> tuple[str | None, dict[str, Any] | None]:
    tool_name, tool_input = data.get("tool_name"), data.get("tool_input")
    if moment in (BEFORE_TOOL, AFTER_TOOL):
        if not isinstance(tool_name, str) or not tool_name:
            raise UsageError(f"{name} event has no tool_name")
        _plain(tool_name, f"{name} event: tool_name")
        if not isinstance(tool_input, dict):
            raise UsageError(f"{name} event for {tool_name}: tool_input is not an object")
    return (tool_name if isinstance(tool_name, str) else None), (tool_input if isinstance(tool_input, dict) else None)


def _prompt(data: dict[str, Any], name: str, moment: str, dialect: Dialect) -> str | None:
    prompt = data.get("prompt")
    if moment == PROMPT and not isinstance(prompt, str):
        raise UsageError(f"{name} event: prompt is not a string")
    if not isinstance(prompt, str):
        return None
    _plain(prompt, f"{name} event: prompt")
    return without_blocks(prompt, *dialect.prompt_noise) if dialect.prompt_noise is not None else prompt


def _capture_fields(data: dict[str, Any], name: str, moment: str, dialect: Dialect) -> tuple[str | None, str | None]:
    transcript, trigger = data.get("transcript_path"), data.get("trigger", data.get("reason"))
    trigger = trigger if isinstance(trigger, str) else None
    if moment not in CAPTURE_MOMENTS:
        return None, trigger
    if dialect.turn_capture is not None and not (isinstance(transcript, str) and os.path.isabs(transcript)):
        return None, trigger  # none (Codex's is null without a rollout, Gemini CLI's empty without a recording)
    if not isinstance(transcript, str) or not os.path.isabs(transcript):
        raise UsageError(f"{name} event: transcript_path must be an absolute path, not {transcript!r}")
    _plain(transcript, f"{name} event: transcript_path")
    if trigger is not None:
        _plain(trigger, f"{name} event: {'trigger' if 'trigger' in data else 'reason'}")
    return transcript, trigger


def parse_event(text: str, dialect: Dialect) -> HookEvent:
    """A hook event from the client's stdin JSON; a UsageError naming the field when it is malformed."""
    return event_of(load_event(text), dialect)


def event_of(data: dict[str, Any], dialect: Dialect) -> HookEvent:
    """A hook event from the client's event object (Claude Code's field names); a UsageError naming the field
    when it is malformed."""
    name = data.get("hook_event_name")
    if not isinstance(name, str) or not name:
        raise UsageError("hook input has no hook_event_name")
    _plain(name, "hook_event_name")
    cwd = data.get("cwd")
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        raise UsageError(f"{name} event: cwd must be an absolute path, not {cwd!r}")
    _plain(cwd, f"{name} event: cwd")
    moment = dialect.events.get(name, "")
    tool_name, tool_input = _tool_fields(data, name, moment)
    transcript, trigger = _capture_fields(data, name, moment, dialect)
    where = f"{name} event"
    answer = data.get("last_assistant_message", data.get("prompt_response"))
    return HookEvent(
        name,
        Path(cwd),
        tool_name,
        tool_input,
        _text_field(data, "source", where),
        _text_field(data, "session_id", where) or None,
        _prompt(data, name, moment, dialect),
        transcript,
        trigger,
        moment,
        answer if isinstance(answer, str) and moment == STOP else None,
    )


def _tool_text(event: HookEvent, key: str) -> str:
    value = (event.tool_input or {}).get(key)
    if not isinstance(value, str):
        raise UsageError(f"{event.name} event for {event.tool_name}: tool_input.{key} is not a string")
    return _plain(value, f"{event.name} event for {event.tool_name}: tool_input.{key}")


def subjects(event: HookEvent, dialect: Dialect, workdir: Path) -> list[tuple[str, str]]:
    """("path", repository path) and ("command", text) pairs a tool call touches; none for other tools."""
    tool = event.tool_name
    if tool is None or event.tool_input is None:
        return []
    if tool in dialect.command_tools:
        command = _tool_text(event, dialect.command_tools[tool])
        return [("command", command)] if command.strip() else []
    if tool in dialect.patch_tools:
        patch = _tool_text(event, dialect.patch_tools[tool])
        named = dict.fromkeys(name for a, b in _PATCH_FILE.findall(patch) if (name := (a or b).rstrip()))
        found = (repository_path(given, event.cwd, workdir) for given in list(named)[:PATCH_FILES])
        return [("path", rel) for rel in dict.fromkeys(found) if rel is not None]
    key = dialect.file_tools.get(tool)
    if key is None:
        return []
    given = (event.tool_input or {}).get(key)
    if not isinstance(given, str) or not given.strip():
        raise UsageError(f"{event.name} event for {tool}: tool_input.{key} is not a path")
    _plain(given, f"{event.name} event for {tool}: tool_input.{key}")
    rel = repository_path(given, event.cwd, workdir)
    return [("path", rel)] if rel is not None else []


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


def clip(text: str, limit: int = CONTEXT_LIMIT) -> str:
    """`text` within `limit` UTF-8 bytes, cut at a line's end with a note saying so."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    note = "\n\n[cut to fit the hook context limit; run `git memzoi precheck` or `handoff` for all of it]\n"
    kept = data[: max(limit - len(note), 0)].decode("utf-8", "ignore")  # a character cut in two is dropped
    # at a line's end, so that no list entry (an inbox line, a citation) is left half written
    return kept[: kept.rfind("\n") + 1 or len(kept)].rstrip() + note


def session_memory(ws: Workspace, event: HookEvent) -> SessionMemory:
    """What the event's session was already given (nothing remembered without a session_id)."""
    return SessionMemory(ws.layout.agent_sessions, event.session_id)


def guidance(
    conn: sqlite3.Connection,
    kind: str,
    value: str,
    workdir: Path | None = None,
    held: Callable[[RecordRow], bool] | None = None,
) -> list[tuple[RecordRow, str]]:
    """(row, scope) of the GUIDANCE_TYPES records for a repository path (by `applies_to`, deepest scope first, then
    the best PATH_GUIDANCE about it by its words: a repository-wide rule or a decision that names its file or its
    folders' words) or a command (by its words, the best COMMAND_GUIDANCE); the scope is the entry or the words
    that matched.
    `held(row)`: the client holds the row's text itself at this tool call (agents/loaded.py); such rows are left out
    before the best are taken."""
    flt = Filter(now=now()[1], types=GUIDANCE_TYPES)
    if kind == "path":
        found: dict[int, tuple[RecordRow, str, int]] = {}
        for row, entry, base in queries.covering(conn, pathmatch.ancestors(value), flt):
            if row.rowid not in found or len(base) > found[row.rowid][2]:
                found[row.rowid] = (row, entry, len(base))
        ordered = sorted(found.values(), key=lambda f: (-f[2], GUIDANCE_TYPES.index(f[0].type), f[0].record_id))
        about = [f for f in by_path_words(conn, value, flt) if f[0].rowid not in found]
        about.sort(key=lambda f: (f[2], GUIDANCE_TYPES.index(f[0].type), f[0].record_id))
        both = [(row, entry) for row, entry, _ in ordered] + [(row, how) for row, how, _ in about]
        kept = [(row, how) for row, how in both if held is None or not held(row)]
        return kept[: len([1 for row, _ in kept if row.rowid in found]) + PATH_GUIDANCE]
    matched = [f for f in by_command(conn, value, flt, workdir) if held is None or not held(f[0])]
    matched.sort(key=lambda f: (f[2], GUIDANCE_TYPES.index(f[0].type), -float(f[0].confidence), f[0].record_id))
    return [(row, how) for row, how, _ in matched[:COMMAND_GUIDANCE]]


def _flagged(text: str, row: RecordRow, fresh: dict[str, dict[str, Any]]) -> str:
    """`text` of a record with "unverified (...)" after its ID when its cited code changed since it was written."""
    note = unverified_note(fresh.get(row.path, {"state": "current"}))
    return text.replace(f"({row.record_id})\n", f"({row.record_id}){note}\n", 1) if note else text


def _fit(
    rows: list[RecordRow],
    memory: SessionMemory,
    limit: int,
    scopes: list[str] | None = None,
    fresh: dict[str, dict[str, Any]] | None = None,
) -> tuple[list[str], list[str]]:
    """(text parts, IDs given in full) for `rows` best first: full text for what this session has not seen while
    FULL_SHARE of `limit` characters lasts, then one line each (type, title, ID, the scope in `scopes` or the
    record's own) while `limit` lasts; what the session was already given is referred to by ID. `fresh`: each
    row's freshness by path, to flag the unverified ones."""
    fresh = fresh or {}
    parts: list[str] = []
    given: list[str] = []
    earlier: list[str] = []
    used = 0
    short = False  # once a record is a line, every later one is too: the order stays the ranking
    for at, row in enumerate(rows):
        if memory.seen(row.record_id):
            earlier.append(row.record_id)
            continue
        text = _flagged(standing.full(row), row, fresh)
        if not short and used + len(text) <= limit * FULL_SHARE:
            given.append(row.record_id)
        else:
            short = True
            flag = unverified_note(fresh.get(row.path, {"state": "current"}))
            text = standing.brief(row, scopes[at] if scopes else standing.first_scope(row), flag)
            if used + len(text) > limit:
                break
        parts.append(text)
        used += len(text)
    if earlier:
        parts.append(f"Given earlier in this session, still in force: {', '.join(earlier)}\n")
    return parts, given


def _warning_lines(kind: str, what: str, warnings: list[PrecheckWarning]) -> list[str]:
    count = len(warnings)
    if not count:
        return []
    lines = [f"git memzoi: project memory has {count} warning{'s' if count > 1 else ''} for {kind} {what}:", ""]
    for number, w in enumerate(warnings, 1):
        lines += [
            oneline.escape(f"{number}. [{w.type}] {w.title} (id: {w.record_id}){unverified_note(w.freshness)}"),
            oneline.escape(f"   {w.message}"),
            oneline.escape(f"   Next: {w.next_step}"),
        ]
    return lines


def tool_context(
    ws: Workspace, event: HookEvent, touched: list[tuple[str, str]], *, explain: bool = True, client: str | None = None
) -> ToolContext | None:
    """What applies to the paths and commands a tool call touches: the warnings on each (every time), then, when
    `explain`, once per session and scope what else applies to it; None when there is nothing to say.

    `explain=False` gives the warnings alone and leaves the session's memory as it was (a client that adds
    context only after the tool ran asks for the rest then). With `client`, what else applies leaves out the records
    whose file that client holds itself at this call (`LoadedFiles.at_tool`): each rule reaches the agent once."""
    workdir = ws.repo.require_workdir()
    files = LoadedFiles(client, workdir, event.cwd) if client else None

    def held(touched_path: str | None) -> Callable[[RecordRow], bool] | None:
        if files is None:
            return None
        return lambda row: files.at_tool(row.source_ref, touched_path, row.body) is not None

    with index_connection(ws) as conn:  # one check of the index against the files for every question
        found = [
            (
                kind,
                precheck(ws, conn=conn, **{kind: value}),
                guidance(conn, kind, value, workdir, held(value if kind == "path" else None)) if explain else [],
            )
            for kind, value in touched
        ]
        fresh = freshness.verdicts(ws, conn, [row for _, _, applies in found for row, _ in applies])
    memory = session_memory(ws, event)
    budget = ws.config.agents.prompt_budget
    lines: list[str] = []
    warnings: list[PrecheckWarning] = []
    for kind, result, applies in found:
        what = f"`{result.value}`" if kind == "command" else result.value
        section = _warning_lines(kind, what, result.warnings)
        warnings += result.warnings
        unseen = [(row, scope) for row, scope in applies if not memory.seen(f"{row.record_id}@{scope}")]
        if unseen:
            parts, given = _fit([row for row, _ in unseen], memory, budget, [scope for _, scope in unseen], fresh)
            budget = max(budget - sum(map(len, parts)), 0)
            section += ([""] if section else []) + [f"git memzoi: what applies to {kind} {what}:", "", *parts]
            memory.add(given + [f"{row.record_id}@{scope}" for row, scope in unseen])
        lines += ([""] if lines and section else []) + section
    memory.save()
    if not lines:
        return None
    warnings.sort(key=lambda w: w.type != "risk")  # a risk first: it decides the tool call
    return ToolContext(clip("\n".join(lines) + "\n"), warnings)


def named_paths(prompt: str, cwd: Path, workdir: Path) -> list[str]:
    """The repository paths a prompt names: slash-separated paths inside the work tree, and file names that exist."""
    out: list[str] = []
    for checked, match in enumerate(_PATHLIKE.finditer(prompt)):
        if checked == NAMED_CHECKED or len(out) == NAMED_PATHS:
            break  # a prompt of thousands of file-like words costs no more than a few stats
        given = match.group(1).rstrip(".")
        if len(given) > PATH_MAX:
            continue
        try:
            if "/" not in given and not (cwd / given).exists():
                continue
        except OSError:  # a name the file system refuses (too long) is no path the repository holds
            continue
        rel = repository_path(given, cwd, workdir)
        if rel is not None and rel not in out:
            out.append(rel)
    return out


def prompt_context(ws: Workspace, event: HookEvent) -> str | None:
    """The context for a prompt: the records it (and the paths it names) needs that this session was not given
    yet, best first, within `[agents] prompt_budget`; None when nothing is relevant."""
    prompt = event.prompt or ""
    if not prompt.strip():
        return None
    paths = named_paths(prompt, event.cwd, ws.repo.require_workdir())
    _, ordered, _ = candidates(ws, prompt, paths, rules=False)
    if not ordered:
        return None
    memory = session_memory(ws, event)
    best = ordered[:PROMPT_RECORDS]
    fresh = {c.row.path: c.freshness for c in best}
    scopes = [c.matched_scope for c in best]
    parts, given = _fit([c.row for c in best], memory, ws.config.agents.prompt_budget, scopes, fresh)
    if not parts:
        return None
    memory.add(given)
    memory.save()
    return clip("git memzoi: project memory relevant to this prompt:\n\n" + "\n".join(parts))


def _checkpoint_lines(ws: Workspace) -> list[str]:
    """The current session checkpoint with its task's records (one line each), then the open inbox."""
    from git_memzoi.recall.handoff import inbox_lines, latest_checkpoint, open_inbox

    tail: list[str] = []
    checkpoint = latest_checkpoint(ws)
    if checkpoint is not None and checkpoint.current:
        note = " ".join(checkpoint.note.split())
        note = note if len(note) <= CHECKPOINT_NOTE else note[: CHECKPOINT_NOTE - 1].rstrip() + "…"
        tail += ["## Session checkpoint", "", f"{checkpoint.task} ({checkpoint.record_id})", "", note, ""]
        _, ordered, _ = candidates(ws, checkpoint.task, rules=False)
        rows = [c.row for c in ordered[:CHECKPOINT_RECORDS] if not standing.is_standing(c.row)]
        if rows:
            tail += ["### Records for this task", ""]
            tail += [standing.line(row).rstrip("\n") for row in rows] + [""]
    inbox = open_inbox(ws)
    if inbox:
        tail += ["## Open inbox", "", *inbox_lines([item for item, _ in inbox]), ""]
    return tail


def session_context(ws: Workspace, event: HookEvent | None = None, client: str | None = None) -> str:
    """The context a session starts with: every standing rule (`standing.render`: full text while the budget
    lasts, a line each for the rest), then the current checkpoint with its task's records, then the open inbox,
    within `[agents] session_budget`. With `client`, a rule whose file that client loads itself and still holds
    is one line naming the file (agents/loaded.py). With an event, its session's memory starts afresh with
    what this gives."""
    budget = min(ws.config.agents.session_budget, CONTEXT_LIMIT)
    intro = (
        f"git memzoi: this repository keeps reviewed project memory under {RECORDS}/. Before risky changes, run "
        "`git memzoi precheck`; search it with `git memzoi search`.\n"
        'To propose what you learn, for a person to review: `git memzoi propose --type convention --title "..." '
        '--body "..." --source agent --packet`.\n'
        'A private note for yourself (never in the repository): `git memzoi local add --title "..." --body "..."`.\n'
    )
    rest = "\n".join(_checkpoint_lines(ws))  # SessionStart only: a tool call never loads the inbox
    heading = "## Standing rules\n\n"
    room = max(budget - len(intro) - len(rest) - len(heading) - 2, 0)
    with index_connection(ws) as conn:
        rules = standing.standing_rules(conn, now()[1], room // standing.LINE_CHARS + 1)  # more never fit
        files = LoadedFiles(client, ws.repo.require_workdir(), event.cwd if event else Path.cwd()) if client else None
        rules_text, in_full = standing.render(conn, rules, room, files.of_rule if files else None)
    text = intro + ("\n" + heading + rules_text if rules_text else "") + ("\n" + rest if rest else "")
    if event is not None:
        memory = session_memory(ws, event)
        memory.given = {}  # a new, cleared or compacted context holds only what this answer gives
        memory.add(in_full)
        memory.save()
    return clip(text)


def keep_session(ws: Workspace, event: HookEvent) -> None:
    """PreCompact, Stop and SessionEnd: keep what the session did as a session checkpoint (from the transcript)."""
    from git_memzoi.agents import capture  # only on these events

    if event.moment == SESSION_END:
        capture.end_session(ws, event.name, event.transcript_path, event.trigger or "unknown", event.session_id)
        return
    trigger = f"{event.name} ({event.trigger})" if event.trigger else event.name
    assert event.transcript_path is not None  # parse_event requires one of Claude Code's capture events
    capture.capture(ws, event.transcript_path, trigger, event.session_id, in_place=event.moment == STOP)


def keep_turn(ws: Workspace, event: HookEvent, dialect: Dialect) -> None:
    """Codex's Stop, Gemini CLI's AfterAgent and PreCompress, Copilot CLI's agentStop: keep what the session did,
    read from its transcript in the client's format when the event names one, with what the event carries (the
    answer; Gemini CLI's prompt too); without a transcript it can read, what a turn's end event carries."""
    from git_memzoi.agents import capture  # only on these events

    assert dialect.turn_capture is not None
    if event.transcript_path is not None:
        trigger = f"{event.name} ({event.trigger})" if event.trigger else event.name
        try:
            capture.capture(
                ws,
                event.transcript_path,
                trigger,
                event.session_id,
                in_place=event.moment == STOP,
                fmt=capture.FORMATS[dialect.transcript],
                turn=(event.prompt, event.answer),
            )
            return
        except capture.Unreadable:  # not written yet, or gone: what the event carries is kept
            pass
    if event.moment == STOP:
        capture.capture_turn(ws, dialect.turn_capture, event.name, event.session_id, event.prompt, event.answer)
