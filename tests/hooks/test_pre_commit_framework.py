"""`.pre-commit-hooks.yaml` run by the real pre-commit tool, as its users run it.

pre-commit installs a `language: python` hook by pip-installing this repository (and its
dependencies) into an environment of its own, from the package index. `pre-commit try-repo`
does so in a temporary store on every call (about 30 s); `pre-commit run` with the repository in
`.pre-commit-config.yaml`, as a project adds it, keeps the environment under PRE_COMMIT_HOME
(here the test's own). Both run here, on a clone of this checkout at one commit.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from support import VENV_BIN, Repo, git, make_repo
from support.hooks import checkout_copy, record, record_path

pytestmark = pytest.mark.slow


def _pre_commit(repo: Repo, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PRE_COMMIT"))}
    env.update(HOME=str(home), PRE_COMMIT_HOME=str(home / "pre-commit"), MEMZOI_HOME=str(home / ".memzoi"))
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if Path(p) != VENV_BIN)
    return subprocess.run(
        [str(VENV_BIN / "pre-commit"), *args],
        cwd=repo.path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _hook_pre_commit(repo: Repo) -> str:
    """What `git memzoi hook pre-commit` itself says of the staged tree (the lines pre-commit shows)."""
    result = subprocess.run(
        [str(VENV_BIN / "git-memzoi"), "hook", "pre-commit"], cwd=repo.path, capture_output=True, text=True
    )
    assert result.returncode == 1, result.stderr
    return result.stderr


def test_pre_commit_passes_valid_memory_and_fails_an_edit_and_an_invalid_record(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    copy = tmp_path / "git-memzoi"
    sha = checkout_copy(copy, commit=True)
    assert sha is not None
    repo = make_repo(tmp_path / "project")
    repo.write(record_path("use-postgres"), record("use-postgres"))
    repo.write(
        ".pre-commit-config.yaml",
        f"repos:\n  - repo: {copy}\n    rev: {sha}\n    hooks:\n      - id: memzoi-validate\n",
    )
    repo.commit("a record")

    # try-repo, as a user tries the hooks before adding them: an in-place edit fails with hook pre-commit's lines
    repo.write(record_path("use-postgres"), record("use-postgres", body="Edited in place."))
    git("add", "-A", cwd=repo.path)
    edited = _pre_commit(repo, home, "try-repo", str(copy), "memzoi-validate", "--ref", sha)
    assert edited.returncode == 1, edited.stdout + edited.stderr
    assert "git memzoi (staged .memzoi/ memory)" in edited.stdout and "Failed" in edited.stdout
    said = _hook_pre_commit(repo)
    assert "record-edited" in said
    for line in said.splitlines():
        assert line in edited.stdout, (line, edited.stdout)
    git("checkout", "HEAD", "--", ".", cwd=repo.path)

    # pre-commit run, from the project's .pre-commit-config.yaml: valid memory passes
    repo.write(record_path("use-redis"), record("use-redis"))
    git("add", "-A", cwd=repo.path)
    valid = _pre_commit(repo, home, "run")
    assert valid.returncode == 0, valid.stdout + valid.stderr
    assert "git memzoi (staged .memzoi/ memory)" in valid.stdout and "Passed" in valid.stdout
    repo.commit("another record")

    # and an invalid record fails
    repo.write(record_path("no-profile"), record("no-profile").replace("profile: memzoi\n", ""))
    git("add", "-A", cwd=repo.path)
    invalid = _pre_commit(repo, home, "run")
    assert invalid.returncode == 1, invalid.stdout + invalid.stderr
    said = _hook_pre_commit(repo)
    assert "no-profile.md" in said
    for line in said.splitlines():
        assert line in invalid.stdout, (line, invalid.stdout)
