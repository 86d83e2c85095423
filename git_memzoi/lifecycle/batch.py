"""Apply many new packets as one all-or-nothing step: plan every apply, merge the plans, install once.

`import --apply` uses it: the packets never exist as pending files on their own; the one install
writes every record, resolved packet and status change, one log.md receipt and the inbox rows,
under one journal, so a crash leaves the tree as before the batch or as after it.

A batch may leave out the resolved packet of each create (`keep_created=False`): the record
then carries the packet's evidence (`source`, `source_ref`, `origin`, `proposal_id`), the
log.md receipt names the batch, and the packet stays in the proposal's inbox row. A supersede
or tombstone always keeps its resolved packet: the status it flips is allowed only with it; so
does a create whose packet was a pending file (`import --write`), which was reviewed as a file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from git_memzoi.errors import Refused
from git_memzoi.index.inbox_store import DbChange, EventSpec, ProposalRow
from git_memzoi.layout import GITATTRIBUTES, LOG, pending_path, resolved_path
from git_memzoi.lifecycle import packets, recovery, state, transaction
from git_memzoi.lifecycle.apply import ApplyOptions, plan_apply
from git_memzoi.lifecycle.plan import FileChange, Plan, RecordChange, new_dirs_for
from git_memzoi.lifecycle.targets import Settled, Source
from git_memzoi.runtime.workspace import Workspace


@dataclass(frozen=True)
class BatchPacket:
    """One packet of a batch: its bytes, and the concept ID its new record takes (None: apply's default)."""

    proposal_id: str
    raw: bytes
    concept_id: str | None = None
    pending: bool = False  # the packet is the pending file of its ID (written earlier, reviewed): apply removes it


@dataclass
class BatchResult:
    """What a batch apply did."""

    name: str
    records: list[RecordChange] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    applied: list[str] = field(default_factory=list)
    commit: str | None = None
    warnings: list[str] = field(default_factory=list)
    repaired: list[str] = field(default_factory=list)


def _source(item: BatchPacket) -> Source:
    where = pending_path(item.proposal_id)
    parsed = packets.load_packet(item.raw, where)
    if parsed.packet.id != item.proposal_id:
        raise Refused(f"{where}: id: {parsed.packet.id!r} is not the file's ID {item.proposal_id!r}", code="packet-id")
    return Source(item.proposal_id, "file", None, where, item.raw if item.pending else None, item.raw, parsed, None)


def merge(
    name: str, plans: list[Plan], log_before: bytes | None, receipt: str | None, *, keep_created: bool = True
) -> Plan:
    """One Plan doing what `plans` do: their files (each path once) and one log.md line, `receipt`.

    The packets' own log lines are left out: the batch's receipt names them all at once, and each
    resolved packet keeps its own outcome. A `receipt` of None keeps each packet's own line
    instead, as applying them one by one would write. Without `keep_created` a create's resolved
    packet is left out too (a second copy of its record's text).
    """
    files: list[FileChange] = []
    seen: set[str] = set()
    rows: list[ProposalRow] = []
    ids: list[str] = []
    records: list[RecordChange] = []
    for plan in plans:
        # a packet that was a pending file (import --write, reviewed as such) keeps its resolved packet
        was_file = any(c.path == pending_path(plan.proposal_id) and c.before is not None for c in plan.files)
        creates = not keep_created and not was_file and plan.action == "create" and plan.outcome == "applied"
        dropped = resolved_path("applied", plan.proposal_id) if creates else None
        for change in plan.files:
            if change.path in (LOG, GITATTRIBUTES, dropped) or (change.before is None and change.after is None):
                continue
            if change.path in seen:
                raise Refused(f"{change.path}: two packets of the batch change it; nothing was changed")
            seen.add(change.path)
            files.append(change)
        if plan.db.upsert is not None:
            rows.append(plan.db.upsert)
        ids.append(plan.proposal_id)
        records.extend(plan.records)
    lines = [receipt] if receipt is not None else [plan.log_line or "" for plan in plans]
    # the log is read and copied once, whatever the number of lines (it has no size limit)
    log = packets.append_log(log_before, lines[0]) + b"".join(packets.append_log(b"", line) for line in lines[1:])
    files.append(FileChange(LOG, log_before, log))
    db = DbChange(
        event=EventSpec("apply", tuple(ids), {"batch": name, "packets": len(ids)}),
        expect=tuple((pid, None) for pid in ids),
        upsert=rows[0] if rows else None,
        more=tuple(rows[1:]),
    )
    return Plan(
        operation="apply",
        proposal_id=name,
        action="batch",
        outcome="applied",
        files=tuple(files),
        db=db,
        records=tuple(records),
        log_line=receipt if receipt is not None else lines[-1],
        messages=(f"applied {len(plans)} packets ({name})",),
    )


@dataclass(frozen=True, kw_only=True)
class BatchOptions:
    """How a batch is applied: who reviewed it, whether it is committed, what it leaves out, a check under the lock.

    `keep_created=False` leaves out each create's resolved packet (see the module's docstring).
    `before_install` gets what the lock's repair settled, first thing under the lock: a caller
    that planned the batch before taking it refuses there when that plan read a torn tree.
    """

    reviewer: str | None = None
    commit: bool = False
    keep_created: bool = True
    before_install: Callable[[list[str]], None] | None = None


def apply_batch(
    ws: Workspace, name: str, batch: list[BatchPacket], receipt: str | None, options: BatchOptions | None = None
) -> BatchResult:
    """Apply every packet of `batch` under repo-lifecycle.lock in one install; refuse all if one is refused.

    `receipt` None appends each packet's own log.md line instead of one for the batch.
    """
    o = options or BatchOptions()
    with recovery.locked(ws) as session:
        if o.before_install is not None:
            o.before_install(session.repaired)
        opts = ApplyOptions(reviewer=o.reviewer or state.who(ws.repo), now=state.now_text())
        sources = [_source(item) for item in batch]
        reads = [LOG, GITATTRIBUTES]
        for src in sources:
            pid = src.proposal_id
            reads += [resolved_path("applied", pid), resolved_path("rejected", pid)]
        shared = state.gather(ws, read=reads, records=True)
        plans: list[Plan] = []
        for item, src in zip(batch, sources, strict=True):
            parsed = src.require_valid()
            tid = parsed.packet.target_id
            snap = shared if tid is None else state.gather(ws, read=reads, target_id=tid, records=True)
            base = parsed.packet.proposal.target_blob
            planned = plan_apply(snap, src, replace(opts, concept_id=item.concept_id), None, base)
            if isinstance(planned, Settled):
                raise Refused(f"{src.proposal_id}: {planned.message}; nothing was changed", code="already-applied")
            plans.append(planned)
        attributes = packets.union_merge(shared.read(GITATTRIBUTES))
        plan = merge(name, plans, shared.read(LOG), receipt, keep_created=o.keep_created)
        if attributes is not None:
            extra = FileChange(GITATTRIBUTES, shared.read(GITATTRIBUTES), attributes)
            plan = replace(plan, files=(*plan.files, extra))
        paths = [c.path for c in plan.files if c.before is None]
        plan = replace(plan, new_dirs=new_dirs_for(paths, shared.dirs))
        warnings, sha = transaction.install_and_commit(
            ws, session.root, session.conn, plan, verb="apply", commit=o.commit
        )
    return BatchResult(
        name, list(plan.records), plan.paths, [p.proposal_id for p in plans], sha, warnings, session.repaired
    )
