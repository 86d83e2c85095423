"""Install git memzoi's hook scripts, never over a hook someone else wrote."""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from git_memzoi.errors import Refused
from git_memzoi.gitrepo import GitRepo
from git_memzoi.gitrepo.hookdir import hooks_dir
from git_memzoi.layout import MEMZOI_PATHSPECS
from git_memzoi.runtime.atomic import read_inside, refuse_symlinks, write_inside

HookName = Literal["pre-commit", "pre-push", "pre-receive"]
HOOK_NAMES: tuple[HookName, ...] = ("pre-commit", "pre-push", "pre-receive")
#: The line that marks a hook file as ours: install replaces such a file and nothing else.
MARKER = "# git-memzoi-hook:"
#: What a refused symlink's message adds.
REAL_FILES = "hook install writes only real files inside the repository, never through a link"


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


#: pre-commit, before Python starts: exit 0 when the staged .memzoi/ equals HEAD's (what
#: hooks.quick.staged_untouched asks). diff-index exits 1 when it differs and 128 without a HEAD:
#: both go on to the check, told so by MEMZOI_STAGED=asked (staged_untouched then answers False
#: without asking git again). GIT_LITERAL_PATHSPECS=0 keeps the :(top) magic working.
_PRE_COMMIT_QUICK = """\
# memory untouched: nothing to check, and no need to start Python
if GIT_LITERAL_PATHSPECS=0 git diff-index --cached --quiet HEAD -- {pathspecs} 2>/dev/null; then
  # git commit --amend (git hands the hook HEAD's author date) replaces HEAD: its parent's too
  [ "$GIT_AUTHOR_DATE" = "@$(git show -s --format=%ad --date=raw HEAD 2>/dev/null)" ] || exit 0
  GIT_LITERAL_PATHSPECS=0 git diff-index --cached --quiet 'HEAD^' -- {pathspecs} 2>/dev/null && exit 0
fi
MEMZOI_STAGED=asked; export MEMZOI_STAGED  # git-memzoi need not ask again
""".format(pathspecs=" ".join(f"'{spec}'" for spec in MEMZOI_PATHSPECS))

#: pre-push, before Python starts (POSIX sh). The common case: every ref line is a deletion or
#: names a remote commit this repository has. The pushed commits are then those the tips reach
#: and no remote commit does, a superset of hooks.quick.plan_push's (which also hides the
#: remote-tracking refs); each is compared with its first parent (a root commit with nothing),
#: as hooks.quick._any_touches does. The ref-level rules need two more answers: no deleted
#: branch is a remote's default (refs/remotes/*/HEAD; none known: the server decides), and each
#: ref's .memzoi/ is the one it holds now (a force push to an older commit walks no commit, yet
#: can drop a record). All of that holds: exit 0. Anything else (a new ref, a remote commit missing
#: here, odd input, any git error): git-memzoi decides, from the saved lines.
_PRE_PUSH_QUICK = r"""refs=$(cat)
memzoi_untouched() {
    revs= pairs= deleted= npairs=0
    while IFS= read -r line; do
        case $line in *[![:space:]]*) ;; *) continue ;; esac
        set -f; set -- $line; set +f
        [ $# -eq 4 ] && [ "$1 $2 $3 $4" = "$line" ] || return 1
        for sha in "$2" "$4"; do
            case $sha in *[!0-9a-fA-F]*) return 1 ;; esac
            [ ${#sha} -eq 40 ] || [ ${#sha} -eq 64 ] || return 1
        done
        case $3 in refs/replace/*) return 1 ;; esac  # refused by git-memzoi, code or not
        case $2 in *[!0]*) ;; *)  # a deletion brings no commits; only the default branch's is refused
            case $3 in refs/heads/*) deleted="$deleted ${3#refs/heads/}" ;; esac
            continue ;;
        esac
        case $4 in *[!0]*) ;; *) return 1 ;; esac  # a new ref: what the remote has is unknown here
        revs="$revs$2
^$4
"
        pairs="$pairs$2:.memzoi
$4:.memzoi
"
        npairs=$((npairs + 2))
    done <<MEMZOI_REFS
$refs
MEMZOI_REFS
    if [ -n "$deleted" ]; then
        # no refs/remotes/*/HEAD: nothing here says which is the default (the server decides)
        heads=$(git for-each-ref --format='%(symref)' 'refs/remotes/*/HEAD' 2>/dev/null) || return 1
        set -f
        for name in $deleted; do
            for head in $heads; do
                case $head in refs/remotes/*/"$name") set +f; return 1 ;; esac
            done
        done
        set +f
    fi
    [ -n "$revs" ] || return 0
    commits=$(printf '%s' "$revs" | git rev-list --stdin 2>/dev/null) || return 1
    printf '%s' "$pairs" | git cat-file --batch-check='%(objectname)' 2>/dev/null |
        awk -v n="$npairs" '{ v = ($NF == "missing") ? "-" : $1 } NR % 2 { a = v; next } v != a { d = 1 }
            END { exit d || NR != n }' ||
        return 1
    [ -n "$commits" ] || return 0
    touched=$(printf '%s\n' "$commits" | GIT_LITERAL_PATHSPECS=0 git diff-tree --stdin --root \
        --diff-merges=first-parent -r -t --name-only -- ':(top).memzoi' 2>/dev/null) || return 1
    [ -z "$touched" ] || return 1
    # root names that fold to .memzoi on macOS or Windows (files only: -t lists every tree a glob enters)
    twins=$(printf '%s\n' "$commits" | GIT_LITERAL_PATHSPECS=0 git diff-tree --stdin --root \
        --diff-merges=first-parent -r --name-only -- TWIN_PATHSPECS 2>/dev/null) || return 1
    [ -z "$twins" ]
}
# memory untouched by every pushed commit and every pushed ref: nothing to check, and no need to start Python
memzoi_untouched && exit 0
""".replace("TWIN_PATHSPECS", " ".join(f"'{spec}'" for spec in MEMZOI_PATHSPECS[1:]))


def script(name: HookName, program: str) -> str:
    """The hook script: a shell early exit when memory is untouched, else `git-memzoi hook NAME`.

    The client hooks first ask git, without starting Python, whether the commit or push touches
    .memzoi/ (_PRE_COMMIT_QUICK, _PRE_PUSH_QUICK); pre-push then hands git-memzoi the ref lines
    it read. git-memzoi on PATH stands in when the installed program is gone.
    """
    quick = {"pre-commit": _PRE_COMMIT_QUICK, "pre-push": _PRE_PUSH_QUICK}.get(name, "")
    stdin = "<<MEMZOI_REFS\n$refs\nMEMZOI_REFS" if name == "pre-push" else ""
    return (
        "#!/bin/sh\n"
        f"{MARKER} {name}\n"
        "# Installed by `git memzoi hook install`; run it again to update this file, delete the file to\n"
        "# remove the check. Edits here are overwritten: chain other checks from a hook of your own.\n"
        f"{quick}"
        f"memzoi={shlex.quote(program)}\n"
        '[ -x "$memzoi" ] || memzoi=git-memzoi\n'
        f'exec "$memzoi" hook {name} "$@"{" " if stdin else ""}{stdin}\n'
    )


def chain_line(name: HookName) -> str:
    """The shell to add to an existing hook so that it runs git memzoi's check too."""
    if name == "pre-commit":
        return "git-memzoi hook pre-commit || exit $?"
    # pre-push and pre-receive read ref lines on stdin: the hook must keep them for its own use
    return (
        f'refs=$(cat); printf \'%s\\n\' "$refs" | git-memzoi hook {name} "$@" || exit $? '
        '(then read the ref lines from "$refs")'
    )


#: What git itself must refuse on a server, set by install in a bare repository: malformed
#: objects anywhere in the repository (the hook reads trees under .memzoi/ only).
SERVER_GIT_CONFIG: tuple[tuple[str, bool], ...] = (("receive.fsckObjects", True),)
#: Set only when asked (--deny-deletes): git then refuses every deletion, code branches included.
#: Without it no reviewed memory is lost by a deletion: the hook refuses deleting the default
#: branch, and a branch pushed again is judged against its fork point from the default branch.
DENY_DELETES = ("receive.denyDeletes", True)


@dataclass(frozen=True)
class GitSetting:
    """One server git setting and what install did: set it, found it already so, or left it (--no-git-config)."""

    key: str
    value: bool
    action: Literal["set", "unchanged", "left"]
    was: str | None  # the value the repository's config held before (None: unset)


def server_git_config(repo: GitRepo, *, change: bool, deny_deletes: bool = False) -> list[GitSetting]:
    """Set SERVER_GIT_CONFIG (and DENY_DELETES when asked) in the repository's own config file.

    Without `change`, only report them.
    """
    import pygit2  # only a bare repository's install reads git config

    config = pygit2.Config(str(repo.common_dir / "config"))
    done = []
    for key, value in SERVER_GIT_CONFIG + ((DENY_DELETES,) if deny_deletes else ()):
        try:
            was: str | None = str(config[key])
        except (KeyError, pygit2.GitError):
            was = None
        try:
            holds = was is not None and config.get_bool(key) is value
        except (KeyError, pygit2.GitError, ValueError):
            holds = False  # not a boolean git reads: set it
        if holds:
            done.append(GitSetting(key, value, "unchanged", was))
        elif change:
            config[key] = value
            done.append(GitSetting(key, value, "set", was))
        else:
            done.append(GitSetting(key, value, "left", was))
    return done


def is_ours(path: Path) -> bool:
    """True when `path` is a regular hook file git memzoi wrote (a symlink is never followed, so never ours)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        return MARKER.encode() in os.read(fd, 4096)
    finally:
        os.close(fd)


def default_hooks(repo: GitRepo) -> tuple[HookName, ...]:
    """pre-receive in a bare repository (a server); pre-commit and pre-push in a checkout."""
    return ("pre-receive",) if repo.is_bare else ("pre-commit", "pre-push")


def hook_root(repo: GitRepo, folder: Path) -> tuple[Path, str]:
    """(root, path of the hooks folder below it) to check for symlinks from.

    A hooks folder inside the work tree (core.hooksPath = .githooks) is checked from the work
    tree root, since a clone chooses what is there; one elsewhere (the git directory's hooks/,
    a folder of the user's) is the user's own, and only the hook files in it are checked.
    """
    if repo.workdir is not None:
        try:
            rel = folder.relative_to(os.path.normpath(repo.workdir)).as_posix()
        except ValueError:
            pass
        else:
            return (folder, "") if rel == "." else (Path(os.path.normpath(repo.workdir)), rel)
    return folder, ""


def install(repo: GitRepo, names: tuple[HookName, ...], program: str | None = None) -> list[Installed]:
    """Write each hook into the hooks folder git uses; refuse, changing nothing, if one is foreign.

    A symlink on the way (see hook_root), the hook file included, is refused and never read.
    """
    folder = hooks_dir(repo)
    root, below = hook_root(repo, folder)
    program = program or executable()
    planned: list[tuple[HookName, Path, str, str, Literal["created", "updated", "unchanged"]]] = []
    for name in names:
        path = folder / name
        rel = f"{below}/{name}" if below else name
        text = script(name, program)
        if below:
            refuse_symlinks(root, below, REAL_FILES)
        if path.is_symlink():  # a link to a hook of the user's (or the clone's): never replaced, never read
            raise Refused(
                f"{path} is a symlink, not a hook git memzoi wrote; leaving it alone",
                hint=f"to run both, add this line to the hook it points to: {chain_line(name)}",
                code="foreign-hook",
            )
        try:
            found = read_inside(root, rel, REAL_FILES) if root.is_dir() else None
        except OSError:
            found = b""  # unreadable: not ours, so left alone below
        if found is not None:
            if MARKER.encode() not in found[:4096]:
                raise Refused(
                    f"{path} exists and was not written by git memzoi; leaving it alone",
                    hint=f"to run both, add this line to that hook: {chain_line(name)}",
                    code="foreign-hook",
                )
            current = found.decode("utf-8", errors="replace")
            action: Literal["created", "updated", "unchanged"] = "unchanged" if current == text else "updated"
        else:
            action = "created"
        planned.append((name, path, rel, text, action))
    done = []
    for name, path, rel, text, action in planned:
        if action != "unchanged" or not os.access(path, os.X_OK):
            root.mkdir(parents=True, exist_ok=True)
            write_inside(root, rel, text.encode("utf-8"), REAL_FILES, mode=0o755)
        done.append(Installed(name, path, action))
    return done
