"""The benchmark script runs end to end (a smoke run on a tiny repository; no timing is asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from support import ROOT, run_bench

pytestmark = pytest.mark.bench


def test_bench_quick_smoke_run(tmp_path: Path) -> None:
    text = run_bench(tmp_path, "--sizes", "40", "--queries", "6", "--skip-sections", timeout=300)
    assert "## 40 records" in text and "Quick mode" in text
    for measure in (
        "floor: read + CSafeLoader",
        "cold full rebuild",
        "no-op rebuild",
        "fresh linked worktree rebuild",
        "search in-process p50 / p95",
        "context in-process p50 / p95",
        "`git memzoi search` end to end",
    ):
        assert f"| {measure}" in text, measure
    assert "the fresh worktree parsed 0 files" in text


def test_bench_cli_quick_smoke_run(tmp_path: Path) -> None:
    """scripts/bench_cli.py's section runs end to end on a small repository (no timing is asserted)."""
    text = run_bench(tmp_path, "--skip-records", "--sections", "cli", timeout=300)
    assert "## Command start-up" in text and "Quick mode" in text
    for label in ("`search`", "`precheck --path`", "no-op `rebuild`", "`--version`", "`-h`"):
        assert f"| {label} |" in text, label


def test_bench_before_compares_the_rebuild_figures_of_two_revisions(tmp_path: Path) -> None:
    """`--before REV` adds a side-by-side table of REV's code and this code, one row per compared figure."""
    args = ("--sizes", "40", "--queries", "6", "--skip-sections", "--before", "HEAD", "--before-rounds", "1")
    text = run_bench(tmp_path, *args, timeout=300)
    section = text.split("## Rebuild before and after: ")[1]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| measure")]
    titles = [row.split("|")[1].strip() for row in rows]
    assert titles == [
        "cold rebuild (× floor)",
        "no-op rebuild (× floor)",
        "fresh worktree rebuild (× floor)",
        "search p95 (ms)",
        "context p95 (ms)",
    ]
    for row in rows:
        before, after = (float(cell) for cell in row.split("|")[2:4])
        assert before > 0 and after > 0


def test_bench_before_an_unknown_revision_is_refused_before_anything_is_measured(tmp_path: Path) -> None:
    out = tmp_path / "BENCH.md"
    command = [sys.executable, str(ROOT / "scripts" / "bench.py"), "--quick", "--before", "no-such-rev"]
    command += ["--output", str(out), "--workdir", str(tmp_path / "work")]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == "bench.py: error: --before no-such-rev: not a commit of this repository"
    assert not out.exists() and not (tmp_path / "work").exists()
