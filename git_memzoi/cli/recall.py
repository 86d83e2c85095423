"""`git memzoi rebuild | search | context | handoff | precheck | expiry`: the recall commands."""

from __future__ import annotations

import sys
from typing import Any

import click

from git_memzoi.cli.common import emit_json, json_option, say, workspace
from git_memzoi.cli.entry import rebuild_summary
from git_memzoi.cli.output import line as _line
from git_memzoi.cli.search_quick import cite as _cite
from git_memzoi.cli.search_quick import show as show_search
from git_memzoi.cli.search_quick import unverified as _unverified
from git_memzoi.errors import EXIT_NO
from git_memzoi.profile.oneline import escape_text

#: Files to parse before a progress bar is worth showing.
PROGRESS_MIN = 200


class _Bar:
    """A progress bar on stderr, only when stderr is a terminal and the work is large."""

    def __init__(self) -> None:
        self.bar: Any = None
        self.shown = 0

    def __call__(self, done: int, total: int) -> None:
        if self.bar is None:
            if total < PROGRESS_MIN or not sys.stderr.isatty():
                return
            self.bar = click.progressbar(length=total, label="indexing records", file=sys.stderr)
            self.bar.__enter__()
        self.bar.update(done - self.shown)
        self.shown = done

    def close(self) -> None:
        """Finish the bar, if one was shown."""
        if self.bar is not None:
            self.bar.__exit__(None, None, None)


@click.command()
@click.option("--full", is_flag=True, help="Ignore the previous index and the parse cache; parse every file.")
@click.option("--strict", is_flag=True, help="Fail (exit 1, index unchanged) when any record file is invalid.")
@json_option
def rebuild(full: bool, strict: bool, as_json: bool) -> None:
    """Rebuild this worktree's index.db from .memzoi/records/ and shared.db's runtime memory.

    Incremental: unchanged files are not parsed again. The new index replaces the old one in
    one step, so readers never see half an index. Invalid record files are reported as
    `path:line: code: message` and skipped (fatal with --strict). shared.db is only read.
    """
    # one command's core per run (Command start-up: no-op rebuild)
    from git_memzoi.index.rebuild import InvalidRecords
    from git_memzoi.index.rebuild import rebuild as run_rebuild

    ws = workspace()
    bar = _Bar()
    try:
        report = run_rebuild(ws, full=full, strict=strict, progress=bar)
    except InvalidRecords as exc:
        bar.close()
        for problem in exc.problems:
            click.echo(str(problem), err=True)
        raise
    finally:
        bar.close()
    if as_json:
        emit_json(report.as_json())
        return
    for problem in report.problems:
        click.echo(str(problem), err=True)
    say(
        rebuild_summary(
            {
                "changed": report.changed,
                "records": report.records,
                "runtime": report.runtime,
                "parsed": report.parsed,
                "cached": report.cached,
                "reused": report.reused,
                "removed": report.removed,
                "problems": len(report.problems),
                "duration": report.duration,
            }
        )
    )


@click.command()
@click.argument("query", nargs=-1, required=True)
@click.option("--path", metavar="P", help="Only records whose applies_to covers this repository path.")
@click.option("--type", "type_", metavar="T", help="Only records of this type (decision, risk, …).")
@click.option("--lane", metavar="L", help="Only records of this lane (session, semantic, episodic, procedural).")
@click.option("--limit", type=int, metavar="N", help="At most N hits (default: recall.search_limit).")
@click.option("--all", "include_all", is_flag=True, help="Include query-only, superseded and tombstoned records.")
@click.option(
    "--include-local", "include_local", is_flag=True, help="Include private records and local/session memory."
)
@json_option
def search(  # noqa: PLR0913 - click passes one parameter per option
    query: tuple[str, ...],
    path: str | None,
    type_: str | None,
    lane: str | None,
    limit: int | None,
    include_all: bool,
    include_local: bool,
    as_json: bool,
) -> None:
    """Full-text recall over current records (bm25 over title, description, body, tags).

    Any text is a safe query: punctuation and FTS operators are treated as words. Every hit
    cites its evidence (source, source_ref: "(none)" when missing, null in --json) and its proposal_id.
    """
    from git_memzoi.recall.search import search as run_search  # one command's core per run (Command start-up: search)

    result = run_search(
        workspace(),
        " ".join(query),
        path=path,
        type=type_,
        lane=lane,
        limit=limit,
        include_all=include_all,
        include_local=include_local,
    )
    show_search(result, as_json=as_json)


@click.command()
@click.argument("record_id")
@json_option
def expiry(record_id: str, as_json: bool) -> None:
    """Explain why a record is current or query-only: the lane rule, the boundary and the reason."""
    from git_memzoi.recall.records import explain  # one command's core per run (Command start-up: search)

    decision = explain(workspace(), record_id)
    if as_json:
        emit_json(decision.model_dump())
        return
    _line(f"{decision.record_id}: {'current' if decision.current else 'query-only'}")
    _line(f"  lane:     {decision.lane} (status: {decision.status})")
    _line(f"  rule:     {decision.rule}")
    boundary = (
        f"{decision.boundary} ({decision.boundary_kind})"
        if decision.boundary
        else ("none" if decision.boundary_kind is None else decision.boundary_kind)
    )
    _line(f"  boundary: {boundary}")
    _line(f"  reason:   {decision.reason}")
    _line(f"  at:       {decision.evaluated_at}")
    for fact in decision.facts:
        _line(f"  fact:     {fact.get('fact')} until {fact.get('until')} by {fact.get('actor')}: {fact.get('reason')}")


@click.command()
@click.option("--task", required=True, metavar="T", help="What the agent is about to do.")
@click.option("--path", "paths", multiple=True, metavar="P", help="A path the task touches (repeatable).")
@click.option("--budget", type=int, metavar="N", help="Word budget (default: recall.context_budget).")
@click.option(
    "--include-local", "include_local", is_flag=True, help="Include private records and local/session memory."
)
@json_option
def context(task: str, paths: tuple[str, ...], budget: int | None, include_local: bool, as_json: bool) -> None:
    """A prompt-ready context pack for a task: path-bound, risks first, fitted to a word budget."""
    from git_memzoi.recall.context import build_context  # one command's core per run (Command start-up: search)

    pack = build_context(workspace(), task, paths=paths, budget=budget, include_local=include_local)
    if as_json:
        emit_json(pack.model_dump())
        return
    click.echo(escape_text(pack.text), nl=not pack.text.endswith("\n"))
    say(f"{len(pack.items)} records, {pack.used}/{pack.budget} words, {len(pack.omitted)} omitted")


@click.command()
@click.option("--task", required=True, metavar="T", help="The task being handed over.")
@json_option
def handoff(task: str, as_json: bool) -> None:
    """A context pack plus the open inbox and the current session checkpoint, for switching agents."""
    from git_memzoi.recall.handoff import build_handoff  # one command's core per run (Command start-up: search)

    result = build_handoff(workspace(), task)
    if as_json:
        emit_json(result.model_dump())
        return
    click.echo(escape_text(result.text), nl=not result.text.endswith("\n"))


@click.command()
@click.option("--path", metavar="P", help="A repository path about to be changed.")
@click.option("--command", "command_", metavar="C", help="A shell command about to be run.")
@click.option("--action", metavar="A", help="An action about to be taken, in words.")
@click.option("--exit-code", "exit_code", is_flag=True, help="Exit 1 when there are warnings.")
@json_option
def precheck(path: str | None, command_: str | None, action: str | None, exit_code: bool, as_json: bool) -> None:
    """Warnings from risk, warning and failed_attempt records that apply, most severe first."""
    # one command's core per run (Command start-up: precheck --path)
    from git_memzoi.recall.precheck import precheck as run_precheck

    given = [v for v in (path, command_, action) if v is not None]
    if len(given) != 1:
        raise click.UsageError("give exactly one of --path, --command or --action")
    result = run_precheck(workspace(), path=path, command=command_, action=action)
    if as_json:
        emit_json(result.model_dump())
    elif not result.warnings:
        say(f"no warnings for {result.subject} {result.value!r}")
    else:
        for number, warning in enumerate(result.warnings, 1):
            flag = _unverified(warning.freshness)
            _line(f"{number}. [{warning.type}] {warning.title}  (id: {warning.record_id}){flag}")
            _line(f"   {warning.message}")
            _line(f"   matched: {warning.matched}")
            _line(f"   next: {warning.next_step}")
            _line(f"   {_cite(warning.citation)}")
    if exit_code and result.warnings:
        raise click.exceptions.Exit(EXIT_NO)


@click.command()
@click.option(
    "--write",
    is_flag=True,
    help="Also write a pending proposal packet for each item (supersede or tombstone), for review; nothing is applied.",
)
@json_option
def maintenance(write: bool, as_json: bool) -> None:
    """List what in memory needs review: unverified records, near-duplicates and likely contradictions.

    Nothing is written unless --write, which proposes (never applies) a supersede or tombstone for
    each item whose record has no open proposal yet; a second --write writes nothing new.
    """
    from git_memzoi.freshness.maintenance import find  # one command's core per run

    ws = workspace()
    findings = find(ws)
    found = findings.items()
    written = _maintenance_write(ws, findings) if write else None
    if as_json:
        emit_json({"items": found} | ({} if written is None else {"written": [w.as_json() for w in written]}))
        return
    if not found:
        say("nothing to maintain: no unverified record, near-duplicate or likely contradiction")
        return
    for item in found:
        _line(f"{item['kind']}: {', '.join(item['records'])}: {item['reason']}")
    say(f"{len(found)} item(s)" + ("" if write else "; `git memzoi maintenance --write` proposes a packet for each"))
    for w in written or []:
        if w.proposal_id is None:
            say(f"{w.record_id}: no proposal written ({w.note})")
        else:
            say(f"{w.record_id}: {w.action} proposed as {w.proposal_id} ({w.file})")


def _maintenance_write(ws: Any, findings: Any) -> list[Any]:
    from git_memzoi.lifecycle.maintenance import write

    return list(write(ws, findings))
