"""The lifecycle rules: records change only as apply changes them, resolved packets only grow.

Each rule compares two .memzoi/ trees. The hooks run them twice: on every pushed commit against
its first parent (so no commit of the history edits memory), and on what each pushed ref would
hold against what it holds now (so that no parent a pusher chooses, such as an orphan root under
a merge, can launder an edit or a deletion, and so that a retirement comes with its packet).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from git_memzoi.errors import FormatError
from git_memzoi.gitrepo.history import History, TreeChange
from git_memzoi.layout import MAX_FILE_BYTES, PENDING, RECORDS, RESOLVED, RESOLVED_BY_OUTCOME, SUFFIX
from git_memzoi.profile import frontmatter
from git_memzoi.profile.document import ParsedPacket, ParsedRecord, Problem
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


def ref_rules(history: History, parse: Parse, base: str | None, tip: str | None, policy: HooksConfig) -> list[Problem]:
    """What a ref would hold (`tip`) against what it holds (`base`), both .memzoi/ subtree OIDs."""
    if policy.allow_in_place_edits:
        return []  # the repository opted out of every lifecycle rule
    problems: list[Problem] = []
    applied: _Applied | None = None
    for change in history.changes(base, tip):
        if is_record_path(change.path):
            problem = record_rule(history, parse, change)
            if problem is not None:
                problems.append(problem)
                continue
            retired = _retirement(history, parse, change)
            if retired is not None:
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


def _retirement(history: History, parse: Parse, change: TreeChange) -> tuple[str, str] | None:
    """(record ID, new status) when the change is apply's supersede or tombstone of a record."""
    parsed = _old_record(change, parse)
    if parsed is None or change.new_oid is None or change.new_symlink:
        return None
    if history.size(change.new_oid) > MAX_FILE_BYTES:
        return None  # not read: refused by its size
    status = transition_to(history.blob(change.old_oid or ""), history.blob(change.new_oid), parsed.record.status)
    return (parsed.record.id, status) if status in APPLY_ACTIONS else None


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
