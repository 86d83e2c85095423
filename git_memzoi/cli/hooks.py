"""`git memzoi hook`: the server's pre-receive / update checks, the client's pre-commit / pre-push, install.

The client hooks run on every commit and push, most of which leave .memzoi/ alone: this module
imports only click, hooks.quick and cli.gate (no more than the standard library) at load time, so
that they can exit before the checks (and pygit2, pydantic and PyYAML behind them) are imported.
The server's commands and the CI check are cli.gate's, which cli.entry also runs before click
loads; every check's report is printed by cli.gate.render.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from git_memzoi.cli import gate
from git_memzoi.errors import UsageError
from git_memzoi.hooks import quick

if TYPE_CHECKING:
    from git_memzoi.gitrepo import GitRepo

# Defined here rather than taken from cli.common, which loads the workspace (and pygit2).
json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")


@click.group()
def hook() -> None:
    """Server-side and client-side git hook checks for .memzoi/.

    On a server, `pre-receive` (or `update`) refuses pushes whose commits bring an invalid
    .memzoi/ tree, edit or delete a canonical record or a resolved packet, retire a record
    without its applied packet, or carry non-repo-safe or secret-looking content; what each
    ref would hold is judged against what it holds, by the [hooks] policy it holds. In a
    checkout, `pre-commit` checks the staged tree and `pre-push` runs the server's checks
    before anything leaves; in CI, `check BASE..TIP` runs them over a range. `install`
    writes the hook scripts. Each check exits 0 when memory is fine and 1 with
    `path:line: code: message` lines on stderr when it is not.
    """


def _exit(code: int) -> None:
    """End the command with `code` (gate.render's 1 when the report has findings)."""
    if code:
        raise click.exceptions.Exit(code)


def _stdin() -> str:
    return sys.stdin.read()


@hook.command("pre-receive", short_help="Server: check a push (ref lines on stdin).")
@json_option
def pre_receive(as_json: bool) -> None:
    """Check a push on the server: reads `<old> <new> <ref>` lines on stdin, as git gives them.

    Runs in the bare repository (no work tree needed) and reads every pushed commit from git
    objects, including those git keeps in quarantine until the hook accepts them. Commits
    that leave .memzoi/ unchanged cost one tree lookup each.
    """
    _exit(gate.pre_receive(as_json))


@hook.command("update", short_help="Server: check one pushed ref (REF OLD NEW).")
@click.argument("ref")
@click.argument("old")
@click.argument("new")
@json_option
def update(ref: str, old: str, new: str, as_json: bool) -> None:
    """Check one pushed ref on the server, as git's update hook: REF OLD NEW."""
    _exit(gate.update(ref, old, new, as_json=as_json))


def _untouched(as_json: bool, walked: int) -> None:
    """Report, without loading the checks, a commit or push that leaves .memzoi/ alone."""
    if as_json:
        sys.stdout.write(quick.untouched_report(walked))


@hook.command("pre-commit", short_help="Client: check the staged .memzoi/.")
@json_option
def pre_commit(as_json: bool) -> None:
    """Check the staged .memzoi/ tree (what the commit will hold) and scan what it adds for secrets.

    Exits at once when the staged .memzoi/ equals HEAD's. A change that only adds files
    `apply` or `reject` wrote (and judged) to a tree accepted here before is accepted from
    those verdicts, without loading the checks. Otherwise the staged tree is validated as a
    delta of the tree an earlier commit here kept (HEAD's, or the nearest).
    """
    if quick.staged_untouched():
        _untouched(as_json, 1)
        return
    if quick.staged_accepted():
        if as_json:
            sys.stdout.write(quick.untouched_report(1, 1))
        return
    # checks load after the untouched exit (Client hooks: git commit of code only)
    from git_memzoi.cli.common import workspace
    from git_memzoi.hooks.run import check_staged

    ws = workspace(bound=False)
    _exit(gate.render(check_staged(ws.repo), as_json, "commit"))


@hook.command("pre-push", short_help="Client: run the server's checks before pushing.")
@click.argument("remote", required=False, default="")
@click.argument("url", required=False, default="")
@json_option
def pre_push(remote: str, url: str, as_json: bool) -> None:
    """Run the server's checks on the commits a push sends: REMOTE URL from git, ref lines on stdin.

    Reads `<local ref> <local sha> <remote ref> <remote sha>` lines. Commits the remote is
    known to have (its remote SHAs, the tracking refs of REMOTE or of the remotes using that
    URL) are not checked again; when nothing is known, the remote-tracking refs of every
    remote are, and every commit they do not reach is checked. Exits at once when none of the
    commits checked changes .memzoi/ and no pushed ref would hold another .memzoi/ than it does.
    """
    _exit(gate.pre_push(remote, as_json))


@hook.command("check", short_help="CI: run the server's checks over BASE..TIP.")
@click.argument("range_spec", metavar="RANGE")
@click.option(
    "--annotate",
    type=click.Choice(["github"]),
    default=None,
    help="Also print each problem as a GitHub Actions ::error command on stdout (marks the file's line).",
)
@json_option
def check(range_spec: str, annotate: str | None, as_json: bool) -> None:
    """Run the server's checks over the commits in RANGE (BASE..TIP, e.g. origin/main..HEAD).

    As if TIP were pushed to a server whose ref holds BASE: every commit TIP brings is checked,
    and what TIP holds is judged against its fork point from BASE (BASE itself when they share
    no history) by BASE's [hooks] policy (never by the commits being checked). Same report,
    --json and exit codes as pre-receive; a range that is not BASE..TIP, names no commit, or
    has an empty side (an unset variable in "$BASE_SHA..HEAD") is a usage error (exit 2).
    `--annotate github` adds one workflow command per problem on stdout, so that GitHub marks
    the record's line in the pull request (the workflow `hook install --ci github` writes uses it).
    """
    if annotate is not None and as_json:
        raise UsageError("--annotate prints workflow commands on stdout, where --json prints its document: give one")
    _exit(gate.check(range_spec, as_json, annotate=annotate == "github"))


@hook.command("install", short_help="Install the hook scripts (honours core.hooksPath), or a CI workflow.")
@click.option(
    "--pre-commit",
    "names",
    flag_value="pre-commit",
    multiple=True,
    help="Install the pre-commit hook (staged .memzoi/ check).",
)
@click.option(
    "--pre-push",
    "names",
    flag_value="pre-push",
    multiple=True,
    help="Install the pre-push hook (the server's checks, before pushing).",
)
@click.option(
    "--pre-receive",
    "names",
    flag_value="pre-receive",
    multiple=True,
    help="Install the server's pre-receive hook (in a bare repository).",
)
@click.option(
    "--ci",
    "ci",
    type=click.Choice(["github", "gitlab"]),
    default=None,
    help="Write a CI check instead (github: .github/workflows/memzoi.yml; gitlab: .gitlab/memzoi.gitlab-ci.yml).",
)
@click.option(
    "--action-ref",
    metavar="SHA",
    default=None,
    help="CI: the full 40-hex commit of the git memzoi repository the check runs (with --action-repo).",
)
@click.option(
    "--action-repo",
    metavar="OWNER/REPO",
    default=None,
    help="CI: the GitHub repository of git memzoi that --action-ref names (no default).",
)
@click.option(
    "--install-spec",
    metavar="SPEC",
    default=None,
    help="CI: what pip installs instead (a path, URL or requirement), in place of --action-ref.",
)
@click.option(
    "--deny-deletes",
    is_flag=True,
    help="In a bare repository, also set receive.denyDeletes = true: git then refuses every deletion by push.",
)
@click.option(
    "--no-git-config",
    "keep_git_config",
    is_flag=True,
    help="In a bare repository, leave receive.fsckObjects as it is (reported).",
)
@json_option
def install(  # noqa: PLR0913 - a click command takes one parameter per option
    names: tuple[str, ...],
    ci: str | None,
    action_ref: str | None,
    action_repo: str | None,
    install_spec: str | None,
    deny_deletes: bool,
    keep_git_config: bool,
    as_json: bool,
) -> None:
    """Install hook scripts where git runs them (core.hooksPath is honoured), or a CI check.

    Without options: pre-commit and pre-push in a checkout, pre-receive in a bare repository.
    A hook file git memzoi did not write is never replaced: install stops, changes nothing,
    and prints the line to add to that hook instead. Running install again is safe.

    In a bare repository, install also sets receive.fsckObjects = true in its config (git
    refuses malformed objects anywhere in a push) and says so; `--no-git-config` leaves it,
    saying what it is. Deleting branches stays as the server had it: the hook refuses deleting
    the default branch, and a branch pushed again is judged against its fork point from it, so
    no deletion removes reviewed memory; `--deny-deletes` also sets receive.denyDeletes = true
    (git refuses every deletion by push, code branches included). Install validates the
    .memzoi/ tree HEAD holds and keeps it, so that the first check after install costs what it
    changes.

    `--ci github` writes .github/workflows/memzoi.yml in the work tree instead: on each pull
    request it fetches the whole history and runs `hook check BASE..HEAD` (annotating the
    files) and `validate --rev HEAD`, with git memzoi from `--action-repo OWNER/REPO` at
    `--action-ref SHA` (the repository's action.yml, pinned by commit) or pip-installed from
    `--install-spec SPEC`; one of the two is required, as no release is published on the
    package index. `--ci gitlab` writes .gitlab/memzoi.gitlab-ci.yml, the same checks for
    merge requests (pip installs the git URL pinned at the commit, or SPEC), to include from
    .gitlab-ci.yml. Commit the file. Install never replaces a file git memzoi did not write.
    """
    # checks load after the untouched exit (Client hooks: git commit of code only)
    from git_memzoi.cli.common import workspace

    ws = workspace(bound=False)
    ci_options = action_ref is not None or action_repo is not None or install_spec is not None
    if ci is not None:
        if names or deny_deletes or keep_git_config:
            raise UsageError("--ci writes a CI check, not hook scripts or git config: run install once for each")
        _install_ci(ws.repo, ci, (action_repo, action_ref, install_spec), as_json)
        return
    if ci_options:
        raise UsageError("--action-ref, --action-repo and --install-spec are for a CI check: give --ci too")
    if deny_deletes and keep_git_config:
        raise UsageError("--deny-deletes sets git config that --no-git-config leaves: give one")
    if deny_deletes and not ws.repo.is_bare:
        raise UsageError("--deny-deletes sets a server's git config: run install in the bare repository")
    _install_hooks(ws.repo, names, deny_deletes=deny_deletes, change=not keep_git_config, as_json=as_json)


def _install_ci(repo: GitRepo, ci: str, options: tuple[str | None, str | None, str | None], as_json: bool) -> None:
    """`hook install --ci NAME`: write the workflow or template from the source the options name."""
    from git_memzoi.cli.common import emit_json, say
    from git_memzoi.hooks.ci import GITLAB_PATH, install_ci, source

    if repo.is_bare:
        raise UsageError("a CI workflow is committed from a checkout, not written in a bare repository")
    src = source(*options)
    written = install_ci(repo, "gitlab" if ci == "gitlab" else "github", src)
    if as_json:
        emit_json(
            {
                "workflows": [
                    {
                        "name": written.name,
                        "path": str(written.path),
                        "action": written.action,
                        "source": {"repo": src.repo, "ref": src.ref, "install_spec": src.spec},
                    }
                ]
            }
        )
        return
    say(f"git memzoi: {written.name} workflow {written.action}: {written.path}")
    say(f"git memzoi: it {src.describe()}")
    if written.name == "gitlab":
        say(f"git memzoi: include it from .gitlab-ci.yml: include: [{{local: {GITLAB_PATH}}}]")


def _install_hooks(repo: GitRepo, names: tuple[str, ...], *, deny_deletes: bool, change: bool, as_json: bool) -> None:
    """`hook install` of hook scripts (and, in a bare repository, git's own guards)."""
    from git_memzoi.cli.common import emit_json, say
    from git_memzoi.hooks.install import HOOK_NAMES, HookName, default_hooks, server_git_config
    from git_memzoi.hooks.install import install as install_hooks
    from git_memzoi.hooks.run import keep_tree
    from git_memzoi.runtime.home import Layout

    chosen: tuple[HookName, ...] = tuple(n for n in HOOK_NAMES if n in names) or default_hooks(repo)
    if "pre-commit" in chosen and repo.is_bare:
        raise UsageError("a bare repository has no commits made in it; install --pre-receive there")
    done = install_hooks(repo, chosen)
    settings = server_git_config(repo, change=change, deny_deletes=deny_deletes) if repo.is_bare else []
    # the first check after install then costs what it changes, not the whole tree (docs/hooks.md)
    kept = keep_tree(repo, "HEAD")
    if as_json:
        emit_json(
            {
                "hooks": [{"name": i.name, "path": str(i.path), "action": i.action} for i in done],
                "git_config": [{"key": g.key, "value": g.value, "action": g.action, "was": g.was} for g in settings],
                "kept_tree_files": kept.files if kept is not None else None,
                "kept_tree": kept is not None and kept.kept,
            }
        )
        return
    for item in done:
        say(f"git memzoi: {item.name} hook {item.action}: {item.path}")
    if kept is not None and kept.kept:
        say(
            f"git memzoi: .memzoi/ at HEAD validated and kept ({kept.files} files): "
            "the first check costs what it changes"
        )
    elif kept is not None:
        say(
            f"git memzoi: .memzoi/ at HEAD validated ({kept.files} files) but not kept: "
            f"{Layout.for_repo(repo).hook_trees} cannot be written, so each check validates the whole tree"
        )
    for g in settings:
        say(_git_config_line(g.key, str(g.value).lower(), g.action, g.was))
    if repo.is_bare and not deny_deletes:
        say(DELETES_LEFT)


#: What install says, on a server, of deleting branches when --deny-deletes was not given.
DELETES_LEFT = (
    "git memzoi: branch deletion left as the server has it (receive.denyDeletes untouched): the hook refuses "
    "deleting the default branch, and a branch pushed again is judged against its fork point from it, so no "
    "deletion removes reviewed memory; --deny-deletes refuses every deletion"
)


def _git_config_line(key: str, want: str, action: str, was: object) -> str:
    """What install says of one git setting it set, found, or left (--no-git-config)."""
    if action == "set":
        return f"git memzoi: git config {key} = {want} set (was {was if was is not None else 'unset'})"
    if action == "unchanged":
        return f"git memzoi: git config {key} = {want} already"
    return (
        f"git memzoi: git config {key} is {was if was is not None else 'unset'}, left as it is "
        f"(--no-git-config); {want} is recommended"
    )
