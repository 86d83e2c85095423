"""The lifecycle benchmark runs end to end (a smoke run on small sizes; no timing is asserted)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT


def test_lifecycle_bench_quick_smoke_run(tmp_path: Path) -> None:
    out = tmp_path / "BENCH.md"
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "bench.py"),
            "--quick",
            "--skip-records",
            "--sections",
            "lifecycle",
            "--output",
            str(out),
            "--workdir",
            str(tmp_path / "work"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert "## Lifecycle write paths" in text
    for row in ("| create |", "| supersede an old record |", "| tombstone an old record |", "| 200 |"):
        assert row in text, row
    assert "git fast-import" in text and "merges of side branches" in text and "CPU ratio" in text
