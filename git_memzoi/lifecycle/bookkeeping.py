"""What every resolution (apply, reject) writes besides its own change, planned once for both.

A resolved packet under resolved/<outcome>/ with its resolution block; the pending file removed;
one line appended to log.md; the union merge rule in .gitattributes; and the proposal's row in
its resolved state.
"""

from __future__ import annotations

from dataclasses import dataclass

from git_memzoi.index.inbox_store import ProposalRow
from git_memzoi.layout import GITATTRIBUTES, LOG, resolved_path
from git_memzoi.lifecycle import checks, packets
from git_memzoi.lifecycle.plan import FileChange
from git_memzoi.lifecycle.state import Snapshot
from git_memzoi.lifecycle.targets import Source
from git_memzoi.profile.document import ParsedPacket


@dataclass(frozen=True, kw_only=True)
class Resolution:
    """How a proposal is resolved: the outcome, who decided, when, why, and the record IDs it touched."""

    outcome: str  # applied | rejected
    reviewer: str
    now: str
    reason: str | None
    affected: tuple[str, ...] = ()


def resolved_file(snap: Snapshot, parsed: ParsedPacket, res: Resolution) -> FileChange:
    """The packet as resolved/<outcome>/<id>.md, with its resolution block."""
    path = resolved_path(res.outcome, parsed.packet.id)
    checks.no_symlinked_parent(snap, path)
    block = packets.resolution(res.outcome, res.reviewer, res.now, res.reason, list(res.affected))
    return FileChange(path, None, packets.resolved_text(parsed.doc, block))


def tail(snap: Snapshot, src: Source, log_line: str) -> list[FileChange]:
    """The pending packet file removed (when there is one), the log line, and .gitattributes' union rule."""
    changes: list[FileChange] = []
    if src.file_path is not None:
        changes.append(FileChange(src.file_path, src.file_raw, None))
    changes.append(FileChange(LOG, snap.read(LOG), packets.append_log(snap.read(LOG), log_line)))
    attributes = packets.union_merge(snap.read(GITATTRIBUTES))
    if attributes is not None:
        changes.append(FileChange(GITATTRIBUTES, snap.read(GITATTRIBUTES), attributes))
    return changes


def resolved_row(src: Source, parsed: ParsedPacket, res: Resolution, base: str | None = None) -> ProposalRow:
    """The proposal's inbox row once resolved (`base`: the target blob when the proposal has no row yet)."""
    row = src.row
    return ProposalRow(
        id=parsed.packet.id,
        state=res.outcome,
        packet=src.raw.decode("utf-8"),
        body_digest=packets.body_digest(parsed.doc.body),
        file_id=row.file_id if row else (src.file_id if src.file_path else None),
        created_at=row.created_at if row else res.now,
        updated_at=res.now,
        reviewer=res.reviewer,
        reason=res.reason,
        resolved_at=res.now,
        affected_ids=res.affected,
        target_blob=row.target_blob if row else base,
    )
