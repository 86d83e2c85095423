"""`git memzoi review`: walk the open inbox and the pending packets one at a time, as `git add -p` walks hunks."""

from __future__ import annotations

import difflib
import os
import shutil
import sys
from dataclasses import dataclass, field
from typing import Any

import click

from git_memzoi.cli.common import say, workspace
from git_memzoi.errors import FormatError, MemzoiError, NotFound, UsageError
from git_memzoi.runtime.workspace import Workspace

KEYS = "[y,n,a,d,r,e,q,?]"

HELP = """y - approve this proposal (and apply it, with --apply); a pending packet file: apply it
n - skip it for now
a - take this one and every one after it, as y does
d - take this one and the rest from its source file, as y does
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

    def summary(self) -> str:
        order = ("approved", "applied", "rejected", "edited", "skipped", "refused")
        parts = [f"{self.done[key]} {key}" for key in order if self.done.get(key)]
        return ", ".join(parts) if parts else "nothing done"

    def line(self) -> str:
        return "review: " + self.summary()


@dataclass
class Walk:
    """One review's settings and what it did: the tally, and every file its steps wrote (for --commit)."""

    ws: Workspace
    and_apply: bool
    tally: Tally = field(default_factory=Tally)
    paths: set[str] = field(default_factory=set)


@click.command()
@click.option("--apply", "and_apply", is_flag=True, help="Apply what you approve (and pending packets you accept).")
@click.option(
    "--commit",
    "and_commit",
    is_flag=True,
    help="Record every file the review applied or rejected in one git commit when it ends.",
)
def review(and_apply: bool, and_commit: bool) -> None:
    """Review the open inbox and pending packets one at a time: approve, skip, reject or edit each.

    It needs a terminal; scripts read `git memzoi proposals --json` and call approve, apply and reject.
    """
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UsageError(
            "review asks questions and needs a terminal",
            hint="for scripts: git memzoi proposals --json, then approve, apply or reject by ID",
        )
    from git_memzoi.layout import GITATTRIBUTES, LOG
    from git_memzoi.lifecycle import inbox, transaction

    ws = workspace()
    if and_commit:  # refused before the first question, as apply --commit refuses before writing
        transaction.refuse_uncommitted_paths(ws, [LOG, GITATTRIBUTES], "review")
    entries = walk_order(inbox.list_entries(ws))
    if not entries:
        say("nothing to review: the inbox is empty and there are no pending packets")
        return
    files = sum(1 for entry in entries if entry.source == "file")
    if files:
        click.echo(
            f"{files} pending packet file(s): y applies one; a takes every one left, d the rest of its source file"
        )
    walk = Walk(ws, and_apply)
    _walk(walk, entries)
    say(walk.tally.line())
    if and_commit and walk.paths:
        sha = transaction.commit_paths(ws, walk.paths, f"memzoi: review: {walk.tally.summary()}")
        click.echo(f"committed {sha[:12]}")


def _walk(walk: Walk, entries: list[Any]) -> None:
    """Ask about each entry in turn; `a` takes the rest, `d` the rest of the current source file."""
    number = 0
    while number < len(entries):
        entry = entries[number]
        number += 1
        verdict = _review_one(walk, entry, f"({number}/{len(entries)})")
        if verdict == "quit":
            return
        if verdict == "all":
            _take_all(walk, entries[number:])
            return
        source = import_source(entry.packet) if verdict == "file" else None
        if source is not None:
            end = number
            while end < len(entries) and (import_source(entries[end].packet) or ("",))[0] == source[0]:
                end += 1
            _take_all(walk, entries[number:end])
            number = end


def walk_order(entries: list[Any]) -> list[Any]:
    """The inbox's order, with the packets an import wrote after it, by source file and line (as they read)."""
    keyed = []
    for position, entry in enumerate(entries):
        source = import_source(entry.packet) if entry.source == "file" else None
        keyed.append(((1, source[0], source[1], position) if source else (0, "", 0, position), entry))
    return [entry for _, entry in sorted(keyed, key=lambda pair: pair[0])]


def import_source(packet: str) -> tuple[str, int, int] | None:
    """(source path, first line, last line) of a packet `import` wrote, from its `source_ref`; None for others."""
    from git_memzoi.importer.identity import parse_source_ref

    found = parse_source_ref(_source_ref(packet))
    return (found.path, found.first, found.last) if found is not None else None


def _source_ref(packet: str) -> str | None:
    """The packet's `source_ref`: read off its one line (every string is dumped on one line), parsed when quoted."""
    lines = packet.split("\n")
    if lines[0] != "---":
        return None
    for line in lines[1:]:
        if line == "---":
            return None
        if line.startswith("source_ref: "):
            value = line[len("source_ref: ") :].strip()
            if value[:1] not in ("'", '"'):
                return value
            from git_memzoi.profile import frontmatter

            try:
                ref = frontmatter.parse(packet.encode("utf-8"), "packet").data.get("source_ref")
            except FormatError:
                return None
            return ref if isinstance(ref, str) else None
    return None


def _review_one(walk: Walk, entry: Any, counter: str) -> str:
    """Show one proposal and act on the answers until one moves on: next, all, file or quit."""
    from git_memzoi.lifecycle import inbox

    shown = False
    while True:
        if not shown:
            _show(walk.ws, entry)
            shown = True
        verb = "Apply this packet" if entry.source == "file" else "Approve this proposal"
        answer = click.prompt(f"{counter} {verb} {KEYS}", default="", show_default=False)
        answer = answer.strip().lower()[:1]
        try:
            if answer in ("y", "a", "d"):
                _accept(walk, entry)
                return {"y": "next", "a": "all", "d": "file"}[answer]
            if answer == "n":
                walk.tally.add("skipped")
                return "next"
            if answer == "r":
                reason = click.prompt("Why is it rejected", default="", show_default=False).strip()
                if not reason:
                    click.echo("a rejection says why; nothing was done")
                    continue
                from git_memzoi.lifecycle.reject import reject

                rejected = reject(walk.ws, entry.file or entry.id, reason)
                click.echo(rejected.message)
                walk.paths.update(rejected.files)
                walk.tally.add("rejected")
                return "next"
            if answer == "e":
                edited = _edit(walk.ws, entry)
                if edited is not None:
                    entry = edited
                    walk.tally.add("edited")
                shown = False
                continue
            if answer == "q":
                return "quit"
            click.echo(HELP)  # the item stays above it: only the help is printed, not the item again
        except MemzoiError as exc:  # refused: say why and ask again; nothing was changed
            _refused(exc)
            entry = inbox.show(walk.ws, entry.id if entry.source != "file" else (entry.file or entry.id))
            shown = False


def _refused(exc: MemzoiError) -> None:
    click.echo(f"git memzoi: {exc}")
    if exc.hint:
        click.echo(f"hint: {exc.hint}")


def _take(walk: Walk, entry: Any) -> None:
    """Accept an entry `a` or `d` took without asking; a refusal is reported and the walk goes on."""
    click.echo(f"{entry.id}: {entry.title}")
    try:
        _accept(walk, entry)
    except MemzoiError as exc:
        _refused(exc)
        walk.tally.add("refused")


def _take_all(walk: Walk, entries: list[Any]) -> None:
    """Accept every one of `entries` without asking: the pending packet files as one batch (one install, as
    `import --apply` applies), the rest one at a time; a batch that is refused is taken one at a time."""
    from git_memzoi.layout import pending_path

    batched = [e for e in entries if e.source == "file" and e.file == pending_path(e.id)]
    for entry in entries:
        if entry not in batched:
            _take(walk, entry)
    if batched and not _apply_batch(walk, batched):
        for entry in batched:
            _take(walk, entry)


def _apply_batch(walk: Walk, entries: list[Any]) -> bool:
    """Apply pending packet files in one install, each resolved as `apply` resolves it; False when refused."""
    from git_memzoi.lifecycle.batch import BatchPacket, apply_batch

    root = walk.ws.repo.require_workdir()
    try:
        batch = [BatchPacket(e.id, (root / e.file).read_bytes(), None, pending=True) for e in entries]
        done = apply_batch(walk.ws, f"review-{len(batch)}", batch, None)
    except (MemzoiError, OSError) as exc:
        click.echo(f"git memzoi: {exc}; taking them one at a time")
        return False
    for record in done.records:
        click.echo(f"{'created' if record.created else record.status} {record.record_id} ({record.path})")
    click.echo(f"applied {len(done.applied)} packets in one step")
    for message in done.warnings:
        click.echo(f"warning: {message}")
    for _ in done.applied:
        walk.tally.add("applied")
    walk.paths.update(done.files)
    return True


def _accept(walk: Walk, entry: Any) -> None:
    """y: a pending packet file is applied (the review is its review); an inbox proposal approved, and with
    --apply applied."""
    from git_memzoi.lifecycle import inbox
    from git_memzoi.lifecycle.apply import apply

    if entry.source != "file" and entry.state != "approved":
        click.echo("\n".join(inbox.approve(walk.ws, entry.id).messages))
        walk.tally.add("approved")
    if walk.and_apply or entry.source == "file":
        result = apply(walk.ws, entry.file if entry.source == "file" else entry.id)
        click.echo(result.message)
        walk.paths.update(result.files)
        walk.tally.add("applied")


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
    """The proposal as a reviewer reads it, through the pager when it is longer than the screen."""
    header, lines = _screen(ws, entry)
    color = _color(ws)
    if len(lines) + 2 <= shutil.get_terminal_size().lines:
        click.echo("\n".join(lines), color=color)
        return
    os.environ.setdefault("LESS", "FRX")  # as git pages: quit on one screen, colours, the text left on screen
    click.echo_via_pager("\n".join(lines) + "\n", color=color)
    click.echo(header, color=color)  # what the question is about, below whatever the pager left


def _screen(ws: Workspace, entry: Any) -> tuple[str, list[str]]:
    """(the header line, every line shown): a supersede or tombstone with its target's text and a diff."""
    from git_memzoi.profile import frontmatter

    try:
        doc = frontmatter.parse(entry.packet.encode("utf-8"), entry.file or f"inbox:{entry.id}")
        data, body = doc.data, doc.body
    except FormatError as exc:
        header = f"{entry.id}  {entry.state}  (does not parse: {exc})"
        return header, ["", header]
    proposal: dict[str, Any] = data["proposal"] if isinstance(data.get("proposal"), dict) else {}
    action = str(proposal.get("action", "?"))
    scope: dict[str, Any] = data["scope"] if isinstance(data.get("scope"), dict) else {}
    paths = scope.get("paths") or []
    source = import_source(entry.packet)
    header = click.style(
        f"{entry.id}  {entry.state}  {action}"
        + (f"  from {source[0]}:{source[1]}-{source[2]}" if source else "")
        + (f"  ({entry.file})" if entry.file else ""),
        bold=True,
    )
    lines = ["", header]
    lines.append(f"type: {data.get('type')}  lane: {data.get('lane')}  sensitivity: {data.get('sensitivity')}")
    lines.append(f"title: {data.get('title')}")
    lines.append("applies to: " + (", ".join(str(p) for p in paths) if paths else "the whole repository"))
    if proposal.get("reason"):
        lines.append(f"reason: {proposal['reason']}")
    target = proposal.get("target") or next(iter(data.get("supersedes") or []), None)
    if action != "create" and isinstance(target, str):
        lines.extend(_target_lines(ws, target, body, action))
    else:
        lines.extend(["", *body.rstrip("\n").split("\n")])
    return header, lines


def _target_lines(ws: Workspace, target: str, body: str, action: str) -> list[str]:
    from git_memzoi.recall.records import get_record

    try:
        record = get_record(ws, target)
    except (NotFound, UsageError):
        return [f"target {target}: not in this worktree's index", "", *body.rstrip("\n").split("\n")]
    lines = [f"target: {record.record_id} ({record.path}), {record.status}"]
    if action == "tombstone":
        lines.append("the target's text, which the tombstone keeps but retires:")
        return [*lines, *record.body.rstrip("\n").split("\n")]
    old, new = record.body.splitlines(keepends=True), body.splitlines(keepends=True)
    for line in difflib.unified_diff(old, new, f"a/{record.path}", "b/(proposed)"):
        color = "green" if line.startswith("+") else "red" if line.startswith("-") else None
        lines.append(click.style(line.rstrip("\n"), fg=color))
    return lines
