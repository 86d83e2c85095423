"""The CLI behaves like a git subcommand: help, version, exit codes, python -m, real git."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import git, load_script, memzoi_exe, run_cli


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
