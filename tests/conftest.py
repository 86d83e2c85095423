"""The fixtures every test may use: a hermetic environment, real repositories, a remote with the server hook.

Helpers that tests import are not here but in the support package (tests/support/)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from git_memzoi.runtime import clock
from support import AUTHOR, VENV_BIN, Repo, age, interop_dir, make_repo, run_cli
from support.hooks import Remote, make_remote


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


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    """A fresh repository with .memzoi/ initialised and committed; the cwd is its root."""
    r = make_repo(tmp_path / "project")
    monkeypatch.chdir(r.path)
    return r


@pytest.fixture
def remote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Remote:
    """A bare repository with the pre-receive hook, and a clone (the cwd) whose main it accepted."""
    r = make_remote(tmp_path)
    r.accepted()
    monkeypatch.chdir(r.work.path)
    return r


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
