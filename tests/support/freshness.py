"""Helpers the freshness tests share (this module holds no tests): real `git memzoi` processes and commits."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from support import Repo, git
from support.running import memzoi_exe


def memzoi(repo: Repo, *args: str, input: str | None = None, expect: int = 0) -> subprocess.CompletedProcess[str]:
    """`git memzoi ARGS` run as a process in `repo`; its exit code must be `expect`."""
    done = subprocess.run(
        [memzoi_exe(), *args], cwd=repo.path, capture_output=True, text=True, input=input, timeout=120
    )
    assert done.returncode == expect, done.stdout + done.stderr
    return done


def commit(repo: Repo, message: str) -> str:
    """Commit everything in the work tree; the new commit's SHA."""
    git("add", "-A", cwd=repo.path)
    git("commit", "-q", "-m", message, cwd=repo.path)
    return git("rev-parse", "HEAD", cwd=repo.path).stdout.strip()


def invalidated(repo: Repo, spec: str, home: Path) -> list[dict[str, Any]]:
    """`hook check SPEC --json`'s `invalidated`, with MEMZOI_HOME at `home`."""
    done = subprocess.run(
        [memzoi_exe(), "hook", "check", spec, "--json"],
        cwd=repo.path, capture_output=True, text=True, timeout=120, env=os.environ | {"MEMZOI_HOME": str(home)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    found: list[dict[str, Any]] = json.loads(done.stdout)["invalidated"]
    return found


def ids(found: list[dict[str, Any]]) -> set[str]:
    """The record IDs of `invalidated` items."""
    return {item["record_id"] for item in found}
