"""`git memzoi agent hook claude`: recorded Claude Code hook events in, Claude Code's hook output out."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from git_memzoi.agents.claude_hook import CONTEXT_LIMIT
from support import Repo, age, make_repo, memzoi_exe, run_cli, run_importtime
from support.agents import event
from support.recall import add_record

#: Standard library modules too slow to load for what the hook does with them.
LIGHT_STDLIB = ("dataclasses", "inspect", "hashlib", "_hashlib")


def hook(text: str, cwd: Path | None = None) -> tuple[dict[str, Any] | None, str]:
    """Run the hook; it always exits 0. Returns (parsed stdout or None when silent, stderr)."""
    result = run_cli("agent", "hook", "claude", input=text, cwd=cwd, expect=0)
    return (json.loads(result.stdout) if result.stdout.strip() else None), result.stderr


def test_edit_of_a_risky_path_asks_with_a_reason_and_context(memory: Repo) -> None:
    out, err = hook(event("pretooluse-edit", memory.path))
    assert err == ""
    assert out is not None
    answer = out["hookSpecificOutput"]
    assert answer["hookEventName"] == "PreToolUse"
    assert answer["permissionDecision"] == "ask"
    assert (
        answer["permissionDecisionReason"] == "git memzoi risk migrations-are-append-only: Migrations are append-only"
    )
    assert "\n" not in answer["permissionDecisionReason"]
    context = answer["additionalContext"]
    assert "path db/migrations/0042_orders.sql" in context
    assert "[risk] Migrations are append-only (id: migrations-are-append-only)" in context
    assert "Never edit an applied migration; add a new one." in context
    assert set(out) == {"hookSpecificOutput"}


@pytest.mark.parametrize(
    "name, record, kind",
    [
        ("pretooluse-write", "auth-validates-server-side", "warning"),
        ("pretooluse-multiedit", "auth-validates-server-side", "warning"),
        ("pretooluse-notebookedit", "full-load-runs-out-of-memory", "failed_attempt"),
    ],
)
def test_file_tools_give_warnings_as_context_without_a_decision(
    memory: Repo, name: str, record: str, kind: str
) -> None:
    out, _ = hook(event(name, memory.path))
    assert out is not None
    answer = out["hookSpecificOutput"]
    assert answer["hookEventName"] == "PreToolUse"
    assert "permissionDecision" not in answer and "permissionDecisionReason" not in answer
    assert f"[{kind}]" in answer["additionalContext"] and f"(id: {record})" in answer["additionalContext"]


def test_bash_command_is_prechecked_by_its_words(memory: Repo) -> None:
    out, _ = hook(event("pretooluse-bash", memory.path))
    assert out is not None
    answer = out["hookSpecificOutput"]
    assert answer["permissionDecision"] == "ask"
    assert answer["permissionDecisionReason"].startswith("git memzoi risk never-force-push-main:")
    assert "command `git push --force origin main`" in answer["additionalContext"]
    quiet, err = hook(event("pretooluse-bash", memory.path, tool_input={"command": "ls -la"}))
    assert quiet is None and err == ""


@pytest.mark.parametrize("setting, decision", [("deny", "deny"), ("context", None), ("ask", "ask")])
def test_risk_decision_follows_config(memory: Repo, setting: str, decision: str | None) -> None:
    memory.write(".memzoi/config.toml", f'[agents]\nrisk_decision = "{setting}"\n')
    out, _ = hook(event("pretooluse-edit", memory.path))
    assert out is not None
    answer = out["hookSpecificOutput"]
    assert answer.get("permissionDecision") == decision
    assert ("permissionDecisionReason" in answer) == (decision is not None)
    assert "Migrations are append-only" in answer["additionalContext"]


def test_no_warnings_means_no_output(memory: Repo) -> None:
    for name, tool_input in [
        ("pretooluse-edit", {"file_path": str(memory.path / "README.md")}),
        ("pretooluse-notebookedit", {"notebook_path": str(memory.path / "other.ipynb")}),
    ]:
        out, err = hook(event(name, memory.path, tool_input=tool_input))
        assert out is None and err == ""


def test_paths_outside_the_repository_get_no_answer(memory: Repo, tmp_path: Path) -> None:
    elsewhere = make_repo(tmp_path / "elsewhere")
    for path in (
        str(tmp_path / "db/migrations/1.sql"),
        str(elsewhere.path / "db/migrations/1.sql"),
        str(memory.path / ".git/config"),
        "../escaped/db/migrations/1.sql",
        str(memory.path),
    ):
        out, err = hook(event("pretooluse-edit", memory.path, tool_input={"file_path": path}))
        assert out is None and err == "", path


def test_relative_paths_and_a_subfolder_cwd(memory: Repo) -> None:
    sub = memory.path / "db"
    sub.mkdir()
    out, _ = hook(event("pretooluse-edit", sub, tool_input={"file_path": "migrations/0042_orders.sql"}))
    assert out is not None and "path db/migrations/0042_orders.sql" in out["hookSpecificOutput"]["additionalContext"]
    out, _ = hook(event("pretooluse-edit", sub, tool_input={"file_path": str(sub / "migrations/x.sql")}), cwd=Path("/"))
    assert out is not None, "the event's cwd names the repository, not the process's"


def test_symlinked_project_dir_still_maps_into_the_repository(memory: Repo, tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(memory.path)
    out, _ = hook(event("pretooluse-edit", link))
    assert out is not None and out["hookSpecificOutput"]["permissionDecision"] == "ask"


def test_other_tools_get_no_answer(memory: Repo) -> None:
    for tool, tool_input in [
        ("Read", {"file_path": str(memory.path / "db/migrations/1.sql")}),
        ("Grep", {"pattern": "migrations"}),
        ("mcp__memzoi__search_memory", {"query": "x"}),
    ]:
        out, err = hook(event("pretooluse-edit", memory.path, tool_name=tool, tool_input=tool_input))
        assert out is None and err == ""


def test_session_start_gives_the_standing_rules_not_path_bound_records(memory: Repo) -> None:
    (memory.path / "db").mkdir()
    out, err = hook(event("sessionstart", memory.path))
    assert err == ""
    assert out is not None
    answer = out["hookSpecificOutput"]
    assert set(answer) == {"hookEventName", "additionalContext"}
    assert answer["hookEventName"] == "SessionStart"
    context = answer["additionalContext"]
    assert "## Standing rules" in context
    assert "### Risk: Never force-push to main (never-force-push-main)" in context
    assert "Force-pushing main rewrites everyone's history." in context
    # path-bound records wait for the prompt or the edit that needs them; no top-level folder seeds the session
    assert "migrations-are-append-only" not in context and "use-react-query" not in context
    assert "## Session checkpoint" not in context and "## Open inbox" not in context
    assert len(context) <= CONTEXT_LIMIT


def test_session_start_follows_the_current_checkpoint(memory: Repo) -> None:
    run_cli("checkpoint", "add", "--task", "orders migration cleanup", "--note", "half the tables moved")
    out, _ = hook(event("sessionstart", memory.path, source="resume"))
    assert out is not None
    context = out["hookSpecificOutput"]["additionalContext"]
    assert context.index("## Standing rules") < context.index("## Session checkpoint")
    assert "orders migration cleanup" in context and "half the tables moved" in context
    assert "- Migrations are append-only (migrations-are-append-only)" in context  # the task's records, one line each


def test_session_start_fits_its_budget_and_names_every_rule(memory: Repo) -> None:
    for n in range(40):
        add_record(
            memory,
            f"risks/big-{n}",
            f"big-risk-{n}",
            type="risk",
            title=f"Big risk {n}",
            body=f"migration detail {n} " * 200,
            confidence=0.5,
        )
    memory.write(".memzoi/config.toml", "[agents]\nsession_budget = 1200\n")
    out, _ = hook(event("sessionstart", memory.path))
    assert out is not None
    context = out["hookSpecificOutput"]["additionalContext"]
    assert len(context) <= 1200
    assert "### Risk: Never force-push to main" in context  # confidence 1.0 ranks first, in full
    named = [n for n in range(40) if f"(big-risk-{n})" in context]
    assert 0 < len(named) < 40 and all(f"- Big risk {n} (big-risk-{n})" in context for n in named[1:])


def test_user_prompt_gets_a_pack_for_its_words_and_paths_once_per_session(memory: Repo) -> None:
    out, err = hook(event("userpromptsubmit", memory.path))
    assert err == "" and out is not None
    answer = out["hookSpecificOutput"]
    assert answer["hookEventName"] == "UserPromptSubmit" and set(answer) == {"hookEventName", "additionalContext"}
    first = answer["additionalContext"]
    assert "### Risk: Migrations are append-only (migrations-are-append-only)" in first
    # the same session asks again: the record is referred to, not repeated
    again, _ = hook(event("userpromptsubmit", memory.path))
    assert again is not None
    second = again["hookSpecificOutput"]["additionalContext"]
    assert "### Risk: Migrations are append-only" not in second and "migrations-are-append-only" in second
    # a new session gets it in full again
    fresh, _ = hook(event("userpromptsubmit", memory.path, session_id="another-session"))
    assert (
        fresh is not None and "### Risk: Migrations are append-only" in fresh["hookSpecificOutput"]["additionalContext"]
    )
    # the state lives under MEMZOI_HOME, never in the work tree
    assert not list(memory.path.rglob("*agent-sessions*"))


def test_a_prompt_refers_to_the_rules_its_session_started_with(memory: Repo) -> None:
    hook(event("sessionstart", memory.path))
    out, _ = hook(event("userpromptsubmit", memory.path, prompt="may I force-push main after the rebase?"))
    assert out is not None
    context = out["hookSpecificOutput"]["additionalContext"]
    assert "still in force: never-force-push-main" in context and "### Risk: Never force-push" not in context
    # a compacted or cleared context starts again: SessionStart gives the rule in full, and forgets the rest
    hook(event("userpromptsubmit", memory.path))
    again, _ = hook(event("sessionstart", memory.path, source="compact"))
    assert (
        again is not None and "### Risk: Never force-push to main" in again["hookSpecificOutput"]["additionalContext"]
    )
    prompt, _ = hook(event("userpromptsubmit", memory.path))
    assert prompt is not None
    assert "### Risk: Migrations are append-only" in prompt["hookSpecificOutput"]["additionalContext"]


def test_user_prompt_with_nothing_relevant_gets_no_output(memory: Repo) -> None:
    for prompt in ("thanks, that looks good", "   ", "zebra quokka"):
        out, err = hook(event("userpromptsubmit", memory.path, prompt=prompt))
        assert out is None and err == ""


def test_hostile_prompts_get_a_clean_answer(memory: Repo) -> None:
    for prompt in (
        "x" * 300 + ".sql " + "a/" * 3000 + "b",  # names too long for the file system
        " ".join(f"f{n}.txt" for n in range(20_000)),  # thousands of file-like words
        "db/migrations/../../../etc/passwd and /etc/hosts",  # paths outside the repository
    ):
        out, err = hook(event("userpromptsubmit", memory.path, prompt=prompt))
        assert err == "" and (out is None or out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit")


def test_edit_adds_the_decisions_for_its_path_once_per_session(memory: Repo) -> None:
    edit = {"file_path": str(memory.path / "apps/active/page.tsx")}
    out, _ = hook(event("pretooluse-edit", memory.path, tool_input=edit))
    assert out is not None
    answer = out["hookSpecificOutput"]
    assert "permissionDecision" not in answer
    assert "### Decision: Use React Query in apps/active (use-react-query)" in answer["additionalContext"]
    again, _ = hook(event("pretooluse-edit", memory.path, tool_input=edit))
    assert again is None  # told once for this scope in this session
    other, _ = hook(event("pretooluse-edit", memory.path, tool_input=edit, session_id="s2"))
    assert other is not None


def test_bash_command_finds_conventions_by_their_words(memory: Repo) -> None:
    add_record(
        memory,
        "conventions/pnpm",
        "use-pnpm",
        type="convention",
        title="Use pnpm for packages",
        body="Install dependencies with pnpm; npm install writes a second lockfile.",
        tags=["npm", "pnpm"],
    )
    memory.commit("pnpm")
    out, _ = hook(event("pretooluse-bash", memory.path, tool_input={"command": "npm install lodash"}))
    assert out is not None
    assert "(use-pnpm)" in out["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "hook input is not JSON"),
        ("{not json", "hook input is not JSON"),
        ("[1, 2]", "hook input is not a JSON object"),
        ('{"cwd": "/tmp"}', "hook input has no hook_event_name"),
        ('{"hook_event_name": "PreToolUse", "cwd": "relative"}', "cwd must be an absolute path"),
        ('{"hook_event_name": "PreToolUse", "cwd": "{CWD}", "tool_input": {}}', "PreToolUse event has no tool_name"),
        (
            '{"hook_event_name": "PreToolUse", "cwd": "{CWD}", "tool_name": "Edit", "tool_input": "x"}',
            "tool_input is not an object",
        ),
        (
            '{"hook_event_name": "PreToolUse", "cwd": "{CWD}", "tool_name": "Edit", "tool_input": {}}',
            "tool_input.file_path is not a path",
        ),
        (
            '{"hook_event_name": "PreToolUse", "cwd": "{CWD}", "tool_name": "Bash", "tool_input": {"command": 7}}',
            "tool_input.command is not a string",
        ),
        (
            '{"hook_event_name": "PostToolUse", "cwd": "{CWD}", "tool_name": "Edit", "tool_input": {}}',
            "unsupported hook event 'PostToolUse'",
        ),
    ],
)
def test_malformed_input_never_blocks(memory: Repo, text: str, message: str) -> None:
    out, err = hook(text.replace("{CWD}", str(memory.path)))
    assert out is None
    assert err.count("\n") == 1 and err.startswith("git memzoi: agent hook claude: ") and message in err


def test_not_utf8_input_never_blocks(memory: Repo) -> None:
    result = subprocess.run(
        [memzoi_exe(), "agent", "hook", "claude"], input=b"\xff\xfe{", capture_output=True, cwd=memory.path
    )
    assert result.returncode == 0 and result.stdout == b""
    assert result.stderr.decode().strip() == "git memzoi: agent hook claude: hook input is not UTF-8 text"


def test_a_repository_without_memory_or_no_repository_never_blocks(tmp_path: Path) -> None:
    bare = make_repo(tmp_path / "plain", init_memzoi=False)
    out, err = hook(event("pretooluse-edit", bare.path))
    assert out is None and err.count("\n") == 1 and "no .memzoi/" in err
    out, err = hook(event("sessionstart", bare.path))
    assert out is None and "no .memzoi/" in err
    nowhere = tmp_path / "not-a-repo"
    nowhere.mkdir()
    out, err = hook(event("pretooluse-edit", nowhere))
    assert out is None and err.count("\n") == 1 and err.startswith("git memzoi: agent hook claude: ")


def test_a_broken_config_never_blocks(memory: Repo) -> None:
    memory.write(".memzoi/config.toml", '[agents]\nrisk_decision = "block"\n')
    out, err = hook(event("pretooluse-edit", memory.path))
    assert out is None and "agents.risk_decision" in err and err.count("\n") == 1


def test_through_git_as_claude_code_runs_it(memory: Repo) -> None:
    result = subprocess.run(
        ["git", "memzoi", "agent", "hook", "claude"],
        input=event("pretooluse-edit", memory.path),
        capture_output=True,
        text=True,
        cwd=memory.path,
    )
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "ask"


def test_the_hook_path_stays_light(memory: Repo) -> None:
    """Claude Code runs the hook before every edit: its path imports no click, pydantic, PyYAML, MCP SDK,
    pygit2, filelock, nor dataclasses (with inspect behind it: a sixth of the hook's own time), nor hashlib
    (it loads OpenSSL: milliseconds, for a digest only a record imported from a loaded file needs)."""
    import os

    age(memory.path, 3600)
    run_cli("rebuild")
    age(Path(os.environ["MEMZOI_HOME"]), 3600)
    for name in ("pretooluse-edit", "pretooluse-bash", "userpromptsubmit"):
        proc, modules = run_importtime(["agent", "hook", "claude"], memory.path, input=event(name, memory.path))
        answer = json.loads(proc.stdout)["hookSpecificOutput"]
        assert proc.returncode == 0 and answer.get("permissionDecision", "ask") == "ask" and answer["additionalContext"]
        assert "git_memzoi.agents.claude_hook" in modules  # the measurement sees our own imports
        heavy = sorted(
            m
            for m in modules
            if m.split(".")[0]
            in (*("click", "pydantic", "pydantic_core", "yaml", "mcp", "pygit2", "filelock"), *LIGHT_STDLIB)
        )
        assert heavy == [], f"{name}: the hook imported {heavy[:5]}"


def test_a_prompt_gets_the_best_records_in_full_then_the_next_ones_named_in_a_line(memory: Repo) -> None:
    for n in range(12):
        add_record(
            memory,
            f"decisions/ledger-{n}",
            f"ledger-rule-{n}",
            type="decision",
            title=f"Ledger rule {n}",
            body=f"The ledger reconciliation job rule {n}: " + "keep every entry balanced. " * 30,
            applies_to=[f"services/ledger/part{n}/**"],
        )
    memory.commit("ledger rules")
    out, _ = hook(event("userpromptsubmit", memory.path, prompt="why does the ledger reconciliation job fail?"))
    assert out is not None
    context = out["hookSpecificOutput"]["additionalContext"]
    in_full = [n for n in range(12) if f"### Decision: Ledger rule {n} (ledger-rule-{n})" in context]
    named = [n for n in range(12) if f"- Decision: Ledger rule {n} (ledger-rule-{n}) · services/ledger/part" in context]
    # a record ranked past what fits in full is still named, with its scope, so the agent can ask for it
    assert in_full and named and not set(in_full) & set(named)
    assert len(in_full) + len(named) > 6 and len(context) <= 2400 + 200


def test_an_edit_gets_the_facts_and_incidents_scoped_to_its_path(memory: Repo) -> None:
    add_record(
        memory,
        "facts/ledger-store",
        "ledger-store-is-append-only",
        type="fact",
        title="The ledger store keeps every entry",
        applies_to=["services/ledger/**"],
    )
    add_record(
        memory,
        "incidents/ledger",
        "ledger-double-post-incident",
        type="incident",
        title="Incident: entries posted twice after a retry",
        applies_to=["services/ledger/store/**"],
    )
    memory.commit("ledger facts")
    edit = {"file_path": str(memory.path / "services/ledger/store/write.go")}
    out, _ = hook(event("pretooluse-edit", memory.path, tool_input=edit))
    assert out is not None
    context = out["hookSpecificOutput"]["additionalContext"]
    # the deeper scope first
    assert context.index("(ledger-double-post-incident)") < context.index("(ledger-store-is-append-only)")


def test_a_command_is_matched_by_its_program_build_files_and_the_folder_it_runs_in(memory: Repo) -> None:
    add_record(
        memory,
        "facts/makefile",
        "makefile-targets",
        type="fact",
        title="Root Makefile targets",
        body="The Makefile's build target compiles every service.",
    )
    add_record(
        memory,
        "incidents/tf",
        "local-terraform-apply",
        type="incident",
        title="A local terraform apply removed an ingress rule",
        body="Plans are applied from CI only.",
    )
    add_record(
        memory,
        "facts/prod-env",
        "prod-env-layout",
        type="fact",
        title="One state file per environment",
        applies_to=["infra/envs/prod/**"],
    )
    memory.commit("command records")
    out, _ = hook(event("pretooluse-bash", memory.path, tool_input={"command": "make build"}))
    assert out is not None and "(makefile-targets)" in out["hookSpecificOutput"]["additionalContext"]
    command = "cd infra/envs/prod && terraform apply"
    out, _ = hook(event("pretooluse-bash", memory.path, tool_input={"command": command}))
    assert out is not None
    context = out["hookSpecificOutput"]["additionalContext"]
    assert "(local-terraform-apply)" in context and "(prod-env-layout)" in context


def test_user_prompt_gives_the_best_in_full_and_names_the_next_in_a_line_each(repo: Repo) -> None:
    repo.write(".memzoi/config.toml", "[agents]\nprompt_budget = 1000\n")
    for n in range(4):
        body = f"Rule {n} of the billing export: " + "the export keeps every invoice line as written. " * 4
        add_record(
            repo,
            f"notes/export-{n}",
            f"billing-export-{n}",
            type="note",
            title=f"Billing export rule {n}",
            body=body,
            confidence=1.0 - n / 10,
        )
    repo.commit("records")
    answer = subprocess.run(
        [memzoi_exe(), "agent", "hook", "claude"],
        input=event("userpromptsubmit", repo.path, prompt="how does the billing export keep invoice lines?"),
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    context = json.loads(answer.stdout)["hookSpecificOutput"]["additionalContext"]
    assert len(context) <= 1000
    # records in full take at most 40 % of the budget (each is ~260 characters): one, then a line for each other
    assert context.count("### Note: Billing export rule") == 1
    assert sum(f"- Note: Billing export rule {n} (billing-export-{n})" in context for n in range(4)) == 3
