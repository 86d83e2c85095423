"""The DB-local proposal inbox: submit (propose), approve, list and show.

States: pending -> validated -> approved -> applied | rejected. A proposal that validates and is
repo-safe is `validated` (or `approved` straight away under `[workflow] proposal_approval = "auto"`);
a proposal that is not repo-safe stays `pending`: it can only be rejected.
"""

from __future__ import annotations

import copy
import secrets
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from git_memzoi.errors import FormatError, NotFound, Refused, UsageError
from git_memzoi.gitrepo.identity import actor
from git_memzoi.index import inbox_store, shared_db
from git_memzoi.index.inbox_store import DbChange, EventSpec, ProposalRow
from git_memzoi.layout import pending_path
from git_memzoi.lifecycle import checks, packets, recovery, state, targets, transaction
from git_memzoi.lifecycle.draft import PacketDraft, new_id
from git_memzoi.lifecycle.plan import FileChange, Plan, new_dirs_for
from git_memzoi.lifecycle.state import Snapshot
from git_memzoi.profile import frontmatter
from git_memzoi.profile import secrets as secret_scan
from git_memzoi.profile.document import ParsedPacket
from git_memzoi.profile.timefmt import is_rfc3339, parse_rfc3339
from git_memzoi.runtime.workspace import Workspace


class InboxEntry(BaseModel):
    """One inbox proposal (or a pending packet file that is not in the inbox)."""

    model_config = ConfigDict(frozen=True)
    id: str
    state: str  # pending | validated | approved | applied | rejected, or `proposed` for a file only
    source: str  # inbox | file | inbox+file
    action: str | None
    title: str | None
    sensitivity: str | None
    file: str | None  # the pending packet path in this work tree, when there is one
    created_at: str | None = None
    updated_at: str | None = None
    reviewer: str | None = None
    reason: str | None = None
    resolved_at: str | None = None
    affected_ids: list[str] = []
    packet: str
    problem: str | None = None  # why a packet file does not validate
    messages: list[str] = []

    @property
    def proposal_id(self) -> str:
        return self.id

    def summary(self) -> dict[str, Any]:
        return self.model_dump(exclude={"packet", "messages"})


def _scan(raw: bytes) -> tuple[str, secret_scan.SecretFinding] | None:
    """The first secret-looking span in any field of the packet, with the field it is in."""
    text = raw.decode("utf-8", "replace")
    found = [(secret_scan.field_at(text, f.line), f) for f in secret_scan.scan(text)]
    if not found:
        return None
    # the body's heading repeats the title and the default description its first paragraph:
    # name the field the caller wrote (title, then body), else the first one in the file
    rank = {"title": 0, "body": 1}
    return min(found, key=lambda hit: rank.get(hit[0], 2))


# --- planning ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProposeContext:
    """What submit learned under the lock, so plan_propose stays pure."""

    now: str
    approval: str  # manual | auto
    packet_file: bool
    id_conflict: str | None = None  # why the proposal ID is taken
    twin: str | None = None  # the ID of a proposal with the same normalised body


def plan_propose(snap: Snapshot, raw: bytes, ctx: ProposeContext, id_hint: str) -> Plan:
    """Validate a new proposal and plan its inbox row (and pending packet file)."""
    where = pending_path(id_hint) if ctx.packet_file else f"inbox:{id_hint}"
    parsed = packets.load_packet(raw, where)
    packet = parsed.packet
    pid = packet.id
    if packet.status != "proposed":
        raise Refused(
            f"{where}: status: a new proposal has status: proposed, not {packet.status}", code="packet-status"
        )
    if ctx.id_conflict:
        raise Refused(
            f"{where}: id: {ctx.id_conflict}", hint="give the proposal another ID", code="packet-id-collision"
        )
    if ctx.twin:
        raise Refused(f"{where}: body: the same content is already proposed as {ctx.twin}", code="duplicate")
    hit = _scan(raw)
    messages: list[str] = []
    if packet.repo_safe:
        if hit is not None:
            name, finding = hit
            raise Refused(
                f"{where}: {name}: {finding.describe()}; remove it, or declare a non-repo-safe "
                f"sensitivity (then it can only stay in the local inbox)",
                code="secret",
            )
        if packets.scope_kind(packet) == "local":
            raise Refused(
                f"{where}: scope.kind: local memory cannot become a repository record",
                hint="keep it with git memzoi local add",
                code="scope-local",
            )
        if packet.proposal.action != "create":
            checks.target(snap, parsed, where, packet.proposal.target_blob)
        new_state = "approved" if ctx.approval == "auto" else "validated"
    else:
        if ctx.packet_file:
            raise Refused(
                f"{where}: sensitivity: {packet.sensitivity} packets are never written into the work tree",
                hint="propose it without a packet file to keep it in the local inbox",
                code="sensitivity",
            )
        new_state = "pending"
        messages.append(
            f"sensitivity {packet.sensitivity} is not repo-safe: {pid} stays in the local inbox and "
            f"can only be rejected"
        )
    changes: list[FileChange] = []
    file_id = None
    if ctx.packet_file:
        path = pending_path(pid)
        checks.no_symlinked_parent(snap, path)
        if snap.exists(path):
            raise Refused(f"{path} already exists", code="packet-id-collision")
        changes.append(FileChange(path, None, raw))
        file_id = pid
    base = packet.proposal.target_blob
    if base is None and packet.proposal.action != "create" and snap.target is not None:
        base = snap.target.head_blob  # checked above to be the work tree's bytes too, when repo-safe
    row = ProposalRow(
        id=pid,
        state=new_state,
        packet=raw.decode("utf-8"),
        body_digest=packets.body_digest(parsed.doc.body),
        file_id=file_id,
        created_at=ctx.now,
        updated_at=ctx.now,
        target_blob=base,
    )
    db = DbChange(
        EventSpec(
            "propose",
            (pid,),
            {
                "state": new_state,
                "action": packet.proposal.action,
                "packet_file": pending_path(pid) if file_id else None,
            },
        ),
        expect=((pid, None),),
        upsert=row,
    )
    messages.insert(
        0,
        f"proposed {pid} ({packet.proposal.action}): {new_state}"
        + (f", packet {pending_path(pid)}" if file_id else ""),
    )
    return Plan(
        operation="propose",
        proposal_id=pid,
        action=packet.proposal.action,
        outcome=new_state,
        files=tuple(changes),
        db=db,
        new_dirs=new_dirs_for([c.path for c in changes], snap.dirs),
        messages=tuple(messages),
    )


def plan_approve(row: ProposalRow, parsed: ParsedPacket | None, now: str, snap: Snapshot | None) -> Plan:
    """Move a validated (or a now-valid repo-safe pending) proposal to approved."""
    if row.state in ("applied", "rejected"):
        raise Refused(f"{row.id} is already {row.state}", code=row.state)
    if parsed is None:
        raise Refused(f"inbox:{row.id}: the stored packet does not validate; reject it", code="packet-invalid")
    if row.state == "pending":
        if not parsed.packet.repo_safe:
            raise Refused(
                f"inbox:{row.id}: sensitivity: {parsed.packet.sensitivity} is not repo-safe; it can only be rejected",
                code="sensitivity",
            )
        if parsed.packet.proposal.action != "create" and snap is not None:
            checks.target(
                snap, parsed, f"inbox:{row.id}", checks.proposed_base(parsed, row.packet.encode("utf-8"), row)
            )
    after = row._replace(state="approved", updated_at=now)
    db = DbChange(EventSpec("approve", (row.id,), {"from": row.state}), expect=((row.id, row.state),), upsert=after)
    return Plan(
        operation="approve",
        proposal_id=row.id,
        action=parsed.packet.proposal.action,
        outcome="approved",
        files=(),
        db=db,
        messages=(f"approved {row.id}",),
    )


# --- entry points ------------------------------------------------------------------------------------------


def _id_conflict(root: Any, conn: Any, pid: str) -> str | None:
    if inbox_store.get(conn, pid) is not None:
        return f"proposal ID {pid!r} is already in the inbox"
    if (root / pending_path(pid)).exists():
        return f"proposal ID {pid!r} is already used by {pending_path(pid)}"
    settled = targets.settled_by_name(root, conn, pid)
    if settled is not None:
        if settled.hash_only:
            return f"this proposal ID belongs to a proposal rejected as not repo-safe ({settled.path})"
        return f"proposal ID {pid!r} is already used by the resolved packet {settled.path}"
    return None


def _twin(snap: Snapshot, conn: Any, digest: str, pid: str) -> str | None:
    found = inbox_store.twin(conn, digest)
    if found is not None and found != pid:
        return found
    for path in inbox_store.pending_files(snap.workdir):
        try:
            doc = frontmatter.parse((snap.workdir / path).read_bytes(), path)
        except (FormatError, OSError):
            continue
        if packets.body_digest(doc.body) == digest:
            other = doc.data.get("id")
            return str(other) if isinstance(other, str) else path
    return None


def _target_id(data: dict[str, Any]) -> str | None:
    """The record a supersede or tombstone mapping names (unvalidated), or None."""
    proposal = data.get("proposal")
    if not isinstance(proposal, dict):
        return None
    found = None
    if proposal.get("action") == "tombstone":
        found = proposal.get("target")
    elif proposal.get("action") == "supersede" and isinstance(data.get("supersedes"), list) and data["supersedes"]:
        found = data["supersedes"][0]
    return found if isinstance(found, str) else None


def submit(
    ws: Workspace, data: dict[str, Any], body: str, *, packet_file: bool = False, fill: bool = True
) -> InboxEntry:
    """Add a proposal to the inbox from a packet frontmatter mapping and body (optionally writing its packet file).

    With `fill`, missing `kind`, `profile`, `status`, `timestamp`, `id`, `origin`, `description`,
    `retention` and `proposal.action/proposed_by/proposed_at` are filled in (a packet built from
    flags); without it the mapping is the whole packet. Everything else must be given and valid.
    """
    now = state.now_text()
    generated = not data.get("id")
    with recovery.locked(ws) as session:
        root = session.root
        draft, who = PacketDraft(data, body), state.who(ws.repo)
        completed = draft.to_packet(now=now, actor=who) if fill else copy.deepcopy(data)
        for _ in range(8 if fill and generated and isinstance(completed.get("id"), str) else 0):
            if _id_conflict(root, session.conn, completed["id"]) is None:
                break
            salted = new_id(str(completed.get("title")), now, salt=secrets.token_hex(4))
            completed = draft.to_packet(now=now, actor=who, proposal_id=salted)
        pid_hint = completed.get("id") if isinstance(completed.get("id"), str) else "new"
        proposal = completed.get("proposal")
        target_id = _target_id(completed)
        given_base = proposal.get("target_blob") if isinstance(proposal, dict) else None
        since = None
        if (
            target_id is not None
            and given_base is None
            and isinstance(proposal, dict)
            and isinstance(proposal.get("proposed_at"), str)
            and is_rfc3339(proposal["proposed_at"])
        ):
            since = parse_rfc3339(proposal["proposed_at"])  # a packet given with an earlier proposed_at
        snap = state.gather(ws, target_id=target_id, since=since)
        if (
            packet_file
            and isinstance(proposal, dict)
            and "target_blob" not in proposal
            and snap.target is not None
            and snap.target.clean
            and snap.target.head_blob is not None
        ):
            proposal["target_blob"] = snap.target.head_blob  # the reviewed file carries what it was made against
        raw = packets.render_packet(completed, body)
        conflict = _id_conflict(root, session.conn, str(pid_hint)) if isinstance(completed.get("id"), str) else None
        ctx = ProposeContext(
            now,
            ws.config.workflow.proposal_approval,
            packet_file,
            conflict,
            _twin(snap, session.conn, packets.body_digest(body), str(pid_hint)),
        )
        plan = plan_propose(snap, raw, ctx, str(pid_hint))
        transaction.install(root, ws.layout, session.conn, plan)
        row = inbox_store.get(session.conn, plan.proposal_id)
    assert row is not None
    return _entry(row, root, list(plan.messages) + session.repaired)


def submit_draft(ws: Workspace, draft: PacketDraft, *, packet_file: bool = False) -> InboxEntry:
    """Submit a new proposal described as a PacketDraft; its `to_packet` names and dates it."""
    return submit(ws, dict(draft.fields), draft.body, packet_file=packet_file)


def revise(ws: Workspace, proposal_id: str, raw: bytes) -> InboxEntry:
    """An open proposal's packet replaced by an edited one, validated as a new proposal is (same ID).

    The proposal goes back to `validated` (or `pending` when not repo-safe): an approval was of
    the old text. Its pending packet file, when it has one, gets the same bytes.
    """
    now = state.now_text()
    with recovery.locked(ws) as session:
        root = session.root
        row = inbox_store.get(session.conn, proposal_id)
        if row is None or row.state not in inbox_store.OPEN_STATES:
            raise Refused(f"{proposal_id}: only an open inbox proposal can be edited", code="not-open")
        where = f"inbox:{proposal_id}"
        data = frontmatter.parse(raw, where).data
        if data.get("id") != proposal_id:
            raise Refused(f"{where}: id: an edit keeps the proposal's ID {proposal_id}", code="packet-id")
        target_id = _target_id(data)
        proposal = data.get("proposal")
        snap = state.gather(ws, target_id=target_id, read=[pending_path(row.file_id)] if row.file_id else [])
        twin = _twin(snap, session.conn, packets.body_digest(packets.load_packet(raw, where).doc.body), proposal_id)
        ctx = ProposeContext(now, ws.config.workflow.proposal_approval, False, None, twin)
        planned = plan_propose(snap, raw, ctx, proposal_id)
        assert planned.db.upsert is not None
        upsert = planned.db.upsert._replace(
            file_id=row.file_id,
            created_at=row.created_at,
            target_blob=(proposal.get("target_blob") if isinstance(proposal, dict) else None) or row.target_blob,
        )
        files: tuple[FileChange, ...] = ()
        if row.file_id:
            path = pending_path(row.file_id)
            files = (FileChange(path, snap.read(path), raw),)
        db = DbChange(
            EventSpec("revise", (proposal_id,), {"state": upsert.state, "was": row.state}),
            expect=((proposal_id, row.state),),
            upsert=upsert,
        )
        message = f"edited {proposal_id}: {upsert.state}"
        plan = Plan(
            operation="propose",
            proposal_id=proposal_id,
            action=planned.action,
            outcome=upsert.state,
            files=files,
            db=db,
            messages=(message,),
        )
        transaction.install(root, ws.layout, session.conn, plan)
        after = inbox_store.get(session.conn, proposal_id)
    assert after is not None
    return _entry(after, root, [message, *session.repaired])


def approve(ws: Workspace, proposal_id: str) -> InboxEntry:
    """validated -> approved (already approved is nothing to do)."""
    with recovery.locked(ws) as session:
        root = session.root
        proposal_id = targets.expand_id(root, session.conn, proposal_id)
        row = inbox_store.get(session.conn, proposal_id)
        if row is None:
            settled = targets.settled_by_name(root, session.conn, proposal_id)
            if settled is not None:
                raise Refused(settled.message + "; there is nothing to approve", code=settled.outcome)
            if (root / pending_path(proposal_id)).is_file():
                raise NotFound(
                    f"{proposal_id}: a pending packet file, not an inbox proposal",
                    hint="pending packet files are reviewed in pull requests and applied directly",
                )
            raise NotFound(f"{proposal_id}: no inbox proposal has this ID", hint="git memzoi proposals lists them")
        if row.state == "approved":
            return _entry(row, root, [f"nothing to do: {row.id} is already approved", *session.repaired])
        try:
            parsed = packets.load_packet(row.packet.encode("utf-8"), f"inbox:{row.id}")
        except FormatError:
            parsed = None
        snap = None
        if parsed is not None and row.state == "pending" and parsed.packet.target_id:
            base = checks.proposed_base(parsed, row.packet.encode("utf-8"), row)
            snap = state.gather(ws, target_id=parsed.packet.target_id, since=checks.history_since(parsed, base))
        plan = plan_approve(row, parsed, state.now_text(), snap)
        transaction.install(root, ws.layout, session.conn, plan)
        after = inbox_store.get(session.conn, row.id)
    assert after is not None
    return _entry(after, root, list(plan.messages) + session.repaired)


def record_facts(ws: Workspace, record_id: str) -> dict[str, Any]:
    """The frontmatter of the record with this ID in the work tree ({} when there is none)."""
    return record_document(ws, record_id)[0]


def record_document(ws: Workspace, record_id: str) -> tuple[dict[str, Any], str]:
    """(frontmatter, body) of the record with this ID in the work tree (({}, "") when there is none)."""
    snap = state.gather(ws, records=True)
    info = snap.record(record_id)
    if info is None:
        checks.not_checked_out(snap, record_id)
        return {}, ""
    try:
        doc = frontmatter.parse((snap.workdir / info.path).read_bytes(), info.path)
    except (FormatError, OSError):
        return {}, ""
    return doc.data, doc.body


def _entry(
    row: ProposalRow, root: Any, messages: list[str] | None = None, data: dict[str, Any] | None = None
) -> InboxEntry:
    """The entry of an inbox row (`data`: its packet's frontmatter, when the caller parsed it already)."""
    if data is None:
        try:
            data = frontmatter.parse(row.packet.encode("utf-8"), f"inbox:{row.id}").data
        except FormatError:
            data = {}
    raw_proposal = data.get("proposal")
    proposal: dict[str, Any] = raw_proposal if isinstance(raw_proposal, dict) else {}
    file = None
    if row.file_id and root is not None and (root / pending_path(row.file_id)).is_file():
        file = pending_path(row.file_id)
    sensitivity = data.get("sensitivity", "unknown")
    return InboxEntry(
        id=row.id,
        state=row.state,
        source="inbox+file" if file else "inbox",
        action=proposal.get("action") if isinstance(proposal.get("action"), str) else None,
        title=data.get("title") if isinstance(data.get("title"), str) else None,
        sensitivity=sensitivity if isinstance(sensitivity, str) else None,
        file=file,
        created_at=row.created_at,
        updated_at=row.updated_at,
        reviewer=row.reviewer,
        reason=row.reason,
        resolved_at=row.resolved_at,
        affected_ids=list(row.affected_ids or []),
        packet=row.packet,
        messages=messages or [],
    )


def _check_packet_file(rel: str, raw: bytes) -> None:
    """Refuse an edit of the pending packet file `rel` that a new packet there would not pass.

    The checks `propose --packet` makes of what it writes into the work tree: the packet parses
    and validates, keeps the ID its file is named after, is still `proposed`, is repo-safe,
    holds no secret-looking text in any field and is no local memory.
    """
    stem = rel.rsplit("/", 1)[-1].removesuffix(".md")
    packet = packets.load_packet(raw, rel).packet
    if packet.id != stem:
        raise Refused(f"{rel}: id: an edit keeps the packet's ID {stem}, not {packet.id}", code="packet-id")
    if packet.status != "proposed":
        raise Refused(
            f"{rel}: status: a pending packet has status: proposed, not {packet.status}", code="packet-status"
        )
    if not packet.repo_safe:
        raise Refused(
            f"{rel}: sensitivity: {packet.sensitivity} packets are never written into the work tree", code="sensitivity"
        )
    hit = _scan(raw)
    if hit is not None:
        name, finding = hit
        raise Refused(f"{rel}: {name}: {finding.describe()}; remove it", code="secret")
    if packets.scope_kind(packet) == "local":
        raise Refused(f"{rel}: scope.kind: local memory cannot become a repository record", code="scope-local")


def revise_file(ws: Workspace, rel: str, raw: bytes) -> InboxEntry:
    """A pending packet file (no inbox row) replaced by an edited one, checked as `propose --packet` checks.

    Refused, the file keeps its bytes. Written in place, never through a link.
    """
    from git_memzoi.runtime.atomic import write_inside

    _check_packet_file(rel, raw)
    with recovery.locked(ws) as session:
        write_inside(session.root, rel, raw, "memory files and folders must be real")
    return _file_entry(rel, raw)


def _file_entry(rel: str, raw: bytes) -> InboxEntry:
    """The entry of a pending packet file (`raw`: its bytes)."""
    text = raw.decode("utf-8", errors="replace")
    stem = rel.rsplit("/", 1)[-1][:-3]
    try:
        parsed = packets.load_packet(raw, rel)
    except FormatError as exc:
        return InboxEntry(
            id=stem,
            state="proposed",
            source="file",
            action=None,
            title=None,
            sensitivity=None,
            file=rel,
            packet=text,
            problem=str(exc),
        )
    packet = parsed.packet
    return InboxEntry(
        id=packet.id,
        state="proposed",
        source="file",
        action=packet.proposal.action,
        title=packet.title,
        sensitivity=packet.sensitivity,
        file=rel,
        created_at=packet.timestamp,
        packet=text,
    )


#: `--status` values: an inbox state, `proposed` (packet files only), `open` (default) or `all`.
STATUS_FILTERS = (*inbox_store.STATES, "proposed", "open", "all")


def list_entries(ws: Workspace, status: str | None = None) -> list[InboxEntry]:
    """The inbox and the pending packet files together (default: what is still open)."""
    wanted = status or "open"
    if wanted not in STATUS_FILTERS:
        raise UsageError(f"status filter {wanted!r} is not one of {', '.join(STATUS_FILTERS)}")
    recovery.settle_if_needed(ws)
    root = ws.repo.workdir
    entries = [
        _entry(listed.row, root, data=listed.data or {})
        if listed.row is not None
        else _file_entry(listed.file or listed.id, listed.packet)
        for listed in inbox_store.listing(ws.layout.shared_db, root, open_only=wanted == "open")
    ]
    if wanted in ("all", "open"):
        return entries
    return [e for e in entries if e.state == wanted]


def show(ws: Workspace, target: str) -> InboxEntry | targets.Settled:
    """One proposal by inbox ID, packet path or file ID; a resolved one reports how it was resolved."""
    recovery.settle_if_needed(ws)
    root = ws.repo.require_workdir()
    conn = shared_db.connect(ws.layout.shared_db, actor=actor(ws.repo), owner=shared_db.owner_of(ws.repo.common_dir))
    try:
        found = targets.resolve(ws.repo, conn, target)
    finally:
        conn.close()
    if isinstance(found, targets.Settled):
        return found
    if found.via == "inbox" and found.row is not None:
        return _entry(found.row, root)
    assert found.file_path is not None
    entry = _file_entry(found.file_path, (root / found.file_path).read_bytes())
    if found.row is not None:
        entry = entry.model_copy(update={"state": found.row.state, "source": "inbox+file"})
    return entry
