"""`git memzoi agent hook codex|gemini`: recorded Codex and Gemini CLI hook events in, each client's output out.

The same memory as Claude Code's hook (tests/agents/test_agent_hook.py;
the `memory` fixture is in tests/agents/conftest.py), in each client's own event names,
tools and output fields; the events are in fixtures/codex-hooks and fixtures/gemini-hooks.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from support import FIXTURES, Repo, age, run_cli, run_importtime
from support.agents import client_event as event
from support.agents import client_hook as hook
from support.recall import add_record

HEAVY = (
    "click",
    "pydantic",
    "pydantic_core",
    "yaml",
    "mcp",
    "pygit2",
    "filelock",
    "dataclasses",
    "inspect",
    "hashlib",
    "_hashlib",
)


def context(out: dict[str, Any] | None, name: str) -> str:
    assert out is not None
    specific = out["hookSpecificOutput"]
    assert specific["hookEventName"] == name
    return str(specific["additionalContext"])


# Codex


def test_codex_session_start_and_prompt_get_the_claude_answers(memory: Repo) -> None:
    start = context(hook("codex", event("codex", "sessionstart", memory.path))[0], "SessionStart")
    assert "## Standing rules" in start and "### Risk: Never force-push to main (never-force-push-main)" in start
    assert "Migrations are append-only" not in start  # path-bound: it waits for the prompt or edit
    out, err = hook("codex", event("codex", "userpromptsubmit", memory.path))
    first = context(out, "UserPromptSubmit")
    assert err == "" and set(out["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}  # type: ignore[index]
    assert "### Risk: Migrations are append-only (migrations-are-append-only)" in first
    # the same Codex session asks again: referred to by ID; another session gets it in full
    second = context(hook("codex", event("codex", "userpromptsubmit", memory.path))[0], "UserPromptSubmit")
    assert "### Risk: Migrations are append-only" not in second and "migrations-are-append-only" in second
    other = event("codex", "userpromptsubmit", memory.path, session_id="01a2496b-0000-7000-8000-000000000000")
    assert "### Risk: Migrations are append-only" in context(hook("codex", other)[0], "UserPromptSubmit")


def test_codex_bash_risk_is_context_since_codex_takes_no_ask(memory: Repo) -> None:
    out, err = hook("codex", event("codex", "pretooluse-bash", memory.path))
    text = context(out, "PreToolUse")
    assert err == "" and "command `git push --force origin main`" in text and "never-force-push-main" in text
    assert "permissionDecision" not in out["hookSpecificOutput"]  # type: ignore[index]
    memory.write(".memzoi/config.toml", '[agents]\nrisk_decision = "deny"\n')
    denied, _ = hook("codex", event("codex", "pretooluse-bash", memory.path))
    assert denied is not None
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert denied["hookSpecificOutput"]["permissionDecisionReason"].startswith("git memzoi risk never-force-push-main:")


def test_codex_apply_patch_checks_every_file_of_the_patch(memory: Repo) -> None:
    memory.write(".memzoi/config.toml", '[agents]\nrisk_decision = "deny"\n')
    out, err = hook("codex", event("codex", "pretooluse-apply-patch", memory.path))
    text = context(out, "PreToolUse")
    assert err == ""
    assert "path db/migrations/0042_orders.sql" in text and "[risk] Migrations are append-only" in text
    assert "what applies to path apps/active/orders.tsx" in text and "(use-react-query)" in text
    assert out["hookSpecificOutput"]["permissionDecision"] == "deny"  # type: ignore[index]
    # the decision for apps/active is explained once per session; the risk's warning comes every time
    again = context(hook("codex", event("codex", "pretooluse-apply-patch", memory.path))[0], "PreToolUse")
    assert "(use-react-query)" not in again and "Migrations are append-only" in again
    # a patch of thousands of files: the first PATCH_FILES are checked, the rest cost nothing
    many = "".join(f"*** Add File: notes/n{n}.md\n+x\n" for n in range(5000))
    many = f"*** Begin Patch\n*** Update File: db/migrations/0042_orders.sql\n{many}*** End Patch\n"
    big, err = hook("codex", event("codex", "pretooluse-apply-patch", memory.path, tool_input={"command": many}))
    assert err == "" and "Migrations are append-only" in context(big, "PreToolUse")
    # a patch that touches only files outside the repository, or no file: nothing to say
    outside = "*** Begin Patch\n*** Add File: ../elsewhere/x.txt\n+x\n*** End Patch\n"
    quiet, err = hook("codex", event("codex", "pretooluse-apply-patch", memory.path, tool_input={"command": outside}))
    assert quiet is None and err == ""


@pytest.mark.parametrize(
    "override, message",
    [
        (
            {"hook_event_name": "PreCompact"},
            "unsupported hook event 'PreCompact'; use one of SessionStart, UserPromptSubmit, PreToolUse, Stop",
        ),
        ({"tool_input": {"command": ["git", "push"]}}, "PreToolUse event for Bash: tool_input.command is not a string"),
        ({"tool_name": ""}, "PreToolUse event has no tool_name"),
        (
            {"tool_name": "apply_patch", "tool_input": {"command": "*** Add File: db/a\u0000b.sql\n"}},
            "PreToolUse event for apply_patch: tool_input.command holds a NUL character",
        ),
    ],
)
def test_codex_bad_events_never_block(memory: Repo, override: dict[str, Any], message: str) -> None:
    data = json.loads(event("codex", "pretooluse-bash", memory.path))
    data.update(override)
    out, err = hook("codex", json.dumps(data))
    assert out is None and err.count("\n") == 1 and err.startswith("git memzoi: agent hook codex: ") and message in err


# Gemini CLI


def test_gemini_session_start_and_before_agent(memory: Repo) -> None:
    start = context(hook("gemini", event("gemini", "sessionstart", memory.path))[0], "SessionStart")
    assert "### Risk: Never force-push to main (never-force-push-main)" in start
    out, err = hook("gemini", event("gemini", "beforeagent", memory.path))
    text = context(out, "BeforeAgent")
    assert err == "" and "### Risk: Migrations are append-only (migrations-are-append-only)" in text
    # the prompt carries SessionStart's context, which names the force-push rule: it is not searched
    assert "never-force-push-main" not in text
    again = context(hook("gemini", event("gemini", "beforeagent", memory.path))[0], "BeforeAgent")
    assert "### Risk: Migrations are append-only" not in again and "migrations-are-append-only" in again


@pytest.mark.parametrize(
    "setting, expected",
    [
        ("ask", {"systemMessage": "git memzoi risk migrations-are-append-only: Migrations are append-only"}),
        ("context", None),
    ],
)
def test_gemini_before_tool_tells_the_user_of_a_risk(
    memory: Repo,
    setting: str,
    expected: dict[str, Any] | None,
) -> None:
    memory.write(".memzoi/config.toml", f'[agents]\nrisk_decision = "{setting}"\n')
    out, err = hook("gemini", event("gemini", "beforetool-replace", memory.path))
    assert err == "" and out == expected


def test_gemini_before_tool_denies_with_the_warnings_as_reason(memory: Repo) -> None:
    memory.write(".memzoi/config.toml", '[agents]\nrisk_decision = "deny"\n')
    out, _ = hook("gemini", event("gemini", "beforetool-shell", memory.path))
    assert out is not None and set(out) == {"decision", "reason"} and out["decision"] == "deny"
    assert "command `git push --force origin main`" in out["reason"] and "never-force-push-main" in out["reason"]
    # a file with only a decision on it: nothing before the tool runs
    edit = {"file_path": str(memory.path / "apps/active/page.tsx")}
    quiet, err = hook("gemini", event("gemini", "beforetool-replace", memory.path, tool_input=edit))
    assert quiet is None and err == ""


def test_gemini_after_tool_adds_what_applies_once_per_session(memory: Repo) -> None:
    # BeforeTool for the same file first: it tells nothing and remembers nothing
    edit = {"file_path": str(memory.path / "apps/active/page.tsx")}
    assert hook("gemini", event("gemini", "beforetool-replace", memory.path, tool_input=edit))[0] is None
    out, err = hook("gemini", event("gemini", "aftertool-write-file", memory.path))
    text = context(out, "AfterTool")
    assert err == "" and "### Decision: Use React Query in apps/active (use-react-query)" in text
    assert hook("gemini", event("gemini", "aftertool-write-file", memory.path))[0] is None  # once per session
    # the warnings on a risky file reach the model after the edit, every time
    risky = {"file_path": str(memory.path / "db/migrations/0042_orders.sql")}
    for _ in range(2):
        warned = context(
            hook("gemini", event("gemini", "aftertool-write-file", memory.path, tool_input=risky))[0], "AfterTool"
        )
        assert "[risk] Migrations are append-only (id: migrations-are-append-only)" in warned


def test_gemini_other_tools_and_events(memory: Repo) -> None:
    read = event("gemini", "beforetool-replace", memory.path, tool_name="read_file")
    assert hook("gemini", read) == (None, "")
    out, err = hook("gemini", event("gemini", "sessionstart", memory.path, hook_event_name="BeforeModel"))
    assert out is None and err.startswith("git memzoi: agent hook gemini: unsupported hook event 'BeforeModel'")


@pytest.mark.parametrize(
    "client, names",
    [
        ("codex", ("pretooluse-apply-patch", "pretooluse-bash", "userpromptsubmit")),
        ("gemini", ("beforetool-replace", "aftertool-write-file", "beforeagent")),
    ],
)
def test_the_hook_path_stays_light(memory: Repo, client: str, names: tuple[str, ...]) -> None:
    """Each client runs its hook before every prompt and edit: no click, pydantic, PyYAML, MCP SDK, pygit2, filelock,
    dataclasses, hashlib (OpenSSL)."""
    age(memory.path, 3600)
    run_cli("rebuild")
    age(Path(os.environ["MEMZOI_HOME"]), 3600)
    for name in names:
        proc, modules = run_importtime(["agent", "hook", client], memory.path, input=event(client, name, memory.path))
        assert proc.returncode == 0 and proc.stdout.strip(), proc.stderr
        assert f"git_memzoi.agents.{client}_hook" in modules  # the measurement sees our own imports
        heavy = sorted(m for m in modules if m.split(".")[0] in HEAVY)
        assert heavy == [], f"{client} {name}: the hook imported {heavy[:5]}"


# A Write of a new file: the records scoped to where it goes, in every client

NEW_FILE = "apps/active/orders/new-page.tsx"


@pytest.mark.parametrize(
    ("client", "name", "override", "moment"),
    [
        (
            "claude",
            "pretooluse-write",
            {"tool_input": {"file_path": "{CWD}/" + NEW_FILE, "content": "export {}\n"}},
            "PreToolUse",
        ),
        (
            "codex",
            "pretooluse-apply-patch",
            {"tool_input": {"command": f"*** Begin Patch\n*** Add File: {NEW_FILE}\n+export {{}}\n*** End Patch\n"}},
            "PreToolUse",
        ),
        (
            "gemini",
            "aftertool-write-file",
            {"tool_input": {"file_path": "{CWD}/" + NEW_FILE, "content": "export {}\n"}},
            "AfterTool",
        ),
    ],
)
def test_a_write_of_a_new_file_gets_the_records_scoped_to_it(
    memory: Repo, client: str, name: str, override: dict[str, Any], moment: str
) -> None:
    """Claude Code's own path-scoped rules load when a file is read, never when one is created; the hook's do."""
    assert not (memory.path / NEW_FILE).exists() and not (memory.path / "apps").exists()
    given = json.loads(json.dumps(override).replace("{CWD}", str(memory.path)))
    out, err = hook(client, event(client, name, memory.path, **given))
    text = context(out, moment)
    assert err == "" and f"what applies to path {NEW_FILE}" in text
    assert "### Decision: Use React Query in apps/active (use-react-query)" in text


# Each client's inline limit

#: (client, SessionStart event, prompt event, the most UTF-8 bytes of hook text that client reads inline)
CLIENT_LIMITS = [
    ("claude", "sessionstart", "userpromptsubmit", 10_000),  # Claude Code: 10,000 characters, then a preview
    ("codex", "sessionstart", "userpromptsubmit", 9_600),  # Codex: 2,500 tokens at four bytes a token, then a preview
    ("gemini", "sessionstart", "beforeagent", 10_000),
]


@pytest.mark.parametrize(("client", "start", "prompt", "limit"), CLIENT_LIMITS)
def test_every_answer_fits_its_clients_inline_limit_on_300_standing_rules(
    memory: Repo, client: str, start: str, prompt: str, limit: int
) -> None:
    # 300 standing rules in words of more than one byte a character, and the largest budgets the config takes:
    # 10,000 characters of them are over 20,000 bytes, past every client's inline limit
    for n in range(300):
        add_record(
            memory,
            f"risks/regle-{n}",
            f"regle-{n}",
            type="risk",
            title=f"Règle {n}: migrations des commandes — 注文の移行",
            body=f"Ne modifiez jamais une migration appliquée ({n}); écrivez-en une nouvelle. 注文テーブルの移行 " * 3,
        )
    for n in range(20):  # and records a prompt on db/migrations/ brings, long ones
        add_record(
            memory,
            f"decisions/migration-note-{n}",
            f"migration-note-{n}",
            title=f"Migrations des commandes, note {n}",
            applies_to=["db/migrations/**"],
            body="Chaque migration appliquée reste telle quelle; 注文テーブルの移行は新しいファイルで行う。 " * 30,
        )
    memory.commit("300 standing rules")
    memory.write(".memzoi/config.toml", "[agents]\nsession_budget = 10000\nprompt_budget = 10000\n")
    prompt_moment = "BeforeAgent" if client == "gemini" else "UserPromptSubmit"
    for name, moment, wanted in ((start, "SessionStart", "(regle-"), (prompt, prompt_moment, "(migration-note-")):
        out, err = hook(client, event(client, name, memory.path))
        text = context(out, moment)
        assert err == "" and len(text.encode("utf-8")) <= limit, (name, len(text.encode("utf-8")))
        assert wanted in text  # as many as fit
    start_text = context(hook(client, event(client, start, memory.path, session_id="fresh"))[0], "SessionStart")
    assert start_text.endswith(
        "[cut to fit the hook context limit; run `git memzoi precheck` or `handoff` for all of it]\n"
    )


# A turn's end: Codex's Stop, Gemini CLI's AfterAgent (and its PreCompress)


def _transcript(memory: Repo, tmp_path: Path, fixture: str) -> str:
    path = tmp_path / Path(fixture).name
    path.write_text((FIXTURES / fixture).read_text().replace("{CWD}", str(memory.path)))
    return str(path)


@pytest.mark.parametrize(
    ("client", "name", "fixture", "wanted"),
    [
        (
            "codex",
            "stop",
            "codex-hooks/rollout-patch.jsonl",
            "Files edited, latest first:\n- db/migrations/0042_orders.sql",
        ),
        ("codex", "stop", "codex-hooks/rollout-command.jsonl", "Commands run:\n- `echo migrations users`"),
        (
            "gemini",
            "afteragent",
            "gemini-hooks/chat-write.jsonl",
            "Files edited, latest first:\n- db/migrations/0042_orders.sql",
        ),
        ("gemini", "afteragent", "gemini-hooks/chat-shell.jsonl", "Commands run:\n- `echo migrations users`"),
    ],
)
def test_a_turns_end_reads_the_clients_own_transcript(
    memory: Repo, tmp_path: Path, client: str, name: str, fixture: str, wanted: str
) -> None:
    transcript = _transcript(memory, tmp_path, fixture)
    assert hook(client, event(client, name, memory.path, transcript_path=transcript)) == (None, "")
    (only,) = run_cli("checkpoint", "list", "--json").json()["checkpoints"]
    note = run_cli("checkpoint", "show", only["record_id"], "--json").json()["note"]
    who = {"codex": "Codex's Stop", "gemini": "Gemini CLI's AfterAgent"}[client]
    assert note.startswith(f"Captured by {who} hook.") and wanted in note
    assert "Last request: go" in note  # the user's own words: not Codex's environment context, nor a hook's
    assert "Last answer: Added the status column in a new migration" in note  # what the event itself carries
    # the next session, or Codex's context after a compaction (SessionStart `compact`), starts with them
    after: dict[str, Any] = {"session_id": "next"} | ({"source": "compact"} if client == "codex" else {})
    start = context(hook(client, event(client, "sessionstart", memory.path, **after))[0], "SessionStart")
    assert wanted.split("\n")[1].lstrip("- ") in start


#: Lines of each client's transcript that are not what its reader expects, then one it reads.
ODD_LINES = {
    "codex": [
        {"type": "response_item", "payload": []},
        {
            "type": "response_item",
            "payload": {"type": "function_call", "name": "exec_command", "arguments": "[" * 50_000},
        },
        {"type": "response_item", "payload": {"type": "function_call", "name": ["x"], "arguments": '{"cmd": 7}'}},
        {"type": "response_item", "payload": {"type": "custom_tool_call", "name": "apply_patch", "input": ["x"]}},
        {"type": "event_msg", "payload": {"type": "item_completed", "item": {"type": "UserMessage", "content": 5}}},
        {
            "type": "response_item",
            "payload": {"type": "function_call", "name": "shell", "arguments": '{"command": ["make", "db"]}'},
        },
    ],
    "gemini": [
        {"id": ["x"], "type": "user", "content": {"text": "x"}},
        {"id": "g1", "type": "gemini", "toolCalls": {"name": "write_file"}},
        {"id": "g2", "type": "gemini", "toolCalls": [{"name": ["write_file"], "args": {"file_path": 7}}, "x"]},
        {"id": "g3", "type": "gemini", "toolCalls": [{"name": "run_shell_command", "args": {"command": "make db"}}]},
    ],
    "copilot": [
        {"type": "assistant.message", "data": []},
        {"type": "assistant.message", "data": {"toolRequests": [{"name": {"x": 1}, "arguments": {"path": []}}]}},
        {"type": "user.message", "data": {"content": None}},
        {
            "type": "assistant.message",
            "data": {"toolRequests": [{"name": "bash", "arguments": {"command": "make db"}}]},
        },
    ],
}


@pytest.mark.parametrize("client", ["codex", "gemini", "copilot"])
def test_odd_lines_of_a_clients_transcript_are_skipped(memory: Repo, tmp_path: Path, client: str) -> None:
    transcript = tmp_path / "odd.jsonl"
    transcript.write_text("not json\n" + "".join(json.dumps(line) + "\n" for line in ODD_LINES[client]))
    if client == "copilot":
        data = json.loads(event("copilot", "agentstop", memory.path))
        data["transcriptPath"] = str(transcript)
        done = subprocess.run(
            ["git", "memzoi", "agent", "hook", "copilot", "agentStop"],
            input=json.dumps(data),
            capture_output=True,
            text=True,
            check=False,
        )
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    else:
        name = "stop" if client == "codex" else "afteragent"
        assert hook(client, event(client, name, memory.path, transcript_path=str(transcript))) == (None, "")
    (only,) = run_cli("checkpoint", "list", "--json").json()["checkpoints"]
    note = run_cli("checkpoint", "show", only["record_id"], "--json").json()["note"]
    assert "Commands run:\n- `make db`" in note and "Files edited" not in note


def test_gemini_pre_compress_keeps_a_successor_checkpoint(memory: Repo, tmp_path: Path) -> None:
    transcript = _transcript(memory, tmp_path, "gemini-hooks/chat-write.jsonl")
    hook("gemini", event("gemini", "afteragent", memory.path, transcript_path=transcript))
    (first,) = run_cli("checkpoint", "list", "--json").json()["checkpoints"]
    compress = event("gemini", "precompress", memory.path).replace("{TRANSCRIPT}", transcript)
    assert hook("gemini", compress) == (None, "")  # Gemini CLI takes no context at PreCompress
    listed = run_cli("checkpoint", "list", "--json").json()["checkpoints"]
    (current,) = [c for c in listed if c["record_id"] != first["record_id"]]  # a successor, as after PreCompact
    shown = run_cli("checkpoint", "show", current["record_id"], "--json").json()
    assert shown["note"].startswith("Captured by Gemini CLI's PreCompress (auto) hook.")
    assert "- db/migrations/0042_orders.sql" in shown["note"]


@pytest.mark.parametrize(
    ("client", "name", "asked"),
    [("codex", "stop", False), ("gemini", "afteragent", True)],
)
def test_a_turns_end_keeps_what_its_event_carries_in_one_checkpoint_per_session(
    memory: Repo, client: str, name: str, asked: bool
) -> None:
    out, err = hook(client, event(client, name, memory.path))
    assert (out, err) == (None, "")  # never blocks, never adds to a turn that is over
    (only,) = run_cli("checkpoint", "list", "--json").json()["checkpoints"]
    shown = run_cli("checkpoint", "show", only["record_id"], "--json").json()
    assert "Last answer: Added the status column in a new migration" in shown["note"]
    assert ("Last request: Add a column to the orders table" in shown["note"]) is asked
    # the same turn again: nothing written; the next turn: the same checkpoint, updated in place
    written = run_cli("events", "--jsonl").stdout.count("checkpoint.")
    hook(client, event(client, name, memory.path))
    assert run_cli("events", "--jsonl").stdout.count("checkpoint.") == written
    answer = {"last_assistant_message" if client == "codex" else "prompt_response": "Ran the migration on staging."}
    assert hook(client, event(client, name, memory.path, **answer)) == (None, "")
    (again,) = run_cli("checkpoint", "list", "--json").json()["checkpoints"]
    note = run_cli("checkpoint", "show", again["record_id"], "--json").json()["note"]
    assert again["record_id"] == only["record_id"] and "Last answer: Ran the migration on staging." in note
    start = context(hook(client, event(client, "sessionstart", memory.path))[0], "SessionStart")
    assert "## Session checkpoint" in start and "Ran the migration on staging." in start
