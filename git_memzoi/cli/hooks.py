"""`git memzoi hook`: the server's pre-receive / update checks, the client's pre-commit / pre-push, install.

The client hooks run on every commit and push, most of which leave .memzoi/ alone: this module
imports only click, hooks.quick and cli.gate (no more than the standard library) at load time, so
that they can exit before the checks (and pygit2, pydantic and PyYAML behind them) are imported.
The server's commands and the CI check are cli.gate's, which cli.entry also runs before click
loads; every check's report is printed by cli.gate.render.
"""

from __future__ import annotations

import sys

import click

from git_memzoi.cli import gate
from git_memzoi.errors import UsageError
from git_memzoi.hooks import quick

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
@json_option
def check(range_spec: str, as_json: bool) -> None:
    """Run the server's checks over the commits in RANGE (BASE..TIP, e.g. origin/main..HEAD).

    As if TIP were pushed to a server whose ref holds BASE: every commit TIP brings is checked,
    and what TIP holds is judged against its fork point from BASE (BASE itself when they share
    no history) by BASE's [hooks] policy (never by the commits being checked). Same report,
    --json and exit codes as pre-receive; a range that is not BASE..TIP, names no commit, or
    has an empty side (an unset variable in "$BASE_SHA..HEAD") is a usage error (exit 2).
    """
    _exit(gate.check(range_spec, as_json))


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
    type=click.Choice(["github"]),
    default=None,
    help="Write the CI workflow instead (github: .github/workflows/memzoi.yml).",
)
@click.option(
    "--pip-spec",
    metavar="SPEC",
    default=None,
    help="What the CI workflow pip-installs (default: git-memzoi==<this version>).",
)
@click.option(
    "--no-git-config",
    "keep_git_config",
    is_flag=True,
    help="In a bare repository, leave receive.fsckObjects and receive.denyDeletes as they are (reported).",
)
@json_option
def install(names: tuple[str, ...], ci: str | None, pip_spec: str | None, keep_git_config: bool, as_json: bool) -> None:
    """Install hook scripts where git runs them (core.hooksPath is honoured), or a CI workflow.

    Without options: pre-commit and pre-push in a checkout, pre-receive in a bare repository.
    A hook file git memzoi did not write is never replaced: install stops, changes nothing,
    and prints the line to add to that hook instead. Running install again is safe.

    In a bare repository, install also sets git's own guards in its config:
    receive.fsckObjects = true (malformed objects anywhere) and receive.denyDeletes = true (no
    ref is deleted by a push), and says what it set; `--no-git-config` leaves them, saying what
    they are. It validates the .memzoi/ tree HEAD holds and keeps it, so that the first check
    after install costs what it changes.

    `--ci github` writes .github/workflows/memzoi.yml in the work tree instead: on each pull
    request it fetches the whole history, pip-installs git memzoi (`--pip-spec`, default this
    release from PyPI), and runs `hook check BASE..HEAD` and `validate --rev HEAD`. Commit it.
    It, too, never replaces a file git memzoi did not write.
    """
    # checks load after the untouched exit (Client hooks: git commit of code only)
    from git_memzoi.cli.common import emit_json, say, workspace
    from git_memzoi.hooks.install import HOOK_NAMES, HookName, default_hooks, server_git_config
    from git_memzoi.hooks.install import install as install_hooks
    from git_memzoi.hooks.run import keep_tree
    from git_memzoi.runtime.home import Layout

    ws = workspace(bound=False)
    if pip_spec is not None and ci is None:
        raise UsageError("--pip-spec is for the CI workflow: give --ci too")
    if ci is not None:
        if names:
            raise UsageError("--ci writes a workflow, not hook scripts: run install once for each")
        if ws.repo.is_bare:
            raise UsageError("a CI workflow is committed from a checkout, not written in a bare repository")
        # checks load after the untouched exit (Client hooks: git commit of code only)
        from git_memzoi.hooks.ci import install_ci

        written = install_ci(ws.repo, "github", pip_spec)
        if as_json:
            emit_json({"workflows": [{"name": written.name, "path": str(written.path), "action": written.action}]})
        else:
            say(f"git memzoi: {written.name} workflow {written.action}: {written.path}")
        return
    chosen: tuple[HookName, ...] = tuple(n for n in HOOK_NAMES if n in names) or default_hooks(ws.repo)
    if "pre-commit" in chosen and ws.repo.is_bare:
        raise UsageError("a bare repository has no commits made in it; install --pre-receive there")
    done = install_hooks(ws.repo, chosen)
    settings = server_git_config(ws.repo, change=not keep_git_config) if ws.repo.is_bare else []
    # the first check after install then costs what it changes, not the whole tree (docs/hooks.md)
    kept = keep_tree(ws.repo, "HEAD")
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
            f"{Layout.for_repo(ws.repo).hook_trees} cannot be written, so each check validates the whole tree"
        )
    for g in settings:
        say(_git_config_line(g.key, str(g.value).lower(), g.action, g.was))


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
