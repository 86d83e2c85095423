"""The freshness benchmark runs end to end and finds the labelled records (a smoke run; no timing is asserted)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from support import load_script

pytestmark = pytest.mark.bench


def test_freshness_bench_quick_smoke_run(tmp_path: Path) -> None:
    text = load_script("bench_freshness").section(tmp_path / "freshness", True)
    assert "## Freshness: records whose code moved on" in text and "Quick mode" in text
    assert "| `unverified` at read time | 1.000 | 1.000 | 0 |" in text
    assert "| `hook check HEAD~1..HEAD` `invalidated` | 1.000 | 1.000 | 0 |" in text
    assert "### On a long history" in text and "over a history of 2000 commits" in text
    found = re.search(
        r"`invalidated`: (\d+) of the (\d+) records citing what it deleted, renamed or removed, (\d+) others", text
    )
    assert found is not None and found[1] == found[2] != "0" and found[3] == "0", text
    assert "`search --json` in a fresh clone, nothing kept" in text


def test_the_real_history_replayed_finds_every_labelled_record(tmp_path: Path) -> None:
    bench = load_script("bench_freshness")
    bench._ENV["MEMZOI_HOME"] = str(tmp_path / "home")
    text = bench.real_history(tmp_path / "real")
    assert "| itsdangerous | 42 | 20 | 97 | 1.000 / 1.000 | 1.000 / 1.000 |" in text
    assert "misjudged" not in text
