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


def _smallest_that_runs(args: list[str], cwd: Path) -> int:
    """The lowest address-space limit (within 1 MiB) under which `args` still succeeds on this machine."""
    low, high = 8 << 20, 1 << 30
    assert _run(args, cwd, high).returncode == 0
    while high - low > 1 << 20:
        middle = (low + high) // 2
        if _run(args, cwd, middle).returncode == 0:
            high = middle
        else:
            low = middle
    return high


@pytest.mark.slow
def test_rebuild_full_out_of_memory_is_one_line_and_exit_3(repo: Repo) -> None:
    add_record(repo, "m/first", "m-first", body="One record about memory.")
    # the least that a whole build of one small record needs: every module it loads, loaded
    limit = _smallest_that_runs(["rebuild", "--full"], repo.path)
    for n in range(40):  # then records the same build cannot hold in that much
        add_record(repo, f"m/{n:02d}", f"m-{n:02d}", body=f"Record {n} about memory. " + "word " * 150_000)
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
    assert "41 records" in done.stderr


_RAISES = (
    "import resource, sys\n"
    "from git_memzoi.cli import entry\n"
    "if sys.argv[1] == 'limited':\n"
    "    resource.setrlimit(resource.RLIMIT_AS, (1 << 34, 1 << 34))\n"
    "def failing(args):\n"
    "    raise {kind}(sys.argv[2]{extra})\n"
    "entry._main = failing\n"
    "entry.main()\n"
)


def test_an_allocation_cpython_could_not_describe_is_out_of_memory_under_a_limit_only(tmp_path: Path) -> None:
    """Under a memory limit, an import can fail as SystemError("error return without exception set")."""
    quiet = "error return without exception set"

    def run(limited: str, message: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", _RAISES.format(kind="SystemError", extra=""), limited, message],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )

    under = run("limited", quiet)
    assert under.returncode == 3 and under.stderr.splitlines()[0].startswith("git memzoi: out of memory"), under.stderr
    unlimited = run("free", quiet)  # no limit: the bug it names, not a guess (one line and 70, as a command's)
    assert unlimited.returncode == 70 and "internal error: SystemError" in unlimited.stderr
    other = run("limited", "some other internal error")
    assert other.returncode == 70 and "internal error: SystemError" in other.stderr
    assert "Traceback" not in unlimited.stderr + other.stderr


def test_an_extension_the_loader_could_not_map_is_out_of_memory(tmp_path: Path) -> None:
    """dlopen of an extension module (fcntl, pygit2's) that fails with ENOMEM is an ImportError naming the file."""
    unmapped = "/usr/lib/python3.11/lib-dynload/fcntl.so: failed to map segment from shared object"

    def run(limited: str, message: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                sys.executable,
                "-c",
                _RAISES.format(kind="ImportError", extra=", path='/lib/fcntl.so'"),
                limited,
                message,
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
        )

    under = run("limited", unmapped)
    assert under.returncode == 3, under.stderr
    assert under.stderr.splitlines()[0].startswith("git memzoi: out of memory"), under.stderr
    unlimited = run("free", unmapped)  # ENOMEM is memory with or without a limit
    assert unlimited.returncode == 3, unlimited.stderr
    missing = run("limited", "No module named 'pygit2'")  # a broken install is not a memory limit
    assert missing.returncode == 70 and "internal error: ImportError" in missing.stderr
    assert "Traceback" not in missing.stderr


_NO_FCNTL = (
    "import sys, warnings\n"
    "warnings.simplefilter('error')\n"
    "class Unmappable:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name == 'fcntl':\n"
    "            raise ImportError('fcntl: failed to map segment from shared object')\n"
    "sys.meta_path.insert(0, Unmappable())\n"
    "try:\n"
    "    import git_memzoi.runtime.lock\n"
    "except ImportError as exc:\n"
    "    print('refused:', exc)\n"
    "else:\n"
    "    print('loaded')\n"
)


def test_the_lifecycle_lock_never_falls_back_to_a_soft_lock(tmp_path: Path) -> None:
    """filelock quietly swaps flock for a lock file when fcntl fails to load; a soft lock would not
    exclude a process holding the flock, so the failure must surface instead."""
    proc = subprocess.run([sys.executable, "-c", _NO_FCNTL], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("refused: fcntl: failed to map segment"), proc.stdout
