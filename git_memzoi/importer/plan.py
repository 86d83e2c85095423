"""Plan an import (pure): each item's action against the records earlier imports made, and the plan's ID."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

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


@dataclass(slots=True)
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
    slug: str | None = None  # the slug of the new record ID (the packet ID is named after it)
    pending: bool = False  # its packet is already pending (an earlier --write): review it, it is not new

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
            "pending": self.pending,
        }


@dataclass
class ImportPlan:
    """Every entry of an import, the sources read, and the plan's ID (a digest of both)."""

    entries: list[Entry]
    sources: list[Loaded]
    plan_id: str = ""
    #: near-duplicates and likely contradictions for the reviewer (importer.groups), not part of the ID
    review_first: list[Any] = field(default_factory=list)

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
            "review_first": [g.as_json() for g in self.review_first],
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


class Known(Protocol):
    """The repository's records as a plan sees them."""

    imported: list[Existing]

    def taken(self, record_id: str) -> bool:
        """Is `record_id` already some record's ID?"""

    def at(self, concept_id: str) -> Existing | None:
        """The record at `concept_id`, whatever made it, or None."""


class NoRecords:
    """A repository without .memzoi/: no record, no ID taken."""

    def __init__(self) -> None:
        self.imported: list[Existing] = []

    def taken(self, record_id: str) -> bool:
        return False

    def at(self, concept_id: str) -> Existing | None:
        return None


@dataclass
class _State:
    """What a plan remembers from one item to the next."""

    by_key: dict[str, list[Existing]]
    replaces: dict[str, list[str]]  # an ADR's path -> the paths of the ADRs it supersedes
    known: Known
    policy: Policy
    seen_keys: set[str] = field(default_factory=set)
    spacing: dict[int, bool] = field(default_factory=dict)  # id(source) -> identity.plain_spaces(its text)
    texts: dict[str, str] = field(default_factory=dict)  # collapsed body -> where it was first seen
    ordinals: dict[str, int] = field(default_factory=dict)
    used_ids: set[str] = field(default_factory=set)
    claimed: set[str] = field(default_factory=set)

    @classmethod
    def start(cls, items: list[Item], known: Known, policy: Policy) -> _State:
        by_key: dict[str, list[Existing]] = {}
        for record in known.imported:
            by_key.setdefault(record.key_digest, []).append(record)
        replaces: dict[str, list[str]] = {}
        for item in items:
            for new in item.superseded_by:
                replaces.setdefault(new, []).append(item.source.real)
            if item.supersedes:
                replaces.setdefault(item.source.real, []).extend(item.supersedes)
        return cls(by_key, replaces, known, policy)

    def plain(self, source: Loaded) -> bool:
        """Is every space in `source` a space or a newline (its items' bodies are collapsed the quick way)?

        By the source's id: every item holds its source, so no two sources alive in one plan share one.
        """
        known = self.spacing.get(id(source))
        if known is None:
            known = self.spacing[id(source)] = identity.plain_spaces(source.text)
        return known

    def key_of(self, item: Item) -> tuple[str, str]:
        """(the item's key, its digest): a repeated heading path gets `#2`, `#3`."""
        item_key = identity.key(item)
        ordinal = self.ordinals.get(item_key, 0) + 1
        self.ordinals[item_key] = ordinal
        if ordinal > 1:
            item_key = identity.key(item, ordinal)
        digest = identity.key_digest(item_key)
        self.seen_keys.add(digest)
        return item_key, digest


def build(
    items: list[Item],
    sources: list[Loaded],
    known: Known,
    policy: Policy,
    reported: list[Entry] | None = None,
) -> ImportPlan:
    """The plan for `items` against the records `known` (those earlier imports made, and every record ID)."""
    state = _State.start(items, known, policy)
    entries: list[Entry] = list(reported or [])
    entries += [_plan_item(item, state) for item in items]
    entries.extend(_gone(known.imported, state))
    plan = ImportPlan(entries, sources)
    plan.plan_id = plan_digest(plan)
    return plan


def _left_out(item: Item, policy: Policy) -> tuple[str, str] | None:
    """(action, reason) of an item that is reported but never planned: generated, skipped, an ADR's status."""
    if item.generated is not None:
        return "generated", item.generated
    if item.skip is not None:
        return "skipped", item.skip
    if item.fmt == "adr" and item.adr_status not in policy.adr_statuses:
        reason = f"ADR status: {item.adr_status}"
        if item.superseded_by:
            reason += " by " + ", ".join(item.superseded_by)
        return "skipped", reason
    return None


def _plan_item(item: Item, state: _State) -> Entry:
    """The entry of one item: left out, a duplicate, unchanged, or a change with its new concept ID and packet ID."""
    item_key, digest = state.key_of(item)
    if state.policy.type_override is not None and item.fmt != "adr":
        item.type = state.policy.type_override
        item.lane = _lane_for(item.type)
    where = item.where
    entry = Entry("create", where, item.title, item.type, item.lane, item.applies_to, warnings=item.warnings, item=item)
    if item.generated is not None or item.skip is not None or item.fmt == "adr":  # most items are none of these
        left_out = _left_out(item, state.policy)
        if left_out is not None:
            entry.action, entry.reason = left_out
            return entry
    # duplicates are found by the collapsed body, and the origin is taken over it
    # the same text in two folders is a record per folder: each governs where its file does
    body = identity.collapsed(item, plain=state.plain(item.source))
    same = "\x1f".join((body, *item.applies_to))
    first = state.texts.get(same)
    if first is not None:
        entry.action, entry.reason = "duplicate", f"same text as {first}"
        return entry
    state.texts[same] = where
    entry.origin_key = identity.origin_key(item_key, item, body, digest=digest)
    records = state.by_key.get(digest)
    if records is None and item.concept_id is None and item.fmt != "adr":  # a new item: a create
        changed = True
    elif records is None and item.concept_id is not None:
        changed = _match_bundled(entry, item, item.concept_id, state)
    else:
        changed = _match(entry, records or [], state)
    if changed:
        _name(entry, state)
        if entry.action in CHANGES:
            entry.proposal_id = _proposal_id(entry)
    return entry


def _match_bundled(entry: Entry, item: Item, concept_id: str, state: _State) -> bool:
    """An OKF record no import made: against the record at its concept ID (True when it is a change)."""
    record = state.known.at(concept_id)
    if record is None:
        return True
    if record.raw.decode("utf-8", "replace").replace("\r\n", "\n").removeprefix("\ufeff") == item.source.text:
        entry.action, entry.target = "unchanged", record
        return False
    if record.status != "active":
        entry.action, entry.reason = "skipped", f"record {record.id} at {concept_id} is {record.status}"
        return False
    if record.id not in state.claimed:
        entry.action, entry.target = "supersede", record
        entry.reason = f"{item.source.named} differs from record {record.id}"
        state.claimed.add(record.id)
    return True


def _match(entry: Entry, records: list[Existing], state: _State) -> bool:
    """Settle `entry` against the records of its key: True when it is a change (create or supersede)."""
    item = entry.item
    assert item is not None
    if not records:  # a new item: a create, or a new ADR superseding an imported one
        if item.fmt == "adr":
            _supersede(entry, *_replaced_adr(item, state), state)
        return True
    active = [r for r in records if r.status == "active"]
    for record in active:
        if record.origin_key == entry.origin_key:  # its warnings were shown when it was planned
            entry.action, entry.target, entry.warnings = "unchanged", record, []
            return False
    tombstoned = [r.id for r in records if r.status == "tombstoned"]
    if not active and tombstoned:
        entry.action, entry.reason = "skipped", "tombstoned on purpose: " + tombstoned[0]
        return False
    reason = f"{item.source.named} changed since {active[0].id} was imported" if active else ""
    _supersede(entry, active, reason, state)
    return True


def _supersede(entry: Entry, active: list[Existing], reason: str, state: _State) -> None:
    """Make `entry` a supersede of the first `active` record, unless another item claimed it."""
    if active and active[0].id not in state.claimed:
        entry.action, entry.target, entry.reason = "supersede", active[0], reason
        state.claimed.add(active[0].id)


def _replaced_adr(item: Item, state: _State) -> tuple[list[Existing], str]:
    """The active record of an ADR this new ADR supersedes (linked either way), with the reason."""
    for old_path in state.replaces.get(item.source.real, []):
        old_key = identity.key_digest("\0".join(["adr", old_path]))
        active = [r for r in state.by_key.get(old_key, []) if r.status == "active" and r.id not in state.claimed]
        if active:
            return active, f"{item.source.named} supersedes {old_path}"
    return [], ""


def _gone(imported: list[Existing], state: _State) -> list[Entry]:
    """A tombstone (with --prune) or a report for each active imported record whose item is gone."""
    out: list[Entry] = []
    policy = state.policy
    for record in imported:
        if record.status != "active" or record.key_digest in state.seen_keys or record.id in state.claimed:
            continue
        ref = record.source_ref
        if policy.prune_paths is not None and (ref is None or ref.path not in policy.prune_paths):
            continue
        where = f"{ref.path}:{ref.first}-{ref.last}" if ref else record.path
        gone = Entry("tombstone", where, record.title, record.type, record.lane, record.applies_to, target=record)
        gone.concept_id = record.path.removeprefix(RECORDS + "/").removesuffix(SUFFIX)
        if policy.prune:
            gone.reason = f"its source is gone from {ref.path if ref else 'the imported files'}"
            gone.proposal_id = _proposal_id(gone)
        else:
            gone.action, gone.reason = "skipped", "gone from its source; --prune tombstones it"
        out.append(gone)
    return out


def _titles(base: str, named: str) -> Iterator[str]:
    """The titles a new record may take: its own, then with its source path, then numbered."""
    yield base
    yield f"{base} ({named})"
    for n in range(2, MAX_SUFFIX):
        yield f"{base} ({named} {n})"


def _free_id(slug: str, entry: Entry, state: _State) -> str | None:
    """The first record ID from `slug` that is free (a supersede may add `-2`… as apply does)."""
    target = entry.target.id if entry.target else None
    for suffix in range(1, (MAX_SUFFIX if entry.action == "supersede" else 1) + 1):
        rid = slug + (f"-{suffix}" if suffix > 1 else "")
        if rid not in state.used_ids and rid != target and not state.known.taken(rid):
            return rid
    return None


def _name(entry: Entry, state: _State) -> None:
    """Choose the new record's concept ID (what apply would choose), retitling when its record ID is taken.

    An OKF bundle's record keeps its concept ID while its record ID is free (a supersede: `<ID>-2`…).
    """
    item = entry.item
    assert item is not None and entry.type is not None
    if item.concept_id is not None:
        folder, _, rid = item.concept_id.rpartition("/")
        free = _free_id(rid, entry, state)
        if free is not None:
            state.used_ids.add(free)
            entry.concept_id, entry.slug = f"{folder}/{free}" if folder else free, rid
            return
    slug = concept.slug(entry.title)
    if entry.target is None and slug not in state.used_ids and not state.known.taken(slug):
        state.used_ids.add(slug)  # the first ID `_free_id` tries: most new records take their own title's
        entry.concept_id, entry.slug = f"{entry.lane}/{entry.type.replace('_', '-')}s/{slug}", slug
        return
    for title in _titles(entry.title, item.source.named):
        slug = concept.slug(title)
        free = _free_id(slug, entry, state)
        if free is not None:
            state.used_ids.add(free)
            entry.title = title
            entry.concept_id = f"{entry.lane}/{entry.type.replace('_', '-')}s/{free}"
            entry.slug = slug
            return
    entry.action, entry.reason = "skipped", "no free record ID for its title"


def _proposal_id(entry: Entry) -> str:
    """A packet ID that is the same whenever the same change is planned (so a second --write finds it)."""
    seed = f"{entry.action}\0{entry.origin_key or ''}\0{entry.target.id if entry.target else ''}"
    tail = hashlib.sha256(seed.encode("utf-8")).hexdigest()[:10]
    slug = entry.slug
    if slug is None:
        slug = concept.slug(entry.title, max_length=40)
    elif len(slug) > 40:
        slug = _shorter(slug, 40)
    return f"import_{slug.replace('-', '_')}_{tail}"


def _shorter(slug: str, max_length: int) -> str:
    """`concept.slug(title, max_length)` from `concept.slug(title)`: its words while they fit (hyphens join words)."""
    if len(slug) <= max_length:
        return slug
    cut = slug.rfind("-", 0, max_length + 1)
    return slug[:cut] if cut > 0 else "memory"


def plan_digest(plan: ImportPlan) -> str:
    """The plan's ID: a digest of every entry and every source blob, so any change to either changes it."""
    lines = [f"{source.named}\0{source.oid}\n" for source in plan.sources]
    for entry in plan.entries:
        fields = (
            entry.action,
            entry.where,
            entry.title,
            entry.concept_id or "",
            entry.type or "",
            entry.lane or "",
            "\x1f".join(entry.applies_to),
            entry.origin_key or "",
            entry.target.id if entry.target else "",
            entry.proposal_id or "",
            entry.reason or "",
            "\x1f".join(entry.warnings),
        )
        lines.append("\0".join(fields) + "\n")
    return hashlib.sha256("".join(lines).encode()).hexdigest()[:16]  # one update: the same digest as one a line
