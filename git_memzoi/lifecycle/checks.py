"""Checks planning shares: the target rules, resolved-packet collisions, and validating what a plan writes."""

from __future__ import annotations

from git_memzoi.errors import FormatError, Refused
from git_memzoi.lifecycle import packets
from git_memzoi.lifecycle.plan import FileChange
from git_memzoi.lifecycle.state import Snapshot
from git_memzoi.profile import frontmatter
from git_memzoi.profile.document import InvalidDocument, ParsedPacket, ParsedRecord, read_record
from git_memzoi.profile.timefmt import format_rfc3339, parse_rfc3339
from git_memzoi.profile.tree import SourceFile, validate_tree


def target(snap: Snapshot, parsed: ParsedPacket, where: str) -> ParsedRecord:
    """The supersede/tombstone target, refusing unless it exists, is active, matches the scope, and is unchanged."""
    packet = parsed.packet
    tid = packet.target_id
    assert tid is not None
    field = "supersedes" if packet.proposal.action == "supersede" else "proposal.target"
    info = snap.record(tid)
    if info is None or snap.target is None or snap.target.path != info.path:
        raise Refused(f"{where}: {field}: target record {tid!r} does not exist in {packets.RECORDS}/",
                      code="target-missing")
    facts = snap.target
    try:
        parsed_target = read_record(facts.raw, facts.path)
    except InvalidDocument as exc:
        raise Refused(f"{where}: {field}: target {facts.path} is not a valid record ({exc.problems[0]})",
                      code="target-invalid") from None
    record = parsed_target.record
    if record.status != "active":
        raise Refused(f"{where}: {field}: target record {tid!r} ({facts.path}) is {record.status}, not active",
                      code="target-inactive")
    kind = packets.scope_kind(packet)
    if record.scope != kind:
        raise Refused(f"{where}: scope.kind: the proposal's scope maps to {kind!r} but target {tid!r} has scope "
                      f"{record.scope!r}", code="target-scope")
    scope_id = packet.scope.id if packet.scope is not None else None
    if scope_id is not None and scope_id not in (snap.repository_name, snap.repository_key):
        raise Refused(f"{where}: scope.id: {scope_id!r} does not name this repository ({snap.repository_name}); "
                      f"target {tid!r} belongs to it", code="target-scope")
    if not facts.clean:
        raise Refused(f"{where}: target {facts.path} has uncommitted changes (or is untracked); it must be unchanged "
                      f"since proposal.proposed_at", hint="commit or restore the record first", code="target-changed")
    if facts.last_change is None:
        raise Refused(f"{where}: target {facts.path} is not in any commit on HEAD; it must be committed and unchanged "
                      f"since proposal.proposed_at", code="target-changed")
    sha, when = facts.last_change
    proposed = parse_rfc3339(packet.proposal.proposed_at)
    if when > proposed:
        raise Refused(f"{where}: target {facts.path} changed after the proposal: commit {sha[:12]} at "
                      f"{format_rfc3339(when)} is later than proposal.proposed_at {packet.proposal.proposed_at}",
                      hint="propose again against the current record", code="target-changed")
    return parsed_target


def resolved_collision(snap: Snapshot, parsed: ParsedPacket, *, intent: str) -> str | None:
    """Refuse a proposal ID that a different resolved packet uses; return the outcome when it is this very packet."""
    pid = parsed.packet.id
    for outcome in ("applied", "rejected"):
        rel = packets.resolved_path(outcome, pid)
        existing = snap.read(rel)
        if existing is None:
            continue
        try:
            same = packets.same_packet(frontmatter.parse(existing, rel), parsed.doc)
        except FormatError:
            same = False
        if same:
            return outcome
        raise Refused(f"proposal ID {pid!r} collides with the resolved packet {rel}; cannot {intent} it",
                      hint="give the new proposal its own ID", code="packet-id-collision")
    return None


def no_symlinked_parent(snap: Snapshot, path: str) -> None:
    parts = path.split("/")
    for end in range(1, len(parts) + 1):
        prefix = "/".join(parts[:end])
        if prefix in snap.symlinks:
            raise Refused(f"{prefix} is a symlink; memory files and folders must be real", code="symlink")
        if end < len(parts) and prefix in snap.files:
            raise Refused(f"{prefix} is a file where {path} needs a folder", code="path-conflict")


def outputs(changes: list[FileChange], known_ids: set[str]) -> None:
    """Validate every file a plan writes (committed mode); a failure here is a bug, reported, never installed."""
    files = [SourceFile(c.path, (lambda data=c.after: data))  # type: ignore[misc]
             for c in changes if c.after is not None and c.path.startswith(packets.MEMZOI + "/")]
    report = validate_tree(files, mode="committed")
    for problem in report.errors:
        if problem.code == "resolution-orphan" and all(i in known_ids for i in _affected(problem.path, changes)):
            continue
        raise Refused(f"the planned file would not validate: {problem}", code="plan-invalid")


def _affected(path: str, changes: list[FileChange]) -> list[str]:
    for change in changes:
        if change.path == path and change.after is not None:
            block = frontmatter.parse(change.after, path).data.get("resolution") or {}
            return list(block.get("affected_record_ids") or [])
    return []
