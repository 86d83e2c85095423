"""The server's gate before click (cli.gate): what git push shows, byte for byte as click's command, and its imports.

Each push runs a hook that feeds the same ref lines to `git-memzoi hook NAME` (cli.entry, which
answers it without click) and to cli.main.main (click's command), each with its own copy of
MEMZOI_HOME, and records both answers: stdout, stderr and exit code must be equal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from git_memzoi.layout import MAX_FILE_BYTES
from support import git, memzoi_exe, run_importtime, teardown_probe_env
from support.hooks import Remote, make_remote, record, record_path

CLICK = "import sys; from git_memzoi.cli.main import main; main(sys.argv[1:])"
ZERO = "0" * 40

#: A hook that runs both front ends on what git gives it, keeps both answers, and answers as the fast one.
TWIN_HOOK = """#!{python}
import json, os, shutil, subprocess, sys, tempfile
name = os.path.basename(sys.argv[0])
stdin = sys.stdin.buffer.read()
extra = {extra!r}
answers = {{}}
with tempfile.TemporaryDirectory() as scratch:
    for side, command in (("fast", [{exe!r}]), ("click", [sys.executable, "-c", {click!r}])):
        home = os.path.join(scratch, side)
        if os.path.isdir(os.environ["MEMZOI_HOME"]):
            shutil.copytree(os.environ["MEMZOI_HOME"], home)
        done = subprocess.run(
            [*command, "hook", name, *sys.argv[1:], *extra], input=stdin, capture_output=True,
            env={{**os.environ, "MEMZOI_HOME": home}},
        )
        answers[side] = [done.returncode, done.stdout.decode("latin-1"), done.stderr.decode("latin-1")]
with open({out!r}, "a") as handle:
    handle.write(json.dumps(answers) + "\\n")
sys.stdout.buffer.write(answers["fast"][1].encode("latin-1"))
sys.stderr.buffer.write(answers["fast"][2].encode("latin-1"))
sys.exit(answers["fast"][0])
"""


def _twin(remote: Remote, hook: str, out: Path, extra: tuple[str, ...] = ()) -> None:
    path = remote.bare / "hooks" / hook
    path.write_text(
        TWIN_HOOK.format(python=sys.executable, extra=list(extra), exe=memzoi_exe(), click=CLICK, out=str(out))
    )
    path.chmod(0o755)


def _answers(out: Path) -> list[dict[str, list[object]]]:
    return [json.loads(line) for line in out.read_text().splitlines()]


def _same(out: Path) -> list[object]:
    """The one answer both front ends gave at the last push (code, stdout, stderr)."""
    last = _answers(out)[-1]
    assert last["fast"] == last["click"]
    return last["fast"]


@pytest.mark.parametrize("extra", [(), ("--json",)], ids=["text", "json"])
def test_pre_receive_answers_as_click_does(remote: Remote, tmp_path: Path, extra: tuple[str, ...]) -> None:
    out = tmp_path / "answers.jsonl"
    _twin(remote, "pre-receive", out, extra)
    remote.commit({record_path("use-redis"): record("use-redis")}, "add use-redis")
    remote.accepted()
    code, stdout, stderr = _same(out)
    assert code == 0
    if extra:
        assert json.loads(str(stdout))["ok"] is True and stderr == ""
    else:
        assert stdout == "" and stderr == "git memzoi: 1 change to .memzoi/ checked: memory OK\n"

    remote.commit_zeros(".memzoi/records/project/zeros.md", MAX_FILE_BYTES + 1)
    remote.rejected("pre-receive hook declined")
    code, stdout, stderr = _same(out)
    assert code == 1
    if extra:
        [problem] = json.loads(str(stdout))["problems"]
        assert problem["code"] == "file-too-large" and stderr == ""
    else:
        assert "zeros.md:1: file-too-large:" in str(stderr) and stdout == ""
        assert str(stderr).endswith("git memzoi: push rejected: 1 problem in 1 of 1 change to .memzoi/\n")


def test_update_answers_as_click_does(remote: Remote, tmp_path: Path) -> None:
    out = tmp_path / "answers.jsonl"
    (remote.bare / "hooks" / "pre-receive").unlink()
    _twin(remote, "update", out)
    remote.commit({record_path("use-redis"): record("use-redis")}, "add use-redis")
    remote.accepted()
    assert _same(out) == [0, "", "git memzoi: 1 change to .memzoi/ checked: memory OK\n"]
    remote.commit({record_path("use-postgres"): record("use-postgres", "Edited in place")}, "edit")
    remote.rejected("hook declined")
    code, _, stderr = _same(out)
    assert code == 1 and "record-edited" in str(stderr) and "hint: change a record through" in str(stderr)


def test_control_characters_in_a_path_or_a_summary_reach_no_terminal(remote: Remote, tmp_path: Path) -> None:
    """A file name or commit message holding ESC, CR or a newline is printed escaped, the same by both front ends
    (click.echo would strip only an escape sequence, and only when stderr is no terminal)."""
    out = tmp_path / "answers.jsonl"
    _twin(remote, "pre-receive", out)
    name = ".memzoi/records/project/\x1b[31mred\x1b[0m\rok\nx.md"
    remote.commit({name: "not a record\n"}, "title \x1b]0;owned\x07 \x9b31m")
    remote.rejected("pre-receive hook declined")
    code, _, stderr = _same(out)
    assert code == 1
    assert "\\x1b[31mred\\x1b[0m\\rok\\nx.md:1:" in str(stderr)
    assert "(title \\x1b]0;owned\\x07 \\x9b31m):" in str(stderr)
    assert not any(ch in str(stderr).replace("\n", "") for ch in "\x1b\r\x07\x9b")


def _both(args: list[str], cwd: Path, stdin: str = "", env: dict[str, str] | None = None) -> list[object]:
    """Run `git memzoi ARGS` through cli.entry and through click; assert they answer alike; the answer."""
    answers = [
        subprocess.run(command + args, cwd=cwd, input=stdin, capture_output=True, text=True, env=env)
        for command in ([memzoi_exe()], [sys.executable, "-c", CLICK])
    ]
    fast, slow = ([a.returncode, a.stdout, a.stderr] for a in answers)
    assert fast == slow, args
    return fast


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("main\n", "git memzoi: hook input line 1: expected '<old> <new> <ref>', got 'main'\n"),
        (f"{ZERO} xyz refs/heads/main\n", "git memzoi: hook input line 1: new 'xyz' is not an object name\n"),
        (f"\n{ZERO} {ZERO}\x1b[2J refs/heads/x\n", "git memzoi: hook input line 2: new '"),
    ],
    ids=["short", "not-hex", "escape"],
)
def test_a_malformed_ref_line_is_a_usage_error_in_either(remote: Remote, line: str, message: str) -> None:
    for extra in ([], ["--json"]):
        code, stdout, stderr = _both(["hook", "pre-receive", *extra], remote.bare, line)
        assert code == 2 and stdout == "" and str(stderr).startswith(message) and "\x1b" not in str(stderr)


def test_outside_a_repository_both_exit_128(tmp_path: Path) -> None:
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(tmp_path)}
    lone = tmp_path / "lone"
    lone.mkdir()
    for args in (["hook", "pre-receive"], ["hook", "check", "a..b", "--json"], ["hook", "update", "r", ZERO, ZERO]):
        code, stdout, stderr = _both(args, lone, f"{ZERO} {ZERO} refs/heads/main\n", env)
        assert code == 128 and stdout == "" and str(stderr).startswith("git memzoi: "), stderr


def test_check_range_answers_as_click_does(remote: Remote) -> None:
    work = remote.work.path
    remote.commit({record_path("use-redis"): record("use-redis")}, "add use-redis")
    assert _both(["hook", "check", "main~1..main"], work)[:2] == [0, ""]
    remote.commit_zeros(".memzoi/records/project/zeros.md", MAX_FILE_BYTES + 1)
    code, stdout, stderr = _both(["hook", "check", "main~1..main"], work)
    assert code == 1 and "file-too-large" in str(stderr) and "range rejected" in str(stderr)
    code, stdout, _ = _both(["hook", "check", "main~1..main", "--json"], work)
    assert code == 1 and json.loads(str(stdout))["ok"] is False
    code, _, stderr = _both(["hook", "check", "..main"], work)
    assert code == 2 and "has an empty side" in str(stderr)


def test_an_unexpected_failure_is_the_same_line_and_70(remote: Remote) -> None:
    """NEW names a loose object that is not zlib data (a damaged repository): the failure libgit2 raises is
    reported as click's run reports it."""
    damaged = "abcdef0123456789abcdef0123456789abcdef01"
    (remote.bare / "objects" / damaged[:2]).mkdir(exist_ok=True)
    (remote.bare / "objects" / damaged[:2] / damaged[2:]).write_bytes(b"garbage")
    args = ["hook", "update", "refs/heads/x", ZERO, damaged]
    code, stdout, stderr = _both(args, remote.bare)
    assert code == 70 and stdout == ""
    assert stderr == (
        f"git memzoi: internal error: GitError: {damaged}: failed to inflate loose object\n"
        "hint: rerun with --debug for a traceback\n"
    )
    env = {**os.environ, "MEMZOI_DEBUG": "1"}
    answers = [
        subprocess.run([*command, *args], cwd=remote.bare, capture_output=True, text=True, env=env)
        for command in ([memzoi_exe()], [sys.executable, "-c", CLICK])
    ]
    for done in answers:  # the tracebacks differ in their frames; both end in the same two lines
        assert done.returncode == 70 and done.stderr.startswith("Traceback (most recent call last):")
        assert done.stderr.endswith(stderr.split("\n", 1)[1]) and stderr.split("\n")[0] in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["refs/heads/main", f"{ZERO} HEAD", "refs/heads/x"], "git memzoi: hook update: OLD '0000"),
        (["refs/heads/a\nrefs/heads/b", ZERO, ZERO], "git memzoi: hook update: REF 'refs/heads/a\\nrefs/heads/b'"),
        (["refs/heads/a b", ZERO, ZERO], "git memzoi: hook update: REF 'refs/heads/a b' is not a ref name"),
        (["", ZERO, ZERO], "git memzoi: hook update: REF '' is not a ref name"),
        (["refs/heads/x", ZERO, "HEAD"], "git memzoi: hook update: NEW 'HEAD' is not an object name"),
    ],
    ids=["old-with-a-space", "ref-with-a-newline", "ref-with-a-space", "empty-ref", "new-not-hex"],
)
def test_update_takes_each_argument_as_itself(remote: Remote, args: list[str], message: str) -> None:
    """REF OLD NEW were joined into one `OLD NEW REF` line and read again: an OLD holding a space shifted NEW
    into the ref name (main's push checked as another ref, exit 0), a REF holding a newline was a crash (70)."""
    if "HEAD" in args[1]:
        head = git("rev-parse", "HEAD", cwd=remote.bare).stdout.strip()
        args = [args[0], args[1].replace("HEAD", head), args[2]]
    code, stdout, stderr = _both(["hook", "update", *args], remote.bare)
    assert code == 2 and stdout == "" and str(stderr).startswith(message), stderr


def test_anything_else_goes_to_click(remote: Remote) -> None:
    """--help, --debug, an option among the arguments: click's answers."""
    code, stdout, _ = _both(["hook", "pre-receive", "--help"], remote.bare)
    assert code == 0 and "Usage: git memzoi hook pre-receive [OPTIONS]" in str(stdout)
    code, _, stderr = _both(["hook", "check", "--bogus", "a..b"], remote.work.path)
    assert code == 2 and "No such option '--bogus'" in str(stderr)


@pytest.mark.parametrize("what", ["oversized", "code-only"])
@pytest.mark.parametrize("extra", [(), ("--json",)], ids=["text", "json"])
def test_a_push_refused_by_size_or_leaving_memory_alone_loads_neither_click_nor_yaml(
    remote: Remote, what: str, extra: tuple[str, ...]
) -> None:
    """What the server does on most pushes: decide without click, PyYAML or pydantic (the parent's tree is kept)."""
    old = remote.refs()["refs/heads/main"]
    if what == "oversized":
        new = remote.commit_zeros(".memzoi/records/project/zeros.md", 2 * MAX_FILE_BYTES)
    else:
        new = remote.commit({"src/app.py": "print('hi')\n"}, "code")
    remote.deliver(new)
    proc, modules = run_importtime(["hook", "pre-receive", *extra], remote.bare, f"{old} {new} refs/heads/main\n")
    assert proc.returncode == (1 if what == "oversized" else 0), proc.stderr[-2000:]
    assert "git_memzoi.cli.gate" in modules and "git_memzoi.hooks.run" in modules  # the check itself ran
    heavy = sorted(m for m in modules if m.split(".")[0] in ("click", "yaml", "pydantic", "pydantic_core"))
    assert heavy == [], heavy[:5]
    if what == "oversized":
        assert "file-too-large" in (proc.stdout if extra else proc.stderr)


def test_a_fresh_remote_makes_the_twin_hook_meaningful(tmp_path: Path) -> None:
    """The twin hook sees the first push of a new remote too (validated from nothing, then kept)."""
    remote = make_remote(tmp_path)
    out = tmp_path / "answers.jsonl"
    _twin(remote, "pre-receive", out, ("--json",))
    remote.accepted()
    code, stdout, stderr = _same(out)
    assert code == 0 and stderr == "" and json.loads(str(stdout))["trees_validated"] >= 1


def test_an_ascii_stderr_gets_utf_8_as_click_writes_it(remote: Remote) -> None:
    """Under PYTHONIOENCODING=ascii click rewraps stderr as UTF-8; the gate writes the same bytes."""
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    answers = [
        subprocess.run(
            [*command, "hook", "check", "caf\u00e9..main"], cwd=remote.work.path, capture_output=True, env=env
        )
        for command in ([memzoi_exe()], [sys.executable, "-c", CLICK])
    ]
    fast, slow = ([a.returncode, a.stdout, a.stderr] for a in answers)
    assert fast == slow
    assert fast[0] == 2 and "unknown object 'caf\u00e9'".encode() in fast[2]  # UTF-8, not \\xe9


def test_a_gate_gives_its_whole_answer_and_skips_the_teardown(remote: Remote, tmp_path: Path) -> None:
    """Its answer flushed first, a gate process ends without freeing its modules; a coverage run
    (an exit handler registered) or another command still tears down."""
    work = remote.work.path
    remote.commit({record_path(f"r{n:03d}"): record(f"r{n:03d}") for n in range(60)}, "records")
    remote.commit({record_path(f"r{n:03d}"): record(f"r{n:03d}") + "edited\n" for n in range(60)}, "edits")
    env = teardown_probe_env(tmp_path / "probe")
    gate = subprocess.run(
        [memzoi_exe(), "hook", "check", "main~1..main", "--json"], cwd=work, env=env, capture_output=True, text=True
    )
    assert gate.returncode == 1, gate.stderr
    report = json.loads(gate.stdout)  # all of it, though the process skipped its teardown
    assert [p["code"] for p in report["problems"]] == ["record-edited"] * 60
    assert "teardown" not in gate.stderr
    early = subprocess.run([memzoi_exe(), "hook", "pre-commit"], cwd=work, env=env, capture_output=True, text=True)
    assert early.returncode == 0 and "teardown" not in early.stderr  # pre-commit's early exit: nothing staged
    plain = subprocess.run([memzoi_exe(), "--version"], cwd=work, env=env, capture_output=True, text=True)
    assert plain.returncode == 0 and "teardown" in plain.stderr  # the probe works
    env = teardown_probe_env(tmp_path / "handler", "import atexit\natexit.register(lambda: None)\n")
    held = subprocess.run(
        [memzoi_exe(), "hook", "check", "main~1..main"], cwd=work, env=env, capture_output=True, text=True
    )
    assert held.returncode == 1 and "teardown" in held.stderr


def test_a_pre_push_that_touches_memory_is_answered_without_click_as_click_does(remote: Remote) -> None:
    """The commits the remote lacks, planned once by git's plumbing, then checked; the same bytes as click's."""
    work = remote.work.path
    old = git("rev-parse", "HEAD", cwd=work).stdout.strip()
    remote.commit({record_path("use-redis"): record("use-redis")}, "add use-redis")
    good = git("rev-parse", "HEAD", cwd=work).stdout.strip()
    remote.commit({record_path("use-redis"): record("use-redis") + "edited\n"}, "edit it")
    bad = git("rev-parse", "HEAD", cwd=work).stdout.strip()
    for tip, want in ((good, 0), (bad, 1)):
        lines = f"refs/heads/main {tip} refs/heads/main {old}\n"
        code, _, stderr = _both(["hook", "pre-push", "origin", str(remote.bare)], work, lines)
        assert code == want and ("record-edited" in str(stderr)) == bool(want), stderr
        code, stdout, _ = _both(["hook", "pre-push", "origin", str(remote.bare), "--json"], work, lines)
        assert code == want and json.loads(str(stdout))["ok"] is not bool(want)
        done, modules = run_importtime(["hook", "pre-push", "origin", str(remote.bare)], work, input=lines)
        assert done.returncode == want and "click" not in modules and "git_memzoi.hooks.checks" in modules
