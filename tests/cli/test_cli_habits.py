"""The git user's habits: suggestions for a mistyped command, completion, grouped help, real hints."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from git_memzoi.cli.main import COMMANDS, GROUPS
from support import VENV_BIN, Repo, git, memzoi_exe, run_cli

GIT_COMPLETION = Path("/usr/share/bash-completion/completions/git")


def test_a_mistyped_command_names_the_most_similar_as_git_does(repo: Repo) -> None:
    result = run_cli("serach", "x", expect=2, cwd=repo.path)
    assert "No such command 'serach'." in result.stderr
    assert "The most similar command is\n\tsearch" in result.stderr
    result = run_cli("prop", expect=2, cwd=repo.path)
    assert "The most similar commands are" in result.stderr and "\tpropose\n\tproposals" in result.stderr
    result = run_cli("zzzzzz", expect=2, cwd=repo.path)
    assert "No such command" in result.stderr and "most similar" not in result.stderr


def test_every_command_is_listed_under_exactly_one_heading() -> None:
    grouped = [name for _, names in GROUPS for name in names]
    assert sorted(grouped) == sorted(COMMANDS)
    help_text = run_cli("-h").stdout
    for title, names in GROUPS:
        assert f"\n{title}:\n" in help_text
        section = help_text.split(f"\n{title}:\n", 1)[1].split("\n\n", 1)[0]
        assert [line.split()[0] for line in section.splitlines() if line.startswith("  ") and line[2] != " "] == list(
            names
        )


def test_outside_a_repository_the_hint_names_an_option_that_exists(tmp_path: Path) -> None:
    done = subprocess.run([memzoi_exe(), "search", "x"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 128
    assert "git -C DIR memzoi" in done.stderr
    assert "--repo" not in done.stderr


def test_init_prints_the_next_steps(repo: Repo) -> None:
    first = run_cli("init", cwd=repo.path)
    assert "next steps:" in first.stderr and "git memzoi agent install claude" in first.stderr
    again = run_cli("init", cwd=repo.path)
    assert "already initialised" in again.stderr and "next steps:" in again.stderr


def bash(script: str, cwd: Path) -> str:
    env = {"PATH": f"{VENV_BIN}:/usr/bin:/bin", "HOME": str(cwd)}
    done = subprocess.run(["bash", "--norc", "-c", script], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_bash_completion_loads_and_completes_commands_and_options(repo: Repo) -> None:
    out = bash(
        'eval "$(git memzoi completion bash)"; complete -p git-memzoi; '
        "COMP_WORDS=(git-memzoi sea); COMP_CWORD=1; _git_memzoi_completion git-memzoi; "
        'echo "[${COMPREPLY[*]}]"; '
        "COMP_WORDS=(git-memzoi search --li); COMP_CWORD=2; COMPREPLY=(); _git_memzoi_completion git-memzoi; "
        'echo "[${COMPREPLY[*]}]"',
        repo.path,
    )
    lines = out.splitlines()
    assert lines[0] == "complete -o nosort -F _git_memzoi_completion git-memzoi"
    assert lines[1:] == ["[search]", "[--limit]"]


@pytest.mark.skipif(not GIT_COMPLETION.exists() or shutil.which("git") is None, reason="no git-completion.bash")
def test_git_memzoi_tab_completes_inside_gits_own_bash_completion(repo: Repo) -> None:
    out = bash(
        f'source {GIT_COMPLETION}; eval "$(git memzoi completion bash)"; '
        'COMP_WORDS=(git memzoi ap); COMP_CWORD=2; COMP_LINE="git memzoi ap"; COMP_POINT=${#COMP_LINE}; '
        '__git_wrap__git_main; echo "[${COMPREPLY[*]}]"; '
        'COMP_WORDS=(git -C . memzoi sea); COMP_CWORD=4; COMP_LINE="git -C . memzoi sea"; '
        'COMP_POINT=${#COMP_LINE}; COMPREPLY=(); __git_wrap__git_main; echo "[${COMPREPLY[*]}]"',
        repo.path,
    )
    assert out.splitlines() == ["[approve  apply ]", "[search ]"]


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_scripts_name_the_program(shell: str) -> None:
    script = run_cli("completion", shell).stdout
    assert "_GIT_MEMZOI_COMPLETE" in script and "git-memzoi" in script


def test_git_runs_completion_through_the_console_script(repo: Repo) -> None:
    done = git("memzoi", "completion", "bash", cwd=repo.path)
    assert "_git_memzoi()" in done.stdout


def test_events_table_is_aligned_on_real_names_and_times_are_to_the_second(repo: Repo) -> None:
    run_cli("local", "add", "--title", "short", "--body", "b", env={"MEMZOI_ACTOR": "a"})
    run_cli("local", "add", "--title", "long", "--body", "b", env={"MEMZOI_ACTOR": "Ada Lovelace <ada@example.com>"})
    lines = run_cli("events").stdout.splitlines()
    assert lines[0].split() == ["SEQ", "AT", "ACTOR", "ACTION", "IDS"]
    starts = {line.index("local.add") for line in lines[1:]}
    assert len(lines) == 3 and len(starts) == 1 and lines[0].index("ACTION") == starts.pop()
    stamps = [line.split()[1] for line in lines[1:]]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)", stamp) for stamp in stamps), stamps
    assert all("." in event["at"] for event in run_cli("events", "--json").json()["events"])


def test_human_time_drops_the_fraction_and_keeps_the_zone() -> None:
    from git_memzoi.cli.common import human_time

    assert human_time("2026-12-06T01:22:11.123456Z") == "2026-12-06T01:22:11Z"
    assert human_time("2026-12-06T01:22:11.5+02:00") == "2026-12-06T01:22:11+02:00"
    assert human_time("2026-12-06T01:22:11Z") == "2026-12-06T01:22:11Z"
    assert human_time(None) == ""
