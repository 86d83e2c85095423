"""Apply an approved inbox proposal or a reviewed pending packet file: create, supersede or tombstone."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from git_memzoi.errors import FormatError, Refused, UsageError
from git_memzoi.index.inbox_store import DbChange, EventSpec, ProposalRow
from git_memzoi.layout import GITATTRIBUTES, LOG, record_path, resolved_path
from git_memzoi.lifecycle import checks, install, packets, recovery, state, targets
from git_memzoi.lifecycle.plan import FileChange, Plan, RecordChange, new_dirs_for
from git_memzoi.lifecycle.state import Snapshot
from git_memzoi.lifecycle.targets import Settled, Source
from git_memzoi.profile import concept_id as concept
from git_memzoi.profile import frontmatter
from git_memzoi.profile.document import InvalidDocument, ParsedPacket, read_record
from git_memzoi.runtime.workspace import Workspace

#: How many `-N` suffixes a supersede tries when its default concept ID is taken.
MAX_SUFFIX = 50


@dataclass(frozen=True)
class ApplyOptions:
    reviewer: str
    now: str
    concept_id: str | None = None
    reason: str | None = None


@dataclass
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
    """The complete apply of `src` against `snap` (pure): or Settled when it is already applied."""
    parsed = src.require_valid()
    packet = parsed.packet
    pid, action, where = packet.id, packet.proposal.action, _where(src)
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
    if not packet.repo_safe:
        _refuse_sensitivity(parsed, where)
    if packets.scope_kind(packet) == "local":
        raise Refused(
            f"{where}: scope.kind: local memory cannot become a repository record",
            hint="keep it with git memzoi local add",
            code="scope-local",
        )

    changes: list[FileChange] = []
    records: list[RecordChange] = []
    affected: list[str] = []
    replayed = (
        snap.record_with_origin(packet.origin.origin_key, packet.origin.route)
        if action in ("create", "supersede")
        else None
    )
    if replayed is not None:
        affected = [replayed.id or replayed.path]
        summary = f"exact source replay of {affected[0]}: no new record"
    else:
        target = checks.target(snap, parsed, where, base) if action != "create" else None
        if action in ("create", "supersede"):
            cid, rid = _new_record_path(snap, parsed, opts, where, target.record.id if target else None)
            path = record_path(cid)
            text = packets.record_text(
                parsed, record_id=rid, timestamp=opts.now, supersedes=target.record.id if target else None
            )
            try:
                read_record(text, path)
            except InvalidDocument as exc:
                raise Refused(
                    f"{where}: the record it maps to would not validate: {exc.problems[0]}", code="record-invalid"
                ) from None
            changes.append(FileChange(path, None, text))
            records.append(RecordChange(rid, path, "active", True))
            affected.append(rid)
        if target is not None:
            status = "superseded" if action == "supersede" else "tombstoned"
            assert snap.target is not None
            old = snap.target.raw
            try:
                new = frontmatter.set_top_level_scalar(old.decode("utf-8"), "status", status).encode("utf-8")
            except FormatError as exc:
                raise Refused(f"{snap.target.path}: {exc.message}", code="target-invalid") from None
            changes.append(FileChange(snap.target.path, old, new))
            records.append(RecordChange(target.record.id, snap.target.path, status, False))
            affected.append(target.record.id)
        summary = ", ".join(f"{'created' if r.created else r.status} {r.record_id}" for r in records)

    resolved = resolved_path("applied", pid)
    checks.no_symlinked_parent(snap, resolved)
    reason = (
        opts.reason
        if opts.reason is not None
        else (f"exact source replay of {affected[0]}" if replayed is not None else None)
    )
    block = packets.resolution("applied", opts.reviewer, opts.now, reason, affected)
    changes.append(FileChange(resolved, None, packets.resolved_text(parsed.doc, block)))
    if src.file_path is not None:
        changes.append(FileChange(src.file_path, src.file_raw, None))
    log_line = f"- {opts.now} applied {pid} ({action}): {summary}; reviewer {opts.reviewer}"
    changes.append(FileChange(LOG, snap.read(LOG), packets.append_log(snap.read(LOG), log_line)))
    attributes = packets.union_merge(snap.read(GITATTRIBUTES))
    if attributes is not None:
        changes.append(FileChange(GITATTRIBUTES, snap.read(GITATTRIBUTES), attributes))
    known = {a for a in affected if snap.record(a) is not None} | {r.record_id for r in records}
    checks.outputs(changes, known)

    row = src.row
    after = ProposalRow(
        id=pid,
        state="applied",
        packet=src.raw.decode("utf-8"),
        body_digest=packets.body_digest(parsed.doc.body),
        file_id=row.file_id if row else (src.file_id if src.file_path else None),
        created_at=row.created_at if row else opts.now,
        updated_at=opts.now,
        reviewer=opts.reviewer,
        reason=reason,
        resolved_at=opts.now,
        affected_ids=tuple(affected),
        target_blob=row.target_blob if row else base,
    )
    db = DbChange(
        event=EventSpec(
            "apply",
            (pid, *affected),
            {
                "action": action,
                "records": affected,
                "resolved": resolved,
                "replay": replayed is not None,
                "reviewer": opts.reviewer,
            },
        ),
        expect=((pid, row.state if row else None),),
        upsert=after,
    )
    outcome_name = "replay" if replayed is not None else "applied"
    message = (
        f"{pid} is an exact source replay of record {affected[0]}: nothing new created; resolved as applied"
        if replayed is not None
        else f"applied {pid} ({action}): {summary}"
    )
    return Plan(
        "apply",
        pid,
        action,
        outcome_name,
        tuple(changes),
        db,
        new_dirs_for([c.path for c in changes if c.before is None], snap.dirs),
        tuple(records),
        resolved,
        log_line,
        (message,),
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
        opts = ApplyOptions(reviewer or state.who(ws.repo), state.now_text(), concept_id, reason)
        plan = plan_apply(snap, found, opts, receipt, base)
        if isinstance(plan, Settled):
            return _settled(plan, session.repaired)
        warnings, sha = install.install_and_commit(ws, session.root, session.conn, plan, verb="apply", commit=commit)
    return ApplyResult(
        plan.proposal_id,
        plan.outcome,
        plan.action,
        list(plan.records),
        plan.paths,
        plan.resolved_path,
        sha,
        plan.messages[0],
        warnings,
        session.repaired,
    )


def _settled(found: Settled, repaired: list[str]) -> ApplyResult:
    if found.outcome == "rejected":
        raise Refused(found.message + "; it cannot be applied", code="rejected")
    return ApplyResult(
        found.proposal_id,
        "already-applied",
        resolved_path=found.path,
        message=f"nothing to do: {found.message}",
        repaired=repaired,
    )
