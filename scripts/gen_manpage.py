#!/usr/bin/env python3
"""Generate the man page git-memzoi(1) from the click command tree.

    .venv/bin/python scripts/gen_manpage.py          # rewrite git_memzoi/man/git-memzoi.1
    .venv/bin/python scripts/gen_manpage.py --check  # exit 1 when the page is out of date

Every command in cli/main.py's COMMANDS registry whose module exists is documented, with its
help text, arguments and options. The output depends only on the code: no dates, no widths.
"""

from __future__ import annotations

import inspect
import re
import sys
from pathlib import Path
from typing import cast

import click

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from git_memzoi import __version__  # noqa: E402
from git_memzoi.cli.main import COMMANDS, CONTEXT_SETTINGS, cli  # noqa: E402

PAGE = ROOT / "git_memzoi" / "man" / "git-memzoi.1"
HELP_NAMES = cast(list[str], CONTEXT_SETTINGS["help_option_names"])

EXIT_STATUS = [
    ("0", "Success."),
    (
        "1",
        'A documented "no": validation found problems, a hook refused a commit or push, '
        "precheck --exit-code found warnings, an apply or reject was refused for a stated reason, "
        "a named record or proposal does not exist, or repo-lifecycle.lock stayed busy.",
    ),
    (
        "2",
        "Usage error: a wrong option or argument, a bad config.toml, or a command that needs "
        "a work tree run in a bare repository.",
    ),
    (
        "3",
        "Runtime state under MEMZOI_HOME (shared.db, index.db, an apply journal) is unreadable; "
        "nothing is recreated over it.",
    ),
    ("70", "An unexpected failure, reported in one line (a traceback with --debug)."),
    ("128", "Not inside a git repository, as git itself reports it."),
]

ENVIRONMENT = [
    (
        "MEMZOI_HOME",
        "Where runtime state lives (default ~/.memzoi): config.toml, and per repository "
        "shared.db, repo-lifecycle.lock and each worktree's index.db and exports/.",
    ),
    (
        "MEMZOI_LOCK_TIMEOUT",
        "Seconds to wait for repo-lifecycle.lock (default 10); past it the "
        "operation fails, naming the lock, and changes nothing.",
    ),
    (
        "MEMZOI_NOW",
        "An RFC 3339 date-time that pins the clock for retention and lifecycle decisions (tests and demos).",
    ),
    ("MEMZOI_ACTOR", "The name recorded as the actor of audit events and proposals (default: $USER)."),
    ("MEMZOI_DEBUG", "When set (not 0), unexpected failures print a traceback, as --debug does."),
    (
        "GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE",
        "Honoured as git honours them, so git memzoi works from hooks, under git -C and in bare repositories.",
    ),
]

FILES = [
    (".memzoi/records/<path-concept-id>.md", "Canonical records: Markdown with YAML frontmatter."),
    (".memzoi/proposals/pending/<proposal-id>.md", "Review packets waiting to be applied or rejected."),
    (".memzoi/proposals/resolved/{applied,rejected}/", "Resolved packets with their resolution."),
    (".memzoi/index.md, .memzoi/log.md", "Human navigation and append-only receipts (reserved names)."),
    (
        ".memzoi/config.toml",
        "Repository policy ([workflow], [retention], [recall], [hooks]); overrides the user and project config.",
    ),
    ("$MEMZOI_HOME/config.toml", "User-global policy."),
    (
        "$MEMZOI_HOME/projects/<repository-key>/",
        "config.toml, shared.db (the inbox, local and session memory, audit events) and repo-lifecycle.lock.",
    ),
    (
        "$MEMZOI_HOME/projects/<repository-key>/worktrees/<worktree-key>/",
        "index.db (disposable search index) and exports/ (generated projections).",
    ),
]


def esc(text: str) -> str:
    """Escape text for roff: backslashes, hyphens, and a leading . or ' on any line."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    text = "".join(ch if ord(ch) < 128 else f"\\[u{ord(ch):04X}]" for ch in text)
    return "\n".join(("\\&" + line) if line.startswith((".", "'")) else line for line in text.split("\n"))


def inline(text: str) -> str:
    """Escape, then show `code` spans in bold."""
    return re.sub(r"`([^`]+)`", lambda m: f"\\fB{m.group(1)}\\fR", esc(text))


def paragraphs(help_text: str | None) -> list[str]:
    """Help text as roff paragraphs; click's \\b marks a paragraph kept as written."""
    if not help_text:
        return []
    out = []
    for block in re.split(r"\n\s*\n", inspect.cleandoc(help_text).split("\f", 1)[0]):
        if block.startswith("\b"):
            out.append(".nf\n" + inline(block[1:].strip("\n")) + "\n.fi")
        else:
            out.append(inline(" ".join(line.strip() for line in block.splitlines())))
    return out


def options(command: click.Command, ctx: click.Context) -> list[str]:
    out = []
    for param in command.get_params(ctx):
        if not isinstance(param, click.Option) or param.hidden or param is command.get_help_option(ctx):
            continue
        record = param.get_help_record(ctx)
        if record is None:
            continue
        names, text = record
        # a choice list is one word to troff, wider than the page: it may break after each `|`
        tag = esc(names).replace("|", "|\\:")
        out.append(f".TP\n\\fB{tag}\\fR\n{inline(text) if text else ''}".rstrip("\n"))
    return out


def commands(group: click.Group, ctx: click.Context, prefix: str, top: bool) -> list[str]:
    out = []
    names = group.list_commands(ctx)
    if top:
        names = [name for name in COMMANDS if name in names]  # the registry's order groups related commands
    for name in names:
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        sub = click.Context(command, info_name=name, parent=ctx, help_option_names=HELP_NAMES)
        words = f"{prefix} {name}"
        usage = " ".join(command.collect_usage_pieces(sub))
        out.append(f'.SS "{esc(words)}"')
        out.append(f".B {esc(words)}\n{esc(usage)}".rstrip())
        out.append(".PP")
        body = paragraphs(command.help)
        out.append("\n.PP\n".join(body) if body else inline(COMMANDS.get(name, ("", ""))[1]))
        opts = options(command, sub)
        if opts:
            out.append(".RS\n" + "\n".join(opts) + "\n.RE")
        if isinstance(command, click.Group):
            out.extend(commands(command, sub, words, top=False))
    return out


def definitions(rows: list[tuple[str, str]]) -> str:
    return "\n".join(f".TP\n\\fB{esc(term)}\\fR\n{inline(text)}" for term, text in rows)


def render() -> str:
    """The whole man page, as roff text."""
    ctx = click.Context(cli, info_name="git memzoi", help_option_names=HELP_NAMES)
    description = paragraphs(cli.help)
    summary = inspect.cleandoc(cli.help or "project memory").split("\n", 1)[0].rstrip(".")
    parts = [
        '.\\" Generated by scripts/gen_manpage.py from the click commands; do not edit.',
        f'.TH GIT\\-MEMZOI 1 "" "git memzoi {esc(__version__)}" "Git Manual"',
        # left-aligned, as git's own pages are: a tag broken at a `|` has no space to stretch
        ".ad l",
        ".SH NAME",
        "git\\-memzoi \\- " + esc(summary[0].lower() + summary[1:]),
        ".SH SYNOPSIS",
        ".nf",
        "\\fBgit memzoi\\fR [\\fB\\-\\-debug\\fR] \\fIcommand\\fR [\\fIoptions\\fR] [\\fIarguments\\fR]",
        "\\fBgit memzoi\\fR \\fIcommand\\fR \\fB\\-h\\fR",
        "\\fBgit memzoi\\fR \\fB\\-\\-version\\fR",
        ".fi",
        ".SH DESCRIPTION",
        "\n.PP\n".join(
            [
                *description[1:],
                inline(
                    "Every command that prints data takes `--json` and then writes one JSON document "
                    "on stdout; messages go to stderr. `-h` prints a command's help; "
                    "`git memzoi --help` is turned by git into `git help memzoi`, which shows this page."
                ),
            ]
        ),
        ".SH OPTIONS",
        "\n".join(options(cli, ctx)),
        ".TP\n\\fB\\-h, \\-\\-help\\fR\nShow the help of git memzoi or of a command and exit.",
        ".SH COMMANDS",
        *commands(cli, ctx, "git memzoi", top=True),
        ".SH EXIT STATUS",
        definitions(EXIT_STATUS),
        ".SH ENVIRONMENT",
        definitions(ENVIRONMENT),
        ".SH FILES",
        definitions(FILES),
        ".SH SEE ALSO",
        "\\fBgit\\fR(1), \\fBgithooks\\fR(5), \\fBgit\\-config\\fR(1)",
    ]
    return "\n".join(part for part in parts if part) + "\n"


def write_or_check(target: Path, text: str, argv: list[str], script: str) -> int:
    """Write `text` to `target` when it differs; with --check in `argv`, only say whether it is current."""
    current = target.read_text(encoding="utf-8") if target.exists() else None
    if "--check" in argv:
        if current != text:
            print(f"{target.relative_to(ROOT)} is out of date: run {script}", file=sys.stderr)
            return 1
        return 0
    if current != text:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        print(f"wrote {target.relative_to(ROOT)}", file=sys.stderr)
    return 0


def main(argv: list[str]) -> int:
    """Write the page, or with --check report whether it is current."""
    return write_or_check(PAGE, render(), argv, "scripts/gen_manpage.py")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
