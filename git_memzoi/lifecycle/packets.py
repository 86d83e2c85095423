"""Pure helpers over proposal packets: parsing, digests, the proposal-to-record mapping, receipt lines."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from git_memzoi.errors import FormatError
from git_memzoi.profile import concept_id as concept
from git_memzoi.profile import frontmatter, oneline, receipt
from git_memzoi.profile.document import InvalidDocument, ParsedPacket, read_packet
from git_memzoi.profile.models import Packet
from git_memzoi.runtime.init import LOG_MD, UNION_LINE

#: A record needs a number; a packet may carry only proposal.confidence as a label.
CONFIDENCE_BY_LABEL = {"low": 0.4, "medium": 0.7, "high": 0.9}
DEFAULT_CONFIDENCE = CONFIDENCE_BY_LABEL["medium"]

_HEADING = re.compile(r"^\s*#[^\n]*\n?")


# --- parsing ------------------------------------------------------------------------------------------


def invalid(exc: InvalidDocument) -> FormatError:
    """One located FormatError for the first problem of an invalid packet (noting how many more)."""
    first = exc.problems[0]
    more = len(exc.problems) - 1
    message = first.message + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else "")
    return FormatError(first.code, message, path=first.path, line=first.line)


def load_packet(raw: bytes, path: str) -> ParsedPacket:
    """Parse and validate packet bytes, raising one located FormatError."""
    try:
        return read_packet(raw, path)
    except InvalidDocument as exc:
        raise invalid(exc) from None


def render_packet(data: dict[str, Any], body: str) -> bytes:
    return frontmatter.render(data, body).encode("utf-8")


# --- digests and hashed identities --------------------------------------------------------------------


def normalise_body(body: str) -> str:
    """The body without a leading Markdown heading, whitespace collapsed, case folded."""
    return " ".join(_HEADING.sub("", body, count=1).split()).casefold()


def digest(domain: str, data: str | bytes) -> str:
    """sha256 over a domain prefix and the data, so equal strings in different roles hash apart."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return hashlib.sha256(f"memzoi:{domain}\0".encode() + raw).hexdigest()


def body_digest(body: str) -> str:
    return digest("body", normalise_body(body))


def alias_sha256(alias: str) -> str:
    """The hashed lookup key of a proposal ID or file ID in the rejections table."""
    return digest("alias", alias)


def receipt_id(proposal_id: str) -> str:
    return f"receipt_{digest('proposal-id', proposal_id)[:24]}"


# --- comparing packets ---------------------------------------------------------------------------------


def same_packet(a: frontmatter.Document, b: frontmatter.Document) -> bool:
    """True when two packet files hold the same proposal, whatever their status and resolution."""

    def core(doc: frontmatter.Document) -> tuple[dict[str, Any], str]:
        data = {k: v for k, v in doc.data.items() if k not in ("status", "resolution")}
        return data, doc.body.strip()

    return core(a) == core(b)


# --- the proposal-to-record mapping ---------------------------------------------------------------------


def evidence(parsed: ParsedPacket) -> tuple[str | None, str | None]:
    """source/source_ref: the packet's own, else the first `sources:` entry; missing stays null."""
    packet = parsed.packet
    if packet.source is not None or packet.source_ref is not None:
        return packet.source, packet.source_ref
    sources = parsed.doc.data.get("sources")
    if isinstance(sources, list) and sources and isinstance(sources[0], dict):
        for key, value in sources[0].items():
            if isinstance(value, str) and value.strip():
                return str(key), value
    return None, None


def record_confidence(packet: Packet) -> float:
    """Top-level numeric confidence, else proposal.confidence (number or low/medium/high), else medium."""
    if packet.confidence is not None:
        return packet.confidence
    label = packet.proposal.confidence
    if isinstance(label, str):
        return CONFIDENCE_BY_LABEL[label]
    if isinstance(label, (int, float)):
        return float(label)
    return DEFAULT_CONFIDENCE


def scope_kind(packet: Packet) -> str:
    """The record scope a packet maps to: project and repo become repo; local stays local."""
    kind = packet.scope.kind if packet.scope is not None else "repo"
    return "local" if kind == "local" else "repo"


def applies_to(packet: Packet) -> list[str]:
    """scope.paths, then the packet's own applies_to, without repeats."""
    out: list[str] = []
    for path in [*(packet.scope.paths if packet.scope else []), *(packet.applies_to or [])]:
        if path not in out:
            out.append(path)
    return out


def default_concept_id(packet: Packet, suffix: int = 1) -> str:
    """`<lane>/<type>s/<slug of title>` (underscores in the type become hyphens), `-N` from the second try."""
    slug = concept.slug(packet.title)
    if suffix > 1:
        slug = f"{slug}-{suffix}"
    return f"{packet.lane}/{packet.type.replace('_', '-')}s/{slug}"


def record_id_for(concept_id: str) -> str:
    """A new record's ID: the last segment of its concept ID."""
    return concept_id.rsplit("/", 1)[-1]


def record_text(parsed: ParsedPacket, *, record_id: str, timestamp: str, supersedes: str | None) -> bytes:
    """The canonical record a create or supersede packet becomes: a compact projection, review fields left out."""
    packet, data = parsed.packet, parsed.doc.data
    source, source_ref = evidence(parsed)
    out: dict[str, Any] = {
        "id": record_id,
        "kind": "memory",
        "profile": "memzoi",
        "type": packet.type,
        "lane": packet.lane,
        "title": packet.title,
        "description": packet.description,
        "timestamp": timestamp,
        "status": "active",
        "scope": "repo",
        "visibility": packet.visibility or "repo",
        "content_class": packet.content_class,
        "confidence": record_confidence(packet),
    }
    paths = applies_to(packet)
    if paths:
        out["applies_to"] = paths
    if data.get("tags"):
        out["tags"] = list(data["tags"])
    out["source"] = source
    out["source_ref"] = source_ref
    out["proposal_id"] = packet.id
    if supersedes is not None:
        out["supersedes"] = supersedes
    if data.get("lineage") is not None:
        out["lineage"] = data["lineage"]
    out["retention"] = data.get("retention", {})
    out["origin"] = data["origin"]
    return frontmatter.render(out, parsed.doc.body).encode("utf-8")


def resolution(
    outcome: str, reviewer: str, resolved_at: str, reason: str | None, affected: list[str]
) -> dict[str, Any]:
    return {
        "outcome": outcome,
        "reviewer": reviewer,
        "resolved_at": resolved_at,
        "reason": reason,
        "affected_record_ids": list(affected),
    }


def resolved_text(doc: frontmatter.Document, block: dict[str, Any]) -> bytes:
    """The packet as it lands under resolved/: its reviewed fields kept, status and resolution set."""
    data = {k: v for k, v in doc.data.items() if k != "resolution"}
    data["status"] = block["outcome"]
    data["resolution"] = block
    return frontmatter.render(data, doc.body).encode("utf-8")


def receipt_text(
    *, proposal_id: str, file_id: str, content: bytes, sensitivity: str, reviewer: str, resolved_at: str
) -> tuple[str, bytes, dict[str, str]]:
    """(receipt ID, file bytes, receipt block) of the generic create-shaped hash-only receipt."""
    block = {
        "proposal_id_sha256": digest("proposal-id", proposal_id),
        "file_id_sha256": digest("file-id", file_id),
        "content_sha256": digest("content", content),
    }
    data = receipt.receipt_data(block, sensitivity=sensitivity, reviewer=reviewer, resolved_at=resolved_at)
    return data["id"], frontmatter.render(data, receipt.RECEIPT_BODY).encode("utf-8"), block


# --- log.md and .gitattributes ----------------------------------------------------------------------------


def one_line(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def append_log(before: bytes | None, line: str) -> bytes:
    """log.md with one receipt line appended (created with the init header when missing).

    Control characters in the line (a reviewer or reason holding a newline) are written as
    visible escapes, so one receipt is always exactly one line and cannot forge another.
    """
    # bytes, not text: the log has no size limit, and decoding it only to append would copy it twice more
    data = before if before is not None else LOG_MD.encode("utf-8")
    separator = b"\n" if data and not data.endswith(b"\n") else b""
    return b"".join((data, separator, (oneline.escape(line.rstrip("\n")) + "\n").encode("utf-8", "surrogateescape")))


def union_merge(before: bytes | None) -> bytes | None:
    """.gitattributes with `.memzoi/log.md merge=union` added, or None when it is already there."""
    text = before.decode("utf-8", errors="surrogateescape") if before is not None else ""
    if any(line.split() == UNION_LINE.split() for line in text.splitlines()):
        return None
    if text and not text.endswith("\n"):
        text += "\n"
    return (text + UNION_LINE + "\n").encode("utf-8", errors="surrogateescape")
