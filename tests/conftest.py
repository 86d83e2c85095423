"""Shared fixtures: a hermetic environment, real repositories built with pygit2, and run_cli."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import pygit2
import pytest
from click.testing import CliRunner

from git_memzoi.cli.main import run
from git_memzoi.runtime import clock

if TYPE_CHECKING:
    from test_hooks import Remote

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SHARED = ROOT.parent / "shared"
VENV_BIN = Path(sys.executable).parent

AUTHOR = pygit2.Signature("Test Author", "author@example.com", 1767225600, 0)  # 2026-01-01T00:00:00Z


def load_script(name: str) -> ModuleType:
    """The module of scripts/NAME.py (the generators and benchmarks are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def interop_dir() -> Path:
    """The published memory of another implementation (verbatim), shipped as a fixture."""
    return FIXTURES / "interop" / "memzoi-self-memory"


@pytest.fixture(autouse=True)
def hermetic(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Temp HOME and MEMZOI_HOME, no system git config, fixed identities; fail on writes to the real home."""
    home = tmp_path_factory.mktemp("home")
    real_home = Path(os.path.expanduser("~"))
    # scripts/test.sh gives the run a home of its own: the guard watches that one, never the user's
    run_home = os.environ.get("MEMZOI_TEST_HOME")
    assert run_home is None or real_home == Path(run_home), f"HOME is {real_home}, not the run's own {run_home}"
    before = _snapshot(real_home / ".memzoi")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MEMZOI_HOME", str(home / ".memzoi"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(home / ".gitconfig"))
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "MEMZOI_NOW", "MEMZOI_LOCK_TIMEOUT", "MEMZOI_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GIT_AUTHOR_NAME", AUTHOR.name)
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", AUTHOR.email)
    monkeypatch.setenv("GIT_COMMITTER_NAME", AUTHOR.name)
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", AUTHOR.email)
    monkeypatch.setenv("MEMZOI_ACTOR", "tester")
    monkeypatch.setenv("PATH", f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    (home / ".gitconfig").write_text(
        "[init]\n\tdefaultBranch = main\n[user]\n\tname = Test Author\n"
        '\temail = author@example.com\n[protocol "file"]\n\tallow = always\n'
    )
    clock.set_now(None)
    yield home
    clock.set_now(None)
    assert _snapshot(real_home / ".memzoi") == before, "a test wrote to the real ~/.memzoi"


def _snapshot(path: Path) -> tuple[str, ...]:
    if not path.exists():
        return ()
    return tuple(sorted(str(p) for p in path.rglob("*")))


@dataclass
class Repo:
    """A real repository made with pygit2, with helpers to write files and commit."""

    path: Path
    git: pygit2.Repository

    def write(self, rel: str, text: str | bytes) -> Path:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, str):
            target.write_text(text, encoding="utf-8")
        else:
            target.write_bytes(text)
        return target

    def commit(self, message: str = "change", paths: list[str] | None = None, when: int | None = None) -> str:
        index = self.git.index
        if paths is None:
            index.add_all()
        else:
            for rel in paths:
                if (self.path / rel).exists():
                    index.add(rel)
                else:
                    index.remove(rel)
        index.write()
        tree = index.write_tree()
        sig = pygit2.Signature(AUTHOR.name, AUTHOR.email, when or AUTHOR.time, 0)
        parents = [] if self.git.head_is_unborn else [self.git.head.target]
        ref = "HEAD" if self.git.head_is_unborn else self.git.head.name
        return str(self.git.create_commit(ref, sig, sig, message, tree, parents))

    def add_worktree(self, name: str, where: Path) -> Repo:
        branch = self.git.branches.local.create(name, self.git.head.peel(pygit2.Commit))
        wt = self.git.add_worktree(name, str(where), branch)
        return Repo(Path(wt.path), pygit2.Repository(wt.path))


def make_repo(path: Path, *, init_memzoi: bool = True) -> Repo:
    path.mkdir(parents=True, exist_ok=True)
    git = pygit2.init_repository(str(path), initial_head="main")
    repo = Repo(path, git)
    repo.write("README.md", "# project\n")
    if init_memzoi:
        from git_memzoi.runtime.init import init_tree

        init_tree(path)
    repo.commit("initial")
    return repo


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    """A fresh repository with .memzoi/ initialised and committed; the cwd is its root."""
    r = make_repo(tmp_path / "project")
    monkeypatch.chdir(r.path)
    return r


@pytest.fixture
def remote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Remote:
    """A bare repository with the pre-receive hook, and a clone (the cwd) whose main it accepted."""
    from test_hooks import make_remote  # test_hooks builds on this module

    r = make_remote(tmp_path)
    r.accepted()
    monkeypatch.chdir(r.work.path)
    return r


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


def git(*args: str, cwd: Path, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Real git, for the few things that must go through it (push, hooks, aliases)."""
    return subprocess.run(["git", *args], cwd=cwd, check=check, capture_output=True, text=True, input=input)


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


def age(root: Path, seconds: float) -> None:
    """Make every file and folder under `root` look `seconds` old (the index never trusts stats younger than that)."""
    then = time.time() - seconds
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            os.utime(os.path.join(folder, name), (then, then), follow_symlinks=False)
    os.utime(root, (then, then))


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


@pytest.fixture
def indexed_repo(repo: Repo) -> Repo:
    """The interop records committed and indexed, everything aged: the state a no-op read finds."""
    records = repo.path / ".memzoi" / "records"
    shutil.rmtree(records)
    shutil.copytree(interop_dir() / ".memzoi" / "records", records)
    repo.commit("memory")
    age(repo.path, 3600)
    run_cli("rebuild")
    run_cli("rebuild")  # the first sweep of a new index stores the digest a no-op rebuild compares
    age(Path(os.environ["MEMZOI_HOME"]), 3600)
    return repo
