"""A process that reaches its memory limit says so in one line and exits 3, never with a traceback or 70."""

from __future__ import annotations

import resource
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from support import Repo, memzoi_exe
from support.recall import add_record


def _limited(limit: int) -> Callable[[], None]:
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def _run(args: list[str], cwd: Path, limit: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [memzoi_exe(), *args], cwd=cwd, capture_output=True, text=True, preexec_fn=_limited(limit), timeout=120
    )


def _smallest_that_starts(cwd: Path) -> int:
    """The lowest address-space limit (within 1 MiB) under which `--version` (answered before any
    heavy import) still runs: the interpreter's own need on this machine."""
    low, high = 8 << 20, 512 << 20
    assert _run(["--version"], cwd, high).returncode == 0
    while high - low > 1 << 20:
        middle = (low + high) // 2
        if _run(["--version"], cwd, middle).returncode == 0:
            high = middle
        else:
            low = middle
    return high


@pytest.mark.slow
def test_rebuild_full_out_of_memory_is_one_line_and_exit_3(repo: Repo) -> None:
    for n in range(40):
        add_record(repo, f"m/{n:02d}", f"m-{n:02d}", body=f"Record {n} about memory.")
    limit = _smallest_that_starts(repo.path) + (4 << 20)
    proc = _run(["rebuild", "--full"], repo.path, limit)
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.splitlines() == [
        "git memzoi: out of memory: the command reached the memory limit of its process (ulimit -v, "
        "or the container's)",
        "hint: raise the limit, or run the command where more memory is free",
    ]
    assert proc.stdout == ""
    # with room to work, the same command builds the index
    done = _run(["rebuild", "--full"], repo.path, 1 << 30)
    assert done.returncode == 0, done.stderr
    assert "40 records" in done.stderr


_RAISES = (
    "import resource, sys\n"
    "from git_memzoi.cli import entry\n"
    "if sys.argv[1] == 'limited':\n"
    "    resource.setrlimit(resource.RLIMIT_AS, (1 << 34, 1 << 34))\n"
    "def failing(args):\n"
    "    raise SystemError(sys.argv[2])\n"
    "entry._main = failing\n"
    "entry.main()\n"
)


def test_an_allocation_cpython_could_not_describe_is_out_of_memory_under_a_limit_only(tmp_path: Path) -> None:
    """Under a memory limit, an import can fail as SystemError("error return without exception set")."""
    quiet = "error return without exception set"

    def run(limited: str, message: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", _RAISES, limited, message], cwd=tmp_path, capture_output=True, text=True
        )

    under = run("limited", quiet)
    assert under.returncode == 3 and under.stderr.splitlines()[0].startswith("git memzoi: out of memory"), under.stderr
    unlimited = run("free", quiet)  # no limit: the bug it names, not a guess
    assert unlimited.returncode == 1 and "SystemError" in unlimited.stderr
    other = run("limited", "some other internal error")
    assert other.returncode == 1 and "SystemError" in other.stderr
