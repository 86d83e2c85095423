"""The `git-memzoi` program: a client hook's commit or push that leaves .memzoi/ alone ends here.

Every other command, and every hook run that touches memory, goes on to the click CLI
(cli.main). The client hooks run on each commit and push; most carry only code, and
answering them before click, pygit2 or the checks load is what keeps them cheap. Claude Code
runs `agent hook claude` before every edit, so that exact command line skips click too, as
do `--version` and the top-level help (`-h`, `--help`, no arguments), printed from the text
click would print (cli.help_text, generated from the click group).
"""

from __future__ import annotations

import os
import sys

#: The Claude Code hook's whole argv (anything else, such as --help, goes to click).
CLAUDE_HOOK_ARGV = ["agent", "hook", "claude"]


def main() -> None:
    """Run `git memzoi`: the client hooks' early exit (hooks.quick), the Claude Code hook, else the CLI."""
    args = sys.argv[1:]
    if args == ["--version"]:  # asked by every tool that checks for us: answered before click loads
        from git_memzoi import __version__

        print(f"git memzoi, version {__version__}")
        sys.exit(0)
    if args in ([], ["-h"], ["--help"]):
        # click prints the same help for all three; with no command it is a usage error, on stderr
        (sys.stdout if args else sys.stderr).write(top_help(help_width()) + "\n")
        sys.exit(0 if args else 2)
    if len(args) >= 2 and args[0] == "hook" and args[1] in ("pre-commit", "pre-push"):
        from git_memzoi.hooks.quick import early_exit

        code = early_exit(args[1:])
        if code is not None:
            sys.stdout.flush()
            sys.exit(code)
    if args == CLAUDE_HOOK_ARGV:
        from git_memzoi.cli.agent_hook import main as hook_main

        hook_main()
        return
    from git_memzoi.cli.main import main as cli_main

    cli_main()


def help_width() -> int:
    """The width click wraps help to: the terminal's columns (as shutil reads them) less 2, within its bounds."""
    from git_memzoi.cli.help_text import MAX_CONTENT_WIDTH, MIN_WIDTH

    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
        columns = columns or 80
    return max(min(columns, MAX_CONTENT_WIDTH) - 2, MIN_WIDTH)


def top_help(width: int) -> str:
    """`git memzoi -h` wrapped to `width`, as click prints it (without the final newline)."""
    from git_memzoi.cli.help_text import LINES, MIN_WIDTH, PAGE_OF_WIDTH, PAGES

    page = PAGES[PAGE_OF_WIDTH[width - MIN_WIDTH]]
    return "\n".join(LINES[int(i)] for i in page.split())
