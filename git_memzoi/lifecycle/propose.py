"""The propose rules: which flag combinations make a proposal, and what it keeps from its target.

`propose` parses its flags into a ProposeRequest and prints; `draft` judges the request and
returns the PacketDraft that inbox.submit_draft turns into a packet. A supersede or tombstone
keeps from its target what it does not say otherwise (type, lane, paths, tags, class, visibility,
confidence): the same scope and kind of knowledge.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from git_memzoi.errors import UsageError
from git_memzoi.lifecycle import inbox
from git_memzoi.lifecycle.draft import DEFAULT_ROUTE, MemoryFields, PacketDraft
from git_memzoi.lifecycle.state import now_text
from git_memzoi.profile import vocab
from git_memzoi.profile.timefmt import OutOfRange, parse_rfc3339
from git_memzoi.recall import records
from git_memzoi.runtime.workspace import Workspace

CONFIDENCE_LABELS = ("low", "medium", "high")
DEFAULT_CONTENT_CLASS = "general_repo_knowledge"


@dataclass(frozen=True, kw_only=True)
class ProposeRequest(MemoryFields):
    """`propose`'s flags beyond the memory's own fields, as given (None: not given)."""

    action: str = "create"
    target: str | None = None  # a record ID or a unique prefix of one
    reason: str | None = None
    sensitivity: str = vocab.REPO_SAFE
    content_class: str | None = None
    visibility: str | None = None
    confidence: str | None = None  # a number from 0.0 to 1.0, or low / medium / high
    origin_key: str | None = None
    route: str | None = None
    started_at: str | None = None
    proposed_by: str | None = None


def draft(ws: Workspace, req: ProposeRequest) -> PacketDraft:
    """The PacketDraft `req` describes; UsageError naming the flag when the flags do not make a proposal."""
    target = _target(ws, req)
    # a supersede or tombstone keeps what it does not say otherwise from its target (same scope, same kind)
    facts, text = inbox.record_document(ws, target) if target else ({}, "")
    if req.action == "supersede" and req.title is None and req.body is None and text.strip():
        req = reconfirming(req, facts, text)
    title = req.title
    if title is None and req.action == "tombstone" and target:
        title = f"Tombstone {target}"
    if title is None or not title.strip():
        raise UsageError("--title is required")
    type_ = req.type or facts.get("type")
    body = _body(req, title)
    if type_ is None:
        raise UsageError("--type is required (one of " + ", ".join(vocab.MEMORY_TYPES) + ")")
    lane = req.lane or facts.get("lane") or "semantic"
    number, label = _confidence(req.confidence)
    retention = _retention(req, lane)
    origin = _origin(req)
    return PacketDraft.create(
        type=type_,
        lane=lane,
        title=title.strip(),
        body=body,
        action=req.action,
        target=target,
        reason=req.reason,
        description=req.description,
        applies_to=req.applies_to or _inherited(facts, "applies_to"),
        tags=req.tags or _inherited(facts, "tags"),
        sensitivity=req.sensitivity,
        content_class=req.content_class or _text(facts.get("content_class")) or DEFAULT_CONTENT_CLASS,
        visibility=req.visibility or _text(facts.get("visibility")),
        source=req.source,
        source_ref=req.source_ref,
        confidence=number if number is not None or label is not None else _number(facts.get("confidence")),
        confidence_label=label,
        origin=origin,
        retention=retention,
        proposed_by=req.proposed_by,
    )


def reconfirming(req: ProposeRequest, facts: dict[str, Any], body: str) -> ProposeRequest:
    """A supersede that gives no title and no body re-confirms its target: the same title, description,
    body and evidence, written anew, so the record's evidence is judged as of the commit that applies it
    (docs/freshness.md, "Re-confirming"). The proposal's reason says what the reviewer checked."""
    return replace(
        req,
        title=_text(facts.get("title")),
        body=body,
        description=req.description or _text(facts.get("description")),
        source=req.source or _text(facts.get("source")),
        source_ref=req.source_ref or _text(facts.get("source_ref")),
    )


def _target(ws: Workspace, req: ProposeRequest) -> str | None:
    """The whole record ID a supersede or tombstone acts on; None for a create (which may not name one)."""
    if req.action == "create" and req.target is not None:
        raise UsageError("--target: a create proposal cannot name a target")
    if req.action != "create" and req.target is None:
        raise UsageError(f"--target: a {req.action} proposal needs the record ID it acts on")
    return records.expand_record_id(ws, req.target) if req.target is not None else None


def _body(req: ProposeRequest, title: str) -> str:
    """The Markdown body: a tombstone's reason when it gives none, under a `# title` heading unless it has one."""
    text = req.body
    if text is None and req.action == "tombstone" and req.reason:
        text = req.reason
    if text is None or not text.strip():
        raise UsageError("give the memory with --body TEXT or --body-file PATH")
    if not text.lstrip().startswith("#"):
        text = f"# {title.strip()}\n\n{text.strip()}\n"
    return text


def _retention(req: ProposeRequest, lane: str) -> dict[str, Any]:
    """The lane's start (given, or now) and an explicit expiry; a lane's start flag on another lane is refused."""
    retention: dict[str, Any] = {}
    if lane == "episodic":
        retention["occurred_at"] = _time(req.occurred_at, "--occurred-at") or now_text()
    elif req.occurred_at is not None:
        raise UsageError("--occurred-at applies to the episodic lane only")
    if lane == "session":
        retention["started_at"] = _time(req.started_at, "--started-at") or now_text()
    elif req.started_at is not None:
        raise UsageError("--started-at applies to the session lane only")
    if req.expires_at is not None:
        retention["explicit_expires_at"] = _time(req.expires_at, "--expires-at")
    return retention


def _origin(req: ProposeRequest) -> dict[str, str] | None:
    """The given source-event identity; None leaves the default (proposal:<id>)."""
    if req.origin_key is None and req.route is None:
        return None
    if req.origin_key is None:
        raise UsageError("--route needs --origin-key")
    return {"origin_key": req.origin_key, "route": req.route or DEFAULT_ROUTE}


def _time(value: str | None, flag: str) -> str | None:
    if value is None:
        return None
    try:
        parse_rfc3339(value)
    except OutOfRange as exc:
        raise UsageError(f"{flag}: {exc}") from None
    except ValueError:
        raise UsageError(f"{flag} {value!r} is not an RFC 3339 date-time with a timezone") from None
    return value


def _inherited(facts: dict[str, Any], key: str) -> tuple[str, ...]:
    """A target's list field (applies_to, tags) as a supersede or tombstone keeps it; () when it has none."""
    value = facts.get(key)
    return tuple(item for item in value if isinstance(item, str)) if isinstance(value, list) else ()


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _confidence(given: str | None) -> tuple[float | None, str | None]:
    """--confidence as (a number for `confidence`, or a label for `proposal.confidence`)."""
    if given is None:
        return None, None
    if given.strip().lower() in CONFIDENCE_LABELS:
        return None, given.strip().lower()
    try:
        number = float(given)
    except ValueError:
        raise UsageError(f"--confidence {given!r}: give a number from 0.0 to 1.0 or low/medium/high") from None
    if not 0.0 <= number <= 1.0:
        raise UsageError(f"--confidence {given!r} is outside 0.0 to 1.0")
    return number, None
