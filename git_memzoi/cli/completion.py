"""`git memzoi completion bash|zsh|fish`: click's completion scripts, plus git's `git memzoi <TAB>`."""

from __future__ import annotations

import click
from click.shell_completion import get_completion_class

from git_memzoi.cli.main import COMPLETE_VAR

#: The program the shells complete: the console script git runs as `git memzoi`.
PROG = "git-memzoi"

#: git's own bash completion (git-completion.bash) completes `git memzoi …` by calling `_git_memzoi`
#: when it is defined; it asks the program for the words after the command, as `git-memzoi` would be
#: asked. `__git_cmd_idx` is where git-completion found the command (after options such as `-C DIR`).
GIT_BASH_FUNCTION = f"""
_git_memzoi() {{
    local IFS=$'\\n' response completion type value
    local at=${{__git_cmd_idx:-1}}
    response=$(env COMP_WORDS="{PROG} ${{words[*]:at+1}}" COMP_CWORD=$((cword - at)) \\
        {COMPLETE_VAR}=bash_complete {PROG} 2>/dev/null)
    COMPREPLY=()
    for completion in $response; do
        IFS=',' read -r type value <<< "$completion"
        case $type in
            plain) COMPREPLY+=("$value ") ;;
            file|dir) COMPREPLY=($(compgen -f -- "${{cur-}}")) ;;
        esac
    done
}}
"""


@click.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the completion script for SHELL; load it from the shell's start-up file.

    \b
    bash:  eval "$(git memzoi completion bash)"    (also completes `git memzoi <TAB>`)
    zsh:   eval "$(git memzoi completion zsh)"
    fish:  git memzoi completion fish | source
    """
    from git_memzoi.cli.main import cli

    complete_class = get_completion_class(shell)
    assert complete_class is not None  # the Choice admits only the shells click knows
    script = complete_class(cli, {}, PROG, COMPLETE_VAR).source()
    if shell == "bash":
        script += GIT_BASH_FUNCTION
    click.echo(script)
