"""Handoff: a context pack plus what is open (the inbox) and where the last session stood (its checkpoint).

The open inbox is shared.db's proposals in states pending, validated and approved, plus pending
packet files under `.memzoi/proposals/pending/` that the inbox does not already hold. The
checkpoint is the newest current session record mirrored from shared.db. shared.db is only
read, and may not exist yet (then the inbox holds just the packet files).
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import FormatError, StateError
from git_memzoi.index.rebuild import current_filter, open_index
from git_memzoi.layout import PENDING, SUFFIX, pending_path
from git_memzoi.recall.context import build_context
from git_memzoi.recall.models import Checkpoint, Handoff, InboxItem
from git_memzoi.recall.records import C, SELECT, decision, now_params

if TYPE_CHECKING:
    from git_memzoi.runtime.workspace import Workspace

OPEN_STATES = ("pending", "validated", "approved")


def _packet_fields(text: str, where: str) -> tuple[str, str, str | None, bool]:
    """(action, title, id, repo-safe) from packet text, read safely; placeholders when it does not parse."""
    from git_memzoi.profile import frontmatter

    try:
        data = frontmatter.parse(text.encode("utf-8"), where).data
    except FormatError:
        return "unknown", "(unreadable packet)", None, False
    block = data.get("proposal")
    action = block.get("action") if isinstance(block, dict) else None
    title, pid = data.get("title"), data.get("id")
    return (str(action) if action else "unknown", str(title) if title else "(untitled)",
            str(pid) if isinstance(pid, str) else None, data.get("sensitivity") == "repo-safe")


def open_inbox(ws: "Workspace", *, include_local: bool = True) -> list[InboxItem]:
    """Open proposals: the DB inbox first (oldest first), then pending packet files it does not hold.

    Without `include_local`, only repo-safe proposals are listed: the title (and the ID slugged
    from it) of any other proposal is private to this machine.
    """
    return [item for item, safe in _open_inbox(ws) if include_local or safe]


def _open_inbox(ws: "Workspace") -> list[tuple[InboxItem, bool]]:
    from git_memzoi.index import shared_db

    items: list[tuple[InboxItem, bool]] = []
    known: set[str] = set()
    workdir = ws.repo.workdir
    path = ws.layout.shared_db
    if path.exists():
        conn = shared_db.connect(path, readonly=True)
        try:
            rows = conn.execute(
                f"SELECT id, state, packet, file_id FROM proposals WHERE state IN ({', '.join('?' * len(OPEN_STATES))})"
                " ORDER BY created_at, id", OPEN_STATES).fetchall()
        except sqlite3.DatabaseError as exc:
            raise StateError(f"{path}: shared.db is unreadable: {exc}") from None
        finally:
            conn.close()
        for pid, state, packet, file_id in rows:
            action, title, _, safe = _packet_fields(packet, f"shared.db:proposals/{pid}")
            file = None
            if file_id and workdir is not None and (workdir / pending_path(file_id)).is_file():
                file = pending_path(file_id)
            items.append((InboxItem(proposal_id=pid, state=state, action=action, title=title, file=file), safe))
            known.update(x for x in (pid, file_id) if x)
    if workdir is not None:
        folder = workdir / PENDING
        names = sorted(n for n in os.listdir(folder) if n.endswith(SUFFIX)) if folder.is_dir() else []
        for name in names:
            rel = f"{PENDING}/{name}"
            try:
                text = (folder / name).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                text = ""
            action, title, pid, safe = _packet_fields(text, rel)
            stem = name[:-3]
            if stem in known or (pid is not None and pid in known):
                continue
            items.append((InboxItem(proposal_id=pid or stem, state="proposed", action=action, title=title,
                                    file=rel), safe))
    return items


def latest_checkpoint(ws: "Workspace") -> Checkpoint | None:
    """The newest current session record in shared.db's runtime memory, or None."""
    params = now_params()
    conn = open_index(ws)
    try:
        rows = conn.execute(f"SELECT {SELECT}, r.retention FROM records r WHERE r.store = 'session' AND "
                            f"{current_filter('r')}", {"now": params["now"]}).fetchall()
    finally:
        conn.close()
    if not rows:
        return None

    def recency(row: Any) -> tuple[str, str]:
        retention = json.loads(row[len(C)])
        return (retention.get("last_active_at") or retention.get("started_at") or "", row[C["record_id"]])

    newest = max(rows, key=recency)
    retention = json.loads(newest[len(C)])
    expiry = decision(newest, params["_moment"])
    return Checkpoint(record_id=newest[C["record_id"]], task=newest[C["title"]], note=newest[C["body"]].strip(),
                      started_at=retention.get("started_at", ""), last_active_at=retention.get("last_active_at"),
                      current=expiry.current, expiry=expiry)


def build_handoff(ws: "Workspace", task: str, paths: Sequence[str] = (), *, include_local: bool = True) -> Handoff:
    """A context pack for `task` (and `paths`), the open inbox and the current session checkpoint, as one document.

    Without `include_local` (the MCP default), proposals that are not repo-safe are counted, never described.
    """
    pack = build_context(ws, task, paths=paths)
    listed = _open_inbox(ws)
    inbox = [item for item, safe in listed if include_local or safe]
    left_out = len(listed) - len(inbox)
    checkpoint = latest_checkpoint(ws)
    parts = [pack.text.rstrip("\n"), "", "## Open inbox", ""]
    for item in inbox:
        where = f" ({item.file})" if item.file else ""
        parts.append(f"- {item.proposal_id} [{item.state}] {item.action}: {item.title}{where}")
    if left_out:
        parts.append(f"- {left_out} more open proposal(s) not repo-safe, left out: call handoff with "
                     "include_local set to true to include them.")
    if not listed:
        parts.append("Nothing open.")
    parts += ["", "## Session checkpoint", ""]
    if checkpoint is not None:
        last = checkpoint.last_active_at or checkpoint.started_at
        parts += [f"{checkpoint.task} ({checkpoint.record_id}, last active {last}; "
                  f"{checkpoint.expiry.reason})", "", checkpoint.note]
    else:
        parts.append("No current session checkpoint.")
    return Handoff(task=task, pack=pack, inbox=inbox, checkpoint=checkpoint, text="\n".join(parts) + "\n")
