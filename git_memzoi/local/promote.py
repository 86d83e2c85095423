"""Promotion: the only route from private local memory to repository memory is a reviewed proposal.

`promote` builds a create proposal from a local record and hands it to the inbox. The packet
declares `sensitivity: unknown` unless the person gives one, so apply refuses it until someone
declares it repo-safe. The local record itself stays private and unchanged.
"""

from __future__ import annotations

from typing import Any

from git_memzoi.errors import Refused, UsageError
from git_memzoi.index import runtime_store
from git_memzoi.local import store
from git_memzoi.profile import vocab
from git_memzoi.runtime.workspace import Workspace

#: Content class of a promoted record: the intent is general repository knowledge; sensitivity gates it.
PROMOTED_CONTENT_CLASS = "general_repo_knowledge"
DESCRIPTION_CHARS = 240


def _description(title: str, description: str | None, body: str) -> str:
    if description:
        return description
    for paragraph in body.split("\n\n"):
        text = " ".join(line.strip() for line in paragraph.splitlines() if not line.startswith("#")).strip()
        if text:
            return text if len(text) <= DESCRIPTION_CHARS else text[: DESCRIPTION_CHARS - 1].rstrip() + "…"
    return title


def build_packet(item: store.RuntimeRecord, *, proposed_by: str, proposed_at: str, sensitivity: str,
                 content_class: str = PROMOTED_CONTENT_CLASS) -> tuple[dict[str, Any], str]:
    """The create packet (frontmatter data, body) that proposes a local record as repository memory."""
    record = item.record
    data: dict[str, Any] = {
        "kind": "proposal", "profile": "memzoi",
        "retention": record.retention.model_dump(exclude_none=True),
        "origin": {"origin_key": f"local-promotion:{item.id}", "route": "local_promotion"},
        "type": record.type, "lane": record.lane, "title": record.title,
        "description": _description(record.title, record.description, item.body),
        "status": "proposed",
        "proposal": {"action": "create", "proposed_by": proposed_by, "proposed_at": proposed_at,
                     "reason": f"promoted from local memory {item.id}"},
        "scope": {"kind": "project", "paths": list(record.applies_to or [])},
        "timestamp": proposed_at, "created_by": proposed_by,
        "sensitivity": sensitivity, "content_class": content_class,
        "visibility": "repo", "confidence": record.confidence,
        "source": record.source, "source_ref": record.source_ref,
    }
    if record.tags:
        data["tags"] = list(record.tags)
    return data, item.body


def promote(ws: Workspace, record_id: str, *, sensitivity: str = "unknown", packet_file: bool = False,
            content_class: str = PROMOTED_CONTENT_CLASS) -> Any:
    """Submit a local record as an inbox proposal; returns what the inbox returns for the new proposal."""
    from git_memzoi.index import shared_db
    from git_memzoi.lifecycle import inbox

    if sensitivity not in vocab.SENSITIVITIES:
        raise UsageError(f"--sensitivity {sensitivity!r} is not one of {', '.join(vocab.SENSITIVITIES)}")
    with store.reading(ws) as conn:
        item = store.load(conn, record_id, "local")
    if item.record.status != "active":
        raise Refused(f"{record_id} has status {item.record.status}; only active local memory can be promoted")
    who = shared_db.actor()
    data, body = build_packet(item, proposed_by=who, proposed_at=store.now_text(), sensitivity=sensitivity,
                              content_class=content_class)
    result = inbox.submit(ws, data, body, packet_file=packet_file)
    proposal_id = proposal_id_of(result)
    with store.writing(ws) as conn:
        runtime_store.log_event(conn, "local.promote", [record_id, proposal_id],
                                {"store": "local", "sensitivity": sensitivity, "packet_file": packet_file})
    return result


def proposal_id_of(result: Any) -> str:
    """The new proposal ID in whatever the inbox returned."""
    for name in ("proposal_id", "id"):
        value = getattr(result, name, None)
        if isinstance(value, str):
            return value
    if isinstance(result, dict):
        return str(result.get("proposal_id") or result.get("id"))
    return str(result)
