"""`git memzoi agent hook copilot EVENT`: recorded GitHub Copilot CLI hook events in, its hook output out.

The events in fixtures/copilot-hooks were recorded from Copilot CLI 1.0.102 (see its README): camelCase
fields (`sessionId`, `toolName`, `toolArgs`, `transcriptPath`) that do not name the event, which the
hook's command names. The same memory as the other clients' hooks (the `memory` fixture, conftest.py).
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
from support.recall import add_record

HEAVY = ("click", "pydantic", "pydantic_core", "yaml", "mcp", "pygit2", "filelock", "dataclasses", "inspect")


def copilot(name: str, text: str) -> tuple[dict[str, Any] | None, str]:
    """Run `agent hook copilot NAME` as Copilot CLI runs it (a process of its own); it always exits 0."""
    done = subprocess.run(
        ["git", "memzoi", "agent", "hook", "copilot", name], input=text, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return (json.loads(done.stdout) if done.stdout.strip() else None), done.stderr


def context(out: dict[str, Any] | None) -> str:
    assert out is not None and "hookSpecificOutput" not in out  # Copilot CLI reads additionalContext at the top
    return str(out["additionalContext"])


def test_session_start_and_prompt_get_the_claude_answers(memory: Repo) -> None:
    start = context(copilot("sessionStart", event("copilot", "sessionstart", memory.path))[0])
    assert "## Standing rules" in start and "### Risk: Never force-push to main (never-force-push-main)" in start
    out, err = copilot("userPromptSubmitted", event("copilot", "userpromptsubmitted", memory.path))
    assert err == "" and set(out or {}) == {"additionalContext"}
    assert "### Risk: Migrations are append-only (migrations-are-append-only)" in context(out)
    # the same session asks again: referred to by ID
    again = context(copilot("userPromptSubmitted", event("copilot", "userpromptsubmitted", memory.path))[0])
    assert "### Risk: Migrations are append-only" not in again and "migrations-are-append-only" in again


def test_a_new_file_gets_the_records_whose_scope_covers_it(memory: Repo) -> None:
    # `create` of a file that does not exist yet: the memory scoped to its folder reaches the model before the write
    assert not (memory.path / "db/migrations/0043_orders_status.sql").exists()
    out, err = copilot("preToolUse", event("copilot", "pretooluse-create", memory.path))
    text = context(out)
    assert err == "" and "path db/migrations/0043_orders_status.sql" in text
    assert "[risk] Migrations are append-only (id: migrations-are-append-only)" in text
    assert "permissionDecision" not in (out or {})  # risk_decision "ask": Copilot CLI asks no one from a hook
    new = {"path": str(memory.path / "apps/active/orders.tsx"), "file_text": "export {}\n"}
    scoped = context(copilot("preToolUse", event("copilot", "pretooluse-create", memory.path, toolArgs=new))[0])
    assert "### Decision: Use React Query in apps/active (use-react-query)" in scoped


def test_a_risk_denies_the_tool_call_with_deny(memory: Repo) -> None:
    memory.write(".memzoi/config.toml", '[agents]\nrisk_decision = "deny"\n')
    out, err = copilot("preToolUse", event("copilot", "pretooluse-bash", memory.path))
    assert err == "" and out is not None
    assert set(out) == {"additionalContext", "permissionDecision", "permissionDecisionReason"}
    assert out["permissionDecision"] == "deny"
    assert out["permissionDecisionReason"].startswith("git memzoi risk never-force-push-main:")
    assert "command `git push --force origin main`" in out["additionalContext"]
    edited, _ = copilot("preToolUse", event("copilot", "pretooluse-edit", memory.path))
    assert edited is not None and edited["permissionDecision"] == "deny"


def test_tool_args_as_json_text_and_other_tools(memory: Repo) -> None:
    data = json.loads(event("copilot", "pretooluse-bash", memory.path))
    data["toolArgs"] = json.dumps(data["toolArgs"])  # a JSON text, as Copilot CLI before 1.0 sent it
    assert "never-force-push-main" in context(copilot("preToolUse", json.dumps(data))[0])
    view = event("copilot", "pretooluse-edit", memory.path, toolName="view")
    assert copilot("preToolUse", view) == (None, "")


@pytest.mark.parametrize(
    "override, message",
    [
        ({"cwd": "relative"}, "preToolUse event: cwd must be an absolute path, not 'relative'"),
        ({"toolArgs": "{not json"}, "preToolUse event: toolArgs is not JSON"),
        ({"toolArgs": {"path": 7}}, "preToolUse event for edit: tool_input.path is not a path"),
        ({"toolArgs": "[" * 100_000}, "preToolUse event: toolArgs nests arrays and objects more than 64 deep"),
    ],
)
def test_bad_events_never_block(memory: Repo, override: dict[str, Any], message: str) -> None:
    data = json.loads(event("copilot", "pretooluse-edit", memory.path))
    data.update(override)
    out, err = copilot("preToolUse", json.dumps(data))
    assert (
        out is None and err.count("\n") == 1 and err.startswith("git memzoi: agent hook copilot: ") and message in err
    )


@pytest.mark.parametrize("args", [["errorOccurred"], []])
def test_an_event_the_hook_does_not_answer_never_blocks(memory: Repo, args: list[str]) -> None:
    text = event("copilot", "sessionstart", memory.path)
    done = subprocess.run(
        ["git", "memzoi", "agent", "hook", "copilot", *args], input=text, capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stdout == "" and done.stderr.count("\n") == 1
    wanted = "unsupported hook event 'errorOccurred'" if args else "needs the event as its argument"
    assert done.stderr.startswith("git memzoi: agent hook copilot: ") and wanted in done.stderr
    assert run_cli("agent", "hook", "copilot", *args, input=text).stderr == done.stderr  # click says the same


def test_agent_stop_keeps_the_session_from_its_events_jsonl(memory: Repo, tmp_path: Path) -> None:
    transcript = tmp_path / "events.jsonl"
    transcript.write_text((FIXTURES / "copilot-hooks" / "events.jsonl").read_text().replace("{CWD}", str(memory.path)))
    stop = event("copilot", "agentstop", memory.path).replace("{TRANSCRIPT}", str(transcript))
    assert copilot("agentStop", stop) == (None, "")  # never asks for another turn
    (only,) = run_cli("checkpoint", "list", "--json").json()["checkpoints"]
    shown = run_cli("checkpoint", "show", only["record_id"], "--json").json()
    assert shown["task"].startswith("Add a status column to the orders table")
    note = shown["note"]
    assert note.startswith("Captured by GitHub Copilot CLI's agentStop (end_turn) hook.")
    assert "- db/migrations/0043_orders_status.sql\n- db/migrations/0042_orders.sql" in note  # latest first
    assert "- `git push --force origin main`" in note
    # the next turn's stop with nothing new: nothing written; the next session starts with it
    written = run_cli("events", "--jsonl").stdout.count("checkpoint.")
    copilot("agentStop", stop)
    assert run_cli("events", "--jsonl").stdout.count("checkpoint.") == written
    start = context(copilot("sessionStart", event("copilot", "sessionstart", memory.path, sessionId="next"))[0])
    assert "## Session checkpoint" in start and "db/migrations/0043_orders_status.sql" in start


def test_output_fits_the_inline_limit_on_300_standing_rules(memory: Repo) -> None:
    for n in range(300):
        add_record(
            memory,
            f"risks/regle-{n}",
            f"regle-{n}",
            type="risk",
            title=f"Règle {n}: migrations des commandes — 注文の移行",
            body=f"Ne modifiez jamais une migration appliquée ({n}); écrivez-en une nouvelle. 注文テーブルの移行 " * 3,
        )
    memory.commit("300 standing rules")
    memory.write(".memzoi/config.toml", "[agents]\nsession_budget = 10000\nprompt_budget = 10000\n")
    text = context(copilot("sessionStart", event("copilot", "sessionstart", memory.path))[0])
    assert len(text.encode("utf-8")) <= 10_000 and "(regle-" in text
    assert text.endswith("[cut to fit the hook context limit; run `git memzoi precheck` or `handoff` for all of it]\n")


def test_the_hook_path_stays_light(memory: Repo) -> None:
    """Copilot CLI runs the hook before every tool call: no click, pydantic, PyYAML, MCP SDK, pygit2, filelock."""
    age(memory.path, 3600)
    run_cli("rebuild")
    age(Path(os.environ["MEMZOI_HOME"]), 3600)
    for name, recorded in (("preToolUse", "pretooluse-create"), ("userPromptSubmitted", "userpromptsubmitted")):
        args = ["agent", "hook", "copilot", name]
        proc, modules = run_importtime(args, memory.path, input=event("copilot", recorded, memory.path))
        assert proc.returncode == 0 and proc.stdout.strip(), proc.stderr
        assert "git_memzoi.agents.copilot_hook" in modules
        heavy = sorted(m for m in modules if m.split(".")[0] in HEAVY)
        assert heavy == [], f"{name}: the hook imported {heavy[:5]}"
