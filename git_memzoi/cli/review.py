"""`git memzoi review`: walk the open inbox and the pending packets one at a time, as `git add -p` walks hunks."""

from __future__ import annotations

import difflib
import os
import sys
from dataclasses import dataclass, field
from typing import Any

import click

from git_memzoi.cli.common import say, workspace
from git_memzoi.errors import FormatError, MemzoiError, NotFound, UsageError
from git_memzoi.runtime.workspace import Workspace

HELP = """y - approve this proposal (and apply it, with --apply)
n - skip it for now
r - reject it (asks why)
e - edit it in $EDITOR (validated again; an edited proposal waits for approval again)
q - quit; nothing else is done
? - print this help"""


@dataclass
class Tally:
    """What one review did, for the closing line."""

    done: dict[str, int] = field(default_factory=dict)

    def add(self, what: str) -> None:
        self.done[what] = self.done.get(what, 0) + 1

    def line(self) -> str:
        order = ("approved", "applied", "rejected", "edited", "skipped")
        parts = [f"{self.done[key]} {key}" for key in order if self.done.get(key)]
        return "review: " + (", ".join(parts) if parts else "nothing done")


@click.command()
@click.option("--apply", "and_apply", is_flag=True, help="Apply what you approve (and pending packets you accept).")
def review(and_apply: bool) -> None:
    """Review the open inbox and pending packets one at a time: approve, skip, reject or edit each.

    It needs a terminal; scripts read `git memzoi proposals --json` and call approve, apply and reject.
    """
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError(
            "review asks questions and needs a terminal",
            hint="for scripts: git memzoi proposals --json, then approve, apply or reject by ID",
        )
    from git_memzoi.lifecycle import inbox

    ws = workspace()
    entries = inbox.list_entries(ws)
    if not entries:
        say("nothing to review: the inbox is empty and there are no pending packets")
        return
    tally = Tally()
    for number, entry in enumerate(entries, 1):
        if not _review_one(ws, entry, f"({number}/{len(entries)})", and_apply, tally):
            break
    say(tally.line())


def _review_one(ws: Workspace, entry: Any, counter: str, and_apply: bool, tally: Tally) -> bool:
    """Show one proposal and act on the answers until one moves on; False when the reviewer quits."""
    from git_memzoi.lifecycle import inbox

    while True:
        _show(ws, entry)
        answer = click.prompt(f"{counter} Approve this proposal [y,n,r,e,q,?]", default="", show_default=False)
        answer = answer.strip().lower()[:1]
        try:
            if answer == "y":
                _accept(ws, entry, and_apply, tally)
                return True
            if answer == "n":
                tally.add("skipped")
                return True
            if answer == "r":
                reason = click.prompt("Why is it rejected", default="", show_default=False).strip()
                if not reason:
                    click.echo("a rejection says why; nothing was done")
                    continue
                from git_memzoi.lifecycle.reject import reject

                click.echo(reject(ws, entry.file or entry.id, reason).message)
                tally.add("rejected")
                return True
            if answer == "e":
                edited = _edit(ws, entry)
                if edited is not None:
                    entry = edited
                    tally.add("edited")
                continue
            if answer == "q":
                return False
            click.echo(HELP)
        except MemzoiError as exc:  # refused: say why and ask again; nothing was changed
            click.echo(f"git memzoi: {exc}")
            if exc.hint:
                click.echo(f"hint: {exc.hint}")
            entry = inbox.show(ws, entry.id if entry.source != "file" else (entry.file or entry.id))


def _accept(ws: Workspace, entry: Any, and_apply: bool, tally: Tally) -> None:
    from git_memzoi.lifecycle import inbox
    from git_memzoi.lifecycle.apply import apply

    if entry.source == "file":  # a packet file alone: reviewed in a pull request, applied directly
        if not and_apply:
            click.echo("a pending packet file is applied, not approved: review with --apply to apply it")
            tally.add("skipped")
            return
    elif entry.state != "approved":
        click.echo("\n".join(inbox.approve(ws, entry.id).messages))
        tally.add("approved")
    if and_apply:
        result = apply(ws, entry.file if entry.source == "file" else entry.id)
        click.echo(result.message)
        tally.add("applied")


def _edit(ws: Workspace, entry: Any) -> Any | None:
    """The proposal after $EDITOR, validated and saved; None when left unchanged."""
    from git_memzoi.lifecycle import inbox

    try:
        text = click.edit(entry.packet, extension=".md", require_save=True)
    except click.ClickException as exc:  # no such editor, or it exited non-zero: as git, change nothing
        click.echo(f"git memzoi: {exc.format_message()}; nothing was changed")
        return None
    except OSError as exc:  # the editor removed or locked its file
        click.echo(f"git memzoi: the edited file could not be read back ({exc.strerror}); nothing was changed")
        return None
    if text is None or text == entry.packet:
        click.echo("unchanged")
        return None
    raw = text.encode("utf-8")
    if entry.source == "file":  # the work-tree file: checked as propose --packet checks it, then written back
        inbox.revise_file(ws, entry.file, raw)
        click.echo(f"edited {entry.file}")
    else:
        click.echo("\n".join(inbox.revise(ws, entry.id, raw).messages))
    return inbox.show(ws, entry.file if entry.source == "file" else entry.id)


def _color(ws: Workspace) -> bool | None:
    """Colour as git would: color.memzoi, then color.ui (`always`, `never`, `auto`); TERM=dumb or NO_COLOR: none.

    None leaves it to click, which colours a terminal only.
    """
    from git_memzoi.gitrepo.config import color_choice

    choice = color_choice(ws.repo, "color.memzoi")
    if choice is None and (os.environ.get("TERM") == "dumb" or os.environ.get("NO_COLOR")):
        return False
    return choice


def _show(ws: Workspace, entry: Any) -> None:
    """The proposal as a reviewer reads it; a supersede or tombstone with its target's text and a diff."""
    from git_memzoi.profile import frontmatter

    try:
        doc = frontmatter.parse(entry.packet.encode("utf-8"), entry.file or f"inbox:{entry.id}")
        data, body = doc.data, doc.body
    except FormatError as exc:
        click.echo(f"\n{entry.id}  {entry.state}  (does not parse: {exc})")
        return
    proposal: dict[str, Any] = data["proposal"] if isinstance(data.get("proposal"), dict) else {}
    action = str(proposal.get("action", "?"))
    scope: dict[str, Any] = data["scope"] if isinstance(data.get("scope"), dict) else {}
    paths = scope.get("paths") or []
    click.echo("")
    click.secho(
        f"{entry.id}  {entry.state}  {action}" + (f"  ({entry.file})" if entry.file else ""),
        bold=True,
        color=_color(ws),
    )
    click.echo(f"type: {data.get('type')}  lane: {data.get('lane')}  sensitivity: {data.get('sensitivity')}")
    click.echo(f"title: {data.get('title')}")
    click.echo("applies to: " + (", ".join(str(p) for p in paths) if paths else "the whole repository"))
    if proposal.get("reason"):
        click.echo(f"reason: {proposal['reason']}")
    target = proposal.get("target") or next(iter(data.get("supersedes") or []), None)
    if action != "create" and isinstance(target, str):
        _show_target(ws, target, body, action)
    else:
        click.echo("")
        click.echo(body.rstrip("\n"))


def _show_target(ws: Workspace, target: str, body: str, action: str) -> None:
    from git_memzoi.recall.records import get_record

    try:
        record = get_record(ws, target)
    except (NotFound, UsageError):
        click.echo(f"target {target}: not in this worktree's index")
        click.echo("")
        click.echo(body.rstrip("\n"))
        return
    click.echo(f"target: {record.record_id} ({record.path}), {record.status}")
    if action == "tombstone":
        click.echo("the target's text, which the tombstone keeps but retires:")
        click.echo(record.body.rstrip("\n"))
        return
    old, new = record.body.splitlines(keepends=True), body.splitlines(keepends=True)
    for line in difflib.unified_diff(old, new, f"a/{record.path}", "b/(proposed)"):
        color = "green" if line.startswith("+") else "red" if line.startswith("-") else None
        click.secho(line.rstrip("\n"), fg=color, color=_color(ws))
