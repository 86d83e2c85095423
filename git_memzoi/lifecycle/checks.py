"""Checks planning shares: the target rules, resolved-packet collisions, and validating what a plan writes."""

from __future__ import annotations

from datetime import datetime

from git_memzoi.errors import FormatError, Refused
from git_memzoi.index.inbox_store import ProposalRow
from git_memzoi.layout import MEMZOI_DIR, RECORDS, resolved_path
from git_memzoi.lifecycle import packets
from git_memzoi.lifecycle.plan import FileChange
from git_memzoi.lifecycle.state import Snapshot, TargetFacts
from git_memzoi.profile import frontmatter
from git_memzoi.profile.document import InvalidDocument, ParsedPacket, ParsedRecord, read_record
from git_memzoi.profile.timefmt import format_rfc3339, parse_rfc3339
from git_memzoi.profile.tree import SourceFile, validate_tree


def proposed_base(parsed: ParsedPacket, raw: bytes, row: ProposalRow | None) -> str | None:
    """The target blob a proposal was made against: the packet's proposal.target_blob, else its inbox row's.

    The row's counts only when the row holds this very packet text (a file may reuse a row's ID).
    """
    given = parsed.packet.proposal.target_blob
    if given is not None:
        return given
    if row is not None and row.target_blob is not None and row.packet.encode("utf-8") == raw:
        return row.target_blob
    return None


def history_since(parsed: ParsedPacket, base: str | None) -> datetime | None:
    """Where the history fallback starts (proposal.proposed_at), or None when a base makes it unnecessary."""
    if base is not None or parsed.packet.proposal.action == "create":
        return None
    return parse_rfc3339(parsed.packet.proposal.proposed_at)


def target(snap: Snapshot, parsed: ParsedPacket, where: str, base: str | None) -> ParsedRecord:
    """The supersede/tombstone target, refusing unless it exists, is active, matches the scope, and is unchanged.

    Unchanged means: clean in the work tree and, when the proposal carries the target's blob OID
    (`base`), HEAD holds exactly that blob; without one, no commit on the target's simplified
    history after proposal.proposed_at changed it (the gathered `change_after`).
    """
    packet = parsed.packet
    tid = packet.target_id
    assert tid is not None
    field = "supersedes" if packet.proposal.action == "supersede" else "proposal.target"
    if len(snap.target_paths) > 1:
        raise Refused(
            f"{where}: {field}: target record {tid!r} is ambiguous: {len(snap.target_paths)} files carry "
            f"this ID ({', '.join(snap.target_paths)})",
            hint="give all but one of them another ID (git memzoi validate reports the duplicate)",
            code="target-ambiguous",
        )
    if snap.target is None:
        not_checked_out(snap, tid, f"{where}: {field}: ")
        raise Refused(f"{where}: {field}: target record {tid!r} does not exist in {RECORDS}/", code="target-missing")
    facts = snap.target
    try:
        parsed_target = read_record(facts.raw, facts.path)
    except InvalidDocument as exc:
        raise Refused(
            f"{where}: {field}: target {facts.path} is not a valid record ({exc.problems[0]})", code="target-invalid"
        ) from None
    record = parsed_target.record
    if record.id != tid:
        raise Refused(
            f"{where}: {field}: target record {tid!r} does not exist in {RECORDS}/ "
            f"({facts.path} now carries {record.id!r})",
            code="target-missing",
        )
    if record.status != "active":
        raise Refused(
            f"{where}: {field}: target record {tid!r} ({facts.path}) is {record.status}, not active",
            code="target-inactive",
        )
    kind = packets.scope_kind(packet)
    if record.scope != kind:
        raise Refused(
            f"{where}: scope.kind: the proposal's scope maps to {kind!r} but target {tid!r} has scope {record.scope!r}",
            code="target-scope",
        )
    scope_id = packet.scope.id if packet.scope is not None else None
    if scope_id is not None and scope_id not in (snap.repository_name, snap.repository_key):
        raise Refused(
            f"{where}: scope.id: {scope_id!r} does not name this repository ({snap.repository_name}); "
            f"target {tid!r} belongs to it",
            code="target-scope",
        )
    _unchanged(facts, where, base, packet.proposal.proposed_at)
    return parsed_target


def _unchanged(facts: TargetFacts, where: str, base: str | None, proposed_at: str) -> None:
    """Refuse a target that changed since it was proposed: dirty, uncommitted, or changed on HEAD since."""
    if not facts.clean:
        raise Refused(
            f"{where}: target {facts.path} has uncommitted changes (or is untracked); it must be unchanged "
            f"since it was proposed",
            hint="commit or restore the record first",
            code="target-changed",
        )
    if facts.head_blob is None:
        raise Refused(
            f"{where}: target {facts.path} is not in any commit on HEAD; it must be committed and unchanged "
            f"since it was proposed",
            code="target-changed",
        )
    if base is not None:
        if facts.head_blob != base:
            raise Refused(
                f"{where}: target {facts.path} changed after the proposal: it is blob "
                f"{facts.head_blob[:12]}, the proposal was made against blob {base[:12]} "
                f"(proposal.target_blob)",
                hint="propose again against the current record",
                code="target-changed",
            )
    elif facts.change_after is not None:
        sha, when = facts.change_after
        raise Refused(
            f"{where}: target {facts.path} changed after the proposal: commit {sha[:12]} at "
            f"{format_rfc3339(when)} is later than proposal.proposed_at {proposed_at}",
            hint="propose again against the current record",
            code="target-changed",
        )


def not_checked_out(snap: Snapshot, record_id: str, where: str = "") -> None:
    """Refuse to act on a record that git tracks but this sparse checkout leaves out of the work tree."""
    hidden = snap.left_out.path_with_id(record_id) if snap.left_out is not None else None
    if hidden is not None and hidden not in snap.files:
        raise Refused(
            f"{where}record {record_id!r} ({hidden}) is not checked out: this sparse checkout leaves it out",
            hint=f"git sparse-checkout add {hidden.rsplit('/', 1)[0]}",
            code="not-checked-out",
        )


def resolved_collision(snap: Snapshot, parsed: ParsedPacket, *, intent: str) -> str | None:
    """Refuse a proposal ID that a different resolved packet uses; return the outcome when it is this very packet."""
    pid = parsed.packet.id
    for outcome in ("applied", "rejected"):
        rel = resolved_path(outcome, pid)
        existing = snap.read(rel)
        if existing is None:
            continue
        try:
            same = packets.same_packet(frontmatter.parse(existing, rel), parsed.doc)
        except FormatError:
            same = False
        if same:
            return outcome
        raise Refused(
            f"proposal ID {pid!r} collides with the resolved packet {rel}; cannot {intent} it",
            hint="give the new proposal its own ID",
            code="packet-id-collision",
        )
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
    files = [
        SourceFile(c.path, (lambda data=c.after: data))  # type: ignore[misc]
        for c in changes
        if c.after is not None and c.path.startswith(MEMZOI_DIR + "/")
    ]
    report = validate_tree(files, mode="committed", scan_logs=False)  # refuse_secrets scans what is appended
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
