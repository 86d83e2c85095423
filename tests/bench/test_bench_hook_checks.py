"""The hook checks benchmark runs end to end (a smoke run at small sizes; no timing is asserted)."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import load_script

pytestmark = pytest.mark.bench


def test_hook_checks_bench_quick_smoke_run(tmp_path: Path) -> None:
    text = load_script("bench_hook_checks").section(tmp_path / "hook_checks", True)
    assert "## Hook checks cost the change" in text and "Quick mode" in text
    assert "| 200 |" in text and "| 1,000 |" in text
    assert "| one record commit |" in text
