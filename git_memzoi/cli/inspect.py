"""`git memzoi show ID` and `git memzoi status`: one thing in full, and where memory stands on one screen."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import click

from git_memzoi.cli.common import emit_json, json_option, workspace
from git_memzoi.errors import Ambiguous, MemzoiError, NotFound
from git_memzoi.runtime.workspace import Workspace


@click.command()
@click.argument("id_")
@json_option
def show(id_: str, as_json: bool) -> None:
    """Show a proposal, a pending packet or a record, by its ID or a unique prefix of it."""
    from git_memzoi.lifecycle import inbox, targets
    from git_memzoi.recall import records

    ws = workspace()
    try:
        found = inbox.show(ws, id_)
    except NotFound:
        found = None
    except Ambiguous:
        # A whole record ID names that record, as a whole object name does in git, even when
        # proposal IDs begin with it (record `mem`, proposals `mem_2026_…`).
        if _record_id(ws, id_) != id_:
            raise
        found = None
    shown = found.proposal_id if isinstance(found, targets.Settled) else found.id if found is not None else None
    record_id = _record_id(ws, id_) if shown is not None and shown != id_ else None
    if record_id is not None:
        raise Ambiguous(
            f"{id_!r} is ambiguous: proposal {shown} and record {record_id} begin with it",
            hint="give more of the ID",
        )
    if isinstance(found, targets.Settled):
        data = {"kind": "proposal", "id": found.proposal_id, "state": found.outcome, "resolved_path": found.path}
        emit_json(data) if as_json else click.echo(found.message)
        return
    if found is not None:
        if as_json:
            emit_json({"kind": "proposal", **found.summary(), "packet": found.packet})
            return
        where = f"  ({found.file})" if found.file else ""
        click.echo(f"proposal {found.id}  {found.state}{where}")
        click.echo(found.packet.rstrip("\n"))
        return
    try:
        record = records.get_record(ws, id_)
    except NotFound:
        raise NotFound(
            f"{id_}: no proposal, packet or record has this ID (or begins with it)",
            hint="git memzoi proposals and git memzoi search --all TEXT list them",
        ) from None
    if as_json:
        emit_json({"kind": "record", **record.model_dump(mode="json")})
        return
    standing = "current" if record.expiry.current else "query-only"
    click.echo(f"record {record.record_id}  {record.status}, {standing}  ({record.path})")
    click.echo(record.document.rstrip("\n"))


def _record_id(ws: Workspace, name: str) -> str | None:
    """The one record ID `name` is or begins, else None."""
    from git_memzoi.recall import records

    try:
        return records.get_record(ws, name).record_id
    except MemzoiError:
        return None


@dataclass
class Overview:
    """What `status` reports, and the command that mends each thing that is off."""

    records: list[tuple[str, str, int]] = field(default_factory=list)  # current: (type, lane, count)
    all_records: int = 0
    invalid_files: int = 0
    inbox: dict[str, int] = field(default_factory=dict)  # open proposals by state
    pending_files: int = 0
    hooks: dict[str, str] = field(default_factory=dict)  # hook name -> installed | missing | not ours
    agents: dict[str, str] = field(default_factory=dict)  # client -> wired | not wired | a problem
    #: freshness.maintenance.counts: unverified, duplicates, contradictions, uncheckable
    maintenance: dict[str, int] = field(default_factory=dict)
    fixes: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "records": [{"type": t, "lane": lane, "count": n} for t, lane, n in self.records],
            "current_records": sum(n for _, _, n in self.records),
            "all_records": self.all_records,
            "invalid_files": self.invalid_files,
            "inbox": self.inbox,
            "pending_packet_files": self.pending_files,
            "hooks": self.hooks,
            "agents": self.agents,
            "maintenance": self.maintenance,
            "fixes": self.fixes,
        }


def overview(ws: Workspace) -> Overview:
    """Records, inbox, packets, index health, hooks and agent wiring of this worktree."""
    from git_memzoi.index import inbox_store, queries
    from git_memzoi.index.queries import Filter
    from git_memzoi.recall.records import index_connection, now

    out = Overview()
    _, at = now()
    with index_connection(ws) as conn:
        out.records = queries.counts(conn, Filter(now=at, stores=("repo",), shared=False))
        out.all_records = sum(n for _, _, n in queries.counts(conn, Filter(stores=("repo",), shared=False)))
        out.invalid_files = queries.invalid_files(conn)
    if out.invalid_files:
        out.fixes.append(f"{out.invalid_files} record file(s) are not indexed: git memzoi validate names the problems")
    from git_memzoi.freshness.maintenance import counts

    out.maintenance = counts(ws)
    if any(out.maintenance[kind] for kind in ("unverified", "duplicates", "contradictions")):
        out.fixes.append("records need review (unverified, duplicates, contradictions): git memzoi maintenance")
    workdir = ws.repo.require_workdir()
    listed = inbox_store.listing(ws.layout.shared_db, workdir, open_only=True)
    for entry in listed:
        if entry.row is None:
            out.pending_files += 1
        else:
            out.inbox[entry.state] = out.inbox.get(entry.state, 0) + 1
    if out.inbox.get("validated"):
        out.fixes.append("proposals wait for review: git memzoi proposals, then git memzoi approve ID")
    if out.inbox.get("approved") or out.pending_files:
        out.fixes.append("approved proposals and pending packets wait to be applied: git memzoi apply ID")
    out.hooks = _hooks(ws)
    if any(state == "missing" for state in out.hooks.values()):
        out.fixes.append("check memory on every commit and push: git memzoi hook install")
    from git_memzoi.hooks.install import HOOK_NAMES, chain_line

    for hook in HOOK_NAMES:
        if out.hooks.get(hook) == "not ours":  # hook install leaves another tool's hook alone: chain it
            out.fixes.append(f"the {hook} hook is another tool's; to run both, add this line to it: {chain_line(hook)}")
    out.agents = _agents(workdir)
    for client, state in out.agents.items():
        if state != "wired":
            out.fixes.append(f"wire {client}: git memzoi agent install {client}")
    return out


def _hooks(ws: Workspace) -> dict[str, str]:
    from git_memzoi.gitrepo.hookdir import hooks_dir
    from git_memzoi.hooks.install import default_hooks, is_ours

    folder = hooks_dir(ws.repo)
    found: dict[str, str] = {}
    for name in default_hooks(ws.repo):
        path = folder / name
        found[name] = "missing" if not path.exists() else "installed" if is_ours(path) else _chained(path, name)
    return found


def _chained(path: Any, name: str) -> str:
    """ "chained" when another tool's hook runs git memzoi's check (hook install's hint), else "not ours"."""
    try:  # never through a link, as hook install
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return "not ours"
    try:
        head = os.read(fd, 65536).decode("utf-8", "replace")
    finally:
        os.close(fd)
    return "chained" if f"git-memzoi hook {name}" in head or f"git memzoi hook {name}" in head else "not ours"


def _agents(workdir: Any) -> dict[str, str]:
    from git_memzoi.agents import merge_config as agents

    found = {}
    for client in agents.CLIENTS:
        try:
            changes = agents.plan(client, workdir, dict(os.environ))
        except MemzoiError as exc:
            found[client] = f"unreadable: {exc}"
            continue
        found[client] = "not wired" if any(change.changed for change in changes) else "wired"
    return found


@click.command()
@json_option
def status(as_json: bool) -> None:
    """Where memory stands: records, inbox, packets, index, hooks, agents, what needs review; what mends each."""
    report = overview(workspace())
    if as_json:
        emit_json(report.as_json())
        return
    current = sum(n for _, _, n in report.records)
    click.echo(f"records: {current} current, {report.all_records - current} query-only or inactive")
    if report.records:
        width = max(len(t) for t, _, _ in report.records)
        lane_width = max(len(lane) for _, lane, _ in report.records)
        for type_, lane, count in report.records:
            click.echo(f"  {type_:<{width}}  {lane:<{lane_width}}  {count:>6}")
    index_state = f"{report.invalid_files} invalid file(s) left out" if report.invalid_files else "up to date"
    click.echo(f"index: {index_state}")
    m = report.maintenance
    click.echo(
        f"maintenance: {m['unverified']} unverified, {m['duplicates']} duplicate group(s), "
        f"{m['contradictions']} likely contradiction(s); {m['uncheckable']} current record(s) cite no path "
        "or name and cannot be checked"
    )
    open_states = ", ".join(f"{n} {state}" for state, n in sorted(report.inbox.items())) or "empty"
    click.echo(f"inbox: {open_states}")
    click.echo(f"pending packet files: {report.pending_files}")
    click.echo("hooks: " + ", ".join(f"{name} {state}" for name, state in report.hooks.items()))
    click.echo("agents: " + ", ".join(f"{client} {state}" for client, state in report.agents.items()))
    if report.fixes:
        click.echo("to do:")
        for fix in report.fixes:
            click.echo(f"  {fix}")
