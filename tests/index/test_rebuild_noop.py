"""A no-op `git memzoi rebuild` is answered before click (cli.entry, index.staleness.unchanged).

Each test runs the installed program and click's command on the same state and compares what
they print; the answer before click must be the command's, word for word, or no answer at all.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from git_memzoi.runtime.workspace import Workspace
from support import Repo, age, imported, memzoi_exe, run_cli, teardown_probe_env


def program(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`git-memzoi ARGS` as installed: cli.entry first."""
    return subprocess.run([memzoi_exe(), *args], cwd=cwd, capture_output=True, text=True)


def command(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The click command alone, in a process of its own."""
    return subprocess.run(
        [sys.executable, "-c", "import sys; from git_memzoi.cli.main import main; main(sys.argv[1:])", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
    )


def words(proc: subprocess.CompletedProcess[str]) -> tuple[int, str, str]:
    """Exit code and output, without the duration (the one part two runs never share)."""
    return proc.returncode, proc.stdout, re.sub(r" in \d+\.\d\ds$", " in Ns", proc.stderr, flags=re.MULTILINE)


def settle(repo: Repo) -> None:
    """Age the work tree and MEMZOI_HOME past the racy window and rebuild until the index is vouched for.

    The first rebuild may build, and its read of shared.db makes the WAL; the second records
    shared.db's settled stats; the third sweeps every file against the index and stores the
    digest the no-op answer compares. Nothing may be aged after the second: it would move
    shared.db's stats again.
    """
    home = Path(os.environ["MEMZOI_HOME"])
    for _ in range(2):
        age(repo.path, 3600)
        age(home, 3600)
        run_cli("rebuild")
    run_cli("rebuild")


def before_click(repo: Repo, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the program, asserting that it answered before click loaded."""
    assert "click" not in imported(("rebuild", *args), repo.path)
    return program("rebuild", *args, cwd=repo.path)


def test_noop_answer_is_the_commands_with_problems_and_runtime_records(indexed_repo: Repo) -> None:
    bad = indexed_repo.path / ".memzoi" / "records" / "broken.md"
    bad.write_text("no frontmatter here\n")
    run_cli("local", "add", "--title", "A private note", "--body", "Kept in shared.db.")
    settle(indexed_repo)
    fast = before_click(indexed_repo)
    assert words(fast) == words(command("rebuild", cwd=indexed_repo.path))
    assert "broken.md:1:" in fast.stderr and "1 runtime records" in fast.stderr
    assert "index up to date" in fast.stderr and "invalid files skipped" in fast.stderr
    # --strict refuses in the command's words: the answer before click leaves it to the command
    strict = program("rebuild", "--strict", cwd=indexed_repo.path)
    assert strict.returncode != 0 and words(strict) == words(command("rebuild", "--strict", cwd=indexed_repo.path))


def test_strict_noop_is_answered_when_every_file_is_valid(indexed_repo: Repo) -> None:
    settle(indexed_repo)
    fast = before_click(indexed_repo, "--strict")
    assert fast.returncode == 0 and words(fast) == words(command("rebuild", "--strict", cwd=indexed_repo.path))


@pytest.mark.parametrize("change", ["edit in place", "same size", "add", "remove", "rename"])
def test_any_change_goes_to_the_command(indexed_repo: Repo, change: str) -> None:
    settle(indexed_repo)
    records = indexed_repo.path / ".memzoi" / "records"
    target = sorted(records.rglob("*.md"))[0]
    text = target.read_text()
    if change == "edit in place":
        with open(target, "a") as handle:  # same inode, same folder: only the file's own stat moves
            handle.write("\nEdited in place.\n")
    elif change == "same size":
        stat = target.stat()
        with open(target, "r+b") as handle:  # one byte rewritten: the size stays, the file is new
            handle.write(b"#")
        os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # old, but not the stored one
    elif change == "add":
        target.with_name("brand-new.md").write_text(text)
    elif change == "remove":
        target.unlink()
    else:
        target.rename(target.with_name("renamed-" + target.name))
    proc = program("rebuild", cwd=indexed_repo.path)
    assert proc.returncode in (0, 1) and "index rebuilt" in proc.stderr, proc.stderr
    assert "index up to date" in program("rebuild", cwd=indexed_repo.path).stderr


def test_config_is_honoured_and_a_bad_one_reported_by_the_command(indexed_repo: Repo) -> None:
    config = indexed_repo.path / ".memzoi" / "config.toml"
    config.write_text("[retention]\nsession_lease_hours = 12\n")
    assert "index rebuilt" in program("rebuild", cwd=indexed_repo.path).stderr  # the lease changed
    settle(indexed_repo)
    assert words(before_click(indexed_repo)) == words(command("rebuild", cwd=indexed_repo.path))
    config.write_text("[retention]\nsession_lease_hours = 0\n")
    age(config, 3600)
    bad = program("rebuild", cwd=indexed_repo.path)
    assert bad.returncode == 2 and "session_lease_hours" in bad.stderr
    assert words(bad) == words(command("rebuild", cwd=indexed_repo.path))


def test_corrupt_shared_db_is_refused_even_when_its_stats_look_old(indexed_repo: Repo) -> None:
    run_cli("local", "add", "--title", "A private note", "--body", "Kept in shared.db.")
    settle(indexed_repo)
    shared = Workspace.open(indexed_repo.path).layout.shared_db
    shared.write_bytes(b"this is not a database" * 200)
    age(shared, 3600)
    proc = program("rebuild", cwd=indexed_repo.path)
    assert proc.returncode == 3 and "shared.db" in proc.stderr


def test_damaged_check_file_is_left_to_the_command(indexed_repo: Repo) -> None:
    settle(indexed_repo)
    check = Path(f"{Workspace.open(indexed_repo.path).layout.index_db}.check")
    check.write_text(check.read_text().replace('"verified_ns": ', '"verified_ns": "soon", "was": '))
    fast = program("rebuild", cwd=indexed_repo.path)
    assert "Traceback" not in fast.stderr, fast.stderr
    assert words(fast) == words(command("rebuild", cwd=indexed_repo.path))


def test_the_first_noop_after_a_build_is_answered_before_click(indexed_repo: Repo) -> None:
    """A build stores the digest of the stats it confirmed, so the next no-op needs no command."""
    home = Path(os.environ["MEMZOI_HOME"])
    age(indexed_repo.path, 3600)
    age(home, 3600)
    run_cli("rebuild")  # shared.db's WAL, if a read makes one, is made now
    age(home, 3600)
    built = program("rebuild", "--full", cwd=indexed_repo.path)
    assert built.returncode == 0 and "index rebuilt" in built.stderr, built.stderr
    fast = before_click(indexed_repo)
    assert fast.returncode == 0 and "index up to date" in fast.stderr, fast.stderr
    assert words(fast) == words(command("rebuild", cwd=indexed_repo.path))
    # and the digest it stored still sees an edit that keeps the size and puts the mtime back
    target = sorted((indexed_repo.path / ".memzoi" / "records").rglob("*.md"))[0]
    stat = target.stat()
    with open(target, "r+b") as handle:
        handle.write(b"#")
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert "index rebuilt" in program("rebuild", cwd=indexed_repo.path).stderr


def test_a_repeated_noop_loads_no_sqlite_and_a_replaced_index_is_read_again(indexed_repo: Repo) -> None:
    """The check file keeps the index's meta for the installed file, by its stat: SQLite stays unloaded;
    an index replaced since (another inode, size or time) is read again, never answered from the copy."""
    shared = Workspace.open(indexed_repo.path).layout.shared_db
    for suffix in ("", "-wal", "-shm", ".checked"):  # no runtime memory: nothing to verify in shared.db either
        Path(f"{shared}{suffix}").unlink(missing_ok=True)
    settle(indexed_repo)
    assert not shared.exists()
    age(Workspace.open(indexed_repo.path).layout.index_db, 3600)  # an index installed just now is never vouched for
    assert "sqlite3" in imported(("rebuild",), indexed_repo.path)  # the first answer reads the index
    assert "sqlite3" not in imported(("rebuild",), indexed_repo.path)  # the next, the copy it kept
    index_db = Workspace.open(indexed_repo.path).layout.index_db
    check = Path(f"{index_db}.check")
    kept = check.read_text()
    assert '"index"' in kept
    run_cli("rebuild", "--full")  # another index file for the same record files
    age(index_db, 3600)
    check.write_text(kept)  # a check whose digest still holds, with the meta of the index it replaced
    assert "sqlite3" in imported(("rebuild",), indexed_repo.path)  # the copy is not trusted for another file
    assert words(program("rebuild", cwd=indexed_repo.path)) == words(command("rebuild", cwd=indexed_repo.path))


def test_a_noop_answer_skips_the_interpreters_teardown(indexed_repo: Repo, tmp_path: Path) -> None:
    """The answer given (and flushed), the process ends without freeing its modules (cli.finish)."""
    settle(indexed_repo)
    env = teardown_probe_env(tmp_path)
    done = subprocess.run([memzoi_exe(), "rebuild"], cwd=indexed_repo.path, env=env, capture_output=True, text=True)
    assert done.returncode == 0 and "index up to date" in done.stderr
    assert "teardown" not in done.stderr
    shown = subprocess.run([memzoi_exe(), "--version"], cwd=indexed_repo.path, env=env, capture_output=True, text=True)
    assert "teardown" in shown.stderr  # the probe speaks when the interpreter tears down
