"""Install git memzoi's hook scripts, never over a hook someone else wrote."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from git_memzoi.errors import Refused
from git_memzoi.gitrepo import GitRepo
from git_memzoi.gitrepo.hookdir import hooks_dir
from git_memzoi.runtime.atomic import write_atomic

HookName = Literal["pre-commit", "pre-push", "pre-receive"]
HOOK_NAMES: tuple[HookName, ...] = ("pre-commit", "pre-push", "pre-receive")
#: The line that marks a hook file as ours: install replaces such a file and nothing else.
MARKER = "# git-memzoi-hook:"


@dataclass(frozen=True)
class Installed:
    """One hook file and what install did to it: created, updated or unchanged."""

    name: HookName
    path: Path
    action: Literal["created", "updated", "unchanged"]


def executable() -> str:
    """The git-memzoi program to run from hooks: the one beside this Python, else the one on PATH."""
    beside = Path(sys.executable).parent / "git-memzoi"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("git-memzoi")
    return found or "git-memzoi"


def script(name: HookName, program: str) -> str:
    """The hook script: runs `git-memzoi hook NAME`, falling back to git-memzoi on PATH."""
    return (
        "#!/bin/sh\n"
        f"{MARKER} {name}\n"
        "# Installed by `git memzoi hook install`; run it again to update this file, delete the file to\n"
        "# remove the check. Edits here are overwritten: chain other checks from a hook of your own.\n"
        f"memzoi={shlex.quote(program)}\n"
        '[ -x "$memzoi" ] || memzoi=git-memzoi\n'
        f'exec "$memzoi" hook {name} "$@"\n'
    )


def chain_line(name: HookName) -> str:
    """The shell to add to an existing hook so that it runs git memzoi's check too."""
    if name == "pre-commit":
        return "git-memzoi hook pre-commit || exit $?"
    # pre-push and pre-receive read ref lines on stdin: the hook must keep them for its own use
    return (f"refs=$(cat); printf '%s\\n' \"$refs\" | git-memzoi hook {name} \"$@\" || exit $? "
            "(then read the ref lines from \"$refs\")")


def is_ours(path: Path) -> bool:
    """True when `path` is a hook file git memzoi wrote."""
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    return MARKER.encode() in head


def default_hooks(repo: GitRepo) -> tuple[HookName, ...]:
    """pre-receive in a bare repository (a server); pre-commit and pre-push in a checkout."""
    return ("pre-receive",) if repo.is_bare else ("pre-commit", "pre-push")


def install(repo: GitRepo, names: tuple[HookName, ...], program: str | None = None) -> list[Installed]:
    """Write each hook into the hooks folder git uses; refuse, changing nothing, if one is foreign."""
    folder = hooks_dir(repo)
    program = program or executable()
    planned: list[tuple[HookName, Path, str, Literal["created", "updated", "unchanged"]]] = []
    for name in names:
        path = folder / name
        text = script(name, program)
        if path.is_symlink() or path.exists():
            if not is_ours(path):
                raise Refused(
                    f"{path} exists and was not written by git memzoi; leaving it alone",
                    hint=f"to run both, add this line to that hook: {chain_line(name)}",
                    code="foreign-hook")
            current = path.read_text(encoding="utf-8", errors="replace")
            action: Literal["created", "updated", "unchanged"] = "unchanged" if current == text else "updated"
        else:
            action = "created"
        planned.append((name, path, text, action))
    done = []
    for name, path, text, action in planned:
        if action != "unchanged" or not os.access(path, os.X_OK):
            write_atomic(path, text.encode("utf-8"), mode=0o755)
        done.append(Installed(name, path, action))
    return done
