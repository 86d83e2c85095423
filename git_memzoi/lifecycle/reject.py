"""Reject an inbox proposal or a pending packet file, leaving a Git-readable resolution.

A repo-safe packet moves to resolved/rejected/ with its reviewed evidence and the resolution.
Anything else (a non-repo-safe packet, or one that does not even validate, so nobody can say it
is safe) becomes the generic hash-only receipt: nothing of its IDs or content reaches the tree,
and its aliases are stored hashed so a later lookup finds the rejection without echoing them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from git_memzoi.errors import Refused, UsageError
from git_memzoi.index.inbox_store import DbChange, EventSpec, ProposalRow, RejectionRow
from git_memzoi.layout import GITATTRIBUTES, LOG, resolved_path
from git_memzoi.lifecycle import bookkeeping, checks, packets, recovery, state, transaction
from git_memzoi.lifecycle.bookkeeping import Resolution
from git_memzoi.lifecycle.plan import FileChange, Plan, new_dirs_for
from git_memzoi.lifecycle.state import Snapshot
from git_memzoi.lifecycle.targets import Settled, Source
from git_memzoi.profile import vocab
from git_memzoi.runtime.workspace import Workspace


@dataclass(kw_only=True)
class RejectResult:
    """What a reject did (or why it had nothing to do)."""

    proposal_id: str | None  # None for a hash-only receipt: the original ID is never reported
    outcome: str  # rejected | already-rejected
    hash_only: bool
    resolved_path: str | None
    files: list[str] = field(default_factory=list)
    commit: str | None = None
    message: str = ""
    warnings: list[str] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "proposal_id": self.proposal_id,
            "outcome": self.outcome,
            "hash_only": self.hash_only,
            "resolved_path": self.resolved_path,
            "files": self.files,
            "commit": self.commit,
            "message": self.message,
            "warnings": self.warnings,
            "repaired": self.repaired,
        }


def _hash_only(src: Source) -> bool:
    return src.parsed is None or not src.parsed.packet.repo_safe


def plan_reject(snap: Snapshot, src: Source, *, reviewer: str, now: str, reason: str) -> Plan | Settled:
    """The complete reject of `src` against `snap` (pure), or Settled when it is already rejected."""
    row = src.row
    if row is not None and row.state == "applied":
        raise Refused(
            f"{src.proposal_id} is already applied; retire its record with a tombstone or supersede proposal instead",
            code="applied",
        )
    if row is not None and row.state == "rejected":
        return Settled("rejected", src.proposal_id, None, f"{src.proposal_id} is already rejected")
    if src.via == "inbox" and src.file_raw is not None and src.file_raw != src.raw:
        raise Refused(
            f"{src.file_path} differs from inbox proposal {src.proposal_id}",
            hint=f"reject the file (git memzoi reject {src.file_path}) and the inbox proposal separately",
            code="packet-differs",
        )
    if _hash_only(src):
        return _plan_receipt(snap, src, reviewer=reviewer, now=now, reason=reason)
    parsed = src.require_valid()
    pid = parsed.packet.id
    if parsed.packet.status != "proposed":
        raise Refused(
            f"{src.file_path or pid}: status: {parsed.packet.status}; only a pending packet can be rejected",
            code="packet-status",
        )
    outcome = checks.resolved_collision(snap, parsed, intent="reject")
    if outcome == "rejected":
        return Settled("rejected", pid, resolved_path("rejected", pid), f"{pid} is already rejected")
    if outcome == "applied":
        raise Refused(f"{pid} is already applied ({resolved_path('applied', pid)})", code="applied")
    res = Resolution(outcome="rejected", reviewer=reviewer, now=now, reason=reason)
    log_line = f"- {now} rejected {pid}: {packets.one_line(reason)}; reviewer {reviewer}"
    changes = [bookkeeping.resolved_file(snap, parsed, res), *bookkeeping.tail(snap, src, log_line)]
    checks.outputs(changes, set())
    resolved = resolved_path("rejected", pid)
    db = DbChange(
        EventSpec("reject", (pid,), {"resolved": resolved, "hash_only": False, "reviewer": reviewer}),
        expect=((pid, row.state if row else None),),
        upsert=bookkeeping.resolved_row(src, parsed, res),
    )
    return Plan(
        operation="reject",
        proposal_id=pid,
        action=parsed.packet.proposal.action,
        outcome="rejected",
        files=tuple(changes),
        db=db,
        new_dirs=new_dirs_for([c.path for c in changes if c.before is None], snap.dirs),
        resolved_path=resolved,
        log_line=log_line,
        messages=(f"rejected {pid}: moved to {resolved}",),
    )


def _plan_receipt(snap: Snapshot, src: Source, *, reviewer: str, now: str, reason: str) -> Plan | Settled:
    sensitivity = "unknown"
    if src.parsed is not None and src.parsed.packet.sensitivity in vocab.SENSITIVITIES:
        sensitivity = src.parsed.packet.sensitivity
    if sensitivity == vocab.REPO_SAFE:
        sensitivity = "unknown"  # an invalid packet: nobody showed it is safe
    rid, text, _ = packets.receipt_text(
        proposal_id=src.proposal_id,
        file_id=src.file_id,
        content=src.raw,
        sensitivity=sensitivity,
        reviewer=reviewer,
        resolved_at=now,
    )
    resolved = resolved_path("rejected", rid)
    if snap.exists(resolved):
        return Settled(
            "rejected", None, resolved, f"that proposal is already rejected (receipt {rid}, {resolved})", hash_only=True
        )
    checks.no_symlinked_parent(snap, resolved)
    log_line = f"- {now} rejected {rid} (hash-only receipt: not repo-safe, contents withheld); reviewer {reviewer}"
    changes = [FileChange(resolved, None, text), *bookkeeping.tail(snap, src, log_line)]
    checks.outputs(changes, set())
    aliases = sorted({packets.alias_sha256(src.proposal_id), packets.alias_sha256(src.file_id)})
    row = src.row
    receipt_row = ProposalRow(
        id=rid,
        state="rejected",
        packet=text.decode("utf-8"),
        body_digest=packets.digest("content", src.raw),
        file_id=None,
        created_at=now,
        updated_at=now,
        reviewer=reviewer,
        reason=reason,
        resolved_at=now,
        affected_ids=(),
    )
    expect: tuple[tuple[str, str | None], ...] = ((rid, None),)
    if row is not None:
        expect = ((row.id, row.state), *expect)
    db = DbChange(
        EventSpec("reject", (rid,), {"resolved": resolved, "hash_only": True, "reviewer": reviewer}),
        expect=expect,
        delete_ids=(row.id,) if row is not None else (),
        upsert=receipt_row,
        rejections=tuple(RejectionRow(a, rid, resolved, now) for a in aliases),
    )
    return Plan(
        operation="reject",
        proposal_id=rid,
        action="create",
        outcome="rejected",
        files=tuple(changes),
        db=db,
        new_dirs=new_dirs_for([c.path for c in changes if c.before is None], snap.dirs),
        resolved_path=resolved,
        log_line=log_line,
        messages=(f"rejected as a hash-only receipt {rid} ({resolved}); the packet's IDs and content were not kept",),
    )


def reject(
    ws: Workspace, target: str, reason: str, *, reviewer: str | None = None, commit: bool = False
) -> RejectResult:
    """Reject TARGET under the lock, all or nothing."""
    if not reason or not reason.strip():
        raise UsageError("must say why the proposal is rejected", field="reason")
    with recovery.resolving(ws, target) as (session, found):
        if isinstance(found, Settled):
            return _settled(found, session.repaired)
        pid = found.parsed.packet.id if found.parsed is not None else None
        read = [LOG, GITATTRIBUTES]
        if pid is not None:
            read += [resolved_path("applied", pid), resolved_path("rejected", pid)]
        snap = state.gather(ws, read=read)
        plan = plan_reject(
            snap, found, reviewer=reviewer or state.who(ws.repo), now=state.now_text(), reason=reason.strip()
        )
        if isinstance(plan, Settled):
            return _settled(plan, session.repaired)
        warnings, sha = transaction.install_and_commit(
            ws, session.root, session.conn, plan, verb="reject", commit=commit
        )
    hash_only = _hash_only(found)
    # a hash-only result never names the pending file: its name is the file ID alias
    files = [p for p in plan.paths if not (hash_only and p == found.file_path)]
    return RejectResult(
        proposal_id=None if hash_only else plan.proposal_id,
        outcome="rejected",
        hash_only=hash_only,
        resolved_path=plan.resolved_path,
        files=files,
        commit=sha,
        message=plan.messages[0],
        warnings=warnings,
        repaired=session.repaired,
    )


def _settled(found: Settled, repaired: list[str]) -> RejectResult:
    if found.outcome == "applied":
        raise Refused(found.message + "; it cannot be rejected", code="applied")
    return RejectResult(
        proposal_id=found.proposal_id,
        outcome="already-rejected",
        hash_only=found.hash_only,
        resolved_path=found.path,
        message=f"nothing to do: {found.message}",
        repaired=repaired,
    )
