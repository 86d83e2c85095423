"""The `git-memzoi` program: a client hook's commit or push that leaves .memzoi/ alone ends here.

Every other command, and every hook run that touches memory, goes on to the click CLI
(cli.main). The client hooks run on each commit and push; most carry only code, and
answering them before click, pygit2 or the checks load is what keeps them cheap. Claude Code
runs `agent hook claude` before every edit, so that exact command line skips click too, as
does `--version`.
"""

from __future__ import annotations

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
