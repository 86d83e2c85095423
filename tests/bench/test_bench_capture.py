"""The capture benchmark runs end to end (a smoke run; no timing is asserted)."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import load_script

pytestmark = pytest.mark.bench


def test_capture_bench_quick_smoke_run(tmp_path: Path) -> None:
    text = load_script("bench_capture").section(tmp_path / "capture", True)
    assert "## Capture and hostile prompts" in text
    for row in (
        "PreCompact, a realistic 20 MB transcript",
        "Stop, a realistic 20 MB transcript",
        "SessionEnd, a realistic 20 MB transcript",
        "Stop, 64 MiB of two-byte lines",
        "Codex Stop, a 20 MB transcript in its own format",
        "Gemini CLI AfterAgent, a 20 MB transcript in its own format",
        "Copilot CLI agentStop, a 20 MB transcript in its own format",
        "UserPromptSubmit, a 64 KB prompt of `@a/`",
        "Gemini CLI BeforeAgent, 280 KB of unclosed `<hook_context>`",
    ):
        assert f"| {row} |" in text, row
