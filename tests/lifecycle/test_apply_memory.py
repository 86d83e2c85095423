"""apply --commit holds a large log.md twice (the plan's before- and after-images), not three times."""

from __future__ import annotations

import os
import resource
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from git_memzoi.layout import LOG
from support import make_repo, memzoi_exe, run_cli

pytestmark = pytest.mark.slow

LOG_BYTES = 64 << 20
LINE = "- 2026-01-01T00:00:00Z applied mem_2026_01_01_x_abc123 by alice: created x (fact), a receipt\n"


def _limited(limit: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def _apply_under(cwd: Path, home: Path, pid: str, limit: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [memzoi_exe(), "apply", pid, "--commit"],
        cwd=cwd,
        env={**os.environ, "MEMZOI_HOME": str(home)},
        capture_output=True,
        text=True,
        preexec_fn=_limited(limit),
        timeout=300,
    )


def _ready(where: Path, log_bytes: int) -> tuple[Path, Path, str]:
    """A repository whose committed log.md is `log_bytes` long, with an approved proposal: (root, home, its ID)."""
    repo = make_repo(where)
    log = repo.path / LOG
    with log.open("a") as handle:
        block = LINE * 4096
        for _ in range(log_bytes // len(block)):
            handle.write(block)
    repo.commit("a long log", paths=[LOG])
    home = where.parent / f"{where.name}-home"
    old = os.environ.get("MEMZOI_HOME")
    os.environ["MEMZOI_HOME"] = str(home)
    try:
        pid = str(
            run_cli(
                "propose", "--type", "fact", "--title", "Appended to a long log", "--body", "A fact.", "--json",
                cwd=repo.path,
            ).json()["id"]
        )  # fmt: skip
        run_cli("approve", pid, cwd=repo.path)
    finally:
        if old is not None:
            os.environ["MEMZOI_HOME"] = old
    return repo.path, home, pid


def test_apply_commit_to_a_64_mib_log_runs_in_twice_its_size_over_a_short_logs_need(tmp_path: Path) -> None:
    # the least address space apply --commit needs with a short log: everything but the log itself
    low, high = 64 << 20, 1 << 30
    probe = 0
    while high - low > 4 << 20:
        middle = (low + high) // 2
        probe += 1
        root, home, pid = _ready(tmp_path / f"short-{probe}", 0)
        if _apply_under(root, home, pid, middle).returncode == 0:
            high = middle
        else:
            low = middle
    base = high
    root, home, pid = _ready(tmp_path / "long", LOG_BYTES)
    # the plan's before- and after-images of the log, and room to spare: a third copy does not fit
    done = _apply_under(root, home, pid, base + LOG_BYTES * 5 // 2)
    assert done.returncode == 0, f"needed more than {base >> 20} MiB + 2.5 x the log: {done.stderr}"
    assert "committed" in done.stdout + done.stderr
