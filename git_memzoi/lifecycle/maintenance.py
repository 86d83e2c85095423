"""`maintenance --write`: each maintenance finding as a pending proposal packet, for review; nothing is applied.

Each packet is made by propose's own rules (lifecycle.propose) and submitted as `propose --packet`
submits one, so it validates as any other packet:

- unverified, a cited path renamed: a supersede that re-asserts the record with its `applies_to`
  moved along (the reviewer corrects the body in the packet, or rejects it);
- unverified otherwise: a tombstone naming what changed;
- duplicate: a tombstone of each record but the one that says the most (the merge keeps it);
- contradiction: a tombstone of each record on the older side (the newest record's instruction is
  kept; rejecting the packet keeps the older one instead).

A record that already has an open proposal (from an earlier `--write`, or anyone) gets none: a
second run writes nothing new.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple

from git_memzoi.errors import FormatError, Refused, UsageError
from git_memzoi.freshness.maintenance import Findings, Stale, find, memory, reason
from git_memzoi.lifecycle import inbox
from git_memzoi.lifecycle import propose as propose_rules
from git_memzoi.lifecycle.propose import ProposeRequest
from git_memzoi.profile import frontmatter

if TYPE_CHECKING:
    from git_memzoi.runtime.workspace import Workspace


class Written(NamedTuple):
    """One packet `--write` wrote, or the record it left alone and why."""

    record_id: str
    action: str  # supersede | tombstone | skipped
    proposal_id: str | None
    file: str | None
    note: str

    def as_json(self) -> dict[str, Any]:
        return self._asdict()


def _targets(packet: str) -> set[str]:
    """The records an open proposal acts on (a tombstone's target, a supersede's supersedes)."""
    try:
        data = frontmatter.parse(packet.encode("utf-8"), "inbox").data
    except FormatError:
        return set()
    proposal = data.get("proposal")
    target = proposal.get("target") if isinstance(proposal, dict) else None
    supersedes = data.get("supersedes")
    out = {target} if isinstance(target, str) else set()
    if isinstance(supersedes, list):
        out |= {s for s in supersedes if isinstance(s, str)}
    elif isinstance(supersedes, str):
        out.add(supersedes)
    return out


def _moved(scopes: list[str], evidence: list[dict[str, Any]]) -> tuple[str, ...]:
    """`applies_to` with each entry whose folder was renamed moved along (its glob kept)."""
    renames = {c["path"]: c["to"] for c in evidence if c.get("change") == "renamed" and c.get("to")}
    out = []
    for scope in scopes:
        for old, new in renames.items():
            if scope == old or scope.startswith(old + "/"):
                scope = new + scope[len(old) :]
                break
        out.append(scope)
    return tuple(out)


def _stale_request(stale: Stale) -> ProposeRequest:
    why = reason(stale.freshness)
    if any(c.get("change") == "renamed" for c in stale.freshness["evidence"]):
        return ProposeRequest(action="supersede", target=stale.row.record_id, reason=f"the code it cites moved: {why}")
    return ProposeRequest(action="tombstone", target=stale.row.record_id, reason=f"the code it cites changed: {why}")


def _requests(findings: Findings) -> list[tuple[ProposeRequest, list[str] | None]]:
    """(request, the scopes a re-asserting supersede moves along, or None) of every finding, in order."""
    out: list[tuple[ProposeRequest, list[str] | None]] = []
    for stale in findings.unverified:
        req = _stale_request(stale)
        moved = _moved(_scopes(stale), stale.freshness["evidence"])
        out.append((req, list(moved) if req.action == "supersede" else None))
    for group in findings.groups:
        kept = ", ".join(group.keep)
        for record_id in group.records:
            if record_id in group.keep:
                continue
            if group.kind == "duplicate":
                why = f"near-duplicate of {kept}: {group.reason}"
            else:
                why = f"contradicts {kept} (newer): {group.reason}; reject this to keep {record_id} instead"
            out.append((ProposeRequest(action="tombstone", target=record_id, reason=why), None))
    return out


def _scopes(stale: Stale) -> list[str]:
    return list(memory(stale.row).applies_to)


def write(ws: Workspace, findings: Findings | None = None) -> list[Written]:
    """Submit a pending packet for each finding (`find(ws)` when not given) whose record has no open proposal yet."""
    findings = find(ws) if findings is None else findings
    taken: set[str] = set()
    for entry in inbox.list_entries(ws):
        taken |= _targets(entry.packet)
    out = []
    for req, scopes in _requests(findings):
        target = req.target or ""
        if target in taken:
            out.append(Written(target, "skipped", None, None, "it has an open proposal already"))
            continue
        facts, body = inbox.record_document(ws, target)
        if req.action == "supersede":
            req = propose_rules.reconfirming(req, facts, body)
            if scopes is not None:
                req = replace(req, applies_to=tuple(scopes))
        try:
            entry = inbox.submit_draft(ws, propose_rules.draft(ws, req), packet_file=True)
        except (Refused, UsageError, FormatError) as exc:  # refused by propose's own rules: named, the rest go on
            out.append(Written(target, "skipped", None, None, exc.message))
            continue
        taken.add(target)
        out.append(Written(target, req.action, entry.id, entry.file, req.reason or ""))
    return out
