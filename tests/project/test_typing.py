"""The package type-checks cleanly under mypy --strict (further settings from pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from support import ROOT

pytestmark = pytest.mark.slow


def test_mypy_strict_clean(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"), "git_memzoi"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
