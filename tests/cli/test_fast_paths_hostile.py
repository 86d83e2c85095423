"""The command lines answered before click, against click's own command, on hostile inputs.

cli.entry answers `--version`, `-h`, `hook pre-commit|pre-push|pre-receive|update|check`, `import
--json` and `agent hook CLIENT` without click. Each case here runs the same argv through the
console script and through cli.main.main (click), each with its own copy of MEMZOI_HOME, and
asserts the same stdout, stderr and exit code, and the exit code the README lists.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from git_memzoi.layout import MAX_FILE_BYTES
from support import git, memzoi_exe
from support.hooks import Remote

CLICK = "import sys; from git_memzoi.cli.main import main; main(sys.argv[1:])"
ZERO = "0" * 40
#: Runs "$@" with the named standard streams closed (`>&-`), as a shell or a daemon may start a hook.
CLOSING = {"stdin": 'exec "$@" <&-', "stdout": 'exec "$@" >&-', "stderr": 'exec "$@" 2>&-'}


def _run_both(
    args: list[str], cwd: Path, *, stdin: bytes = b"", env: dict[str, str] | None = None, closed: str = ""
) -> tuple[list[object], list[object]]:
    """(fast, click): [exit code, stdout, stderr] of `git memzoi ARGS` through cli.entry and through click."""
    answers = []
    for side, command in (("fast", [memzoi_exe()]), ("click", [sys.executable, "-c", CLICK])):
        home = cwd.parent / f"home-{side}"
        shutil.rmtree(home, ignore_errors=True)
        if os.path.isdir(os.environ["MEMZOI_HOME"]):
            shutil.copytree(os.environ["MEMZOI_HOME"], home)
        full = ["sh", "-c", CLOSING[closed], "sh", *command, *args] if closed else [*command, *args]
        done = subprocess.run(
            full,
            cwd=cwd,
            input=None if closed == "stdin" else stdin,
            capture_output=closed != "stdin",
            stdout=subprocess.PIPE if closed == "stdin" else None,
            stderr=subprocess.PIPE if closed == "stdin" else None,
            env={**os.environ, **(env or {}), "MEMZOI_HOME": str(home)},
            timeout=120,
        )
        answers.append([done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")])
    return answers[0], answers[1]


def _same(args: list[str], cwd: Path, **kwargs: object) -> list[object]:
    fast, slow = _run_both(args, cwd, **kwargs)  # type: ignore[arg-type]
    assert fast == slow, args
    return fast


def _oversized(remote: Remote) -> None:
    """Commit a .memzoi/ file over the size limit in the clone (sparse), without the client hooks."""
    path = remote.work.path / ".memzoi/records/project/zeros.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)
    git("add", ".memzoi/records/project/zeros.md", cwd=remote.work.path)
    git("commit", "-q", "--no-verify", "-m", "zeros", cwd=remote.work.path)


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (["--version"], 0),
        (["-h"], 0),
        (["hook", "check", "main..main"], 0),
        (["hook", "check", "main..main", "--json"], 0),
        (["hook", "pre-commit", "--json"], 0),
        (["import", "--json"], 0),
        (["search", "memory"], 0),
        (["search", "--json", "memory"], 0),
    ],
    ids=["version", "help", "check", "check-json", "pre-commit-json", "import-json", "search", "search-json"],
)
def test_a_closed_stdout_is_dev_null_not_a_traceback(remote: Remote, args: list[str], code: int) -> None:
    """`>&-`: Python's sys.stdout is None; git opens /dev/null there, and so do both front ends (it was a
    traceback and exit 1, a "no" the check never gave, even for a command that prints nothing on stdout)."""
    exit_code, stdout, stderr = _same(args, remote.work.path, closed="stdout")
    assert exit_code == code and stdout == "" and "Traceback" not in str(stderr), stderr


def test_a_closed_stdout_keeps_the_gates_no(remote: Remote) -> None:
    _oversized(remote)
    for extra in ([], ["--json"]):
        code, _, stderr = _same(["hook", "check", "main~1..main", *extra], remote.work.path, closed="stdout")
        assert code == 1 and "Traceback" not in str(stderr)
        assert ("file-too-large" in str(stderr)) is not bool(extra)


@pytest.mark.parametrize(
    ("args", "where", "stderr"),
    [
        (["hook", "pre-receive"], "bare", ""),
        (["hook", "pre-receive", "--json"], "bare", ""),
        (["hook", "pre-push", "origin", "url"], "work", ""),
        (["agent", "hook", "claude"], "work", "git memzoi: agent hook claude: hook input is not JSON"),
    ],
    ids=["pre-receive", "pre-receive-json", "pre-push", "agent-hook"],
)
def test_a_closed_stdin_reads_as_empty(remote: Remote, args: list[str], where: str, stderr: str) -> None:
    """`<&-`: no ref lines, no event (it was exit 70 through click, a traceback and 1 before it)."""
    code, stdout, err = _same(args, remote.bare if where == "bare" else remote.work.path, closed="stdin")
    assert code == 0 and "Traceback" not in str(err) and "internal error" not in str(err), err
    assert str(err).startswith(stderr) and (stderr or err == "")
    if "--json" in args:
        assert json.loads(str(stdout))["ok"] is True


def test_a_closed_stderr_keeps_the_exit_code(remote: Remote) -> None:
    code, stdout, stderr = _same(["hook", "check", "nothing..main"], remote.work.path, closed="stderr")
    assert code == 2 and stdout == "" and stderr == ""


@pytest.mark.parametrize("value", ["perhaps", "yes please", "2"])
def test_any_memzoi_debug_is_debug_not_a_usage_error(remote: Remote, value: str) -> None:
    """MEMZOI_DEBUG "set (not 0)" turns tracebacks on, as the man page says: click refused a value that is
    not one of its booleans with exit 2 (which blocks Claude Code's tool call), the fast paths did not."""
    env = {"MEMZOI_DEBUG": value}
    event = json.dumps({"hook_event_name": "PreToolUse", "cwd": str(remote.work.path), "tool_name": "Edit"})
    code, _, stderr = _same(["agent", "hook", "claude"], remote.work.path, stdin=event.encode(), env=env)
    assert code == 0 and "Usage:" not in str(stderr)
    assert _same(["import", "--json"], remote.work.path, env=env)[0] == 0
    assert _same(["hook", "pre-commit"], remote.work.path, env=env)[0] == 0
    assert _same(["hook", "pre-receive"], remote.bare, env=env) == [0, "", ""]
    assert _same(["status"], remote.work.path, env=env)[0] == 0
    # and it is debug: an unexpected failure prints its traceback in either
    damaged = "abcdef0123456789abcdef0123456789abcdef01"  # a loose object that is not zlib data
    (remote.bare / "objects" / damaged[:2]).mkdir(exist_ok=True)
    (remote.bare / "objects" / damaged[:2] / damaged[2:]).write_bytes(b"garbage")
    for answer in _run_both(["hook", "update", "refs/heads/x", ZERO, damaged], remote.bare, env=env):
        assert answer[0] == 70 and str(answer[2]).startswith("Traceback (most recent call last):")


def _interrupted(command: list[str], cwd: Path, home: Path) -> list[object]:
    """Start `command` with a stdin that never ends, wait until it blocks reading (stdin or a FIFO), press Ctrl-C."""
    # As a terminal's foreground job gets it: SIGINT at its default, even when the suite itself runs where it is
    # ignored (`nohup scripts/test.sh &` from a script), which the program would inherit and rightly keep.
    proc = subprocess.Popen(
        command, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "MEMZOI_HOME": str(home)}, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    try:
        wchan = Path(f"/proc/{proc.pid}/wchan")
        deadline = time.monotonic() + 60
        # the kernel's names differ by version: pipe_read, anon_pipe_read, pipe_wait, wait_for_partner (a FIFO's open)
        while not any(word in wchan.read_text() for word in ("pipe", "fifo", "partner")):
            assert proc.poll() is None and time.monotonic() < deadline, "it never blocked"
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=60)
    finally:  # a failed run leaves no process blocked on the FIFO behind it
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return [proc.returncode, stdout.decode(), stderr.decode()]


@pytest.mark.skipif(not Path("/proc/self/wchan").exists(), reason="needs Linux's /proc/PID/wchan")
@pytest.mark.parametrize(
    ("args", "where"),
    [
        (["agent", "hook", "claude"], "work"),
        (["hook", "pre-push", "origin", "url"], "work"),
        (["hook", "pre-receive"], "bare"),
        (["import", "--json"], "fifo-index"),
    ],
    ids=["agent-hook", "pre-push", "pre-receive", "import-json"],
)
def test_ctrl_c_is_the_aborted_line_and_130(remote: Remote, tmp_path: Path, args: list[str], where: str) -> None:
    """Ctrl-C while a fast path waits: `git memzoi: aborted` after an empty line, 130, as click's run says it
    (it was a traceback, or for `import --json` 130 and nothing)."""
    cwd = remote.bare if where == "bare" else remote.work.path
    if where == "fifo-index":  # the plan reads the index: a FIFO there holds it until the signal
        index = remote.work.path / ".git" / "index"
        index.unlink()
        os.mkfifo(index)
    answers = [
        _interrupted([*command, *args], cwd, tmp_path / f"home-{i}")
        for i, command in enumerate(([memzoi_exe()], [sys.executable, "-c", CLICK]))
    ]
    assert answers[0] == answers[1] == [130, "", "\ngit memzoi: aborted\n"]


@pytest.mark.parametrize("kind", ["fifo", "folder"])
@pytest.mark.parametrize("args", [["import", "--json"], ["import"]], ids=["json", "text"])
def test_a_source_that_is_no_regular_file_is_refused_not_waited_on(remote: Remote, kind: str, args: list[str]) -> None:
    """A FIFO where git tracks AGENTS.md held `import` (and every agent's `import --json`) until someone wrote
    to it; now the open does not wait, and the source is refused by what it is: one line, exit 1."""
    agents = remote.work.path / "AGENTS.md"
    agents.write_text("# Rules\n\n- Use pnpm, never npm.\n")
    git("add", "AGENTS.md", cwd=remote.work.path)
    agents.unlink()
    os.mkfifo(agents) if kind == "fifo" else agents.mkdir()
    code, stdout, stderr = _same(args, remote.work.path)
    assert code == 1 and stdout == "" and "Traceback" not in str(stderr)
    assert str(stderr).startswith("git memzoi: AGENTS.md: import-unreadable: cannot read: ")


@pytest.mark.parametrize(
    ("args", "where"),
    [
        (["hook", "pre-receive"], "bare"),
        (["hook", "update", "refs/heads/main", ZERO, ZERO], "bare"),
        (["hook", "check", "main..main", "--json"], "work"),
        (["import", "--json"], "work"),
        (["status"], "work"),
        (["search", "memory", "--json"], "work"),
    ],
    ids=["pre-receive", "update", "check", "import-json", "status", "search"],
)
def test_a_git_dir_that_names_no_repository_is_128_as_git_says(remote: Remote, args: list[str], where: str) -> None:
    """GIT_DIR=/nowhere: git says `not a git repository` and exits 128; both front ends said
    `cannot open the git repository` with 70, the code of a bug."""
    nowhere = remote.work.path.parent / "nowhere"
    cwd = remote.bare if where == "bare" else remote.work.path
    code, stdout, stderr = _same(
        args, cwd, stdin=f"{ZERO} {ZERO} refs/heads/x\n".encode(), env={"GIT_DIR": str(nowhere)}
    )
    assert code == 128 and stdout == ""
    assert str(stderr).startswith(f"git memzoi: not a git repository: {nowhere} (GIT_DIR)\n"), stderr


@pytest.mark.parametrize(
    "args",
    [
        ["rebuild"],
        ["rebuild", "--strict"],
        ["local", "add", "--type", "fact", "--title", "T", "--body", "B"],
        ["search", "memory"],
        ["search", "memory", "--json"],
    ],
)
def test_a_memzoi_home_that_is_a_file_is_runtime_state_3_not_a_bug(
    remote: Remote, tmp_path: Path, args: list[str]
) -> None:
    """MEMZOI_HOME a file (or a file where one of its folders goes): exit 3 and a hint, as the README lists
    for runtime state that cannot be written; it was `internal error: NotADirectoryError` and 70."""
    home = tmp_path / "home-file"
    home.write_text("not a folder\n")
    answers = [
        subprocess.run(
            [*command, *args], cwd=remote.work.path, capture_output=True, text=True,
            env={**os.environ, "MEMZOI_HOME": str(home)}, timeout=120,
        )
        for command in ([memzoi_exe()], [sys.executable, "-c", CLICK])
    ]  # fmt: skip
    fast, slow = ([a.returncode, a.stdout, a.stderr] for a in answers)
    assert fast == slow
    assert fast[0] == 3 and "internal error" not in fast[2], fast[2]
    assert fast[2].endswith("hint: a file stands where MEMZOI_HOME keeps a folder: move it aside, or point MEMZOI_HOME "
                            "at a folder; the files under .memzoi/ are unaffected\n")  # fmt: skip


FAST_WRITERS = [
    ["--version"],
    ["-h"],
    ["import", "--json"],
    ["hook", "pre-commit", "--json"],
    ["search", "--json", "x"],
]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("args", FAST_WRITERS, ids=lambda a: " ".join(a))
def test_stdout_on_a_full_disk_is_3_and_one_line(remote: Remote, args: list[str]) -> None:
    """A write to stdout that fails (ENOSPC) was a traceback and exit 1 in the fast paths, click's NoSpace and 3."""
    answers = []
    for side, command in (("fast", [memzoi_exe()]), ("click", [sys.executable, "-c", CLICK])):
        home = remote.work.path.parent / f"home-{side}"  # each its own copy: a NoSpace drops derived caches
        if os.path.isdir(os.environ["MEMZOI_HOME"]):
            shutil.copytree(os.environ["MEMZOI_HOME"], home)
        with open("/dev/full", "wb") as full:
            done = subprocess.run(
                [*command, *args], cwd=remote.work.path, stdout=full, stderr=subprocess.PIPE, text=True,
                env={**os.environ, "MEMZOI_HOME": str(home)}, timeout=120,
            )  # fmt: skip
        answers.append([done.returncode, done.stderr])
    assert answers[0] == answers[1]
    assert answers[0][0] == 3 and answers[0][1].startswith("git memzoi: No space left on device\nhint: free some space")


@pytest.mark.parametrize("args", FAST_WRITERS, ids=lambda a: " ".join(a))
def test_a_reader_that_stops_early_ends_it_by_sigpipe(remote: Remote, args: list[str]) -> None:
    """`| head -c0`: SIGPIPE, quietly, as click's run (which restores its default); it was a traceback and 1."""
    answers = []
    for command in ([memzoi_exe()], [sys.executable, "-c", CLICK]):
        read, write = os.pipe()
        os.close(read)  # the reader is gone before anything is written
        done = subprocess.run(
            [*command, *args], cwd=remote.work.path, stdout=write, stderr=subprocess.PIPE, timeout=120
        )
        os.close(write)
        answers.append([done.returncode, done.stderr])
    assert answers[0] == answers[1] == [-signal.SIGPIPE, b""]


@pytest.mark.parametrize(
    "args",
    [
        ["search", "otters"],
        ["search", "otters", "--json"],
        ["search", "--json", "evidence", "otters"],
        ["search", "nothing-matches-this"],
        ["search", "\x1b]0;title\x07", "otters"],
        ["search", "otters", "--json", "--json"],
        ["search", "otters", "--limit", "1"],
    ],
    ids=["text", "json", "json-first", "no-hits", "escape-in-query", "json-twice", "an-option"],
)
def test_search_before_click_writes_what_the_command_writes(remote: Remote, args: list[str]) -> None:
    """`search WORDS… [--json]` is answered before click (cli.search_quick): the same bytes, for hits, for
    none, for a query holding terminal codes; any other argv goes to click, which says the same as before."""
    from support.recall import record_text

    work = remote.work.path
    for n, title in enumerate(["Otters — ünïcode title", "Plain otters", "More otters, here"]):
        body = f"Evidence about otters number {n}, in `src/otters_{n}.py`."
        path = work / f".memzoi/records/semantic/decisions/otters-{n}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(record_text(f"otters-{n}", title=title, body=body), encoding="utf-8")
    git("add", ".memzoi", cwd=work)
    git("commit", "-q", "--no-verify", "-m", "otters", cwd=work)
    code, stdout, stderr = _same(args, work)
    if "--limit" in args or args.count("--json") > 1:
        return  # click's answer, both ways
    assert code == 0 and "\x1b" not in str(stdout) + str(stderr)
    if "nothing-matches-this" in args:
        assert stdout == "" and stderr == "no matching records\n"
    elif "--json" in args:
        assert len(json.loads(str(stdout))["hits"]) == 3
    else:
        assert str(stdout).count("id: otters-") == 3 and "ünïcode" in str(stdout)
