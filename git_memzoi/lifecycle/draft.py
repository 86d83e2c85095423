"""A new proposal before the inbox names and dates it: one draft, one `to_packet()`.

`propose` (from flags), `local promote` (from a local record) and programs calling
`inbox.submit` with a partial mapping all describe a proposal as a PacketDraft; `to_packet`
is the one place that turns it into a complete packet (ID, times, actor, lane retention,
origin, description, field order). A packet file given whole (`propose --from-file`) is
never a draft: nothing is filled in for it.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Required, TypedDict, Unpack

from git_memzoi.lifecycle import packets
from git_memzoi.profile import concept_id as concept

#: The order packet fields are written in (the profile's example order); unknown fields follow.
FIELD_ORDER = (
    "id",
    "kind",
    "profile",
    "retention",
    "origin",
    "type",
    "lane",
    "title",
    "description",
    "status",
    "proposal",
    "scope",
    "tags",
    "timestamp",
    "created_by",
    "sources",
    "source",
    "source_ref",
    "supersedes",
    "sensitivity",
    "content_class",
    "visibility",
    "confidence",
    "applies_to",
    "lineage",
)
DEFAULT_ROUTE = "repository_proposal"
DESCRIPTION_CHARS = 240


def new_id(title: str, now: str, salt: str = "") -> str:
    """`mem_<yyyy>_<mm>_<dd>_<slug>_<6 hex>`: readable, sortable by day, unique by its hash suffix."""
    day = now[:10].replace("-", "_")
    slug = concept.slug(title, max_length=40).replace("-", "_")
    suffix = hashlib.sha256(f"{now}\0{title}\0{salt}".encode()).hexdigest()[:6]
    return f"mem_{day}_{slug}_{suffix}"


def _description(body: str, title: str) -> str:
    for paragraph in body.split("\n\n"):
        text = " ".join(line.strip() for line in paragraph.splitlines() if not line.lstrip().startswith("#"))
        if text.strip():
            return packets.one_line(text, DESCRIPTION_CHARS)
    return title


class DraftFields(TypedDict, total=False):
    """The named values a draft is made from (`PacketDraft.create`); the four marked Required always."""

    type: Required[str]
    lane: Required[str]
    title: Required[str]
    body: Required[str]
    action: str  # create (default), supersede, tombstone
    target: str | None
    reason: str | None
    description: str | None
    applies_to: tuple[str, ...]
    tags: tuple[str, ...]
    sensitivity: str  # default repo-safe
    content_class: str  # default general_repo_knowledge
    visibility: str | None
    source: str | None
    source_ref: str | None
    confidence: float | None
    confidence_label: str | None  # low / medium / high, kept as proposal.confidence
    origin: Mapping[str, str] | None
    retention: Mapping[str, str] | None
    proposed_by: str | None


def _put(data: dict[str, Any], **values: Any) -> None:
    """Set each of `values` that is not None, in the order given."""
    data.update((key, value) for key, value in values.items() if value is not None)


def _proposal(given: DraftFields) -> dict[str, Any]:
    """The packet's `proposal` block: action, proposer, reason, a tombstone's target, a confidence label."""
    action = given.get("action", "create")
    proposal: dict[str, Any] = {"action": action}
    if given.get("proposed_by"):
        proposal["proposed_by"] = given.get("proposed_by")
    _put(proposal, reason=given.get("reason"))
    if action == "tombstone":
        proposal["target"] = given.get("target")
    _put(proposal, confidence=given.get("confidence_label"))
    return proposal


@dataclass(frozen=True)
class PacketDraft:
    """What a proposal says before it has an ID and times: the fields given, as the profile names them.

    `fields` is a partial packet frontmatter mapping; values are kept exactly as given (the
    packet's validation judges them, with located errors). `body` is the Markdown body.
    """

    fields: Mapping[str, Any]
    body: str

    @classmethod
    def create(cls, **given: Unpack[DraftFields]) -> PacketDraft:
        """A draft from named values (flags, a local record); None and empty values are left out."""
        action = given.get("action", "create")
        proposed_by = given.get("proposed_by")
        applies_to, tags = given.get("applies_to", ()), given.get("tags", ())
        data: dict[str, Any] = {"type": given["type"], "lane": given["lane"], "title": given["title"]}
        _put(data, description=given.get("description"))
        data["proposal"] = _proposal(given)
        data["scope"] = {"kind": "project", "paths": list(applies_to)} if applies_to else {"kind": "project"}
        if tags:
            data["tags"] = list(tags)
        if proposed_by:
            data["created_by"] = proposed_by
        _put(data, source=given.get("source"), source_ref=given.get("source_ref"))
        data["supersedes"] = [given.get("target")] if action == "supersede" else []
        data["sensitivity"] = given.get("sensitivity", "repo-safe")
        data["content_class"] = given.get("content_class", "general_repo_knowledge")
        retention, origin = given.get("retention"), given.get("origin")
        _put(
            data,
            visibility=given.get("visibility"),
            confidence=given.get("confidence"),
            retention=dict(retention) if retention is not None else None,
            origin=dict(origin) if origin is not None else None,
        )
        return cls(data, given["body"])

    def to_packet(self, *, now: str, actor: str, proposal_id: str | None = None) -> dict[str, Any]:
        """The complete packet frontmatter: what the draft gives, plus the documented fill-ins, in field order.

        Filled when missing: `kind`, `profile`, `status`, `timestamp`, `id` (`proposal_id`, else
        one made from the title and `now`), `origin` (`proposal:<id>`), `description` (the body's
        first paragraph), `retention` (the lane's start at `now`) and
        `proposal.action/proposed_by/proposed_at`.
        """
        out = copy.deepcopy(dict(self.fields))
        if proposal_id is not None:
            out["id"] = proposal_id
        out.setdefault("kind", "proposal")
        out.setdefault("profile", "memzoi")
        out.setdefault("status", "proposed")
        out.setdefault("timestamp", now)
        proposal = out.get("proposal")
        if proposal is None:
            proposal = out["proposal"] = {"action": "create"}
        if isinstance(proposal, dict):
            proposal.setdefault("action", "create")
            proposal.setdefault("proposed_by", actor)
            proposal.setdefault("proposed_at", now)
        if "retention" not in out:
            lane = out.get("lane")
            out["retention"] = (
                {"occurred_at": now} if lane == "episodic" else {"started_at": now} if lane == "session" else {}
            )
        if not out.get("id") and isinstance(out.get("title"), str):
            out["id"] = new_id(out["title"], now)
        if "origin" not in out and isinstance(out.get("id"), str):
            out["origin"] = {"origin_key": f"proposal:{out['id']}", "route": DEFAULT_ROUTE}
        if "description" not in out and isinstance(out.get("title"), str):
            out["description"] = _description(self.body, out["title"])
        ordered = {key: out[key] for key in FIELD_ORDER if key in out}
        ordered.update({key: value for key, value in out.items() if key not in ordered})
        return ordered


@dataclass(frozen=True, kw_only=True)
class MemoryFields:
    """What a new memory says, as `propose` and `local add` take it from their flags (None: not given).

    `body` is the text itself (the front end reads --body-file). Each command applies its own
    rules and defaults: lifecycle.propose.draft for a proposal, local.memory.add for local memory.
    """

    title: str | None = None
    body: str | None = None
    type: str | None = None
    lane: str | None = None
    description: str | None = None
    applies_to: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    source: str | None = None
    source_ref: str | None = None
    occurred_at: str | None = None
    expires_at: str | None = None
