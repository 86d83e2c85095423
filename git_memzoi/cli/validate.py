"""`git memzoi validate`: check memory files against the profile."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from git_memzoi.cli.common import emit_json, json_option, workspace
from git_memzoi.errors import EXIT_NO
from git_memzoi.profile.document import Problem
from git_memzoi.profile.tree import TreeReport, validate_tree
from git_memzoi.runtime.sources import rev_files, worktree_files

if TYPE_CHECKING:
    from git_memzoi.gitrepo import GitRepo


@click.command()
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--rev", metavar="REV", help="Validate the tree at REV from git objects (works in a bare repository).")
@json_option
def validate(paths: tuple[str, ...], rev: str | None, as_json: bool) -> None:
    """Check .memzoi/ (or the given files) against the memzoi profile.

    Prints one `path:line: code: message` line per problem and exits 1 when any is an
    error. A packet that is not repo-safe is a warning in the work tree, where it waits
    to be rejected, and an error in a committed tree (--rev).
    """
    ws = workspace(bound=False)
    if rev is not None:
        if paths:
            raise click.UsageError("give PATHs or --rev, not both")
        report = _rev_report(ws.repo, rev)
    else:
        report = validate_tree(worktree_files(ws.repo, paths), mode="worktree")
    if as_json:
        emit_json(
            {
                "ok": not report.errors,
                "files_checked": report.files_checked,
                "records": len(report.records),
                "packets": len(report.packets),
                "problems": [p.as_json() for p in report.problems],
            }
        )
    else:
        for problem in report.problems:
            click.echo(str(problem))
        summary = (
            f"{report.files_checked} files checked: {len(report.records)} records, "
            f"{len(report.packets)} packets, {len(report.errors)} errors, {len(report.warnings)} warnings"
        )
        click.echo(summary, err=True)
    if report.errors:
        raise click.exceptions.Exit(EXIT_NO)


def _rev_report(repo: GitRepo, rev: str) -> TreeReport:
    """The committed tree at `rev` validated, or the one tree under .memzoi/ git would not have written."""
    from git_memzoi.gitrepo.history import History  # --rev only

    fault = History(repo).shape_fault(str(repo.resolve(rev).id))
    if fault is not None:  # what the files would be read from is not what git checks out
        return TreeReport(problems=[Problem(fault[0], 1, "malformed-tree", fault[1])])
    return validate_tree(rev_files(repo, rev), mode="committed")
