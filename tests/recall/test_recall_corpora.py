"""Every recall corpus is whole: unique IDs, every gold record exists and is current, every task has gold."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from support import ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import bench_recall


@pytest.mark.parametrize("folder", [folder for _, folder in bench_recall.corpora()], ids=lambda p: p.name)
def test_a_corpus_names_only_current_records_as_gold(folder: Path) -> None:
    records, tasks = bench_recall.corpus(folder)
    ids = [entry["id"] for entry in records]
    assert len(ids) == len(set(ids))
    stale = {entry["id"] for entry in records if entry.get("stale")}
    assert [g for task in tasks for g in task["gold"] if g not in ids or g in stale] == []
    assert all(task["gold"] for task in tasks)
    assert sum(task["kind"] == "session" for task in tasks) == 1


def test_there_are_held_out_corpora() -> None:
    roles = [role for role, _ in bench_recall.corpora()]
    assert roles[0] == "tuning" and roles.count("held-out") >= 1
