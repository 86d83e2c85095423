"""What the index tests share: an index dumped row by row, and one built from scratch to compare with."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

from git_memzoi.index.rebuild import rebuild
from git_memzoi.runtime.workspace import Workspace


def dump_index(ws: Workspace) -> dict[str, Any]:
    """Everything the index holds that a reader can see, keyed by path (rowids are build-specific)."""
    conn = sqlite3.connect(f"{Path(ws.layout.index_db).as_uri()}?mode=ro", uri=True)
    try:
        cols = [r[1] for r in conn.execute("PRAGMA table_info(records)") if r[1] != "rowid"]
        records = {row[0]: row for row in conn.execute(f"SELECT {', '.join(cols)} FROM records ORDER BY path")}
        applies = sorted(
            conn.execute(
                "SELECT r.path, a.base, a.entry FROM applies a JOIN records r ON r.rowid = a.record"
            ).fetchall()
        )
        files = sorted(conn.execute("SELECT path, oid, size, record_id FROM files").fetchall())
        invalid = sorted(conn.execute("SELECT path, oid, record_id, problems FROM invalid").fetchall())
        fts = sorted(
            conn.execute(
                "SELECT r.path FROM records_fts f JOIN records r ON r.rowid = f.rowid "
                "WHERE records_fts MATCH 'alpha OR omega'"
            ).fetchall()
        )
        return {"records": records, "applies": applies, "files": files, "invalid": invalid, "fts": fts}
    finally:
        conn.close()


def build_index(home: Path, full: bool) -> tuple[dict[str, Any], list[tuple[str, int, str, str]]]:
    os.environ["MEMZOI_HOME"] = str(home)
    ws = Workspace.open()
    report = rebuild(ws, full=full)
    problems = sorted((p.path, p.line, p.code, p.message) for p in report.problems)
    return dump_index(ws), problems
