"""`git memzoi propose`, `proposals`, `approve`, `apply` and `reject`: the proposal lifecycle."""

from __future__ import annotations

from typing import Any

import click

from git_memzoi.cli.common import (
    emit_json,
    human_time,
    json_option,
    non_blank_line,
    one_line,
    read_text_arg,
    say,
    workspace,
)
from git_memzoi.errors import EXIT_NO, FormatError, MemzoiError, UsageError
from git_memzoi.lifecycle import inbox, packets, targets
from git_memzoi.lifecycle import propose as propose_rules
from git_memzoi.lifecycle.apply import apply as run_apply
from git_memzoi.lifecycle.inbox import STATUS_FILTERS
from git_memzoi.lifecycle.propose import ProposeRequest
from git_memzoi.lifecycle.reject import reject as run_reject
from git_memzoi.profile import concept_id, vocab
from git_memzoi.runtime.workspace import Workspace


def _concept_id(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None:
        try:
            concept_id.check(value)
        except FormatError as exc:
            raise UsageError(f"--concept-id: {exc.message}") from None
    return value


def _status_filter(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    if value is not None and value not in STATUS_FILTERS:
        raise UsageError(f"--status {value!r} is not one of {', '.join(STATUS_FILTERS)}")
    return value


def _warn(lines: list[str], prefix: str = "") -> None:
    for line in lines:
        say(f"{prefix}{line}")


# --- propose ------------------------------------------------------------------------------------------------


@click.command()
@click.option(
    "--action",
    type=click.Choice(vocab.ACTIONS),
    default="create",
    show_default=True,
    help="create a record, supersede one, or tombstone one.",
)
@click.option(
    "--target",
    metavar="RECORD_ID",
    callback=one_line,
    help="The record a supersede or tombstone acts on (a unique prefix of its ID will do).",
)
@click.option("--reason", callback=one_line, help="Why (required for supersede and tombstone).")
@click.option(
    "--type",
    "type_",
    type=click.Choice(vocab.MEMORY_TYPES),
    help="What shape of knowledge (a supersede or tombstone keeps the target's unless given).",
)
@click.option(
    "--lane", type=click.Choice(vocab.LANES), help="How it is used and retained (default semantic, or the target's)."
)
@click.option(
    "--title",
    callback=one_line,
    help="A one-line title (a supersede with no --title and no body re-confirms its target as it stands).",
)
@click.option("--body", help="The memory itself (Markdown).")
@click.option("--body-file", metavar="PATH", help="Read the body from PATH (- for stdin).")
@click.option("--description", callback=one_line, help="One sentence (default: the body's first paragraph).")
@click.option(
    "--applies-to",
    "applies_to",
    multiple=True,
    metavar="PATH",
    callback=one_line,
    help="A repository path, prefix or trailing /** it applies to (repeatable; default: the target's).",
)
@click.option("--tag", "tags", multiple=True, callback=one_line, help="A tag (repeatable).")
@click.option(
    "--sensitivity",
    type=click.Choice(vocab.SENSITIVITIES),
    default="repo-safe",
    show_default=True,
    help="Anything but repo-safe stays in the local inbox and can only be rejected.",
)
@click.option(
    "--content-class",
    callback=one_line,
    help="snake_case class (default general_repo_knowledge; a supersede or tombstone keeps the target's).",
)
@click.option(
    "--visibility", type=click.Choice(vocab.VISIBILITIES), help="The record's sharing boundary (default repo)."
)
@click.option("--source", callback=one_line, help="Evidence kind: path, human, issue, pr, doc, …")
@click.option(
    "--source-ref", callback=one_line, help="Evidence locator: src/auth/session.ts, issue://123, a commit SHA, a URL."
)
@click.option("--confidence", callback=one_line, help="A number from 0.0 to 1.0, or low / medium / high.")
@click.option("--origin-key", callback=one_line, help="Content-free source-event identity (default proposal:<id>).")
@click.option(
    "--route", default=None, callback=one_line, help="Origin route, snake_case (default repository_proposal)."
)
@click.option("--occurred-at", metavar="TIME", help="Episodic lane: when it happened (default now).")
@click.option("--started-at", metavar="TIME", help="Session lane: when the session started (default now).")
@click.option("--expires-at", metavar="TIME", help="An explicit expiry (RFC 3339).")
@click.option(
    "--proposed-by",
    callback=one_line,
    help="Who proposes it (default MEMZOI_ACTOR, else git's author name; refused with neither).",
)
@click.option(
    "--from-file", "from_file", metavar="PACKET", help="Propose a complete packet file as it is (nothing is filled in)."
)
@click.option(
    "--packet",
    "packet_file",
    is_flag=True,
    help="Also write .memzoi/proposals/pending/<id>.md for review in a pull request.",
)
@json_option
def propose(**o: Any) -> None:
    """Add a proposal to the inbox (state validated, approved under auto approval, or pending).

    Every field is scanned for secret-looking content, which is refused unless --sensitivity
    declares it not repo-safe (such a proposal never leaves the local inbox). A proposal whose
    normalised body equals an open one is refused with the twin's ID.
    """
    ws = workspace()
    if o["from_file"] is not None:
        entry = _propose_file(ws, o)
    else:
        entry = inbox.submit_draft(ws, propose_rules.draft(ws, _request(o)), packet_file=o["packet_file"])
    if o["as_json"]:
        emit_json(entry.summary() | {"messages": entry.messages})
    else:
        click.echo(entry.id)
    _warn(entry.messages)


def _propose_file(ws: Workspace, o: dict[str, Any]) -> inbox.InboxEntry:
    """--from-file: the file is the whole packet; it must validate as it stands, nothing is filled in."""
    given = [
        flag
        for flag, key in (
            ("--title", "title"),
            ("--body", "body"),
            ("--body-file", "body_file"),
            ("--type", "type_"),
            ("--target", "target"),
            ("--reason", "reason"),
        )
        if o[key] is not None
    ]
    if given:
        raise UsageError(f"--from-file takes the whole packet; drop {', '.join(given)}")
    raw = read_text_arg(o["from_file"], "--from-file").encode("utf-8")
    parsed = packets.load_packet(raw, o["from_file"])
    return inbox.submit(ws, dict(parsed.doc.data), parsed.doc.body, packet_file=o["packet_file"], fill=False)


def _request(o: dict[str, Any]) -> ProposeRequest:
    """propose's flags (`o`, by parameter name) as a request; the body read from --body-file when given."""
    if o["body"] is not None and o["body_file"] is not None:
        raise UsageError("give --body or --body-file, not both")
    return ProposeRequest(
        action=o["action"],
        target=o["target"],
        reason=o["reason"],
        type=o["type_"],
        lane=o["lane"],
        title=o["title"],
        body=read_text_arg(o["body_file"], "--body-file") if o["body_file"] is not None else o["body"],
        description=o["description"],
        applies_to=o["applies_to"],
        tags=o["tags"],
        sensitivity=o["sensitivity"],
        content_class=o["content_class"],
        visibility=o["visibility"],
        source=o["source"],
        source_ref=o["source_ref"],
        confidence=o["confidence"],
        origin_key=o["origin_key"],
        route=o["route"],
        occurred_at=o["occurred_at"],
        started_at=o["started_at"],
        expires_at=o["expires_at"],
        proposed_by=o["proposed_by"],
    )


# --- proposals ------------------------------------------------------------------------------------------------


@click.group(invoke_without_command=True)
@click.option(
    "--status",
    metavar="S",
    callback=_status_filter,
    help="pending, validated, approved, applied, rejected, proposed (packet files), open (default) or all.",
)
@json_option
@click.pass_context
def proposals(ctx: click.Context, status: str | None, as_json: bool) -> None:
    """List the inbox and the pending packet files together; `proposals show ID` shows one."""
    if ctx.invoked_subcommand is not None:
        return

    entries = inbox.list_entries(workspace(), status)
    if as_json:
        emit_json({"proposals": [e.summary() for e in entries]})
        return
    for e in entries:
        where = f"  {e.file}" if e.file else ""
        click.echo(f"{e.id}  {e.state}  {e.action or '?'}  {e.title or e.problem or ''}{where}")
    if not entries:
        say("no proposals" + (f" with status {status}" if status else " open"))


@proposals.command("show")
@click.argument("target")
@json_option
def show(target: str, as_json: bool) -> None:
    """Show one proposal: by inbox ID, pending packet path or file ID (resolved ones say how)."""
    found = inbox.show(workspace(), target)
    if isinstance(found, targets.Settled):
        data = {
            "id": found.proposal_id,
            "state": found.outcome,
            "resolved_path": found.path,
            "hash_only": found.hash_only,
            "message": found.message,
        }
        if as_json:
            emit_json(data)
        else:
            click.echo(found.message)
        return
    if as_json:
        emit_json(found.summary() | {"packet": found.packet})
        return
    for key in (
        "id",
        "state",
        "source",
        "action",
        "title",
        "sensitivity",
        "file",
        "created_at",
        "reviewer",
        "reason",
        "resolved_at",
        "problem",
    ):
        value = getattr(found, key)
        if value:
            click.echo(f"{key + ':':<13} {human_time(value) if key.endswith('_at') else value}")
    if found.affected_ids:
        click.echo(f"{'affected:':<13} {', '.join(found.affected_ids)}")
    click.echo("")
    click.echo(found.packet.rstrip("\n"))


# --- approve / apply / reject -----------------------------------------------------------------------------------


@click.command()
@click.argument("proposal_ids", metavar="PROPOSAL_ID...", nargs=-1)
@click.option("--all", "every", is_flag=True, help="Approve every validated inbox proposal.")
@json_option
def approve(proposal_ids: tuple[str, ...], every: bool, as_json: bool) -> None:
    """Approve validated inbox proposals so they can be applied (each ID may be a unique prefix).

    With several IDs (or --all) each is approved on its own; one that is refused is reported
    and the others go on (exit 1 when any was refused). --json then prints {"results": [...]}.
    """
    ws = workspace()
    names = _names(ws, proposal_ids, every, "validated", "PROPOSAL_ID")
    if len(names) == 1 and not every:
        entry = inbox.approve(ws, names[0])
        if as_json:
            emit_json(entry.summary() | {"messages": entry.messages})
        _warn(entry.messages)
        return
    results, failed = [], 0
    for name in names:
        try:
            entry = inbox.approve(ws, name)
        except MemzoiError as exc:
            failed += 1
            results.append({"id": name, "error": str(exc)})
            say(f"git memzoi: {exc}")
            continue
        results.append(entry.summary() | {"messages": entry.messages})
        _warn(entry.messages)
    if as_json:
        emit_json({"results": results})
    if failed:
        raise click.exceptions.Exit(EXIT_NO)


def _names(ws: Any, given: tuple[str, ...], every: bool, state: str, what: str) -> list[str]:
    """The IDs a batch acts on: those given, or with --all every inbox proposal in `state`."""
    if every and given:
        raise UsageError("give proposal IDs or --all, not both")
    if every:
        names = [entry.id for entry in inbox.list_entries(ws, state) if entry.source != "file"]
        if not names:
            say(f"nothing to do: no {state} proposals")
        return names
    if not given:
        raise UsageError(f"missing argument {what}: name at least one (or --all)")
    return list(given)


@click.command()
@click.argument("targets_", metavar="TARGET...", nargs=-1)
@click.option("--all", "every", is_flag=True, help="Apply every approved inbox proposal.")
@click.option(
    "--reviewer",
    metavar="NAME",
    callback=non_blank_line,
    help="Who reviewed it (default MEMZOI_ACTOR / git user.name).",
)
@click.option(
    "--concept-id",
    metavar="ID",
    callback=_concept_id,
    help="Where the new record goes (default <lane>/<type>s/<slug>).",
)
@click.option("--reason", callback=non_blank_line, help="A note for the resolution block.")
@click.option("--commit", "commit", is_flag=True, help="Record exactly the touched files in one git commit.")
@json_option
def apply(
    targets_: tuple[str, ...],
    every: bool,
    reviewer: str | None,
    concept_id: str | None,
    reason: str | None,
    commit: bool,
    as_json: bool,
) -> None:
    """Apply approved inbox proposals or pending packet files (path, file ID, or a unique prefix).

    create adds a record, supersede replaces one (the old one keeps its body, status
    superseded), tombstone retires one (only its status changes). Everything happens under
    repo-lifecycle.lock and all or nothing. Applying something already applied does nothing.
    With several TARGETs (or --all), each is applied on its own (and committed on its own, with
    --commit); one that is refused is reported and the others go on (exit 1 when any was
    refused). --json then prints {"results": [...]}.
    """
    ws = workspace()
    names = _names(ws, targets_, every, "approved", "TARGET")
    if len(names) == 1 and not every:
        result = run_apply(ws, names[0], reviewer=reviewer, concept_id=concept_id, reason=reason, commit=commit)
        _report_resolution(result, as_json)
        return
    if concept_id is not None and names:
        raise UsageError("--concept-id names one record: apply one proposal with it")
    results: list[dict[str, Any]] = []
    failed = 0
    for name in names:
        try:
            result = run_apply(ws, name, reviewer=reviewer, reason=reason, commit=commit)
        except MemzoiError as exc:
            failed += 1
            results.append({"target": name, "error": str(exc)})
            say(f"git memzoi: {exc}")
            continue
        results.append(result.as_json())
        _report_resolution(result, False)
    if as_json:
        emit_json({"results": results})
    if failed:
        raise click.exceptions.Exit(EXIT_NO)


def _report_resolution(result: Any, as_json: bool) -> None:
    """What an apply or reject did: repairs first, the outcome, the commit, then warnings."""
    _warn(result.repaired, "repaired: ")
    if as_json:
        emit_json(result.as_json())
    say(result.message)
    if result.commit:
        say(f"committed {result.commit[:12]}")
    _warn(result.warnings, "warning: ")


@click.command()
@click.argument("target")
@click.option("--reason", required=True, callback=non_blank_line, help="Why it is rejected.")
@click.option(
    "--reviewer",
    metavar="NAME",
    callback=non_blank_line,
    help="Who reviewed it (default MEMZOI_ACTOR / git user.name).",
)
@click.option("--commit", "commit", is_flag=True, help="Record exactly the touched files in one git commit.")
@json_option
def reject(target: str, reason: str, reviewer: str | None, commit: bool, as_json: bool) -> None:
    """Reject an inbox proposal or a pending packet file.

    A repo-safe packet moves to resolved/rejected/ with the resolution; anything else becomes a
    hash-only receipt that keeps neither its IDs nor its content.
    """
    result = run_reject(workspace(), target, reason, reviewer=reviewer, commit=commit)
    _report_resolution(result, as_json)
