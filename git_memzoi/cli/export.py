"""`git memzoi export okf|agents-md|claude-md`: generated projections into this worktree's exports/."""

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


def _instructions(target: str, output: str | None, max_bytes: int | None, as_json: bool) -> None:
    _report(export_instructions(workspace(), target, output, max_bytes), as_json)


@export.command("agents-md")
@output_option
@max_bytes_option
@json_option
def agents_md(output: str | None, max_bytes: int | None, as_json: bool) -> None:
    """AGENTS.memory.md: the rules to follow, for Codex and other AGENTS.md readers (32 KiB budget)."""
    _instructions("agents-md", output, max_bytes, as_json)


@export.command("claude-md")
@output_option
@max_bytes_option
@json_option
def claude_md(output: str | None, max_bytes: int | None, as_json: bool) -> None:
    """CLAUDE.memory.md: the rules to follow, for Claude Code (40,000-character budget)."""
    _instructions("claude-md", output, max_bytes, as_json)
