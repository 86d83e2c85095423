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
from typing import Any

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


@dataclass(frozen=True)
class PacketDraft:
    """What a proposal says before it has an ID and times: the fields given, as the profile names them.

    `fields` is a partial packet frontmatter mapping; values are kept exactly as given (the
    packet's validation judges them, with located errors). `body` is the Markdown body.
    """

    fields: Mapping[str, Any]
    body: str

    @classmethod
    def create(
        cls,
        *,
        type: str,
        lane: str,
        title: str,
        body: str,
        action: str = "create",
        target: str | None = None,
        reason: str | None = None,
        description: str | None = None,
        applies_to: tuple[str, ...] = (),
        tags: tuple[str, ...] = (),
        sensitivity: str = "repo-safe",
        content_class: str = "general_repo_knowledge",
        visibility: str | None = None,
        source: str | None = None,
        source_ref: str | None = None,
        confidence: float | None = None,
        confidence_label: str | None = None,
        origin: Mapping[str, str] | None = None,
        retention: Mapping[str, str] | None = None,
        proposed_by: str | None = None,
    ) -> PacketDraft:
        """A draft from named values (flags, a local record); None and empty values are left out."""
        proposal: dict[str, Any] = {"action": action}
        if proposed_by:
            proposal["proposed_by"] = proposed_by
        if reason is not None:
            proposal["reason"] = reason
        if action == "tombstone":
            proposal["target"] = target
        if confidence_label is not None:
            proposal["confidence"] = confidence_label
        data: dict[str, Any] = {"type": type, "lane": lane, "title": title}
        if description is not None:
            data["description"] = description
        data["proposal"] = proposal
        scope: dict[str, Any] = {"kind": "project"}
        if applies_to:
            scope["paths"] = list(applies_to)
        data["scope"] = scope
        if tags:
            data["tags"] = list(tags)
        if proposed_by:
            data["created_by"] = proposed_by
        if source is not None:
            data["source"] = source
        if source_ref is not None:
            data["source_ref"] = source_ref
        data["supersedes"] = [target] if action == "supersede" else []
        data["sensitivity"] = sensitivity
        data["content_class"] = content_class
        if visibility is not None:
            data["visibility"] = visibility
        if confidence is not None:
            data["confidence"] = confidence
        if retention is not None:
            data["retention"] = dict(retention)
        if origin is not None:
            data["origin"] = dict(origin)
        return cls(data, body)

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
