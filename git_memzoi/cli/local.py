"""`git memzoi local`, `checkpoint`, `retention` and `events`: private runtime memory in shared.db."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from git_memzoi.cli.common import UnitInterval, emit_json, human_time, json_option, read_text_arg, say, workspace
from git_memzoi.errors import UsageError
from git_memzoi.lifecycle.draft import MemoryFields
from git_memzoi.local import events as events_mod
from git_memzoi.local import extension, memory, promote, sessions
from git_memzoi.profile import vocab

#: SQLite's largest integer: event sequence numbers and limits past it cannot be asked for.
SQLITE_INT_MAX = 2**63 - 1


def _one_of(text: str | None, path: str | None, text_flag: str, file_flag: str) -> str:
    if (text is None) == (path is None):
        raise UsageError(f"give exactly one of {text_flag} TEXT or {file_flag} PATH")
    return text if text is not None else read_text_arg(path or "-", file_flag)


def _record_json(item: Any) -> dict[str, Any]:
    record = item.record
    return {
        "id": item.id,
        "store": item.store,
        "path": item.path,
        "type": record.type,
        "lane": record.lane,
        "status": record.status,
        "title": record.title,
        "description": record.description,
        "visibility": record.visibility,
        "scope": record.scope,
        "confidence": record.confidence,
        "applies_to": list(record.applies_to or []),
        "tags": list(record.tags or []),
        "source": record.source,
        "source_ref": record.source_ref,
        "retention": record.retention.model_dump(exclude_none=True),
        "lineage": record.lineage.model_dump() if record.lineage else None,
        "created_at": item.row.created_at,
        "updated_at": item.row.updated_at,
        "worktree_key": item.row.worktree_key,
        "body": item.body,
    }


# --- local ----------------------------------------------------------------------------------------


@click.group()
def local() -> None:
    """Private local memory in shared.db: shared by linked worktrees, never written to the work tree.

    Local records are visibility private. `search` and `context` include them only with
    --include-local; exports never do. The only way into repository memory is `local promote`.
    """


@local.command("add")
@click.option(
    "--type",
    "type_",
    type=click.Choice(vocab.MEMORY_TYPES),
    default="note",
    show_default=True,
    help="What shape of knowledge this is.",
)
@click.option("--title", required=True, help="A one-line title.")
@click.option("--body", help="The memory itself (Markdown).")
@click.option("--body-file", type=str, metavar="PATH", help="Read the body from PATH (- for stdin).")
@click.option("--description", help="An optional one-sentence summary.")
@click.option(
    "--lane",
    type=click.Choice(["semantic", "procedural", "episodic"]),
    default="semantic",
    show_default=True,
    help="How the memory is used and retained.",
)
@click.option(
    "--confidence", type=UnitInterval(), default=1.0, show_default=True, help="How sure the writer is, 0.0 to 1.0."
)
@click.option(
    "--applies-to",
    "applies_to",
    multiple=True,
    metavar="PATH",
    help="A repository path, prefix or trailing /** scope it applies to (repeatable).",
)
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@click.option("--source", help="Provenance kind: human, agent, issue, pr, doc, …")
@click.option("--source-ref", help="A durable reference: issue://123, a commit SHA, a URL.")
@click.option("--occurred-at", metavar="TIME", help="Episodic only: when it happened (default now).")
@click.option("--expires-at", metavar="TIME", help="An explicit expiry (RFC 3339).")
@json_option
def local_add(  # noqa: PLR0913 - click passes one parameter per option
    type_: str,
    title: str,
    body: str | None,
    body_file: str | None,
    description: str | None,
    lane: str,
    confidence: float,
    applies_to: tuple[str, ...],
    tags: tuple[str, ...],
    source: str | None,
    source_ref: str | None,
    occurred_at: str | None,
    expires_at: str | None,
    as_json: bool,
) -> None:
    """Store a private local memory record; prints its ID."""
    fields = MemoryFields(
        title=title,
        body=_one_of(body, body_file, "--body", "--body-file"),
        type=type_,
        lane=lane,
        description=description,
        applies_to=applies_to,
        tags=tags,
        source=source,
        source_ref=source_ref,
        occurred_at=occurred_at,
        expires_at=expires_at,
    )
    added = memory.add(workspace(), fields, confidence=confidence)
    for warning in added.warnings:
        say(f"warning: {warning} (local memory is private, but never promote it as repo-safe)")
    if as_json:
        emit_json(_record_json(added.record) | {"warnings": added.warnings})
        return
    click.echo(added.record.id)
    say(f"stored private local memory {added.record.id} in shared.db")


@local.command("list")
@click.option("--type", "type_", type=click.Choice(vocab.MEMORY_TYPES), help="Only this type.")
@click.option("--lane", type=click.Choice(["semantic", "procedural", "episodic"]), help="Only this lane.")
@json_option
def local_list(type_: str | None, lane: str | None, as_json: bool) -> None:
    """List local memory records, oldest first."""
    items = memory.listing(workspace(), type=type_, lane=lane)
    if as_json:
        emit_json({"records": [_record_json(item) for item in items]})
        return
    for item in items:
        click.echo(f"{item.id}  {item.record.type:<14} {item.record.lane:<10} {item.record.title}")
    if not items:
        say("no local memory yet: add some with `git memzoi local add --title T --body B`")


@local.command("show")
@click.argument("record_id", metavar="ID")
@json_option
def local_show(record_id: str, as_json: bool) -> None:
    """Print one local or session record as its full file text."""
    item = memory.show(workspace(), record_id)
    if as_json:
        emit_json(_record_json(item) | {"document": item.row.document})
        return
    click.echo(item.row.document, nl=False)


@local.command("search")
@click.argument("query")
@click.option("--type", "type_", type=click.Choice(vocab.MEMORY_TYPES), help="Only this type.")
@click.option("--lane", type=click.Choice(vocab.LANES), help="Only this lane.")
@click.option("--limit", type=click.IntRange(1, 1000), help="At most N hits.")
@click.option("--all", "include_all", is_flag=True, help="Include query-only (expired) records too.")
@json_option
def local_search(
    query: str, type_: str | None, lane: str | None, limit: int | None, include_all: bool, as_json: bool
) -> None:
    """Full-text search over local memory only."""
    result = memory.search(workspace(), query, limit=limit, type=type_, lane=lane, include_all=include_all)
    if as_json:
        emit_json(result.model_dump())
        return
    for hit in result.hits:
        state = "" if hit.current else "  [query-only]"
        click.echo(f"{hit.record_id}  {hit.type:<14} {hit.title}{state}")
        if hit.snippet:
            click.echo(f"    {hit.snippet}")
    if not result.hits:
        say(f"no local memory matches {query!r}")


@local.command("forget")
@click.argument("record_id", metavar="ID")
@json_option
def local_forget(record_id: str, as_json: bool) -> None:
    """Delete a private local (or session) record for good; the audit log keeps only its ID."""
    result = memory.forget(workspace(), record_id)
    if as_json:
        emit_json(result)
        return
    say(f"forgot {result['store']} record {record_id}")


@local.command("promote")
@click.argument("record_id", metavar="ID")
@click.option(
    "--sensitivity",
    type=click.Choice(vocab.SENSITIVITIES),
    default="unknown",
    show_default=True,
    help="Declare the sensitivity; apply refuses anything but repo-safe.",
)
@click.option(
    "--content-class",
    default="general_repo_knowledge",
    show_default=True,
    help="The content_class the proposed record will carry.",
)
@click.option("--packet", is_flag=True, help="Also write .memzoi/proposals/pending/<id>.md for review in a PR.")
@json_option
def local_promote(record_id: str, sensitivity: str, content_class: str, packet: bool, as_json: bool) -> None:
    """Propose a local record as repository memory (an inbox proposal that still needs review)."""
    entry = promote.promote(
        workspace(), record_id, sensitivity=sensitivity, packet_file=packet, content_class=content_class
    )
    if as_json:
        emit_json(entry.summary() | {"local_record_id": record_id, "messages": entry.messages})
        return
    click.echo(entry.id)
    for message in entry.messages:
        say(message)
    if sensitivity != vocab.REPO_SAFE:
        say(
            f"apply refuses sensitivity {sensitivity}: if a person finds it repo-safe, reject {entry.id} and "
            f"promote again with --sensitivity repo-safe"
        )


# --- checkpoint -----------------------------------------------------------------------------------


def _checkpoint_line(cp: Any) -> str:
    state = "current" if cp.current else "query-only"
    return f"{cp.record_id}  {state:<10} {human_time(cp.started_at)}  {cp.task}"


@click.group()
def checkpoint() -> None:
    """Session checkpoints: lane session, private, shared by linked worktrees.

    A checkpoint stays current until the earliest of `close`, its inactivity lease
    (retention.session_lease_hours after its last activity), seven days after it started,
    or an explicit expiry. After that it is query-only; start a successor with --successor-of.
    """


@checkpoint.command("add")
@click.option("--task", required=True, help="The task this session works on (the checkpoint's title).")
@click.option("--note", help="The checkpoint note: state, assumptions, next steps.")
@click.option("--from-file", "from_file", metavar="PATH", help="Read the note from PATH (- for stdin).")
@click.option("--successor-of", "successor_of", metavar="ID", help="Continue from an earlier checkpoint.")
@click.option("--applies-to", "applies_to", multiple=True, metavar="PATH", help="Paths it concerns (repeatable).")
@click.option("--source", help="Provenance kind (agent, human, …).")
@click.option("--source-ref", help="A durable reference.")
@json_option
def checkpoint_add(  # noqa: PLR0913 - click passes one parameter per option
    task: str,
    note: str | None,
    from_file: str | None,
    successor_of: str | None,
    applies_to: tuple[str, ...],
    source: str | None,
    source_ref: str | None,
    as_json: bool,
) -> None:
    """Start a session checkpoint; prints its ID."""
    text = _one_of(note, from_file, "--note", "--from-file")
    cp = sessions.add(
        workspace(),
        task=task,
        note=text,
        successor_of=successor_of,
        source=source,
        source_ref=source_ref,
        applies_to=list(applies_to),
    )
    if as_json:
        emit_json(cp.model_dump())
        return
    click.echo(cp.record_id)
    say(f"started checkpoint {cp.record_id}; current until {cp.expiry.boundary} ({cp.expiry.boundary_kind})")


@checkpoint.command("continue")
@click.argument("record_id", metavar="ID")
@json_option
def checkpoint_continue(record_id: str, as_json: bool) -> None:
    """Renew a checkpoint's inactivity lease; refused once it has reached any retention boundary."""
    cp = sessions.renew(workspace(), record_id)
    if as_json:
        emit_json(cp.model_dump())
        return
    say(f"continued {cp.record_id}; current until {cp.expiry.boundary} ({cp.expiry.boundary_kind})")


@checkpoint.command("close")
@click.argument("record_id", metavar="ID")
@json_option
def checkpoint_close(record_id: str, as_json: bool) -> None:
    """Close a checkpoint (the terminal boundary): it becomes query-only now."""
    cp = sessions.close(workspace(), record_id)
    if as_json:
        emit_json(cp.model_dump())
        return
    say(f"closed {cp.record_id} at {cp.expiry.boundary}")


@checkpoint.command("list")
@click.option("--current", "current_only", is_flag=True, help="Only checkpoints that are still current.")
@json_option
def checkpoint_list(current_only: bool, as_json: bool) -> None:
    """List checkpoints, oldest first, with whether each is current."""
    items = sessions.listing(workspace(), current_only=current_only)
    if as_json:
        emit_json({"checkpoints": [cp.model_dump() for cp in items]})
        return
    for cp in items:
        click.echo(_checkpoint_line(cp))
    if not items:
        say("no checkpoints")


@checkpoint.command("show")
@click.argument("record_id", metavar="ID")
@json_option
def checkpoint_show(record_id: str, as_json: bool) -> None:
    """Show one checkpoint: its task, note and retention decision."""
    cp = sessions.show(workspace(), record_id)
    if as_json:
        emit_json(cp.model_dump())
        return
    click.echo(_checkpoint_line(cp))
    click.echo(f"  {cp.expiry.reason}")
    click.echo()
    click.echo(cp.note)


# --- retention ------------------------------------------------------------------------------------


@click.group()
def retention() -> None:
    """Authorised retention facts kept in shared.db."""


@retention.command("extend")
@click.argument("record_id", metavar="ID")
@click.option("--until", required=True, metavar="TIME", help="New end of the window (RFC 3339).")
@click.option("--reason", required=True, help="Why it should stay current longer.")
@json_option
def retention_extend(record_id: str, until: str, reason: str, as_json: bool) -> None:
    """Extend an episodic record past its 30-day window, at most to 90 days after it occurred."""
    result = extension.extend(workspace(), record_id, until=until, reason=reason)
    if as_json:
        emit_json(result)
        return
    say(
        f"extended {record_id} to {result['until']} (was {result['previous_window_end']}; "
        f"the limit is {result['limit']})"
    )


# --- events ---------------------------------------------------------------------------------------


@click.command()
@click.option("--jsonl", is_flag=True, help="One JSON object per line.")
@click.option(
    "--since", type=click.IntRange(0, SQLITE_INT_MAX), default=0, metavar="SEQ", help="Only events after SEQ."
)
@click.option("--limit", type=click.IntRange(1, SQLITE_INT_MAX), metavar="N", help="At most N events.")
@json_option
def events(jsonl: bool, since: int, limit: int | None, as_json: bool) -> None:
    """Stream the audit log of shared.db (who did what, when, to which IDs), oldest first."""
    if jsonl and as_json:
        raise UsageError("--jsonl and --json are exclusive")
    out = sys.stdout
    first = True
    stream = events_mod.stream(workspace(), since=since, limit=limit)
    if not (as_json or jsonl):
        _event_table(stream, out)
        return
    if as_json:  # one JSON document, still written row by row
        out.write('{"events": [')
    for event in stream:
        if as_json:
            out.write(("\n  " if first else ",\n  ") + json.dumps(event.as_dict(), ensure_ascii=False))
        else:
            out.write(json.dumps(event.as_dict(), ensure_ascii=False) + "\n")
        out.flush()
        first = False
    if as_json:
        out.write("\n]}\n" if not first else "]}\n")
        out.flush()


#: Rows a text table aligns at a time: the log may be long, and it still streams.
TABLE_ROWS = 500


def _event_table(stream: Any, out: Any) -> None:
    """The events as a table whose columns fit their values, a block of TABLE_ROWS rows at a time.

    The header goes with the first block; each later block is aligned on its own values.
    """
    header: tuple[str, ...] | None = ("SEQ", "AT", "ACTOR", "ACTION", "IDS")
    block: list[tuple[str, ...]] = []
    for event in stream:
        block.append((str(event.seq), human_time(event.at), event.actor, event.action, " ".join(event.ids)))
        if len(block) == TABLE_ROWS:
            _write_block(out, [header, *block] if header else block)
            header, block = None, []
    if block or header:
        _write_block(out, [header, *block] if header else block)


def _write_block(out: Any, rows: list[Any]) -> None:
    """Rows of cells, the first right-aligned (a number), the last left ragged."""
    widths = [max(len(cell) for cell in column) for column in zip(*rows, strict=True)]
    for row in rows:
        cells = [
            row[0].rjust(widths[0]),
            *(cell.ljust(width) for cell, width in zip(row[1:-1], widths[1:-1], strict=True)),
        ]
        out.write("  ".join([*cells, row[-1]]).rstrip() + "\n")
    out.flush()
