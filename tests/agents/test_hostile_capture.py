"""Capture (PreCompact, SessionEnd) and the hooks' event parsing against hostile transcripts and events.

Every test runs `git memzoi agent hook CLIENT` as the client runs it: a process, the event's JSON on
stdin, a transcript file in Claude Code's JSONL shape.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from support import FIXTURES, Repo, load_script, memzoi_exe, run_cli
from support.agents import client_event
from support.lifecycle import add_record

EVENTS = FIXTURES / "claude-hooks"
#: made up, each the shape the secret scan knows
GITHUB = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
SESSION_A = "7f0c2a7e-5a0b-4c55-9f0e-0d4f3c1b2a10"
SESSION_B = "3c9d1e55-0b7a-4f0e-8a21-6d2f9c4b7e01"


def hook(text: str | bytes, cwd: Path, client: str = "claude", timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`git memzoi agent hook CLIENT` as the client runs it: a process, the event on stdin."""
    data = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    done = subprocess.run(
        [memzoi_exe(), "agent", "hook", client], input=data, cwd=cwd, capture_output=True, timeout=timeout
    )
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def capture_event(name: str, repo: Repo, transcript: Path | str, session: str = SESSION_A) -> str:
    data = json.loads((EVENTS / f"{name}.json").read_text().replace("{CWD}", str(repo.path)))
    data.update(transcript_path=str(transcript), session_id=session)
    return json.dumps(data)


def user(text: Any) -> dict[str, Any]:
    return {"type": "user", "isSidechain": False, "message": {"role": "user", "content": text}}


def tool(name: str, **given: Any) -> dict[str, Any]:
    block = {"type": "tool_use", "id": "toolu_01", "name": name, "input": given}
    return {"type": "assistant", "isSidechain": False, "message": {"role": "assistant", "content": [block]}}


def write_transcript(path: Path, *entries: dict[str, Any], ensure_ascii: bool = True) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(
        "".join(json.dumps(e, ensure_ascii=ensure_ascii) + "\n" for e in entries).encode("utf-8", "surrogatepass")
    )
    return path


def captured(repo: Repo, tmp_path: Path, *entries: dict[str, Any], session: str = SESSION_A) -> dict[str, Any]:
    """Capture a transcript of `entries` at SessionEnd; the one new checkpoint (task and note)."""
    before = {c["record_id"] for c in checkpoints()}
    path = write_transcript(tmp_path / "claude-projects" / f"{session}.jsonl", *entries)
    done = hook(capture_event("sessionend", repo, path, session), repo.path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), done.stderr
    (new,) = [c for c in checkpoints() if c["record_id"] not in before]
    return dict(run_cli("checkpoint", "show", new["record_id"], "--json").json())


def checkpoints() -> list[dict[str, Any]]:
    return list(run_cli("checkpoint", "list", "--json").json()["checkpoints"])


def one_line_refusal(done: subprocess.CompletedProcess[str], client: str, *words: str) -> None:
    """A hook's answer to input it cannot use: exit 0, nothing on stdout, one line on stderr naming the problem."""
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"git memzoi: agent hook {client}: "), done.stderr
    assert "internal error" not in done.stderr
    for word in words:
        assert word in done.stderr, done.stderr


@pytest.fixture
def project(repo: Repo) -> Repo:
    add_record(repo, "risks/force-push", "never-force-push-main", type="risk", title="Never force-push to main")
    return repo


# --- bad input: a clear refusal or a quiet no-op, never exit 70 ---


def test_a_transcript_path_naming_a_folder_is_one_line(project: Repo, tmp_path: Path) -> None:
    folder = tmp_path / "claude-projects"
    folder.mkdir()
    for name in ("precompact", "sessionend"):
        one_line_refusal(hook(capture_event(name, project, folder), project.path), "claude", str(folder), "regular")
    assert checkpoints() == []


def test_a_lone_surrogate_in_the_transcript_is_kept_as_a_visible_escape(project: Repo, tmp_path: Path) -> None:
    entries = (
        user("Fix the \ud800 parser in src/lex.py"),
        tool("Edit", file_path=str(project.path / "src" / "lex\udfff.py"), old_string="a", new_string="b"),
        tool("Bash", command="echo \udc80 done"),
    )
    shown = captured(project, tmp_path, *entries)
    assert shown["task"] == "Fix the \\ud800 parser in src/lex.py"
    assert "- src/lex\\udfff.py" in shown["note"] and "- `echo \\udc80 done`" in shown["note"]


LONG_NUMBER = "9" * 5000


@pytest.mark.parametrize(
    ("client", "name", "where"),
    [
        ("claude", "pretooluse-bash", "tool_input"),
        ("claude", "userpromptsubmit", "top"),
        ("codex", "pretooluse-bash", "tool_input"),
        ("codex", "sessionstart", "top"),
        ("gemini", "beforetool-shell", "tool_input"),
        ("gemini", "beforeagent", "top"),
    ],
)
def test_an_integer_of_5000_digits_in_an_event_is_one_line(project: Repo, client: str, name: str, where: str) -> None:
    text = client_event(client, name, project.path)
    if where == "top":
        text = text[:-1] + f', "extra": {LONG_NUMBER}}}'
    else:
        text = text.replace('"tool_input": {', f'"tool_input": {{"n": {LONG_NUMBER}, ', 1)
    assert LONG_NUMBER in text
    one_line_refusal(hook(text, project.path, client), client, "4300 digits")


def test_an_integer_of_5000_digits_in_a_capture_event_or_the_transcript(project: Repo, tmp_path: Path) -> None:
    path = write_transcript(tmp_path / "t.jsonl", user("Fix the login rate limiter"))
    text = capture_event("precompact", project, path)
    one_line_refusal(hook(text[:-1] + f', "n": {LONG_NUMBER}}}', project.path), "claude", "4300 digits")
    path.write_text(path.read_text() + '{"type": "user", "n": ' + LONG_NUMBER + "}\n")
    assert hook(text, project.path).returncode == 0
    (only,) = checkpoints()
    assert only["task"] == "Fix the login rate limiter"


# --- control characters are written as escapes, never the reason a checkpoint is lost ---


def test_terminal_codes_and_nuls_are_kept_as_visible_escapes(project: Repo, tmp_path: Path) -> None:
    entries = (
        user("\x1b[31mFix the build\x1b[0m in src/app.py\x00 now"),
        tool("Write", file_path=str(project.path / "src" / "a\x1b]0;pwned\x07.py"), content="x"),
        tool("Edit", file_path="src/b\x00.py", old_string="a", new_string="b"),
        tool("Bash", command="printf '\x1b[2J\x9b1m' \x00 && make"),
        user("Then ship it\u202e gnp.exe"),
    )
    shown = captured(project, tmp_path, *entries)
    assert shown["task"] == "\\x1b[31mFix the build\\x1b[0m in src/app.py\\x00 now"
    note = shown["note"]
    assert "- src/a\\x1b]0;pwned\\x07.py" in note and "- src/b\\x00.py" in note
    assert "- `printf '\\x1b[2J\\x9b1m' \\x00 && make`" in note
    assert "Last request: Then ship it\\u202e gnp.exe" in note
    for raw in ("\x1b", "\x00", "\x07", "\x9b", "\u202e"):
        assert raw not in shown["task"] + note
    context = hook(client_event("claude", "sessionstart", project.path), project.path)
    assert context.returncode == 0 and "Fix the build" in context.stdout and "\x1b" not in context.stdout


def test_a_trigger_with_terminal_codes_or_of_a_megabyte_still_keeps_the_checkpoint(
    project: Repo, tmp_path: Path
) -> None:
    path = write_transcript(tmp_path / "t.jsonl", user("Fix the login rate limiter"))
    for reason in ("\x1b[2Jlogout", "x" * 1_000_000):
        data = json.loads(capture_event("sessionend", project, path))
        data["reason"] = reason
        done = hook(json.dumps(data), project.path)
        assert (done.returncode, done.stderr) == (0, ""), done.stderr
    # the first captures the session, the second adds its final line to the same checkpoint
    (note,) = [run_cli("checkpoint", "show", c["record_id"], "--json").json()["note"] for c in checkpoints()]
    assert "SessionEnd (\\x1b[2Jlogout)" in note and "\nSession ended (xxxxxxxx" in note
    assert len(note) < 2_000


# --- no secret, nor a part of one, reaches a checkpoint ---


def pieces(secret: str) -> list[str]:
    """Every 8-character piece of `secret`: none may be kept anywhere."""
    return [secret[i : i + 8] for i in range(0, len(secret) - 7)]


def assert_kept_nothing_of(secret: str, *texts: str) -> None:
    joined = "\n".join(texts)
    kept = [piece for piece in pieces(secret) if piece in joined]
    assert not kept, f"parts of the secret kept: {kept}"


@pytest.mark.parametrize("offset", [150, 155, 158, 159, 160])
def test_a_github_token_at_the_cut_of_a_command_is_left_out_whole(project: Repo, tmp_path: Path, offset: int) -> None:
    command = "x" * offset + " " + GITHUB + " && echo done"
    shown = captured(project, tmp_path, user("Release it"), tool("Bash", command=command))
    assert "[left out: looks like a GitHub token]" in shown["note"]
    assert_kept_nothing_of(GITHUB, shown["note"], shown["task"])


@pytest.mark.parametrize("offset", [340, 355, 360, 380, 399])
def test_an_aws_secret_key_at_the_cut_of_a_request_or_the_task_is_left_out_whole(
    project: Repo, tmp_path: Path, offset: int
) -> None:
    request = "w" * (offset - 24) + " aws_secret_access_key = " + AWS_SECRET + " then deploy"
    shown = captured(project, tmp_path, user(request), tool("Bash", command="make"), user(request))
    assert shown["task"] == "[left out: looks like an AWS secret key]"
    assert "Last request: [left out: looks like an AWS secret key]" in shown["note"]
    assert_kept_nothing_of(AWS_SECRET, shown["note"], shown["task"])


@pytest.mark.parametrize(
    "disguise",
    [
        GITHUB[:20] + "\n" + GITHUB[20:],  # wrapped by the terminal it was pasted from
        GITHUB[:20] + "\t \r\n  " + GITHUB[20:],
        GITHUB[:20] + "\x1b[8m\x1b[0m" + GITHUB[20:],  # a terminal shows it whole
        GITHUB[:20] + "\u200b" + GITHUB[20:],  # a zero-width space
        "aws_secret_access_key=\n" + AWS_SECRET,
    ],
    ids=["newline", "whitespace", "terminal-codes", "zero-width", "assignment-over-lines"],
)
def test_a_secret_split_by_whitespace_or_codes_is_left_out(project: Repo, tmp_path: Path, disguise: str) -> None:
    secret = AWS_SECRET if "aws" in disguise else GITHUB
    shown = captured(
        project,
        tmp_path,
        user(f"use {disguise} for the release"),
        tool("Bash", command=f"gh auth login --with-token {disguise}"),
        tool("Write", file_path=f"notes/{disguise}.md", content="x"),
        user(f"and again {disguise}"),
    )
    assert_kept_nothing_of(secret, shown["note"], shown["task"])
    assert "[left out: looks like" in shown["note"]


def test_a_secret_in_a_path_or_the_trigger_is_left_out(project: Repo, tmp_path: Path) -> None:
    long_dir = "d" * 560
    entries = [user("Tidy the notes")]
    entries += [tool("Write", file_path=f"notes/{n}.md", content="x") for n in range(3)]
    entries += [tool("Edit", file_path=f"{long_dir}/{GITHUB}/keys.txt", old_string="a", new_string="b")]
    path = write_transcript(tmp_path / "t.jsonl", *entries)
    data = json.loads(capture_event("precompact", project, path))
    data["trigger"] = f"auto {GITHUB}"
    assert hook(json.dumps(data), project.path).returncode == 0
    (only,) = checkpoints()
    shown = run_cli("checkpoint", "show", only["record_id"], "--json").json()
    assert "- notes/2.md" in shown["note"]
    assert_kept_nothing_of(GITHUB, shown["note"], shown["task"])
    context = hook(client_event("claude", "sessionstart", project.path), project.path)
    assert "Tidy the notes" in context.stdout
    assert_kept_nothing_of(GITHUB, context.stdout, run_cli("handoff", "--task", "notes", "--json").stdout)


# --- a checkpoint's task belongs to its session; a succeeded checkpoint is no longer current ---


def test_a_new_session_keeps_its_own_task_and_a_succeeded_checkpoint_ends(project: Repo, tmp_path: Path) -> None:
    first = user("Refactor the payment module into services")
    edit = tool("Edit", file_path=str(project.path / "src/pay.py"), old_string="a", new_string="b")
    path_a = write_transcript(tmp_path / "a.jsonl", first, edit)
    assert hook(capture_event("precompact", project, path_a, SESSION_A), project.path).returncode == 0
    write_transcript(path_a, first, edit, user("Also move the refund code"))
    assert hook(capture_event("precompact", project, path_a, SESSION_A), project.path).returncode == 0
    a1, a2 = checkpoints()
    assert a1["task"] == a2["task"] == "Refactor the payment module into services"
    assert (a1["current"], a2["current"]) == (False, True), "a succeeded checkpoint is no longer current"
    # another session, whose only request is its own, while the first one's checkpoint is current
    path_b = write_transcript(tmp_path / "b.jsonl", user("Fix the login rate limiter"), tool("Bash", command="make"))
    assert hook(capture_event("sessionend", project, path_b, SESSION_B), project.path).returncode == 0
    (b1,) = [c for c in checkpoints() if c["record_id"] not in (a1["record_id"], a2["record_id"])]
    assert b1["task"] == "Fix the login rate limiter" and b1["current"]
    events = [json.loads(line) for line in run_cli("events", "--jsonl").stdout.splitlines()]
    added = {e["ids"][0]: e["detail"] for e in events if e["action"] == "checkpoint.add"}
    assert added[a2["record_id"]].get("predecessor_id") == a1["record_id"]
    assert "predecessor_id" not in added[b1["record_id"]], "no successor of another session's checkpoint"
    # the first session goes on: it succeeds its own checkpoint, not the newer one of the other session
    write_transcript(path_a, first, edit, user("Now the invoices"))
    assert hook(capture_event("precompact", project, path_a, SESSION_A), project.path).returncode == 0
    (a3,) = [c for c in checkpoints() if c["record_id"] not in {a1["record_id"], a2["record_id"], b1["record_id"]}]
    assert a3["task"] == "Refactor the payment module into services"
    events = [json.loads(line) for line in run_cli("events", "--jsonl").stdout.splitlines()]
    added = {e["ids"][0]: e["detail"] for e in events if e["action"] == "checkpoint.add"}
    assert added[a3["record_id"]].get("predecessor_id") == a2["record_id"]
    current = {c["record_id"] for c in checkpoints() if c["current"]}
    assert current == {b1["record_id"], a3["record_id"]}


# --- capture's cost is bounded by what it reads, not by the transcript's lines ---

#: far more than a capture takes; the old reader took minutes on each transcript below
HANG = 30


def filled(path: Path, unit: bytes, size: int = 64 * 1024 * 1024) -> Path:
    with path.open("wb") as handle:
        for _ in range(size // (1 << 20)):
            handle.write(unit * ((1 << 20) // len(unit)))
    return path


@pytest.mark.parametrize(
    "unit",
    [b"1\n", b'"user"\n', b'{"type":"user","message":{"content":"x"}}\n', b'"tool_use"\n'],
    ids=["two-byte-lines", "user-markers", "short-requests", "tool-use-markers"],
)
def test_64_mib_of_short_lines_is_captured_in_bounded_time(project: Repo, tmp_path: Path, unit: bytes) -> None:
    path = filled(tmp_path / "t.jsonl", unit)
    done = hook(capture_event("sessionend", project, path), project.path, timeout=HANG)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), done.stderr
    kept = checkpoints()
    if b"content" in unit:
        (only,) = kept
        assert only["task"] == "x"
    else:
        assert kept == []


def test_a_line_of_many_tool_calls_is_read_in_bounded_time(project: Repo, tmp_path: Path) -> None:
    blocks = [
        {"type": "tool_use", "name": "Write", "input": {"file_path": "/" + "d/" * 400 + f"f{n}.py", "content": ""}}
        for n in range(6_000)
    ]
    line = {"type": "assistant", "message": {"role": "assistant", "content": blocks}}
    path = write_transcript(tmp_path / "t.jsonl", user("Write the files"), line, tool("Bash", command="make"))
    done = hook(capture_event("precompact", project, path), project.path, timeout=HANG)
    assert (done.returncode, done.stderr) == (0, "")
    (only,) = checkpoints()
    assert only["task"] == "Write the files"


def test_a_realistic_20_mb_transcript_keeps_the_latest_files_commands_and_requests(
    project: Repo, tmp_path: Path
) -> None:
    bench = load_script("bench_capture")
    path = tmp_path / "claude-projects" / "t.jsonl"
    path.parent.mkdir()
    edited = bench.realistic_transcript(path, str(project.path), 20_000_000)
    assert path.stat().st_size > 20_000_000 and len(edited) > 40
    shown = captured_from(project, path)
    assert shown["task"].startswith("Turn 1: ")
    note = shown["note"]
    files = [line[2:] for line in note.split("Files edited, latest first:\n")[1].split("\n\n")[0].splitlines()]
    assert files == edited[::-1][:40], "the 40 files edited last, the latest first"
    turns = path.read_bytes().count(b'"content":"Turn ')
    assert f"Last request: Turn {turns}: " in note and turns > 200
    assert note.count("\n- `pytest tests/") == 20


def captured_from(repo: Repo, path: Path) -> dict[str, Any]:
    done = hook(capture_event("sessionend", repo, path), repo.path, timeout=HANG)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), done.stderr
    (only,) = checkpoints()
    return dict(run_cli("checkpoint", "show", only["record_id"], "--json").json())


def runtime_bytes() -> str:
    """Every file under MEMZOI_HOME (shared.db and its journal, index.db, session memory), as one text."""
    home = Path(os.environ["MEMZOI_HOME"])
    return "\n".join(p.read_bytes().decode("latin-1") for p in sorted(home.rglob("*")) if p.is_file())


def test_no_part_of_a_secret_reaches_any_runtime_file(project: Repo, tmp_path: Path) -> None:
    """A token in the session ID, the trigger, a long path, a request and a command: none of it is stored."""
    entries = (
        user("x" * 395 + " " + GITHUB),
        tool("Edit", file_path="src/" + "d/" * 600 + GITHUB + ".py", old_string="a", new_string="b"),
        tool("Bash", command="y" * 150 + " " + GITHUB[:20] + "\n" + GITHUB[20:]),
        tool("Write", file_path=str(project.path / "src" / "ok.py"), content=GITHUB),
    )
    path = write_transcript(tmp_path / "t.jsonl", *entries)
    data = json.loads(capture_event("precompact", project, path, session=GITHUB))
    data["trigger"] = "auto" + " " * 70 + GITHUB
    done = hook(json.dumps(data), project.path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), done.stderr
    (only,) = checkpoints()
    assert "- src/ok.py" in run_cli("checkpoint", "show", only["record_id"], "--json").json()["note"]
    assert hook(client_event("claude", "sessionstart", project.path, session_id=GITHUB), project.path).returncode == 0
    assert_kept_nothing_of(GITHUB, runtime_bytes(), run_cli("events", "--jsonl").stdout)
