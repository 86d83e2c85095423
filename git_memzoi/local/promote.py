"""Promotion: the only route from private local memory to repository memory is a reviewed proposal.

`promote` builds a create proposal from a local record and submits it to the inbox like
`git memzoi propose` does. The packet declares `sensitivity: unknown` unless the person gives
one, and apply refuses anything but repo-safe. The local record itself stays private and
unchanged; the audit log links the two IDs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from git_memzoi.errors import Refused, UsageError
from git_memzoi.index import runtime_store
from git_memzoi.lifecycle import inbox
from git_memzoi.lifecycle.draft import PacketDraft
from git_memzoi.local import store
from git_memzoi.profile import vocab
from git_memzoi.runtime.workspace import Workspace

if TYPE_CHECKING:
    from git_memzoi.lifecycle.draft import PacketDraft
    from git_memzoi.lifecycle.inbox import InboxEntry

#: Content class of a promoted record: the intent is general repository knowledge; sensitivity gates it.
PROMOTED_CONTENT_CLASS = "general_repo_knowledge"


def build_packet(
    item: store.RuntimeRecord, *, sensitivity: str, content_class: str = PROMOTED_CONTENT_CLASS
) -> PacketDraft:
    """The create proposal (a PacketDraft) proposing a local record as repository memory.

    The inbox's `to_packet` fills the proposal ID, timestamps, proposed_by (the actor) and, when
    the record has none, a description from the body.
    """
    record = item.record
    body = item.body.strip("\n")
    if not body.lstrip().startswith("#"):  # canonical records open with their title as a heading
        body = f"# {record.title.strip()}\n\n{body}"
    return PacketDraft.create(
        type=record.type,
        lane=record.lane,
        title=record.title,
        body=body + "\n",
        reason=f"promoted from local memory {item.id}",
        description=record.description or None,
        applies_to=tuple(record.applies_to or ()),
        tags=tuple(record.tags or ()),
        sensitivity=sensitivity,
        content_class=content_class,
        visibility="repo",
        source=record.source,
        source_ref=record.source_ref,
        confidence=record.confidence,
        retention=record.retention.model_dump(exclude_none=True),
        origin={"origin_key": f"local-promotion:{item.id}", "route": "local_promotion"},
    )


def promote(
    ws: Workspace,
    record_id: str,
    *,
    sensitivity: str = "unknown",
    packet_file: bool = False,
    content_class: str = PROMOTED_CONTENT_CLASS,
) -> InboxEntry:
    """Submit a local record as an inbox proposal and log the link; returns the new inbox entry."""
    if sensitivity not in vocab.SENSITIVITIES:
        raise UsageError(f"{sensitivity!r} is not one of {', '.join(vocab.SENSITIVITIES)}", field="sensitivity")
    with store.reading(ws) as conn:
        if (
            conn is not None
            and (row := runtime_store.get_record(conn, record_id)) is not None
            and row.store == "session"
        ):
            raise Refused(
                f"{record_id} is a session checkpoint; checkpoints are not promoted",
                hint="write what should last with `git memzoi local add` and promote that",
                code="not-local",
            )
        item = store.load(conn, record_id, "local")
    if item.record.status != "active":
        raise Refused(f"{record_id} has status {item.record.status}; only active local memory can be promoted")
    draft = build_packet(item, sensitivity=sensitivity, content_class=content_class)
    entry = inbox.submit_draft(ws, draft, packet_file=packet_file)
    with store.writing(ws) as conn:
        runtime_store.log_event(
            conn,
            "local.promote",
            [record_id, entry.id],
            {"store": "local", "sensitivity": sensitivity, "state": entry.state, "packet_file": entry.file},
        )
    return entry
