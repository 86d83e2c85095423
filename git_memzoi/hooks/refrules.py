"""The lifecycle rules: records change only as apply changes them, resolved packets only grow.

Each rule compares two .memzoi/ trees. The hooks run them twice: on every pushed commit against
its first parent (so no commit of the history edits memory), and on what each pushed ref would
hold against what it holds now (so that no parent a pusher chooses, such as an orphan root under
a merge, can launder an edit or a deletion, and so that a retirement comes with its packet).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from git_memzoi.errors import FormatError
from git_memzoi.gitrepo.history import History, TreeChange
from git_memzoi.layout import MAX_FILE_BYTES, PENDING, RECORDS, RESOLVED, RESOLVED_BY_OUTCOME, SUFFIX
from git_memzoi.profile import frontmatter, retention
from git_memzoi.profile.document import ParsedPacket, ParsedRecord, Problem
from git_memzoi.profile.timefmt import format_rfc3339
from git_memzoi.profile.tree import TreeReport
from git_memzoi.runtime.config import HooksConfig

APPLIED = f"{RESOLVED_BY_OUTCOME['applied']}/"
#: The only in-place edit a canonical record may receive: apply's one-line status transition.
ALLOWED_TRANSITIONS = {"active": frozenset({"superseded", "tombstoned", "expired"})}
#: The transitions apply makes, and the packet action that makes each.
APPLY_ACTIONS = {"superseded": "supersede", "tombstoned": "tombstone"}

#: Parses one file of a tree (path, blob OID, is a symlink) into its own validation report, cached.
Parse = Callable[[str, str, bool], TreeReport]


def is_record_path(path: str) -> bool:
    return path.startswith(RECORDS + "/") and path.endswith(SUFFIX)


def _old_record(change: TreeChange, parse: Parse) -> ParsedRecord | None:
    if change.old_oid is None or change.old_symlink:
        return None
    return parse(change.path, change.old_oid, False).records.get(change.path)


def record_rule(history: History, parse: Parse, change: TreeChange) -> Problem | None:
    """record-deleted / record-edited for one changed record file; None for apply's status change."""
    parsed = _old_record(change, parse)
    if parsed is None:
        return None  # a new record, or replacing a file that never was a valid record (a fix)
    record_id = parsed.record.id
    assert change.old_oid is not None  # a parsed old record has a blob
    if change.new_oid is None:
        return Problem(
            change.path,
            1,
            "record-deleted",
            f"record {record_id!r} is deleted; records leave current memory through a "
            "tombstone or supersede, never by deletion",
        )
    if history.size(change.new_oid) > MAX_FILE_BYTES:  # not read: refused by its size, and an edit
        return Problem(change.path, 1, "record-edited", f"record {record_id!r} is edited in place")
    old_raw, new_raw = history.blob(change.old_oid), history.blob(change.new_oid)
    if not change.new_symlink and transition_to(old_raw, new_raw, parsed.record.status) is not None:
        return None
    return Problem(
        change.path,
        first_difference(old_raw, new_raw),
        "record-edited",
        f"record {record_id!r} is edited in place; only apply's status change "
        "(active -> superseded, tombstoned or expired) may touch a canonical record",
    )


def packet_rule(history: History, parse: Parse, change: TreeChange, new_memzoi: str | None) -> Problem | None:
    """packet-deleted / packet-edited for one changed file under proposals/resolved/."""
    if not change.path.startswith(RESOLVED + "/") or change.old_oid is None or change.old_symlink:
        return None
    parsed = parse(change.path, change.old_oid, False).packets.get(change.path)
    if parsed is None:
        return None  # fixing a file that never was a valid packet is not an edit
    pid = parsed.packet.id
    if change.new_oid is None:
        name = change.path.rsplit("/", 1)[-1]
        back = " (moved back to pending)" if history.has_path(new_memzoi, f"{PENDING}/{name}") else ""
        return Problem(
            change.path,
            1,
            "packet-deleted",
            f"resolved packet {pid!r} is deleted{back}; resolved packets are append-only",
        )
    if history.size(change.new_oid) > MAX_FILE_BYTES:  # not read: refused by its size, and an edit
        return Problem(change.path, 1, "packet-edited", f"resolved packet {pid!r} is edited")
    old_raw, new_raw = history.blob(change.old_oid), history.blob(change.new_oid)
    return Problem(
        change.path,
        first_difference(old_raw, new_raw),
        "packet-edited",
        f"resolved packet {pid!r} is edited; resolved packets are append-only",
    )


@dataclass
class _Applied:
    """What the applied packets of one tree vouch for: retirements by (action, record) and created IDs."""

    retirements: set[tuple[str, str]]
    affected: set[str]


def ref_rules(
    history: History,
    parse: Parse,
    base: str | None,
    tip: str | None,
    policy: HooksConfig,
    *,
    now: datetime,
    lease_hours: float,
) -> list[Problem]:
    """What a ref would hold (`tip`) against what it holds (`base`), both .memzoi/ subtree OIDs.

    `now` is the push's time, against which a record's own retention decides whether it may
    become `expired`; `lease_hours` is the server's [retention] session lease.
    """
    problems: list[Problem] = []
    applied: _Applied | None = None
    for change in history.changes(base, tip):
        if is_record_path(change.path):
            problem = record_rule(history, parse, change)
            if problem is not None and not policy.allow_in_place_edits:
                problems.append(problem)
                continue
            retired = _retirement(history, parse, change, loose=policy.allow_in_place_edits)
            if retired is not None and retired[1] == "expired":
                early = _early_expiry(parse, change, now, lease_hours)
                if early is not None:
                    problems.append(early)
            elif retired is not None:
                applied = applied if applied is not None else _applied(history, parse, tip)
                record_id, status = retired
                if (APPLY_ACTIONS[status], record_id) not in applied.retirements:
                    problems.append(
                        Problem(
                            change.path,
                            _status_line(parse, change),
                            "unreviewed-transition",
                            f"record {record_id!r} becomes {status} without the applied {APPLY_ACTIONS[status]} "
                            f"packet that names it (under {APPLIED})",
                        )
                    )
            elif policy.require_proposals and _old_record(change, parse) is None:
                new = _new_record(parse, change)
                if new is None:
                    continue
                applied = applied if applied is not None else _applied(history, parse, tip)
                if new.record.id not in applied.affected:
                    problems.append(
                        Problem(
                            change.path,
                            1,
                            "unreviewed-record",
                            f"new record {new.record.id!r} has no applied packet naming it (under {APPLIED}); "
                            "[hooks] require_proposals = true asks every new record for one",
                        )
                    )
        else:
            problem = packet_rule(history, parse, change, tip)
            if problem is not None:
                problems.append(problem)
    return problems


def _early_expiry(parse: Parse, change: TreeChange, now: datetime, lease_hours: float) -> Problem | None:
    """unreviewed-expiry when a record becomes expired before its own retention boundary (None: it has passed)."""
    parsed = _old_record(change, parse)
    assert parsed is not None  # a retirement has an old record
    record = parsed.record
    fields = record.retention.model_dump()
    # No runtime facts at the server: facts only ever extend an episodic window, so without
    # them the boundary is the earliest the record could expire, never a later one.
    b = retention.boundary(record.id, record.lane, "active", fields, (), lease_hours)
    if b.at is not None and now >= b.at:
        return None
    why = f"it is current until {format_rfc3339(b.at)} ({b.basis})" if b.at is not None else b.basis
    return Problem(
        change.path,
        _status_line(parse, change),
        "unreviewed-expiry",
        f"record {record.id!r} becomes expired while its own retention keeps it current: {why}",
    )


def _retirement(history: History, parse: Parse, change: TreeChange, *, loose: bool) -> tuple[str, str] | None:
    """(record ID, new status) when the change takes an active record to superseded, tombstoned or expired.

    Strictly that is apply's one-line status change; `loose` (in-place edits allowed) also
    counts a change that edits other lines along with the status, which needs the same packet.
    """
    parsed = _old_record(change, parse)
    if parsed is None or change.new_oid is None or change.new_symlink:
        return None
    if history.size(change.new_oid) > MAX_FILE_BYTES:
        return None  # not read: refused by its size
    status = transition_to(history.blob(change.old_oid or ""), history.blob(change.new_oid), parsed.record.status)
    if status is None and loose:
        new = _new_record(parse, change)
        allowed = ALLOWED_TRANSITIONS.get(parsed.record.status, frozenset())
        if new is not None and new.record.id == parsed.record.id and new.record.status in allowed:
            status = new.record.status
    return (parsed.record.id, status) if status is not None else None


def _new_record(parse: Parse, change: TreeChange) -> ParsedRecord | None:
    if change.new_oid is None or change.new_symlink:
        return None
    return parse(change.path, change.new_oid, False).records.get(change.path)


def _status_line(parse: Parse, change: TreeChange) -> int:
    assert change.new_oid is not None
    parsed = parse(change.path, change.new_oid, False).records.get(change.path)
    return parsed.doc.line_of(("status",)) if parsed is not None else 1


def _applied(history: History, parse: Parse, tip: str | None) -> _Applied:
    found = _Applied(set(), set())
    for path, entry in history.listing(tip).items():
        if not path.startswith(APPLIED) or entry.is_symlink:
            continue
        parsed: ParsedPacket | None = parse(path, entry.oid, False).packets.get(path)
        if parsed is None or parsed.packet.status != "applied" or parsed.packet.resolution is None:
            continue
        packet = parsed.packet
        affected = set(packet.resolution.affected_record_ids) if packet.resolution is not None else set()
        found.affected |= affected
        if packet.target_id is not None and packet.target_id in affected:
            found.retirements.add((packet.proposal.action, packet.target_id))
    return found


def transition_to(old_raw: bytes, new_raw: bytes, old_status: str) -> str | None:
    """The new status when `new_raw` is `old_raw` with only its top-level status line changed, as apply does."""
    try:
        old_text, new_text = old_raw.decode("utf-8"), new_raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    for status in sorted(ALLOWED_TRANSITIONS.get(old_status, ())):
        try:
            if frontmatter.set_top_level_scalar(old_text, "status", status) == new_text:
                return status
        except FormatError:
            return None
    return None


def first_difference(old: bytes, new: bytes) -> int:
    """The first line number at which two files differ."""
    old_lines, new_lines = old.split(b"\n"), new.split(b"\n")
    for number, (a, b) in enumerate(zip(old_lines, new_lines, strict=False), start=1):
        if a != b:
            return number
    return min(len(old_lines), len(new_lines)) + (len(old_lines) != len(new_lines))
