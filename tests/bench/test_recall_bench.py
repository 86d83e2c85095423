"""The recall-quality benchmark runs as a section of scripts/bench.py (a smoke run; the figures are the gate's)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from support import ROOT, run_bench

sys.path.insert(0, str(ROOT / "scripts"))
import bench_recall

pytestmark = pytest.mark.bench


def test_recall_bench_quick_smoke_run(tmp_path: Path) -> None:
    text = run_bench(tmp_path, "--skip-records", "--sections", "recall")
    corpora = bench_recall.corpora()
    assert "## Recall quality: the right memory at the right moment" in text
    assert "### tuning: `fixtures/recall`, 84 records" in text
    assert "the same with 240 seeded distractors: 324 records" in text
    for role, folder in corpora:
        assert f"### {role}: `{folder.relative_to(ROOT).as_posix()}`" in text
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
        assert text.count(row) == 2 * len(corpora), row
    paraphrased = sum(any(t.get("paraphrase") for t in bench_recall.corpus(folder)[1]) for _, folder in corpora)
    assert text.count("| UserPromptSubmit, paraphrased |") == 2 * paraphrased
    assert text.count("Stale records leaked on any surface: **0**") == len(corpora)
