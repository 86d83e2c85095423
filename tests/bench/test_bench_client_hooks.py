"""The client hooks benchmark runs end to end (a smoke run at small sizes; no timing is asserted)."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import load_script

pytestmark = pytest.mark.bench


def test_client_hooks_bench_quick_smoke_run(tmp_path: Path) -> None:
    text = load_script("bench_client_hooks").section(tmp_path / "client_hooks", True)
    assert "## Client hooks: pre-commit and pre-push end to end" in text and "Quick mode" in text
    for row in (
        "`git commit` adding one record",
        "`git commit` of code only",
        "`git push URL main`, one code commit",
        "`git push URL HEAD:new-branch` (nothing known)",
    ):
        assert f"| {row} |" in text, row
    assert "100 synthetic records" in text and "history of 600 commits" in text
