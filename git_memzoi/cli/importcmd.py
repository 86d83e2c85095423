"""`git memzoi import`: bring AGENTS.md, CLAUDE.md, Cursor/Copilot rules, ADRs and OKF bundles in as proposals."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import click

from git_memzoi.cli.common import emit_rows, json_option, say, workspace
from git_memzoi.errors import EXIT_NO, UsageError
from git_memzoi.importer import formats
from git_memzoi.importer.plan import Entry, ImportPlan
from git_memzoi.importer.run import ImportRequest, ImportResult, apply, plan_import, write
from git_memzoi.importer.sources import FORMATS
from git_memzoi.profile import vocab


def _line(entry: Entry) -> str:
    """One plan line: action, `path:line-line`, concept ID, type, lane, applies_to, then the reason."""
    parts = [f"{'pending' if entry.pending else entry.action:<10}", entry.where]
    if entry.concept_id:
        parts.append(entry.concept_id)
    if entry.type and entry.action not in ("duplicate", "generated"):
        parts.append(f"{entry.type}/{entry.lane}")
        parts.append("applies to " + (", ".join(entry.applies_to) if entry.applies_to else "the whole repository"))
    if entry.target is not None and entry.action in ("supersede", "tombstone", "unchanged"):
        parts.append(f"record {entry.target.id}")
    if entry.reason:
        parts.append(f"({entry.reason})")
    if entry.pending:
        parts.append(f"(already pending as {entry.proposal_id}: git memzoi review)")
    return "  ".join(parts)


def _show(plan: ImportPlan) -> None:
    for group in plan.review_first:  # what a reviewer should look at first
        click.echo(f"review first: {group.kind}  " + " vs ".join(group.wheres) + f"  ({group.why})")
    for entry in plan.entries:
        click.echo(_line(entry))
        for warning in entry.warnings:
            click.echo(f"  warning: {warning}")
    counts = plan.counts()
    summary = ", ".join(f"{n} {action}" for action, n in sorted(counts.items())) or "nothing found"
    click.echo(f"plan {plan.plan_id}: {len(plan.changes)} change(s); {summary}")


@click.command(name="import")
@click.argument("sources", nargs=-1)
@click.option("--from", "fmt", type=click.Choice(FORMATS), help="Read every SOURCE as this format.")
@click.option("--rev", metavar="REV", help="Read the sources from this commit (also in a bare repository).")
@click.option("--type", "type_", type=click.Choice(vocab.MEMORY_TYPES), help="Give every non-ADR item this type.")
@click.option(
    "--adr-status",
    "adr_statuses",
    multiple=True,
    type=click.Choice((*formats.ADR_STATUSES, "unknown")),
    help="Import ADRs with this status too (repeatable; default: accepted only).",
)
@click.option(
    "--exclude",
    "exclude",
    multiple=True,
    metavar="GLOB",
    help="Leave out the files GLOB matches (repeatable; added to [import] exclude).",
)
@click.option("--prune", is_flag=True, help="Tombstone records whose source item is gone.")
@click.option("--write", "do_write", is_flag=True, help="Write one packet per change into proposals/pending/.")
@click.option("--apply", "do_apply", is_flag=True, help="Write and apply every change in one all-or-nothing batch.")
@click.option("--commit", is_flag=True, help="With --apply: record exactly the touched files in one git commit.")
@click.option("--plan-id", metavar="ID", help="With --write or --apply: refuse unless the plan still has this ID.")
@json_option
def import_(sources: tuple[str, ...], **options: Any) -> None:
    """Plan an import of the memory files the repository already has; write or apply it on request.

    With no SOURCE, the known locations in the tracked tree are read: AGENTS.md, CLAUDE.md,
    GEMINI.md (nested too), .claude/rules/, .cursor/rules/*.mdc, .cursorrules, Copilot's
    instruction files, .windsurf/rules/, .clinerules, ADR folders and OKF bundles (okf/ folders
    with an index.md). A SOURCE folder holding an OKF bundle git does not track, such as the
    output of `export okf`, is read from disk. The default prints the plan and writes nothing;
    records are only ever made by apply.
    """
    opts = _Options(**options)  # click passes one keyword per option
    opts.check()
    statuses = tuple(dict.fromkeys(formats.IMPORTED_STATUSES + opts.adr_statuses))
    ws = workspace()
    exclude = tuple(dict.fromkeys((*ws.config.import_.exclude, *opts.exclude)))
    request = ImportRequest(sources, opts.rev, opts.fmt, opts.type_, opts.prune, statuses, exclude=exclude)
    plan = plan_import(ws, request)
    if not (opts.do_write or opts.do_apply):
        if opts.as_json:
            emit_rows(plan.as_json(), "entries")
        else:
            _show(plan)
        _refused(plan)
        return
    result = apply(ws, plan, opts.plan_id, commit=opts.commit) if opts.do_apply else write(ws, plan, opts.plan_id)
    if opts.as_json:
        emit_rows(result.as_json(), "entries")
    else:
        _show(plan)
    _tell(result, opts.do_apply)
    _refused(plan)


def _refused(plan: ImportPlan) -> None:
    """One line per item refused by name, then exit 1: the rest was planned (and written or applied) all the same."""
    refused = [e for e in plan.entries if e.action == "refused"]
    for entry in refused:
        say(f"git memzoi: {entry.where}: refused: {entry.reason}")
    if refused:
        raise click.exceptions.Exit(EXIT_NO)


@dataclass(frozen=True)
class _Options:
    """The command's options, as click passes them."""

    fmt: str | None
    rev: str | None
    type_: str | None
    adr_statuses: tuple[str, ...]
    exclude: tuple[str, ...]
    prune: bool
    do_write: bool
    do_apply: bool
    commit: bool
    plan_id: str | None
    as_json: bool

    def check(self) -> None:
        """Refuse options that do not go together (exit 2)."""
        if self.do_write and self.do_apply:
            raise UsageError("--write and --apply exclude each other (--apply writes too)")
        if self.commit and not self.do_apply:
            raise UsageError("--commit goes with --apply")
        if self.plan_id is not None and not (self.do_write or self.do_apply):
            raise UsageError("--plan-id goes with --write or --apply")
        if self.rev is not None and (self.do_write or self.do_apply):
            raise UsageError("--rev only plans: write or apply from the work tree")


def _tell(result: ImportResult, applied: bool) -> None:
    """What --write or --apply did, for the person (stderr)."""
    plan = result.plan
    if applied:
        say(f"applied plan {plan.plan_id}: {len(result.records)} record change(s)")
        if result.commit:
            say(f"committed {result.commit[:12]}")
    else:
        say(f"wrote {len(result.written)} packet(s) into .memzoi/proposals/pending/")
        for path in result.kept:
            say(f"kept {path} (already pending)")
    for warning in result.warnings:
        say(f"warning: {warning}")
