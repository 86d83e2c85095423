"""The read path's work at recall: what a query reads does not grow with records it cannot return, and the
answers are the same ones (IDs, order, text) the plainer queries gave."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from git_memzoi.index import index_db, queries
from git_memzoi.recall import paths as pathmatch
from git_memzoi.runtime.workspace import Workspace
from support import Repo, age, run_cli
from support.recall import add_record

GLOB_RULE = "import:.cursor/rules/api.mdc?format=cursor-rule&blob=ab&lines=1-9&alwaysApply=false&globs=src/api/**/*.py"


def _indexed(repo: Repo, count: int, start: int = 0) -> Path:
    """`count` more current risks scoped to src/api/**, committed and indexed; index.db's path."""
    for n in range(start, start + count):
        add_record(
            repo, f"semantic/risks/api-risk-{n:03d}", f"api-risk-{n:03d}", type="risk", applies_to=["src/api/**"]
        )
    repo.commit(f"{count} risks")
    age(repo.path, 3600)
    run_cli("rebuild")
    return Workspace.open(repo.path).layout.index_db


def _glob_work(db: Path) -> int:
    """SQLite virtual machine steps `queries.covering` takes for a path under src/api/, less its own applies rows."""
    conn = index_db.connect_read(db)
    steps = [0]

    def step() -> int:
        steps[0] += 1
        return 0

    try:
        flt = queries.Filter(now=time.time(), types=("risk", "warning", "failed_attempt"))
        conn.set_progress_handler(step, 1)
        found = queries.by_glob(conn, "src/api/handler.py", flt)
        conn.set_progress_handler(None, 1)
        assert found == []
        return steps[0]
    finally:
        conn.close()


def test_a_memory_without_glob_rules_reads_no_record_for_them(repo: Repo) -> None:
    """by_glob's work does not grow with the records of the types it is asked for when no rule is glob-activated
    (it walked every current risk to find none)."""
    small = _glob_work(_indexed(repo, 5))
    large = _glob_work(_indexed(repo, 60, start=5))
    assert large == small


def _precheck(path: str) -> list[tuple[str, str]]:
    out = json.loads(run_cli("precheck", "--path", path, "--json").stdout)
    return [(w["record_id"], w["matched"]) for w in out["warnings"]]


def test_a_glob_rule_is_still_found_by_its_globs_alone(repo: Repo) -> None:
    """With a glob-activated rule in memory, a path its globs match gets it after the scoped records, in the
    same order and with the same match as before; a path they do not match does not."""
    add_record(repo, "semantic/risks/api-glob-rule", "api-glob-rule", type="risk", source_ref=GLOB_RULE)
    add_record(repo, "semantic/warnings/web-warning", "web-warning", type="warning", applies_to=["src/web/**"])
    _indexed(repo, 3)
    assert _precheck("src/api/v1/handler.py") == [
        ("api-risk-000", "src/api/**"),
        ("api-risk-001", "src/api/**"),
        ("api-risk-002", "src/api/**"),
        ("api-glob-rule", "src/api/**/*.py"),
    ]
    assert _precheck("src/web/page.py") == [("web-warning", "src/web/**")]
    assert [row.record_id for row, _, _ in _covering(repo, "src/api/v1/handler.py")][-1] == "api-glob-rule"


def _covering(repo: Repo, path: str) -> list[tuple[index_db.RecordRow, str, str]]:
    conn: sqlite3.Connection = index_db.connect_read(Workspace.open(repo.path).layout.index_db)
    try:
        return queries.covering(conn, pathmatch.ancestors(path), queries.Filter(now=time.time()))
    finally:
        conn.close()
