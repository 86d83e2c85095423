"""scripts/test.sh runs the suite in a home of its own, so using git memzoi meanwhile disturbs nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from pathlib import Path

import pytest

from support import ROOT

pytestmark = pytest.mark.slow


def test_suite_passes_while_another_process_writes_the_users_memzoi_home(tmp_path: Path) -> None:
    user_home = tmp_path / "user"
    (user_home / ".memzoi").mkdir(parents=True)
    stop = threading.Event()
    writes = 0

    def use_memzoi_home() -> None:
        # what a `git memzoi` run in another terminal does to ~/.memzoi: new project folders and files
        nonlocal writes
        while not stop.is_set():
            project = user_home / ".memzoi" / "projects" / f"repo-{writes:016x}"
            project.mkdir(parents=True)
            (project / "shared.db").write_bytes(b"x")
            writes += 1
            stop.wait(0.005)

    env = {
        **os.environ,
        "HOME": str(user_home),
        "MEMZOI_HOME": str(user_home / ".memzoi"),
        "MEMZOI_COVERAGE": "0",
        "MEMZOI_TEST_WORKERS": "0",
        # pip's cache and the clients' cache stay where this run keeps them
        "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR") or str(Path.home() / ".cache" / "pip"),
    }
    writer = threading.Thread(target=use_memzoi_home)
    writer.start()
    try:
        done = subprocess.run(
            ["bash", str(ROOT / "scripts" / "test.sh"), "-q", "-p", "no:cacheprovider", "tests/cli/test_cli_basics.py"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
    finally:
        stop.set()
        writer.join()
    assert writes > 10, "the writer did not run alongside the suite"
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "a test wrote to the real ~/.memzoi" not in done.stdout


def test_the_ctrl_c_tests_pass_in_a_background_run_that_ignores_sigint() -> None:
    """`nohup scripts/test.sh &` from a script starts the suite with SIGINT ignored, which every process it starts
    inherits: the Ctrl-C tests then pressed a Ctrl-C nobody heard, failed, and left a `git memzoi import --json`
    waiting on a FIFO for ever."""
    env = {**os.environ, "MEMZOI_COVERAGE": "0", "MEMZOI_TEST_WORKERS": "0"}
    args = ["bash", str(ROOT / "scripts" / "test.sh"), "-q", "-p", "no:cacheprovider", "-k", "ctrl_c"]
    done = subprocess.run(
        [*args, "tests/cli/test_fast_paths_hostile.py"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "4 passed" in done.stdout
