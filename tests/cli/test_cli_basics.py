"""The CLI behaves like a git subcommand: help, version, exit codes, python -m, real git."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import Repo, age, git, load_script, memzoi_exe, run_cli, teardown_probe_env


def test_help_and_version() -> None:
    out = run_cli("-h").stdout
    assert "Usage: git memzoi" in out and "validate" in out
    assert run_cli("--help").stdout == out
    assert "0.1.0" in run_cli("--version").stdout
    assert "Usage: git memzoi validate" in run_cli("validate", "-h").stdout


def test_usage_errors_exit_2(repo) -> None:
    assert run_cli("no-such-command", expect=2).code == 2
    assert "No such option" in run_cli("validate", "--nope", expect=2).stderr


def test_git_runs_the_subcommand_from_a_subfolder(repo) -> None:
    sub = repo.path / "src"
    sub.mkdir()
    proc = git("memzoi", "doctor", "--json", cwd=sub)
    assert '"repository_key"' in proc.stdout
    proc = git("-C", str(repo.path), "memzoi", "validate", cwd=Path("/"))
    assert proc.returncode == 0


def test_python_dash_m_is_the_same_program(repo) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "git_memzoi", "validate", "--json"], cwd=repo.path, capture_output=True, text=True
    )
    assert proc.returncode == 0 and '"ok": true' in proc.stdout


def test_unexpected_failure_is_one_line_without_debug(repo) -> None:
    (repo.path / ".memzoi").chmod(0o000)
    try:
        result = run_cli("validate", expect=None)
    finally:
        (repo.path / ".memzoi").chmod(0o755)
    # as root the folder stays readable; either way there is no traceback
    assert "Traceback" not in result.stderr


def test_stored_top_level_help_is_what_click_prints_at_every_width() -> None:
    gen = load_script("gen_help")
    assert gen.MODULE.read_text(encoding="utf-8") == gen.render(), (
        "git_memzoi/cli/help_text.py is out of date: run .venv/bin/python scripts/gen_help.py"
    )
    from git_memzoi.cli.entry import top_help

    for width in gen.widths():
        assert top_help(width) == gen.click_help(width), width


@pytest.mark.parametrize("columns", ["", "40", "80", "91", "100", "250", "junk"])
def test_top_level_help_before_click_prints_what_click_prints(tmp_path: Path, columns: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | ({"COLUMNS": columns} if columns else {})
    for args, code in ((["-h"], 0), (["--help"], 0), ([], 2)):
        fast = subprocess.run([memzoi_exe(), *args], cwd=tmp_path, capture_output=True, text=True, env=env)
        slow = subprocess.run(
            [sys.executable, "-c", "import sys; from git_memzoi.cli.main import main; main(sys.argv[1:])", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=env,
        )
        assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout, slow.stderr), args
        assert fast.returncode == code and "Usage: git memzoi [OPTIONS] COMMAND" in fast.stdout + fast.stderr


def test_the_agents_reads_answer_whole_and_skip_the_teardown(indexed_repo: Repo, tmp_path: Path) -> None:
    """search, context and precheck end as the gates do (cli.finish); a read that refreshed the index leaves
    it current, and any other command still tears down."""
    env = teardown_probe_env(tmp_path / "probe")
    work = indexed_repo.path

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([memzoi_exe(), *args], cwd=work, env=env, capture_output=True, text=True)

    record = next((work / ".memzoi" / "records").rglob("*.md"))
    record.write_text(record.read_text(encoding="utf-8").replace("\n---\n", "\n---\nZanzibarquux.\n", 1))
    found = run("search", "Zanzibarquux", "--json")  # the edit is read, and the index refreshed, first
    assert found.returncode == 0 and json.loads(found.stdout)["hits"], found.stderr
    # a refresh loads multiprocessing, whose exit handler keeps the teardown; once settled, a read is a read
    age(work, 3600)
    run("rebuild")
    age(Path(os.environ["MEMZOI_HOME"]), 3600)
    found = run("search", "Zanzibarquux", "--json")
    assert found.returncode == 0 and json.loads(found.stdout)["hits"] and "teardown" not in found.stderr, found.stderr
    for args in (("context", "--task", "anything", "--json"), ("precheck", "--path", "src/app.py", "--json")):
        done = run(*args)
        assert done.returncode == 0 and "teardown" not in done.stderr, (args, done.stderr)
        json.loads(done.stdout)
    assert "index up to date" in run("rebuild").stderr  # what the read wrote is all there
    assert "teardown" in run("validate").stderr
