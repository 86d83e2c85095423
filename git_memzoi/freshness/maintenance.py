"""Maintenance: what in memory needs a reviewer's attention, listed without writing anything.

Three kinds: `unverified`, each current repository record whose cited code moved on since the
commit that last wrote it (`freshness.state`), with what changed; `duplicate`, records saying the
same thing; `contradiction`, current records giving opposite instructions on one subject
(`freshness.claims`). Nothing is proposed or applied here: `maintenance --write`
(lifecycle.maintenance) turns the findings into pending packets for review.
"""

from __future__ import annotations

import json
from contextlib import closing
from typing import TYPE_CHECKING, Any, NamedTuple

from git_memzoi.freshness import claims, state
from git_memzoi.index import queries
from git_memzoi.index.index_db import instant
from git_memzoi.index.queries import Filter
from git_memzoi.index.rebuild import open_index
from git_memzoi.runtime import clock

if TYPE_CHECKING:
    from git_memzoi.index.index_db import RecordRow
    from git_memzoi.runtime.workspace import Workspace


class Stale(NamedTuple):
    """A current record that reads unverified, and its freshness object."""

    row: RecordRow
    freshness: dict[str, Any]


class Findings(NamedTuple):
    """What maintenance found among this worktree's current repository records."""

    rows: list[RecordRow]
    unverified: list[Stale]
    groups: list[claims.Group]  # duplicates, then contradictions

    def items(self) -> list[dict[str, Any]]:
        """The `--json` items: `{"kind", "records", "reason"}` each."""
        out = [
            {"kind": "unverified", "records": [s.row.record_id], "reason": reason(s.freshness)} for s in self.unverified
        ]
        return out + [{"kind": g.kind, "records": list(g.records), "reason": g.reason} for g in self.groups]


def reason(fresh: dict[str, Any]) -> str:
    """What changed in an unverified record's cited code, and since which commit."""
    parts = []
    for change in fresh["evidence"]:
        what = f"`{change['identifier']}` in {change['path']}" if change.get("identifier") else change["path"]
        parts.append(f"{what} {change['change']}" + (f" to {change['to']}" if change.get("to") else ""))
    since = (fresh.get("since") or "")[:12]
    return "; ".join(parts) + (f" since {since}" if since else "")


def memory(row: RecordRow) -> claims.Memory:
    """What the duplicate and contradiction rules read of a record row."""
    try:
        applies = json.loads(row.applies_json)
    except ValueError:
        applies = []
    scopes = tuple(a for a in applies if isinstance(a, str)) if isinstance(applies, list) else ()
    return claims.Memory(row.record_id, row.body, scopes, row.timestamp)


def find(ws: Workspace) -> Findings:
    """Everything maintenance lists for this worktree."""
    with closing(open_index(ws)) as conn:
        rows = queries.records(conn, Filter(now=instant(clock.now()), shared=False, stores=("repo",)))
        fresh = state.verdicts(ws, conn, rows)
    stale = [Stale(row, fresh[row.path]) for row in rows if fresh[row.path]["state"] == "unverified"]
    unverified = {s.row.record_id for s in stale}
    current = [memory(row) for row in rows if row.record_id not in unverified]
    groups = claims.duplicates([memory(row) for row in rows]) + claims.contradictions(current)
    return Findings(rows, stale, groups)


def counts(ws: Workspace) -> dict[str, int]:
    """What `status` shows: how many items of each kind, and how many current records cite no path and no
    name (their claims cannot be checked)."""
    from git_memzoi.freshness.evidence import extract

    found = find(ws)
    uncheckable = 0
    for row in found.rows:
        scopes = memory(row).applies_to
        uncheckable += extract(list(scopes), row.source_ref, row.body).empty
    kinds = [g.kind for g in found.groups]
    return {
        "unverified": len(found.unverified),
        "duplicates": kinds.count("duplicate"),
        "contradictions": kinds.count("contradiction"),
        "uncheckable": uncheckable,
    }


def items(ws: Workspace) -> list[dict[str, Any]]:
    """The maintenance items of this worktree's current records: `{"kind", "records", "reason"}` each."""
    return find(ws).items()
