"""Handoff: a context pack plus what is open (the inbox) and where the last session stood (its checkpoint).

The open inbox is `index.inbox_store.listing`'s: shared.db's proposals still to be decided, then
pending packet files under `.memzoi/proposals/pending/` that no proposal stands for. The
checkpoint is the newest current session record mirrored from shared.db. shared.db is only
read, and may not exist yet (then the inbox holds just the packet files).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from git_memzoi.index import inbox_store, queries
from git_memzoi.index.index_db import RecordRow
from git_memzoi.index.queries import Filter
from git_memzoi.recall.context import build_context
from git_memzoi.recall.models import Checkpoint, Handoff, InboxItem
from git_memzoi.recall.records import decision, index_connection, now

if TYPE_CHECKING:
    from git_memzoi.runtime.workspace import Workspace

#: Open proposals a handoff lists (oldest first); the rest are counted, with where to see them all.
#: A handoff is read at the start of a session, where 5,000 open proposals would be 433 KB.
INBOX_LIMIT = 20

#: What a handoff without local memory says in place of a current session checkpoint.
CHECKPOINT_LEFT_OUT = (
    "A current session checkpoint exists. It is session memory of this machine: "
    "call handoff with include_local set to true to include it."
)


def _fields(data: dict[str, Any] | None) -> tuple[str, str, bool]:
    """(action, title, repo-safe) from a packet's frontmatter; placeholders when it does not parse."""
    if data is None:
        return "unknown", "(unreadable packet)", False
    block = data.get("proposal")
    action = block.get("action") if isinstance(block, dict) else None
    title = data.get("title")
    return (
        str(action) if action else "unknown",
        str(title) if title else "(untitled)",
        data.get("sensitivity") == "repo-safe",
    )


def open_inbox(ws: Workspace) -> list[tuple[InboxItem, bool]]:
    """Open proposals, each with whether it is repo-safe: the DB inbox first (oldest first), then
    pending packet files it does not hold."""
    out = []
    for listed in inbox_store.listing(ws.layout.shared_db, ws.repo.workdir, open_only=True):
        action, title, safe = _fields(listed.data)
        out.append(
            (InboxItem(proposal_id=listed.id, state=listed.state, action=action, title=title, file=listed.file), safe)
        )
    return out


def latest_checkpoint(ws: Workspace) -> Checkpoint | None:
    """The newest current session record in shared.db's runtime memory, or None."""
    moment, at = now()
    with index_connection(ws) as conn:
        rows = queries.records(conn, Filter(now=at, shared=False, stores=("session",)))
    if not rows:
        return None

    def recency(row: RecordRow) -> tuple[str, str]:
        retention = json.loads(row.retention)
        return (retention.get("last_active_at") or retention.get("started_at") or "", row.record_id)

    newest = max(rows, key=recency)
    retention = json.loads(newest.retention)
    expiry = decision(newest, moment)
    return Checkpoint(
        record_id=newest.record_id,
        task=newest.title,
        note=newest.body.strip(),
        started_at=retention.get("started_at", ""),
        last_active_at=retention.get("last_active_at"),
        current=expiry.current,
        expiry=expiry,
    )


def inbox_lines(items: Sequence[InboxItem]) -> list[str]:
    """The open inbox as every surface lists it: the INBOX_LIMIT oldest, then how many more and where to see them."""
    lines = []
    for item in items[:INBOX_LIMIT]:
        where = f" ({item.file})" if item.file else ""
        lines.append(f"- {item.proposal_id} [{item.state}] {item.action}: {item.title}{where}")
    if len(items) > INBOX_LIMIT:
        lines.append(f"- and {len(items) - INBOX_LIMIT} more: `git memzoi proposals`")
    return lines


def build_handoff(ws: Workspace, task: str, paths: Sequence[str] = (), *, include_local: bool = True) -> Handoff:
    """A context pack for `task` (and `paths`), the open inbox and the current session checkpoint, as one document.

    Without `include_local` (the MCP default), proposals that are not repo-safe are counted, never
    described, and the session checkpoint (session memory of this machine) is only said to exist.
    """
    pack = build_context(ws, task, paths=paths)
    listed = open_inbox(ws)
    shown = [item for item, safe in listed if include_local or safe]
    left_out = len(listed) - len(shown)
    inbox, more = shown[:INBOX_LIMIT], len(shown) - INBOX_LIMIT
    checkpoint = latest_checkpoint(ws)
    parts = [pack.text.rstrip("\n"), "", "## Open inbox", "", *inbox_lines(shown)]
    if left_out:
        parts.append(
            f"- {left_out} more open proposal(s) not repo-safe, left out: call handoff with "
            "include_local set to true to include them."
        )
    if not listed:
        parts.append("Nothing open.")
    parts += ["", "## Session checkpoint", ""]
    if checkpoint is None:
        parts.append("No current session checkpoint.")
    elif not include_local:
        parts.append(CHECKPOINT_LEFT_OUT)
        checkpoint = None
    else:
        last = checkpoint.last_active_at or checkpoint.started_at
        parts += [
            f"{checkpoint.task} ({checkpoint.record_id}, last active {last}; {checkpoint.expiry.reason})",
            "",
            checkpoint.note,
        ]
    return Handoff(
        task=task,
        pack=pack,
        inbox=inbox,
        inbox_more=max(more, 0),
        checkpoint=checkpoint,
        text="\n".join(parts) + "\n",
    )
