"""`git memzoi init` and `git memzoi doctor`."""

from __future__ import annotations

import click

from git_memzoi.cli.common import emit_json, json_option, say, workspace
from git_memzoi.errors import EXIT_NO, MemzoiError
from git_memzoi.index import binding
from git_memzoi.index.queries import database_state
from git_memzoi.lifecycle import recovery
from git_memzoi.runtime.home import remove_stale_worktree_dirs, stale_worktree_dirs
from git_memzoi.runtime.init import init_tree


@click.command()
@json_option
def init(as_json: bool) -> None:
    """Create .memzoi/ with index.md, log.md, records/ and proposals/pending/.

    Safe to run again: it only adds what is missing. It also marks .memzoi/log.md
    `merge=union` in .gitattributes so receipts appended on two branches merge cleanly.
    """
    ws = workspace(bound=False)
    created = init_tree(ws.repo.require_workdir())
    if as_json:
        emit_json({"created": created})
        return
    for path in created:
        click.echo(f"created {path}")
    if not created:
        say("nothing to do: .memzoi/ is already initialised")
    say("\n".join(("next steps:", *(f"  {step}" for step in NEXT_STEPS))))


#: What `init` suggests next: wire the agents, guard commits and pushes, add a first memory.
NEXT_STEPS = (
    "git memzoi import                    # plan bringing in CLAUDE.md, AGENTS.md, rule files and ADRs",
    "git memzoi agent install claude      # or codex: memory at session start and before each edit",
    "git memzoi hook install              # check .memzoi/ on every commit and push",
    'git memzoi propose --type convention --title "..." --body "..."   # a first rule, for review',
)


@click.command()
@click.option(
    "--repair",
    is_flag=True,
    help="Finish or roll back a step interrupted by a crash; remove runtime folders of removed worktrees.",
)
@click.option(
    "--adopt",
    is_flag=True,
    help="Bind this path's runtime state to this repository: set another repository's aside, "
    "bring this one's from where an earlier path left it.",
)
@json_option
def doctor(repair: bool, adopt: bool, as_json: bool) -> None:
    """Show the repository and worktree keys, where runtime state lives, and its health."""
    ws = workspace(bound=False)
    layout = ws.layout

    adopted = binding.adopt(layout, ws.repo.common_dir) if adopt else []
    bound = binding.inspect(layout, ws.repo.common_dir)
    checks: dict[str, str] = {
        "shared_db": bound.state(database_state(layout.shared_db, "proposals")),
        "index_db": database_state(layout.index_db, "records"),
    }
    try:
        ws.config  # noqa: B018 - loading validates every config file
        checks["config"] = "ok"
    except MemzoiError as exc:
        checks["config"] = str(exc)

    repaired = adopted + (recovery.repair(ws) if repair and bound.foreign is None else [])
    if repair or adopted:  # an adopted folder brings the runtime folders of the old path's worktrees
        repaired += remove_stale_worktree_dirs(layout, ws.repo)
    pending = recovery.pending_journals(ws)
    checks["journal"] = "ok" if not pending else f"{len(pending)} interrupted apply(s): run doctor --repair"
    stale = stale_worktree_dirs(layout, ws.repo)
    checks["worktrees"] = (
        "ok"
        if not stale
        else f"{len(stale)} runtime folder(s) of removed worktrees: run doctor --repair "
        f"({', '.join(p.name for p in stale)})"
    )
    data = {
        "repository_key": ws.repo.repository_key,
        "repository_id": bound.repository_id,
        "worktree_key": ws.repo.worktree_key,
        "repository": {
            "common_dir": str(ws.repo.common_dir),
            "git_dir": str(ws.repo.git_dir),
            "workdir": str(ws.repo.workdir) if ws.repo.workdir else None,
            "bare": ws.repo.is_bare,
        },
        "paths": layout.paths(),
        "checks": checks,
        "repaired": repaired,
    }
    healthy = all(v in ("ok", "missing") for v in checks.values())
    if as_json:
        emit_json(data | {"ok": healthy})
    else:
        click.echo(f"repository_key  {data['repository_key']}")
        click.echo(f"repository_id   {data['repository_id'] or '(none yet)'}")
        click.echo(f"worktree_key    {data['worktree_key']}")
        for name, value in layout.paths().items():
            click.echo(f"{name:<15} {value}")
        for name, value in checks.items():
            click.echo(f"check {name:<9} {value}")
        for line in repaired:
            click.echo(f"repaired: {line}")
    if not healthy:
        raise click.exceptions.Exit(EXIT_NO)
