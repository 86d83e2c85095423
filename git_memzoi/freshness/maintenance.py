"""Maintenance: what in memory needs a reviewer's attention, listed without writing anything.

Today one kind: `unverified`, each current repository record whose cited code moved on since the
commit that last wrote it (`freshness.state`), with what changed. Nothing is proposed or applied:
the person (or `hook check`'s suggested command) decides.
"""

from __future__ import annotations

from contextlib import closing
from typing import TYPE_CHECKING, Any

from git_memzoi.freshness import state
from git_memzoi.index import queries
from git_memzoi.index.index_db import instant
from git_memzoi.index.queries import Filter
from git_memzoi.index.rebuild import open_index
from git_memzoi.runtime import clock

if TYPE_CHECKING:
    from git_memzoi.runtime.workspace import Workspace


def _reason(fresh: dict[str, Any]) -> str:
    parts = []
    for change in fresh["evidence"]:
        what = f"`{change['identifier']}` in {change['path']}" if change.get("identifier") else change["path"]
        parts.append(f"{what} {change['change']}" + (f" to {change['to']}" if change.get("to") else ""))
    since = (fresh.get("since") or "")[:12]
    return "; ".join(parts) + (f" since {since}" if since else "")


def items(ws: Workspace) -> list[dict[str, Any]]:
    """The maintenance items of this worktree's current records: `{"kind", "records", "reason"}` each."""
    with closing(open_index(ws)) as conn:
        rows = queries.records(conn, Filter(now=instant(clock.now()), shared=False, stores=("repo",)))
        fresh = state.verdicts(ws, conn, rows)
    return [
        {"kind": "unverified", "records": [row.record_id], "reason": _reason(fresh[row.path])}
        for row in rows
        if fresh[row.path]["state"] == "unverified"
    ]
