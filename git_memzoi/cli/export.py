"""`git memzoi export okf|agents-md|claude-md|cursor-rules`: generated projections (and sync back into files)."""

from __future__ import annotations

import click

from git_memzoi.cli.common import emit_json, json_option, say, workspace
from git_memzoi.export.common import MAX_BYTES, ExportReport
from git_memzoi.export.instructions import export_instructions
from git_memzoi.export.okf import export_okf

output_option = click.option(
    "--output",
    "-o",
    "output",
    metavar="DIR",
    type=click.Path(file_okay=False),
    help="Write into DIR instead of this worktree's runtime exports/ folder.",
)
max_bytes_option = click.option(
    "--max-bytes",
    type=click.IntRange(1, MAX_BYTES),
    metavar="N",
    help="Keep the most severe entries that fit in N bytes and list the ones left out.",
)


@click.group()
def export() -> None:
    """Generate OKF and agent instruction exports from the current records.

    Exports never contain private records, query-only (expired) records or records that are
    no longer active. They are generated files: regenerate them, never edit them.
    """


def _report(report: ExportReport, as_json: bool) -> None:
    if as_json:
        emit_json(report.as_json())
    else:
        click.echo(str(report.path))
    what = f"{len(report.records)} record(s)"
    if report.omitted:
        what = f"{len(report.records)} of {len(report.records) + len(report.omitted)} record(s)"
    budget = report.budget
    if budget is None:
        say(f"exported {what} to {report.path} ({report.bytes:,} bytes)")
    else:
        share = 100 * report.size / budget.limit
        say(
            f"exported {what} to {report.path}: {report.size:,} {budget.unit} of the {budget.limit:,}-"
            f"{budget.unit.rstrip('s')} {budget.tool} budget ({share:.0f}%)"
            + (f", capped at {report.max_bytes:,} bytes" if report.max_bytes is not None else "")
        )
        if report.over_budget:
            say(
                f"warning: {report.path.name} is past the {budget.tool} budget of {budget.limit:,} {budget.unit}: "
                f"the rest is {budget.past_limit}; use --max-bytes to keep the most severe entries"
            )
    for item in report.omitted:
        say(f"left out ({item.reason}): {item.type} {item.record_id}: {item.title}")


@export.command("okf")
@output_option
@json_option
def okf(output: str | None, as_json: bool) -> None:
    """An OKF bundle: okf/records/<concept-id>.md (byte-for-byte copies) and okf/index.md."""
    _report(export_okf(workspace(), output), as_json)


into_option = click.option(
    "--into",
    metavar="FILE",
    type=click.Path(dir_okay=False),
    help="Rewrite only the <!-- memzoi:start --> block of FILE in the work tree (appended when missing).",
)


def _instructions(target: str, output: str | None, into: str | None, max_bytes: int | None, as_json: bool) -> None:
    if into is not None:
        from git_memzoi.errors import UsageError
        from git_memzoi.export.sync import export_into

        if output is not None:
            raise UsageError("--into and --output exclude each other")
        _report(export_into(workspace(), target, into, max_bytes), as_json)
        return
    _report(export_instructions(workspace(), target, output, max_bytes), as_json)


@export.command("agents-md")
@output_option
@into_option
@max_bytes_option
@json_option
def agents_md(output: str | None, into: str | None, max_bytes: int | None, as_json: bool) -> None:
    """AGENTS.memory.md: the rules to follow, for Codex and other AGENTS.md readers (32 KiB budget)."""
    _instructions("agents-md", output, into, max_bytes, as_json)


@export.command("claude-md")
@output_option
@into_option
@max_bytes_option
@json_option
def claude_md(output: str | None, into: str | None, max_bytes: int | None, as_json: bool) -> None:
    """CLAUDE.memory.md: the rules to follow, for Claude Code (40,000-character budget)."""
    _instructions("claude-md", output, into, max_bytes, as_json)


@export.command("cursor-rules")
@click.option(
    "--output",
    "-o",
    "output",
    metavar="DIR",
    type=click.Path(file_okay=False),
    help="Write DIR/.cursor/rules/memzoi/ instead of the work tree's.",
)
@json_option
def cursor_rules(output: str | None, as_json: bool) -> None:
    """.cursor/rules/memzoi/<record-id>.mdc: one Cursor rule per rule record, globs and activation restored.

    The folder is owned by the export: it is replaced as a whole, and import skips it.
    """
    from git_memzoi.export.sync import export_cursor_rules

    _report(export_cursor_rules(workspace(), output), as_json)
