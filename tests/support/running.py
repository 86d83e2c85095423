"""Running git memzoi: in-process through the real entry point, as the installed program, and its benchmarks."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from git_memzoi.cli.main import run
from support.paths import ROOT, VENV_BIN


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str

    def json(self):  # type: ignore[no-untyped-def]
        import json

        return json.loads(self.stdout)


def run_cli(
    *args: str,
    expect: int | None = 0,
    input: str | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> CliResult:
    """Run `git memzoi ARGS` in-process through the real entry point; assert the exit code."""
    runner = CliRunner()
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        with runner.isolation(input=input, env=env) as (out, err, _):
            code = run(list(args))
            sys.stdout.flush()
            sys.stderr.flush()
            result = CliResult(code, out.getvalue().decode(), err.getvalue().decode())
    finally:
        os.chdir(old)
    if expect is not None:
        assert result.code == expect, (
            f"exit {result.code} != {expect} for {args}\nstdout: {result.stdout}\nstderr: {result.stderr}"
        )
    return result


def memzoi_exe() -> str:
    exe = shutil.which("git-memzoi", path=str(VENV_BIN))
    assert exe, "git-memzoi is not installed in the test environment"
    return exe


def run_bench(tmp_path: Path, *args: str, timeout: float = 600) -> str:
    """Run `scripts/bench.py --quick ARGS` into tmp_path; assert it succeeds and return the Markdown it wrote."""
    out = tmp_path / "BENCH.md"
    command = [sys.executable, str(ROOT / "scripts" / "bench.py"), "--quick", *args]
    command += ["--output", str(out), "--workdir", str(tmp_path / "work")]
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)
    assert result.returncode == 0, result.stderr
    return out.read_text()


def python_importtime(
    *args: str, cwd: Path | None = None, input: str = ""
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run `python -X importtime ARGS`: the finished process and every module it imported.

    Without scripts/test.sh's coverage measurement: it would import its own modules (sqlite3 among them)."""
    env = {k: v for k, v in os.environ.items() if k not in ("COVERAGE_PROCESS_START", "COVERAGE_PROCESS_CONFIG")}
    command = [sys.executable, "-X", "importtime", *args]
    proc = subprocess.run(command, cwd=cwd, input=input, capture_output=True, text=True, env=env)
    return proc, set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", proc.stderr, re.MULTILINE))


def run_importtime(
    args: Sequence[str], cwd: Path, input: str = ""
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run `git memzoi ARGS` under `python -X importtime` (see python_importtime)."""
    return python_importtime("-m", "git_memzoi", *args, cwd=cwd, input=input)


def imported(args: tuple[str, ...], cwd: Path) -> set[str]:
    """Every module `git memzoi ARGS` imports, from `python -X importtime` (the command must succeed)."""
    proc, modules = run_importtime(args, cwd)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return modules


#: A sitecustomize whose module-level object says when the interpreter tears its modules down.
TEARDOWN_PROBE = """
import sys

class _Probe:
    def __del__(self):
        sys.__stderr__.write("teardown\\n")

probe = _Probe()
"""


def teardown_probe_env(folder: Path, extra: str = "") -> dict[str, str]:
    """This environment without coverage, with TEARDOWN_PROBE (then `extra`) as the sitecustomize in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(TEARDOWN_PROBE + extra)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_PROCESS")}
    env["PYTHONPATH"] = str(folder)
    return env
