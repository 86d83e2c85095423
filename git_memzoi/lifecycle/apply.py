"""Apply an approved inbox proposal or a reviewed pending packet file: create, supersede or tombstone."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from git_memzoi.errors import FormatError, Refused, UsageError
from git_memzoi.index.inbox_store import DbChange, EventSpec
from git_memzoi.layout import GITATTRIBUTES, LOG, record_path, resolved_path
from git_memzoi.lifecycle import bookkeeping, checks, packets, recovery, state, targets, transaction
from git_memzoi.lifecycle.bookkeeping import Resolution
from git_memzoi.lifecycle.plan import FileChange, Plan, RecordChange, new_dirs_for
from git_memzoi.lifecycle.state import Snapshot
from git_memzoi.lifecycle.targets import Settled, Source
from git_memzoi.profile import concept_id as concept
from git_memzoi.profile import frontmatter
from git_memzoi.profile.document import InvalidDocument, ParsedPacket, ParsedRecord, read_record
from git_memzoi.runtime.workspace import Workspace

#: How many `-N` suffixes a supersede tries when its default concept ID is taken.
MAX_SUFFIX = 50


@dataclass(frozen=True, kw_only=True)
class ApplyOptions:
    reviewer: str
    now: str
    concept_id: str | None = None
    reason: str | None = None


@dataclass(kw_only=True)
class ApplyResult:
    """What an apply did (or why it had nothing to do)."""

    proposal_id: str | None
    outcome: str  # applied | replay | already-applied
    action: str | None = None
    records: list[RecordChange] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    resolved_path: str | None = None
    commit: str | None = None
    message: str = ""
    warnings: list[str] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "proposal_id": self.proposal_id,
            "outcome": self.outcome,
            "action": self.action,
            "records": [
                {"id": r.record_id, "path": r.path, "status": r.status, "created": r.created} for r in self.records
            ],
            "files": self.files,
            "resolved_path": self.resolved_path,
            "commit": self.commit,
            "message": self.message,
            "warnings": self.warnings,
            "repaired": self.repaired,
        }


def _where(src: Source) -> str:
    return src.file_path if src.via == "file" and src.file_path else f"inbox:{src.proposal_id}"


def _check_source(src: Source, parsed: ParsedPacket, where: str) -> Settled | None:
    """Refuse sources whose inbox state or file status forbids an apply; Settled when it is already applied."""
    pid = parsed.packet.id
    row = src.row
    if (
        row is not None
        and src.via == "file"
        and row.state in ("applied", "rejected")
        and not _same_text(row.packet, parsed)
    ):
        raise Refused(
            f"{where}: id: proposal ID {pid!r} collides with a different proposal that was {row.state}",
            hint="give the new proposal its own ID",
            code="packet-id-collision",
        )
    if row is not None:
        if row.state == "applied":
            return Settled("applied", pid, None, f"{pid} is already applied")
        if row.state == "rejected":
            raise Refused(
                f"{pid} was rejected ({row.reason or 'no reason given'}); it cannot be applied", code="rejected"
            )
        if not parsed.packet.repo_safe:
            _refuse_sensitivity(parsed, where)
        if src.via == "inbox" and row.state != "approved":
            hint = f"git memzoi approve {pid}" if row.state == "validated" else None
            if src.file_path:
                hint = f"approve it, or apply the reviewed packet file: git memzoi apply {src.file_path}"
            raise Refused(
                f"{pid} is {row.state}; only an approved inbox proposal can be applied", hint=hint, code="not-approved"
            )
    if parsed.packet.status != "proposed":
        raise Refused(
            f"{where}: status: {parsed.packet.status}; only a pending packet (status: proposed) can be applied",
            code="packet-status",
        )
    if src.via == "inbox" and src.file_raw is not None and src.file_raw != src.raw:
        raise Refused(
            f"{src.file_path} differs from inbox proposal {pid}",
            hint=f"apply the reviewed file (git memzoi apply {src.file_path}) or reject one of them",
            code="packet-differs",
        )
    return None


def _refuse_sensitivity(parsed: ParsedPacket, where: str) -> None:
    packet = parsed.packet
    declared = packet.sensitivity if packet.sensitivity_declared else "unknown (not declared)"
    raise Refused(
        f"{where}: sensitivity: {declared} is not repo-safe; such a proposal can only be rejected", code="sensitivity"
    )


def _same_text(stored: str, parsed: ParsedPacket) -> bool:
    try:
        return packets.same_packet(frontmatter.parse(stored.encode("utf-8")), parsed.doc)
    except FormatError:
        return False


def _new_record_path(
    snap: Snapshot, parsed: ParsedPacket, opts: ApplyOptions, where: str, exclude_id: str | None
) -> tuple[str, str]:
    """(concept ID, record ID) of the record a create or supersede adds."""
    packet = parsed.packet
    if opts.concept_id is not None:
        candidates = [(opts.concept_id, "concept_id")]
    elif packet.proposal.action == "supersede":
        candidates = [(packets.default_concept_id(packet, n), where) for n in range(1, MAX_SUFFIX + 1)]
    else:
        candidates = [(packets.default_concept_id(packet), where)]
    last_error: Refused | None = None
    for cid, origin in candidates:
        try:
            concept.check(cid)
        except FormatError as exc:
            raise FormatError(exc.code, exc.message, path=origin, hint="give a valid concept ID instead") from None
        path = record_path(cid)
        rid = packets.record_id_for(cid)
        checks.no_symlinked_parent(snap, path)
        if snap.exists(path) or (snap.left_out is not None and snap.left_out.holds(path)):
            out = "" if snap.exists(path) else "; git tracks it, but this sparse checkout leaves it out"
            last_error = Refused(
                f"concept ID {cid!r} already exists ({path}{out})",
                hint="give another concept ID",
                code="concept-id-exists",
            )
            continue
        holder = snap.record(rid)
        hidden = snap.left_out.path_with_id(rid) if holder is None and snap.left_out is not None else None
        if holder is not None or hidden is not None or rid == exclude_id:
            where_used = (
                holder.path
                if holder is not None
                else f"{hidden}, which this sparse checkout leaves out"
                if hidden is not None
                else "the superseded record"
            )
            last_error = Refused(
                f"record ID {rid!r} (the last segment of concept ID {cid!r}) is already used by {where_used}",
                hint="give another concept ID",
                code="record-id-exists",
            )
            continue
        return cid, rid
    assert last_error is not None
    raise last_error


def plan_apply(
    snap: Snapshot, src: Source, opts: ApplyOptions, receipt: Settled | None = None, base: str | None = None
) -> Plan | Settled:
    """The complete apply of `src` against `snap` (pure): or Settled when it is already applied.

    In four steps: the checks, the record changes, the bookkeeping every resolution shares with
    reject (resolved packet, pending file, log line, .gitattributes), and the database change.
    """
    parsed = src.require_valid()
    where = _where(src)
    settled = _checks(snap, src, parsed, where, receipt)
    if settled is not None:
        return settled
    made = _record_changes(snap, parsed, opts, where, base)
    pid, action = parsed.packet.id, parsed.packet.proposal.action
    reason = opts.reason
    if reason is None and made.replayed:
        reason = f"exact source replay of {made.affected[0]}"
    res = Resolution(outcome="applied", reviewer=opts.reviewer, now=opts.now, reason=reason, affected=made.affected)
    log_line = f"- {opts.now} applied {pid} ({action}): {made.summary}; reviewer {opts.reviewer}"
    changes = [*made.files, bookkeeping.resolved_file(snap, parsed, res), *bookkeeping.tail(snap, src, log_line)]
    known = {a for a in made.affected if snap.record(a) is not None} | {r.record_id for r in made.records}
    checks.outputs(changes, known)
    message = (
        f"{pid} is an exact source replay of record {made.affected[0]}: nothing new created; resolved as applied"
        if made.replayed
        else f"applied {pid} ({action}): {made.summary}"
    )
    return Plan(
        operation="apply",
        proposal_id=pid,
        action=action,
        outcome="replay" if made.replayed else "applied",
        files=tuple(changes),
        db=_db_change(src, parsed, res, base, replayed=made.replayed),
        new_dirs=new_dirs_for([c.path for c in changes if c.before is None], snap.dirs),
        records=made.records,
        resolved_path=resolved_path("applied", pid),
        log_line=log_line,
        messages=(message,),
    )


def _checks(snap: Snapshot, src: Source, parsed: ParsedPacket, where: str, receipt: Settled | None) -> Settled | None:
    """Refuse what may not be applied; Settled when it already is."""
    pid = parsed.packet.id
    outcome = checks.resolved_collision(snap, parsed, intent="apply")
    if outcome == "applied":
        return Settled(
            "applied", pid, resolved_path("applied", pid), f"{pid} is already applied ({resolved_path('applied', pid)})"
        )
    if outcome == "rejected":
        raise Refused(
            f"{pid} was already rejected ({resolved_path('rejected', pid)}); it cannot be applied", code="rejected"
        )
    settled = _check_source(src, parsed, where)
    if settled is not None:
        return settled
    if receipt is not None:
        raise Refused(
            f"{where}: id: this proposal ID belongs to a proposal rejected as not repo-safe "
            f"({receipt.path}); give the packet a new ID",
            code="packet-id-collision",
        )
    if not parsed.packet.repo_safe:
        _refuse_sensitivity(parsed, where)
    if packets.scope_kind(parsed.packet) == "local":
        raise Refused(
            f"{where}: scope.kind: local memory cannot become a repository record",
            hint="keep it with git memzoi local add",
            code="scope-local",
        )
    return None


@dataclass(frozen=True, kw_only=True)
class _Made:
    """The record side of an apply: the files it changes, the records, the IDs it touches, a summary."""

    files: tuple[FileChange, ...] = ()
    records: tuple[RecordChange, ...] = ()
    affected: tuple[str, ...]
    replayed: bool = False
    summary: str


def _record_changes(snap: Snapshot, parsed: ParsedPacket, opts: ApplyOptions, where: str, base: str | None) -> _Made:
    """The new record (create, supersede) and the retired target (supersede, tombstone); none for a replay."""
    packet = parsed.packet
    action = packet.proposal.action
    if action in ("create", "supersede"):
        replayed = snap.record_with_origin(packet.origin.origin_key, packet.origin.route)
        if replayed is not None:
            first = replayed.id or replayed.path
            return _Made(affected=(first,), replayed=True, summary=f"exact source replay of {first}: no new record")
    target = checks.target(snap, parsed, where, base) if action != "create" else None
    made = [_new_record(snap, parsed, opts, where, target)] if action in ("create", "supersede") else []
    if target is not None:
        made.append(_retire(snap, target.record.id, action))
    records = tuple(record for _, record in made)
    return _Made(
        files=tuple(change for change, _ in made),
        records=records,
        affected=tuple(r.record_id for r in records),
        summary=", ".join(f"{'created' if r.created else r.status} {r.record_id}" for r in records),
    )


def _new_record(
    snap: Snapshot, parsed: ParsedPacket, opts: ApplyOptions, where: str, target: ParsedRecord | None
) -> tuple[FileChange, RecordChange]:
    """The record a create or supersede adds, validated as it will be written."""
    old_id = target.record.id if target else None
    cid, rid = _new_record_path(snap, parsed, opts, where, old_id)
    path = record_path(cid)
    text = packets.record_text(parsed, record_id=rid, timestamp=opts.now, supersedes=old_id)
    try:
        read_record(text, path)
    except InvalidDocument as exc:
        raise Refused(
            f"{where}: the record it maps to would not validate: {exc.problems[0]}", code="record-invalid"
        ) from None
    return FileChange(path, None, text), RecordChange(record_id=rid, path=path, status="active", created=True)


def _retire(snap: Snapshot, record_id: str, action: str) -> tuple[FileChange, RecordChange]:
    """The target's status set to superseded or tombstoned, its text otherwise as it is."""
    status = "superseded" if action == "supersede" else "tombstoned"
    assert snap.target is not None
    old = snap.target.raw
    try:
        new = frontmatter.set_top_level_scalar(old.decode("utf-8"), "status", status).encode("utf-8")
    except FormatError as exc:
        raise Refused(f"{snap.target.path}: {exc.message}", code="target-invalid") from None
    change = RecordChange(record_id=record_id, path=snap.target.path, status=status, created=False)
    return FileChange(snap.target.path, old, new), change


def _db_change(src: Source, parsed: ParsedPacket, res: Resolution, base: str | None, *, replayed: bool) -> DbChange:
    """The proposal's row as applied, guarded by the state it was planned from, with the audit event."""
    pid = parsed.packet.id
    return DbChange(
        event=EventSpec(
            "apply",
            (pid, *res.affected),
            {
                "action": parsed.packet.proposal.action,
                "records": list(res.affected),
                "resolved": resolved_path("applied", pid),
                "replay": replayed,
                "reviewer": res.reviewer,
            },
        ),
        expect=((pid, src.row.state if src.row else None),),
        upsert=bookkeeping.resolved_row(src, parsed, res, base),
    )


def apply(
    ws: Workspace,
    target: str,
    *,
    reviewer: str | None = None,
    concept_id: str | None = None,
    reason: str | None = None,
    commit: bool = False,
) -> ApplyResult:
    """Apply TARGET under the lock, all or nothing; optionally record exactly its files in one commit."""
    if reason is not None and not reason.strip():
        raise UsageError("must not be empty", field="reason")
    with recovery.resolving(ws, target) as (session, found):
        if isinstance(found, Settled):
            return _settled(found, session.repaired)
        parsed = found.require_valid()
        receipt = targets.hashed(session.root, session.conn, parsed.packet.id)
        base = checks.proposed_base(parsed, found.raw, found.row)
        snap = state.gather(
            ws,
            read=[
                LOG,
                GITATTRIBUTES,
                resolved_path("applied", parsed.packet.id),
                resolved_path("rejected", parsed.packet.id),
            ],
            target_id=parsed.packet.target_id,
            since=checks.history_since(parsed, base),
            records=True,
        )
        opts = ApplyOptions(
            reviewer=reviewer or state.who(ws.repo), now=state.now_text(), concept_id=concept_id, reason=reason
        )
        plan = plan_apply(snap, found, opts, receipt, base)
        if isinstance(plan, Settled):
            return _settled(plan, session.repaired)
        warnings, sha = transaction.install_and_commit(
            ws, session.root, session.conn, plan, verb="apply", commit=commit
        )
    return ApplyResult(
        proposal_id=plan.proposal_id,
        outcome=plan.outcome,
        action=plan.action,
        records=list(plan.records),
        files=plan.paths,
        resolved_path=plan.resolved_path,
        commit=sha,
        message=plan.messages[0],
        warnings=warnings,
        repaired=session.repaired,
    )


def _settled(found: Settled, repaired: list[str]) -> ApplyResult:
    if found.outcome == "rejected":
        raise Refused(found.message + "; it cannot be applied", code="rejected")
    return ApplyResult(
        proposal_id=found.proposal_id,
        outcome="already-applied",
        resolved_path=found.path,
        message=f"nothing to do: {found.message}",
        repaired=repaired,
    )
