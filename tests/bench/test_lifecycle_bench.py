"""The lifecycle benchmark runs end to end (a smoke run on small sizes; no timing is asserted)."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import run_bench

pytestmark = pytest.mark.bench


def test_lifecycle_bench_quick_smoke_run(tmp_path: Path) -> None:
    text = run_bench(tmp_path, "--skip-records", "--sections", "lifecycle")
    assert "## Lifecycle write paths" in text
    for row in ("| create |", "| supersede an old record |", "| tombstone an old record |", "| 200 |"):
        assert row in text, row
    assert "git fast-import" in text and "merges of side branches" in text and "CPU ratio" in text
