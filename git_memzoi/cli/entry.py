"""The `git-memzoi` program: a client hook's commit or push that leaves .memzoi/ alone ends here.

Every other command, and every hook run that touches memory, goes on to the click CLI
(cli.main). The client hooks run on each commit and push; most carry only code, and
answering them before click, pygit2 or the checks load is what keeps them cheap.
"""

from __future__ import annotations

import sys


def main() -> None:
    """Run `git memzoi`: the client hooks' early exit (hooks.quick), else the CLI."""
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "hook" and args[1] in ("pre-commit", "pre-push"):
        from git_memzoi.hooks.quick import early_exit

        code = early_exit(args[1:])
        if code is not None:
            sys.stdout.flush()
            sys.exit(code)
    from git_memzoi.cli.main import main as cli_main

    cli_main()
