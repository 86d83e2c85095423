"""The real-repositories benchmark runs as a section of scripts/bench.py (a smoke run of two repositories)."""

from __future__ import annotations

import pytest

from support import run_bench

pytestmark = pytest.mark.bench


def test_realrepos_bench_quick_smoke_run(tmp_path) -> None:  # type: ignore[no-untyped-def]
    text = run_bench(tmp_path, "--skip-records", "--sections", "realrepos")
    assert "## Real repositories: their instruction files imported" in text
    assert "### Tuned on" in text and "### Held out (never tuned on)" in text
    assert "| figure | gemini-cli |" in text and "| figure | langfuse |" in text
    assert text.count("| plan exit | 0 |") == 2
    assert text.count("| second plan changes | 0 |") == 2
    # langfuse's root AGENTS.md: one section edited and re-imported, its other rules not given again in full
    assert "| re-import changes after an edit | 1 |" in text
    assert "| given twice after an edit and re-import (codex) | 0 |" in text
    assert text.count("| UserPromptSubmit recall (tasks, mean tokens) |") == 2
