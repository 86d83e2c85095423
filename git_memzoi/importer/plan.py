"""Plan an import (pure): each item's action against the records earlier imports made, and the plan's ID."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from git_memzoi.importer import identity
from git_memzoi.importer.existing import Existing
from git_memzoi.importer.formats import Item
from git_memzoi.importer.sources import Loaded
from git_memzoi.layout import RECORDS, SUFFIX
from git_memzoi.profile import concept_id as concept

#: Actions that become packets.
CHANGES = ("create", "supersede", "tombstone")
#: How many `-N` suffixes a supersede's new concept ID tries (as apply does).
MAX_SUFFIX = 50


@dataclass
class Entry:
    """One line of the plan: what happens to one item (or to one record whose item is gone)."""

    action: str  # create | supersede | tombstone | unchanged | duplicate | generated | skipped
    where: str
    title: str
    type: str | None = None
    lane: str | None = None
    applies_to: tuple[str, ...] = ()
    concept_id: str | None = None
    origin_key: str | None = None
    target: Existing | None = None
    reason: str | None = None
    warnings: list[str] = field(default_factory=list)
    item: Item | None = None
    proposal_id: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "where": self.where,
            "title": self.title,
            "concept_id": self.concept_id,
            "type": self.type,
            "lane": self.lane,
            "applies_to": list(self.applies_to),
            "origin_key": self.origin_key,
            "target": self.target.id if self.target else None,
            "proposal_id": self.proposal_id,
            "reason": self.reason,
            "warnings": list(self.warnings),
        }


@dataclass
class ImportPlan:
    """Every entry of an import, the sources read, and the plan's ID (a digest of both)."""

    entries: list[Entry]
    sources: list[Loaded]
    plan_id: str = ""

    @property
    def changes(self) -> list[Entry]:
        return [e for e in self.entries if e.action in CHANGES]

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for entry in self.entries:
            out[entry.action] = out.get(entry.action, 0) + 1
        return out

    def as_json(self) -> dict[str, Any]:
        return {
            "plan_id": self.plan_id,
            "sources": [{"path": s.named, "file": s.real, "blob": s.oid, "format": s.fmt} for s in self.sources],
            "counts": self.counts(),
            "changes": len(self.changes),
            "entries": [e.as_json() for e in self.entries],
        }


@dataclass(frozen=True)
class Policy:
    """What the command line asks of the plan."""

    prune: bool = False
    adr_statuses: tuple[str, ...] = ("accepted",)
    type_override: str | None = None
    prune_paths: frozenset[str] | None = None  # only records from these sources may be pruned (None: any)


def _lane_for(kind: str) -> str:
    """The lane a forced type goes with: procedures and runbooks are procedural, everything else semantic."""
    return "procedural" if kind in ("procedure", "runbook") else "semantic"


def build(
    items: list[Item],
    sources: list[Loaded],
    imported: list[Existing],
    taken: Callable[[str], bool],
    policy: Policy,
    reported: list[Entry] | None = None,
) -> ImportPlan:
    """The plan for `items` against the `imported` records (`taken`: is a record ID in use?)."""
    entries: list[Entry] = list(reported or [])
    by_key: dict[str, list[Existing]] = {}
    for record in imported:
        by_key.setdefault(record.key_digest, []).append(record)
    seen_keys: set[str] = set()
    texts: dict[str, str] = {}
    ordinals: dict[str, int] = {}
    used_ids: set[str] = set()
    claimed: set[str] = set()
    replaces: dict[str, list[str]] = {}  # an ADR's path -> the paths of the ADRs it supersedes
    for item in items:
        for new in item.superseded_by:
            replaces.setdefault(new, []).append(item.source.real)
        for old in item.supersedes:
            replaces.setdefault(item.source.real, []).append(old)
    for item in items:
        base = identity.key(item)
        ordinals[base] = ordinals.get(base, 0) + 1
        item_key = identity.key(item, ordinals[base])
        digest = identity.key_digest(item_key)
        seen_keys.add(digest)
        if policy.type_override is not None and item.fmt != "adr":
            item.type = policy.type_override
            item.lane = _lane_for(item.type)
        entry = Entry("create", item.where, item.title, item.type, item.lane, item.applies_to, item=item)
        entry.warnings = list(item.warnings)
        entries.append(entry)
        if item.generated is not None:
            entry.action, entry.reason = "generated", item.generated
            continue
        if item.skip is not None:
            entry.action, entry.reason = "skipped", item.skip
            continue
        if item.fmt == "adr" and item.adr_status not in policy.adr_statuses:
            entry.action = "skipped"
            entry.reason = f"ADR status: {item.adr_status}"
            if item.superseded_by:
                entry.reason += " by " + ", ".join(item.superseded_by)
            continue
        body = identity.collapsed(item)  # both digests below are taken over it
        text = identity.text_digest(item, body)
        if text in texts:
            entry.action, entry.reason = "duplicate", f"same text as {texts[text]}"
            continue
        texts[text] = item.where
        origin = identity.origin_key(item_key, item, body, digest=digest)
        entry.origin_key = origin
        records = by_key.get(digest, [])
        if any(r.origin_key == origin and r.status == "active" for r in records):
            entry.action = "unchanged"
            entry.target = next(r for r in records if r.origin_key == origin and r.status == "active")
            continue
        active = [r for r in records if r.status == "active"]
        if not active and any(r.status == "tombstoned" for r in records):
            entry.action = "skipped"
            entry.reason = "tombstoned on purpose: " + next(r.id for r in records if r.status == "tombstoned")
            continue
        reason = f"{item.source.named} changed since {active[0].id} was imported" if active else ""
        if not active and not records and item.fmt == "adr":
            for old_path in replaces.get(item.source.real, []):
                old_key = identity.key_digest("\0".join(["adr", old_path]))
                active = [r for r in by_key.get(old_key, []) if r.status == "active" and r.id not in claimed]
                if active:
                    reason = f"{item.source.named} supersedes {old_path}"
                    break
        if active and active[0].id not in claimed:
            entry.action, entry.target, entry.reason = "supersede", active[0], reason
            claimed.add(active[0].id)
        _name(entry, taken, used_ids)
    for record in imported:
        if record.status != "active" or record.key_digest in seen_keys or record.id in claimed:
            continue
        ref = record.source_ref
        if policy.prune_paths is not None and (ref is None or ref.path not in policy.prune_paths):
            continue
        where = f"{ref.path}:{ref.first}-{ref.last}" if ref else record.path
        gone = Entry("tombstone", where, record.title, record.type, record.lane, record.applies_to, target=record)
        gone.concept_id = record.path.removeprefix(RECORDS + "/").removesuffix(SUFFIX)
        if policy.prune:
            gone.reason = f"its source is gone from {ref.path if ref else 'the imported files'}"
        else:
            gone.action, gone.reason = "skipped", "gone from its source; --prune tombstones it"
        entries.append(gone)
    plan = ImportPlan(entries, sources)
    for entry in plan.changes:
        entry.proposal_id = _proposal_id(entry)
    plan.plan_id = plan_digest(plan)
    return plan


def _name(entry: Entry, taken: Callable[[str], bool], used: set[str]) -> None:
    """Choose the new record's concept ID (what apply would choose), retitling when its record ID is taken."""
    item = entry.item
    assert item is not None and entry.type is not None
    base = entry.title
    titles = itertools.chain(
        (base, f"{base} ({item.source.named})"), (f"{base} ({item.source.named} {n})" for n in range(2, MAX_SUFFIX))
    )
    folder = f"{entry.lane}/{entry.type.replace('_', '-')}s"
    target = entry.target.id if entry.target else None
    for title in titles:
        slug = concept.slug(title)
        for suffix in range(1, (MAX_SUFFIX if entry.action == "supersede" else 1) + 1):
            rid = slug + (f"-{suffix}" if suffix > 1 else "")
            if rid in used or rid == target or taken(rid):
                continue
            used.add(rid)
            entry.title = title
            entry.concept_id = f"{folder}/{rid}"
            return
    entry.action, entry.reason = "skipped", "no free record ID for its title"


def _proposal_id(entry: Entry) -> str:
    """A packet ID that is the same whenever the same change is planned (so a second --write finds it)."""
    seed = "\0".join([entry.action, entry.origin_key or "", entry.target.id if entry.target else ""])
    tail = hashlib.sha256(seed.encode("utf-8")).hexdigest()[:10]
    return f"import_{concept.slug(entry.title, max_length=40).replace('-', '_')}_{tail}"


def plan_digest(plan: ImportPlan) -> str:
    """The plan's ID: a digest of every entry and every source blob, so any change to either changes it."""
    body = {
        "sources": [(s.named, s.oid) for s in plan.sources],
        "entries": [e.as_json() for e in plan.entries],
    }
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode("utf-8")).hexdigest()[:16]
