"""A relative MEMZOI_HOME is refused: it would be read from the current folder, a checkout's files."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from support import git, memzoi_exe
from support.hooks import Remote, record, record_path


def run(cwd: Path, home: str, *args: str) -> subprocess.CompletedProcess[str]:
    import os

    env = {**os.environ, "MEMZOI_HOME": home}
    return subprocess.run([memzoi_exe(), *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


def files_under(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if ".git" not in p.relative_to(root).parts}


@pytest.mark.parametrize("home", ["state", ".memzoi-state", "./x/../state", "."])
@pytest.mark.parametrize(
    "args", [("hook", "check", "HEAD~1..HEAD"), ("validate", "--rev", "HEAD"), ("search", "postgres"), ("rebuild",)]
)
def test_a_relative_memzoi_home_is_refused_and_nothing_is_written(
    remote: Remote, home: str, args: tuple[str, ...]
) -> None:
    remote.commit({record_path("use-redis"): record("use-redis")})
    before = files_under(remote.work.path)
    done = run(remote.work.path, home, *args)
    assert done.returncode == 2, done.stderr
    first, hint = done.stderr.splitlines()
    assert first == f"git memzoi: MEMZOI_HOME must be an absolute path, not {str(Path(home))!r}"
    assert hint.startswith("hint: set MEMZOI_HOME to an absolute folder")
    assert files_under(remote.work.path) == before  # no hook-trees/ nor projects/ planted in the checkout


def test_a_planted_tree_summary_in_the_checkout_is_never_read(remote: Remote) -> None:
    """The attack: a pull request commits `projects/…/hook-trees/` for a CI that runs with MEMZOI_HOME=."""
    (remote.work.path / "projects").mkdir()
    (remote.work.path / "projects" / "forged.tree").write_text("forged")
    remote.commit({"projects/forged.tree": "forged", record_path("use-redis"): record("use-redis")})
    done = run(remote.work.path, ".", "hook", "check", "origin/main..HEAD")
    assert done.returncode == 2 and "MEMZOI_HOME must be an absolute path" in done.stderr


def test_a_home_under_tilde_and_an_absolute_home_are_taken(remote: Remote, tmp_path: Path) -> None:
    remote.commit({record_path("use-redis"): record("use-redis")})
    assert run(remote.work.path, str(tmp_path / "abs-home"), "hook", "check", "origin/main..HEAD").returncode == 0
    assert (tmp_path / "abs-home" / "projects").is_dir()
    done = run(remote.work.path, "~/tilde-home", "hook", "check", "origin/main..HEAD")
    assert done.returncode == 0, done.stderr


def test_the_pre_commit_fast_path_leaves_a_relative_home_to_the_command(remote: Remote) -> None:
    remote.work.write(record_path("use-redis"), record("use-redis"))
    git("add", record_path("use-redis"), cwd=remote.work.path)
    done = run(remote.work.path, "state", "hook", "pre-commit")
    assert done.returncode == 2 and "MEMZOI_HOME must be an absolute path" in done.stderr
    assert not (remote.work.path / "state").exists()
