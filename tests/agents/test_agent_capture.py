"""PreCompact and SessionEnd keep what a Claude Code session did as a session checkpoint; SessionStart shows it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from support import FIXTURES, Repo, memzoi_exe, run_cli
from support.lifecycle import add_record

EVENTS = FIXTURES / "claude-hooks"
SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"  # GitHub-token shaped, made up


def transcript(repo: Repo, tmp_path: Path, *extra: dict[str, Any]) -> Path:
    """The recorded transcript, for this project, outside the repository as Claude Code keeps it."""
    text = (EVENTS / "transcript.jsonl").read_text().replace("{CWD}", str(repo.path))
    path = tmp_path / "claude-projects" / "7f0c2a7e-5a0b-4c55-9f0e-0d4f3c1b2a10.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "".join(json.dumps(line) + "\n" for line in extra))
    return path


def event(name: str, repo: Repo, transcript_path: Path | str) -> str:
    text = (EVENTS / f"{name}.json").read_text()
    return text.replace("{CWD}", str(repo.path)).replace("{TRANSCRIPT}", str(transcript_path))


def hook(text: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`git memzoi agent hook claude` as Claude Code runs it: a process, the event on stdin."""
    return subprocess.run(
        [memzoi_exe(), "agent", "hook", "claude"], input=text, cwd=cwd, capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def project(repo: Repo) -> Repo:
    add_record(repo, "risks/force-push", "never-force-push-main", type="risk", title="Never force-push to main")
    return repo


def session_start(repo: Repo) -> str:
    done = hook(event("sessionstart", repo, ""), repo.path)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])


@pytest.mark.parametrize("name", ["precompact", "sessionend"])
def test_a_capture_event_keeps_a_checkpoint_the_next_session_start_shows(
    project: Repo, tmp_path: Path, name: str
) -> None:
    path = transcript(project, tmp_path)
    done = hook(event(name, project, path), project.path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    checkpoints = run_cli("checkpoint", "list", "--json").json()["checkpoints"]
    assert len(checkpoints) == 1
    shown = run_cli("checkpoint", "show", checkpoints[0]["record_id"], "--json").json()
    assert shown["task"].startswith("Move the session check in src/auth/session.ts to the server")
    note = shown["note"]
    assert "Last request: Now run the migration against the staging database too" in note
    assert "- src/auth/session.ts" in note and "- db/migrations/0042_sessions.sql" in note
    assert "notes.md" not in note, "a file outside the repository is not the project's"
    assert "subagent-only" not in note and "/clear" not in note
    assert "- `pnpm test --filter auth`" in note
    context = session_start(project)
    assert "## Session checkpoint" in context and "src/auth/session.ts" in context
    assert "db/migrations/0042_sessions.sql" in context, context
    handoff = run_cli("handoff", "--task", "continue", "--json").json()
    assert "src/auth/session.ts" in json.dumps(handoff)
    # the transcript is never copied into the repository
    for root, _, files in os.walk(project.path):
        if ".git" in Path(root).parts:
            continue
        for file in files:
            assert b"staging database" not in (Path(root) / file).read_bytes(), file


def test_a_second_capture_succeeds_the_checkpoint_and_keeps_its_task(project: Repo, tmp_path: Path) -> None:
    path = transcript(project, tmp_path)
    assert hook(event("precompact", project, path), project.path).returncode == 0
    later = {"type": "user", "message": {"role": "user", "content": "Also update the changelog"}}
    path = transcript(project, tmp_path, later)
    assert hook(event("precompact", project, path), project.path).returncode == 0
    checkpoints = run_cli("checkpoint", "list", "--json").json()["checkpoints"]
    assert len(checkpoints) == 2 and {c["task"] for c in checkpoints} == {checkpoints[0]["task"]}
    notes = [run_cli("checkpoint", "show", c["record_id"], "--json").json()["note"] for c in checkpoints]
    assert sorted("Also update the changelog" in note for note in notes) == [False, True]


def checkpoints_and_notes() -> list[tuple[str, str]]:
    listed = run_cli("checkpoint", "list", "--json").json()["checkpoints"]
    return [(c["record_id"], run_cli("checkpoint", "show", c["record_id"], "--json").json()["note"]) for c in listed]


def test_stop_keeps_one_checkpoint_per_session_and_session_end_adds_a_final_line(project: Repo, tmp_path: Path) -> None:
    """Stop after every turn updates the session's checkpoint in place, or leaves it when nothing changed."""
    path = transcript(project, tmp_path)
    done = hook(event("stop", project, path), project.path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")  # never blocks the stop
    ((first_id, first_note),) = checkpoints_and_notes()
    assert first_note.startswith("Captured by Claude Code's Stop hook.")
    assert "- src/auth/session.ts" in first_note
    # the next turn did nothing new: no write at all
    written = run_cli("events", "--jsonl").stdout.count("checkpoint.")
    assert hook(event("stop", project, path), project.path).returncode == 0
    assert checkpoints_and_notes() == [(first_id, first_note)]
    assert run_cli("events", "--jsonl").stdout.count("checkpoint.") == written
    # a turn that asked for more: the same checkpoint, its note updated, no successor
    later = {"type": "user", "message": {"role": "user", "content": "Also update the changelog"}}
    path = transcript(project, tmp_path, later)
    assert hook(event("stop", project, path), project.path).returncode == 0
    ((second_id, second_note),) = checkpoints_and_notes()
    assert second_id == first_id and "Last request: Also update the changelog" in second_note
    # SessionEnd adds its final line, once, to the same checkpoint
    for _ in range(2):
        done = hook(event("sessionend", project, path), project.path)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    ((end_id, end_note),) = checkpoints_and_notes()
    assert end_id == first_id and end_note == second_note + "\n\nSession ended (prompt_input_exit)."
    assert "Session ended (prompt_input_exit)." in session_start(project)


def test_a_secret_in_the_transcript_is_left_out(project: Repo, tmp_path: Path) -> None:
    leak = {
        "type": "assistant",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "name": "Bash", "input": {"command": f"gh auth login --with-token {SECRET}"}}
            ],
        },
    }
    asked = {"type": "user", "message": {"role": "user", "content": f"use the token {SECRET} for the release"}}
    path = transcript(project, tmp_path, leak, asked)
    done = hook(event("precompact", project, path), project.path)
    assert done.returncode == 0 and SECRET not in done.stdout + done.stderr
    (checkpoint,) = run_cli("checkpoint", "list", "--json").json()["checkpoints"]
    note = run_cli("checkpoint", "show", checkpoint["record_id"], "--json").json()["note"]
    assert SECRET not in note and "[left out: looks like a GitHub token]" in note
    assert "- src/auth/session.ts" in note
    assert SECRET not in session_start(project)
    assert SECRET not in run_cli("events", "--jsonl").stdout


def test_a_transcript_that_is_not_a_file_is_one_line_and_never_waits(project: Repo, tmp_path: Path) -> None:
    fifo = tmp_path / "transcript.fifo"
    os.mkfifo(fifo)
    for target in (fifo, tmp_path / "missing.jsonl", "relative.jsonl"):
        done = hook(event("precompact", project, target), project.path)
        assert done.returncode == 0 and done.stdout == ""
        assert done.stderr.count("\n") == 1 and "transcript" in done.stderr, done.stderr
    assert run_cli("checkpoint", "list", "--json").json()["checkpoints"] == []


def test_garbage_lines_and_an_empty_session_keep_nothing(project: Repo, tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('not json\n{"type": "user", "message": {"role": "user", "content": [{"type": "tool_result"}]}}\n[')
    done = hook(event("sessionend", project, path), project.path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert run_cli("checkpoint", "list", "--json").json()["checkpoints"] == []


def test_agent_install_claude_wires_the_capture_events(project: Repo) -> None:
    run_cli("agent", "install", "claude", cwd=project.path)
    settings = json.loads((project.path / ".claude" / "settings.json").read_text())
    for name in ("PreCompact", "Stop", "SessionEnd", "SessionStart", "UserPromptSubmit", "PreToolUse"):
        commands = [h["command"] for group in settings["hooks"][name] for h in group["hooks"]]
        assert commands == ["git memzoi agent hook claude"], name


def test_session_start_after_compaction_shows_the_files_just_edited(project: Repo, tmp_path: Path) -> None:
    """PreCompact keeps the checkpoint; SessionStart with source "compact" puts it back, the latest edits first."""
    long_request = {"type": "user", "message": {"role": "user", "content": "Keep going with the rollout; " * 14}}
    edits = [
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "name": "Edit", "input": {"file_path": f"{project.path}/src/api/part{n}.ts"}}
                    for n in range(30)
                ],
            },
        },
        long_request,
    ]
    path = transcript(project, tmp_path, *edits)
    done = hook(event("precompact", project, path), project.path)
    assert (done.returncode, done.stderr) == (0, "")
    start = json.loads(event("sessionstart", project, ""))
    start["source"] = "compact"
    done = hook(json.dumps(start), project.path)
    assert done.returncode == 0, done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "## Session checkpoint" in context and "never-force-push-main" in context
    for n in (29, 28, 27):
        assert f"src/api/part{n}.ts" in context, context
