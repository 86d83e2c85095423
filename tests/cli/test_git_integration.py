"""git memzoi as a real git subcommand: aliases, -C and subdirectories, and apply's commits through the server hook."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from git_memzoi.cli.main import COMMANDS, cli
from support import ROOT, Repo, git, run_cli
from support.hooks import make_remote, record, record_path

ALIAS = re.compile(r"^git config --global alias\.([a-z-]+)\s+'memzoi ([^']+)'$", re.MULTILINE)


def doc_aliases() -> dict[str, str]:
    return dict(ALIAS.findall((ROOT / "docs" / "aliases.md").read_text()))


def test_alias_runs_git_memzoi_and_keeps_its_exit_code(repo: Repo) -> None:
    git("config", "alias.memory-check", "memzoi validate", cwd=repo.path)
    ok = git("memory-check", cwd=repo.path, check=False)
    assert ok.returncode == 0 and "files checked" in ok.stderr
    repo.write(record_path("broken"), record("broken").replace("kind: memory\n", "kind: memo\n"))
    bad = git("memory-check", cwd=repo.path, check=False)
    assert bad.returncode == 1
    assert bad.stdout.startswith(f"{record_path('broken')}:3: invalid-value:")


def test_alias_arguments_are_appended(repo: Repo) -> None:
    git("config", "alias.memory-at", "memzoi validate --rev", cwd=repo.path)
    result = git("memory-at", "HEAD", "--json", cwd=repo.path)
    assert '"ok": true' in result.stdout
    missing = git("memory-at", "no-such-rev", cwd=repo.path, check=False)
    assert missing.returncode == 2 and "unknown revision 'no-such-rev'" in missing.stderr


def _params(command: str) -> list[click.Parameter]:
    found = cli.get_command(click.Context(cli), command)
    return [p for p in found.params if isinstance(p, click.Option)] if found is not None else []


@pytest.mark.slow
def test_every_documented_alias_reaches_its_command(repo: Repo) -> None:
    aliases = doc_aliases()
    assert {"remember", "recall", "memory-check"} <= set(aliases)
    for name, expansion in aliases.items():
        command = expansion.split()[0]
        assert command in COMMANDS, f"docs/aliases.md: alias {name} names unknown command {command}"
        git("config", f"alias.{name}", f"memzoi {expansion}", cwd=repo.path)
        # an alias ending in an option that takes a value (context --task) needs that value first
        last = expansion.split()[-1]
        option = next((p for p in _params(command) if last in p.opts), None)
        args = ["some task", "-h"] if option is not None and not option.is_flag else ["-h"]
        shown = git(name, *args, cwd=repo.path, check=False)
        assert shown.returncode == 0, (name, shown.stderr)
        assert shown.stdout.startswith(f"Usage: git memzoi {command}"), (name, shown.stdout)


def test_git_memzoi_from_a_subdirectory_and_with_dash_c(repo: Repo, tmp_path: Path) -> None:
    sub = repo.path / "src" / "deep"
    sub.mkdir(parents=True)
    inside = git("memzoi", "validate", "--json", cwd=sub)
    outside = git("-C", str(repo.path), "memzoi", "validate", "--json", cwd=tmp_path)
    assert inside.stdout == outside.stdout and '"ok": true' in inside.stdout


@pytest.mark.slow
def test_apply_commits_pass_the_server_hook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    remote = make_remote(tmp_path)
    remote.accepted()
    monkeypatch.chdir(remote.work.path)
    monkeypatch.setenv("MEMZOI_LOCK_TIMEOUT", "30")

    def lifecycle(*args: str) -> None:
        proposal = run_cli("propose", *args, "--json").json()["id"]
        run_cli("approve", proposal)
        run_cli("apply", proposal, "--commit")

    lifecycle("--type", "decision", "--title", "Use Redis for sessions", "--body", "Sessions live in Redis.")
    lifecycle(
        "--action",
        "supersede",
        "--target",
        "use-postgres",
        "--reason",
        "pinned the version",
        "--type",
        "decision",
        "--title",
        "Use Postgres 16",
        "--body",
        "Every service uses Postgres 16.",
    )
    lifecycle("--action", "tombstone", "--target", "use-redis-for-sessions", "--reason", "sessions moved")
    result = remote.accepted()
    assert "3 changes to .memzoi/ checked: memory OK" in result.stderr
    old = git("show", f"main:{record_path('use-postgres')}", cwd=remote.bare).stdout
    assert "\nstatus: superseded\n" in old
