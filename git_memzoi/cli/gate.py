"""The gates without click: `hook pre-receive`, `hook update`, `hook check`, and the client's `hook pre-push`.

A server runs pre-receive on every push; one that leaves .memzoi/ alone, or that it refuses by a
file's size (read from the object's header), costs starting Python and importing what runs the
checks, no more. cli.entry hands these exact command lines (`hook pre-receive [--json]`, `hook
update REF OLD NEW [--json]`, `hook check RANGE [--json]`, `hook pre-push [REMOTE [URL]]
[--json]`) to `main` here before click loads;
anything else (--help, --debug, another option, an option among the arguments) goes to click's
`hook` group (cli.hooks), whose commands call the same functions, so that both answer in the
same bytes and exit codes.

`render` prints a CheckReport for every hook, the client's too.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from git_memzoi.cli.failures import debug_asked, guarded
from git_memzoi.cli.finish import leave
from git_memzoi.cli.output import emit_json, err
from git_memzoi.errors import EXIT_NO, EXIT_OK
from git_memzoi.profile.oneline import escape

if TYPE_CHECKING:
    from git_memzoi.gitrepo import GitRepo
    from git_memzoi.hooks.checks import CheckReport, Finding

HINTS = {
    "record-edited": "change a record through a supersede or tombstone proposal (git memzoi propose, "
    "then apply); a repository may allow in-place edits with [hooks] "
    "allow_in_place_edits = true in .memzoi/config.toml (in effect once it is on the branch)",
    "record-deleted": "retire a record with a tombstone proposal instead of deleting its file",
    "unreviewed-transition": "retire a record with git memzoi apply, which commits the applied packet that "
    "names it together with the status change",
    "unreviewed-expiry": "a record expires by itself once its retention boundary passes (explicit_expires_at, "
    "or its lane's window); to retire it sooner, use a tombstone proposal",
    "unreviewed-record": "create records through a proposal (git memzoi propose, approve, apply) so that the "
    "applied packet comes with them",
    "packet-edited": "resolved packets are a record of review: add a new proposal instead of changing one",
    "packet-deleted": "resolved packets are a record of review: keep them; a new proposal can change the outcome",
    "record-unverified": "settle each record the range leaves unverified with the proposal named (or rewrite "
    "it in the range), or set [freshness] require_review = false",
    "secret": "remove the secret from every commit that carries it (rewrite them) and rotate it",
}


def takes(args: list[str]) -> bool:
    """Whether `args` is exactly one of the gate's command lines, answered here as click would."""
    if len(args) < 2 or args[0] != "hook":
        return False
    positional = args[2:-1] if args[-1] == "--json" else args[2:]
    if any(arg.startswith("-") for arg in positional):
        return False  # an option, `--`, or a name click would read as one
    wanted = {"pre-receive": (0,), "update": (3,), "check": (1,), "pre-push": (0, 1, 2)}.get(args[1])
    return wanted is not None and len(positional) in wanted


def main(args: list[str]) -> None:
    """Answer one of the gate's command lines (takes(args) is true) and exit with its code.

    Reached from cli.entry.main alone, which has already made SIGPIPE end us quietly.
    """
    as_json = args[-1] == "--json"
    positional = args[2:-1] if as_json else args[2:]
    commands: dict[str, Callable[[], int]] = {
        "pre-receive": lambda: pre_receive(as_json),
        "update": lambda: update(*positional, as_json=as_json),
        "check": lambda: check(positional[0], as_json),
        "pre-push": lambda: pre_push(positional[0] if positional else "", as_json),
    }
    leave(guarded(commands[args[1]], debug=debug_asked(args)))


def _repo() -> GitRepo:
    """The repository here, as every command opens it (cli.common.workspace, unbound)."""
    from git_memzoi.runtime.workspace import Workspace

    return Workspace.open(None).repo


def pre_receive(as_json: bool) -> int:
    """`hook pre-receive`: the ref lines on stdin, checked; the exit code."""
    repo = _repo()
    from git_memzoi.hooks.run import check_server_push, parse_pre_receive

    updates = parse_pre_receive(sys.stdin.read())
    return render(check_server_push(repo, updates), as_json, "push")


def update(ref: str, old: str, new: str, *, as_json: bool) -> int:
    """`hook update REF OLD NEW`: one ref, checked; the exit code."""
    repo = _repo()
    from git_memzoi.hooks.run import check_server_push, parse_update

    return render(check_server_push(repo, [parse_update(ref, old, new)]), as_json, "push")


def pre_push(remote: str, as_json: bool) -> int:
    """`hook pre-push [REMOTE [URL]]`: the ref lines git gives on stdin, checked; the exit code.

    Commits the remote is known to have are not checked again (hooks.quick.plan_push, git's
    plumbing); when none of the others changes .memzoi/ and no pushed ref could be objected to,
    the report is the untouched one and nothing of the checks loads.
    """
    from git_memzoi.hooks import quick

    text = sys.stdin.read()
    try:
        plan: quick.PushPlan | None = quick.push_plan(remote, text)  # hooks.quick.early_exit's, when it made one
    except quick.GitUnclear:
        plan = None  # the full check below reports the input, or reads the repository itself
    if plan is not None and not plan.touched:
        if as_json:
            sys.stdout.write(quick.untouched_report(len(plan.commits)))
        return EXIT_OK
    repo = _repo()
    from git_memzoi.hooks.run import check_client_push, known_remote_commits, parse_pre_push

    updates = parse_pre_push(text)
    # git's plumbing failed where pygit2 reads the repository: the same walk, through pygit2
    hide = known_remote_commits(repo, remote, updates) if plan is None else set(plan.hide)
    return render(check_client_push(repo, updates, hide, remote), as_json, "push")


def check(range_spec: str, as_json: bool, *, annotate: bool = False) -> int:
    """`hook check BASE..TIP`: the range, checked; the exit code.

    With `annotate`, each problem is also printed on stdout as a GitHub Actions workflow command
    (`::error file=...,line=...,title=CODE::message`), which marks the line in the pull request.
    """
    repo = _repo()
    from git_memzoi.hooks.run import check_range

    report = check_range(repo, range_spec)
    if annotate:
        for finding in report.findings:
            sys.stdout.write(
                github_annotation(
                    finding.problem.path, finding.problem.line, finding.problem.code, finding.problem.message
                )
            )
        _warn_invalidated(report)
    return render(report, as_json, "range")


def _warn_invalidated(report: CheckReport) -> None:
    """Each record the range leaves unverified as a `::warning` naming it and the proposal that settles it (under
    `[freshness] require_review` it is a finding, annotated as an error above)."""
    if any(f.problem.code == "record-unverified" for f in report.findings):
        return
    for item in report.invalidated or []:
        broke = ", ".join(
            f"{c['identifier'] or c['path']} {c['change']}" + (f" to {c['to']}" if c["to"] else "")
            for c in item["evidence"]
        )
        message = f"{item['record_id']} is unverified by this range ({broke}); settle it: {item['command']}"
        sys.stdout.write(github_annotation("", 0, "record-unverified", message, level="warning"))


def _workflow_data(text: str) -> str:
    """`text` as one workflow command's data: control characters shown (escape), then GitHub's own escapes."""
    return escape(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _workflow_property(text: str) -> str:
    return _workflow_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotation(path: str, line: int, code: str, message: str, level: str = "error") -> str:
    """One problem as a GitHub Actions `::error` (or `::warning`) command, naming the file when it is one of .memzoi/.

    One line whatever the path or message hold: a newline in either cannot end the command and
    start another one.
    """
    where = f"file={_workflow_property(path)},line={line}," if path.startswith(".memzoi") else ""
    return f"::{level} {where}title={_workflow_property(f'git memzoi {code}')}::{_workflow_data(message)}\n"


def label(report: CheckReport, finding: Finding) -> str:
    """What a group of findings is about: a ref and its tips, the staged changes, or a commit."""
    if finding.ref is not None:
        if finding.ref not in report.refs:  # refused by its name alone (refs/replace/)
            return f"{finding.ref} at {finding.where[:12]}"
        base, tip = report.refs[finding.ref]
        return f"{finding.ref} at {tip[:12]}, against {base[:12] if base else 'an empty .memzoi/'}"
    if finding.where == "index":
        return "staged changes"
    summary = report.summaries.get(finding.where, "")
    return f"commit {finding.where[:12]}" + (f" ({summary})" if summary else "")


def render(report: CheckReport, as_json: bool, what: str) -> int:
    """Print `report` (the JSON document on stdout, else lines on stderr); 1 when it has findings, else 0.

    Every line is one line (profile.oneline.escape): a path, ref or commit summary cannot put a
    control character (an escape sequence, a carriage return, a newline) on the person's terminal.
    """
    if as_json:
        emit_json(report.as_json())
        return EXIT_NO if report.findings else EXIT_OK
    _invalidated(report)
    if report.findings:
        _findings(report, what)
    elif report.commits_checked and what != "commit":
        _say(
            f"git memzoi: {report.commits_checked} change{'s' * (report.commits_checked != 1)} "
            "to .memzoi/ checked: memory OK"
        )
    return EXIT_NO if report.findings else EXIT_OK


def _invalidated(report: CheckReport) -> None:
    """The records the range leaves unverified, each with the proposal that settles it (docs/freshness.md)."""
    found = report.invalidated or []
    if not found:
        return
    _say(f"git memzoi: {len(found)} record{'s' * (len(found) != 1)} this range leaves unverified:")
    for item in found:
        broke = ", ".join(
            f"{c['identifier'] or c['path']} {c['change']}" + (f" to {c['to']}" if c["to"] else "")
            for c in item["evidence"]
        )
        _say(f"  {item['record_id']}: {broke}")
        _say(f"    {item['suggest']}: {item['command']}")


def _findings(report: CheckReport, what: str) -> None:
    group: tuple[str, str | None] | None = None
    for finding in report.findings:
        if (finding.where, finding.ref) != group:
            group = (finding.where, finding.ref)
            _say(f"git memzoi: {label(report, finding)}:")
        _say(str(finding.problem))
    commits = len({f.where for f in report.findings if f.ref is None})
    refs = sorted({f.ref for f in report.findings if f.ref is not None})
    where = []
    if commits:
        where.append(f"{commits} of {report.commits_checked} change{'s' * (report.commits_checked != 1)} to .memzoi/")
    if refs:
        where.append(f"what {', '.join(refs)} would hold")
    _say(
        f"git memzoi: {what} rejected: {len(report.findings)} problem"
        f"{'s' * (len(report.findings) != 1)} in {' and '.join(where)}"
    )
    codes = {f.problem.code for f in report.findings}
    for code, hint in HINTS.items():
        if code in codes:
            _say(f"hint: {hint}")


def _say(line: str) -> None:
    err(escape(line))
