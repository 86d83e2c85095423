"""The recall-quality benchmark runs as a section of scripts/bench.py (a smoke run; the figures are the gate's)."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import run_bench

pytestmark = pytest.mark.bench


def test_recall_bench_quick_smoke_run(tmp_path: Path) -> None:
    text = run_bench(tmp_path, "--skip-records", "--sections", "recall")
    assert "## Recall quality: the right memory at the right moment" in text
    assert "### 84 records" in text and "### 324 records (240 seeded distractors" in text
    for row in (
        "| search top 5 |",
        "| context 600 tokens |",
        "| SessionStart |",
        "| UserPromptSubmit |",
        "| PreToolUse path |",
        "| PreToolUse command |",
        "| baseline: whole memory dumped |",
        "| baseline: plain bm25, 600 tokens |",
    ):
        assert text.count(row) == 2, row
    assert "Stale records leaked (superseded, expired or tombstoned, on any surface): **0**" in text
