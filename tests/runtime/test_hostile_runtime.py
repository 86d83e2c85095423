"""Hostile runtime input: odd file names, odd arguments and environment, a read-only or full home.

Each case gets a clear one-line message and a documented exit code, never an internal error (70).
Read-only and full homes are real tmpfs mounts (this needs root; elsewhere those tests skip).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from support import Repo, run_cli
from support.recall import add_record

FILE_NAME_MAX = os.pathconf("/", "PC_NAME_MAX") if hasattr(os, "pathconf") else 255


def one_line(text: str) -> str:
    """The single `git memzoi:` line of an error (plus at most a hint line)."""
    lines = [line for line in text.splitlines() if line]
    assert 1 <= len(lines) <= 2, text
    assert lines[0].startswith("git memzoi: ") and "internal error" not in lines[0], text
    return lines[0]


def age(root: Path) -> None:
    """Date every file and folder under `root` a minute back, so the index may trust their stats."""
    for path in [root, *root.rglob("*")]:
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns - 60_000_000_000))


@pytest.fixture
def records(repo: Repo) -> Repo:
    add_record(repo, "semantic/decisions/use-postgres", "use-postgres", title="Use Postgres", commit=True)
    return repo


# --- a file or folder name under records/ that is not UTF-8 ---------------------------------


def test_non_utf8_names_are_reported_and_skipped_by_every_recall_command(records: Repo) -> None:
    base = os.fsencode(records.path / ".memzoi" / "records" / "semantic")
    good = (records.path / ".memzoi/records/semantic/decisions/use-postgres.md").read_bytes()
    with open(base + b"/decisions/bad\xff.md", "wb") as handle:
        handle.write(good.replace(b"use-postgres", b"use-postgres-copy"))
    os.mkdir(base + b"/odd\xfe")
    with open(base + b"/odd\xfe/x.md", "wb") as handle:
        handle.write(good.replace(b"use-postgres", b"use-postgres-other"))

    for args in (
        ["search", "postgres"],
        ["context", "--task", "postgres"],
        ["handoff", "--task", "postgres"],
        ["precheck", "--path", "src/app.py"],
        ["export", "okf"],
        ["rebuild"],
        ["rebuild", "--full"],
    ):
        result = run_cli(*args, expect=0)
        assert "internal error" not in result.stderr
    report = run_cli("rebuild", "--json").json()
    assert {(p["path"], p["code"]) for p in report["problems"]} == {
        (".memzoi/records/semantic/decisions/bad\\xff.md", "path-encoding"),
        (".memzoi/records/semantic/odd\\xfe", "path-encoding"),
    }
    hits = run_cli("search", "postgres", "--json").json()["hits"]
    assert [hit["record_id"] for hit in hits] == ["use-postgres"]
    assert "bad" in run_cli("validate", expect=1).stdout


def test_non_utf8_names_do_not_break_the_mcp_server(records: Repo, tmp_path: Path) -> None:
    from support.mcp import run_async, server_params, session

    base = os.fsencode(records.path / ".memzoi" / "records" / "semantic" / "decisions")
    with open(base + b"/bad\xff.md", "wb") as handle:
        handle.write(b"not even a record")
    found = {}

    async def talk() -> None:
        async with session(server_params(records.path), tmp_path / "server.log") as client:
            found["search"] = await client.call_tool("search_memory", {"query": "postgres"})
            found["context"] = await client.call_tool("build_context_pack", {"task": "postgres"})

    run_async(talk)
    assert not found["search"].is_error and not found["context"].is_error
    assert [hit["record_id"] for hit in found["search"].structured_content["hits"]] == ["use-postgres"]


# --- arguments and environment out of range -----------------------------------------------


@pytest.mark.parametrize("command", [["apply"], ["reject", "--reason", "no"]])
def test_a_target_longer_than_a_file_name_is_a_usage_error(records: Repo, command: list[str]) -> None:
    target = "p" * (FILE_NAME_MAX + 20)
    result = run_cli(command[0], target, *command[1:], expect=2)
    assert "too long" in one_line(result.stderr)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "ten", "1e999"])
def test_lock_timeout_must_be_a_finite_number(records: Repo, value: str) -> None:
    result = run_cli("apply", "nothing-here", expect=2, env={"MEMZOI_LOCK_TIMEOUT": value})
    assert "MEMZOI_LOCK_TIMEOUT" in one_line(result.stderr)


@pytest.mark.parametrize(
    "args",
    [
        ["search", "postgres", "--limit", "99999999999999999999"],
        ["search", "postgres", "--limit", "1001"],
        ["search", "postgres", "--limit", "0"],
        ["context", "--task", "x", "--budget", "99999999999999999999"],
        ["context", "--task", "x", "--budget", "0"],
        ["events", "--since", "99999999999999999999"],
        ["events", "--limit", "99999999999999999999"],
    ],
)
def test_integer_options_out_of_range_are_usage_errors(records: Repo, args: list[str]) -> None:
    result = run_cli(*args, expect=2)
    assert "internal error" not in result.stderr
    assert "--limit" in result.stderr or "--budget" in result.stderr or "--since" in result.stderr


# --- a read-only or full MEMZOI_HOME (real tmpfs mounts) ---------------------------------


@pytest.fixture
def mounted(tmp_path: Path) -> Iterator[Path]:
    """An empty tmpfs of 512 KiB at a fresh folder, unmounted afterwards."""
    where = tmp_path / "mnt"
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(where)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=True)


def remount_read_only(where: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)


def test_read_only_home_answers_from_a_current_index_and_refuses_a_stale_one(
    records: Repo, mounted: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMZOI_HOME", str(mounted / "home"))
    age(records.path / ".memzoi")
    run_cli("rebuild")
    remount_read_only(mounted)

    hits = run_cli("search", "postgres", "--json").json()["hits"]
    assert [hit["record_id"] for hit in hits] == ["use-postgres"]
    run_cli("rebuild")  # nothing to do: proven current without writing

    add_record(records, "semantic/decisions/use-redis", "use-redis", title="Use Redis")
    for args in (["search", "redis"], ["context", "--task", "redis"], ["rebuild"]):
        line = one_line(run_cli(*args, expect=3).stderr)
        assert "Read-only file system" in line and "index.db" in line
    line = one_line(run_cli("local", "add", "--title", "t", "--body", "b", expect=3).stderr)
    assert "Read-only file system" in line


def test_full_home_says_no_space_not_restore_from_backup(
    records: Repo, mounted: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMZOI_HOME", str(mounted / "home"))
    run_cli("local", "add", "--title", "Before the disk filled", "--body", "b")
    fd = os.open(mounted / "filler", os.O_WRONLY | os.O_CREAT)
    try:  # fill every remaining block
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)
    add_record(records, "semantic/decisions/use-redis", "use-redis", title="Use Redis")
    for args in (
        ["search", "redis"],
        ["rebuild", "--full"],
        ["local", "add", "--title", "t", "--body", "b"],
        ["propose", "--type", "fact", "--title", "A fact", "--body", "It holds."],
    ):
        result = run_cli(*args, expect=3)
        one_line(result.stderr)
        assert "backup" not in result.stderr and "free some space" in result.stderr, (args, result.stderr)
    os.unlink(mounted / "filler")
    assert "Before the disk filled" in run_cli("local", "list").stdout


# --- shared.db fails closed for every command that touches it ---------------------------


def _populate(repo: Repo) -> dict[str, str]:
    """A real shared.db with an inbox proposal, a local record and a checkpoint; their IDs."""
    ids = {}
    ids["proposal"] = run_cli(
        "propose", "--type", "fact", "--title", "Builds use make", "--body", "Run make to build.", "--json"
    ).json()["id"]
    ids["local"] = run_cli("local", "add", "--title", "Private note", "--body", "b").stdout.strip()
    ids["checkpoint"] = run_cli("checkpoint", "add", "--task", "Port the build", "--note", "n").stdout.strip()
    for n in range(60):  # enough rows for several pages, so a corrupt page can sit in the middle
        run_cli("local", "add", "--title", f"Filler {n}", "--body", "x" * 400)
    return ids


def _commands(ids: dict[str, str]) -> list[list[str]]:
    return [
        ["propose", "--type", "fact", "--title", "Tests use pytest", "--body", "Run pytest."],
        ["proposals"],
        ["proposals", "show", ids["proposal"]],
        ["approve", ids["proposal"]],
        ["apply", ids["proposal"]],
        ["reject", ids["proposal"], "--reason", "no"],
        ["local", "add", "--title", "Another", "--body", "b"],
        ["local", "list"],
        ["local", "show", ids["local"]],
        ["local", "search", "note"],
        ["local", "forget", ids["local"]],
        ["local", "promote", ids["local"]],
        ["checkpoint", "add", "--task", "Another task", "--note", "n"],
        ["checkpoint", "list"],
        ["checkpoint", "show", ids["checkpoint"]],
        ["checkpoint", "continue", ids["checkpoint"]],
        ["checkpoint", "close", ids["checkpoint"]],
        ["retention", "extend", ids["local"], "--until", "2026-03-01T00:00:00Z", "--reason", "r"],
        ["events"],
        ["search", "build"],
        ["context", "--task", "build"],
        ["handoff", "--task", "build"],
        ["precheck", "--path", "Makefile"],
        ["rebuild"],
        ["rebuild", "--full"],
        ["export", "okf"],
    ]


def _corrupt_a_page(path: Path) -> None:
    """Overwrite the middle of a page of table data, as a bad disk block would."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.close()
    assert pages > 8
    with open(path, "r+b") as handle:
        handle.seek(page * (pages // 2) + 16)
        handle.write(b"\xa5" * (page - 32))


@pytest.mark.parametrize("damage", ["zero-length", "corrupt-page"])
def test_every_command_that_touches_shared_db_fails_closed(records: Repo, damage: str) -> None:
    from git_memzoi.runtime.workspace import Workspace

    ids = _populate(records)
    path = Workspace.open(records.path).layout.shared_db
    if damage == "zero-length":
        for extra in (Path(f"{path}-wal"), Path(f"{path}-shm")):
            extra.unlink(missing_ok=True)
        path.write_bytes(b"")
    else:
        _corrupt_a_page(path)
    before = path.read_bytes()
    tree = {p: p.read_bytes() for p in (records.path / ".memzoi").rglob("*") if p.is_file()}

    for args in _commands(ids):
        result = run_cli(*args, expect=None)
        assert result.code == 3, (args, result.code, result.stderr)
        assert "shared.db" in one_line(result.stderr), (args, result.stderr)
        assert path.read_bytes() == before, args
    assert {p: p.read_bytes() for p in (records.path / ".memzoi").rglob("*") if p.is_file()} == tree


def test_a_missing_shared_db_is_still_created_on_first_use(records: Repo) -> None:
    from git_memzoi.runtime.workspace import Workspace

    path = Workspace.open(records.path).layout.shared_db
    assert not path.exists()
    run_cli("local", "add", "--title", "First", "--body", "b")
    assert path.stat().st_size > 0


# --- a killed rebuild leaves no parse worker behind ---------------------------------------


def _children(pid: int) -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.mark.crash
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds worker processes through /proc")
def test_sigkill_of_a_full_rebuild_takes_its_parse_workers_with_it(records: Repo) -> None:
    import signal
    import time

    from git_memzoi.index.rows import PARALLEL_MIN
    from support import memzoi_exe
    from support.recall import record_text

    folder = records.path / ".memzoi" / "records" / "semantic" / "facts"
    folder.mkdir(parents=True)
    for n in range(PARALLEL_MIN * 4):
        (folder / f"fact-{n}.md").write_text(record_text(f"fact-{n}", type="fact", body="word " * 100))
    run_cli("rebuild")  # an index and a parse cache already there, as in everyday use
    for _ in range(2):  # where a worker hangs depends on timing: more than one kill makes it show
        proc = subprocess.Popen(
            [memzoi_exe(), "rebuild", "--full"], cwd=records.path, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        workers: set[int] = set()
        deadline = time.monotonic() + 60
        while not workers and proc.poll() is None and time.monotonic() < deadline:
            workers = _children(proc.pid)
        assert workers, "the rebuild never started parse workers"
        os.kill(proc.pid, signal.SIGKILL)
        # the caller's pipes reach EOF: nothing that inherited them is left running
        proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        deadline = time.monotonic() + 30
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [pid for pid in workers if _alive(pid)]


# --- a symlinked .memzoi (or records/) folder is refused, never followed ------------------


@pytest.mark.parametrize("linked", [".memzoi", ".memzoi/records"])
def test_a_symlinked_memory_folder_is_refused_not_followed(repo: Repo, tmp_path: Path, linked: str) -> None:
    from support import make_repo, memzoi_exe

    elsewhere = make_repo(tmp_path / "elsewhere")
    add_record(elsewhere, "semantic/decisions/use-outside", "use-outside", title="Outside the repository")
    target = elsewhere.path / linked
    real = repo.path / linked
    subprocess.run(["rm", "-rf", str(real)], check=True)
    real.symlink_to(target, target_is_directory=True)

    result = run_cli("validate", expect=1)
    assert f"{linked}:1: symlink:" in result.stdout and "use-outside" not in result.stdout
    for args in (
        ["search", "outside"],
        ["rebuild"],
        ["rebuild", "--full"],
        ["context", "--task", "outside"],
        ["handoff", "--task", "outside"],
        ["precheck", "--path", "src"],
        ["export", "okf"],
    ):
        result = run_cli(*args, expect=1)
        assert f"{linked} is a symlink" in one_line(result.stderr) and "Outside the repository" not in result.stdout
    done = subprocess.run(
        [memzoi_exe(), "mcp", "serve", "--repo", str(repo.path)], capture_output=True, text=True, input="", timeout=60
    )
    assert done.returncode == 1 and f"{linked} is a symlink" in done.stderr and done.stdout == ""

    # committed as a symlink, the tree at a revision is refused too
    repo.commit("link memory from elsewhere")
    assert f"{linked}:1: symlink:" in run_cli("validate", "--rev", "HEAD", expect=1).stdout


def test_an_index_built_before_the_folder_became_a_symlink_is_not_served(records: Repo, tmp_path: Path) -> None:
    age(records.path / ".memzoi")
    run_cli("rebuild")
    moved = tmp_path / "moved"
    os.rename(records.path / ".memzoi", moved)  # same folder, same inode and mtime: only lstat tells
    (records.path / ".memzoi").symlink_to(moved, target_is_directory=True)
    assert ".memzoi is a symlink" in one_line(run_cli("search", "postgres", expect=1).stderr)
