"""The hash-only receipt of a rejected packet that was not repo-safe: the one shape it may have.

reject writes it (lifecycle/packets.receipt_text) and validation holds every file with a
`receipt:` block to it, so a packet cannot keep its ID, title or body just by carrying one.
"""

from __future__ import annotations

from typing import Any

from git_memzoi.profile.document import ParsedPacket, Problem

RECEIPT_TITLE = "Rejected proposal (hash-only receipt)"
RECEIPT_DESCRIPTION = "A rejected proposal that was not repo-safe; only digests of it are kept."
RECEIPT_BODY = (
    "# Rejected proposal (hash-only receipt)\n\n"
    "A proposal that was not safe to keep in the repository was rejected. Its identity and\n"
    "content are kept here only as sha256 digests.\n"
)


def receipt_id(proposal_id_sha256: str) -> str:
    """The receipt's own ID, derived from the digest of the proposal ID it replaces."""
    return f"receipt_{proposal_id_sha256[:24]}"


def receipt_data(block: dict[str, str], *, sensitivity: str, reviewer: str, resolved_at: str) -> dict[str, Any]:
    """The receipt's whole frontmatter: fixed text, the digests, and who rejected it when."""
    return {
        "id": receipt_id(block["proposal_id_sha256"]),
        "kind": "proposal",
        "profile": "memzoi",
        "retention": {},
        "origin": {"origin_key": f"rejected-receipt:{block['proposal_id_sha256'][:24]}", "route": "rejected_receipt"},
        "type": "note",
        "lane": "semantic",
        "title": RECEIPT_TITLE,
        "description": RECEIPT_DESCRIPTION,
        "status": "rejected",
        "proposal": {"action": "create", "proposed_by": "memzoi", "proposed_at": resolved_at},
        "timestamp": resolved_at,
        "sensitivity": sensitivity,
        "content_class": "rejected_proposal_receipt",
        "receipt": dict(block),
        "resolution": {
            "outcome": "rejected",
            "reviewer": reviewer,
            "resolved_at": resolved_at,
            "reason": f"not repo-safe (sensitivity: {sensitivity}); contents withheld",
            "affected_record_ids": [],
        },
    }


def receipt_problems(parsed: ParsedPacket) -> list[Problem]:
    """receipt-invalid for each field or body of a `receipt:` packet that differs from the hash-only shape.

    Messages name the field, never its value: what differs may be the content that must not be kept.
    """
    packet, doc = parsed.packet, parsed.doc
    assert packet.receipt is not None and packet.resolution is not None  # the model requires both here
    path = doc.path
    if packet.repo_safe or not packet.sensitivity_declared:
        return [
            Problem(
                path,
                doc.line_of(("sensitivity",)) if packet.sensitivity_declared else 1,
                "receipt-invalid",
                "a hash-only receipt stands for a packet that was not repo-safe and names that sensitivity",
            )
        ]
    raw_resolution = doc.data.get("resolution")
    assert isinstance(raw_resolution, dict)
    expected = receipt_data(
        packet.receipt.model_dump(),
        sensitivity=packet.sensitivity,
        reviewer=str(raw_resolution["reviewer"]),
        resolved_at=str(raw_resolution["resolved_at"]),
    )
    problems = []
    for key in sorted(set(expected) | set(doc.data)):
        if key not in expected:
            problems.append(
                Problem(
                    path,
                    doc.line_of((key,)),
                    "receipt-invalid",
                    f"a hash-only receipt has no {key!r} field: it keeps only digests",
                )
            )
        elif doc.data.get(key) != expected[key]:
            problems.append(
                Problem(
                    path,
                    doc.line_of((key,)) if key in doc.data else 1,
                    "receipt-invalid",
                    f"field {key!r} differs from the hash-only receipt's (fixed text and digests only)",
                )
            )
    if doc.body.strip() != RECEIPT_BODY.strip():  # render puts a blank line after the fence
        problems.append(
            Problem(
                path,
                doc.body_line,
                "receipt-invalid",
                "the body of a hash-only receipt is fixed text; this one carries other content",
            )
        )
    return problems
