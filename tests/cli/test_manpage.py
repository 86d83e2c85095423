"""Help where git users look: -h on every command, and git-memzoi(1) current, installed and found by man."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import click
import pytest

from git_memzoi.cli.main import cli
from support import ROOT, VENV_BIN, load_script, run_cli

PAGE = ROOT / "git_memzoi" / "man" / "git-memzoi.1"


def generator() -> ModuleType:
    return load_script("gen_manpage")


def available() -> list[str]:
    return cli.list_commands(click.Context(cli))


def test_page_is_current() -> None:
    fresh = generator().render()
    assert PAGE.read_text(encoding="utf-8") == fresh, (
        "git_memzoi/man/git-memzoi.1 is out of date: run .venv/bin/python scripts/gen_manpage.py"
    )


def test_page_documents_every_command_and_the_environment() -> None:
    page = generator().render()
    for name in available():
        assert f'.SS "git memzoi {name}"'.replace("-", "\\-") in page, name
    for sub in ("pre\\-receive", "update", "pre\\-commit", "pre\\-push", "install"):
        assert f'.SS "git memzoi hook {sub}"' in page
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "EXIT STATUS", "ENVIRONMENT", "FILES"):
        assert f".SH {section}\n" in page
    for var in ("MEMZOI_HOME", "MEMZOI_LOCK_TIMEOUT", "MEMZOI_NOW", "MEMZOI_ACTOR", "MEMZOI_DEBUG"):
        assert f"\\fB{var}\\fR" in page


def test_check_mode_reports_a_stale_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gen = generator()
    stale = tmp_path / "git-memzoi.1"
    stale.write_text("old\n")
    monkeypatch.setattr(gen, "PAGE", stale)
    monkeypatch.setattr(gen, "ROOT", tmp_path)
    assert gen.main(["--check"]) == 1
    assert stale.read_text() == "old\n"
    assert gen.main([]) == 0 and gen.main(["--check"]) == 0


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff is not installed")
def test_page_is_clean_roff() -> None:
    result = subprocess.run(["groff", "-man", "-ww", "-z", str(PAGE)], capture_output=True, text=True)
    assert result.returncode == 0 and result.stderr == ""
    # as man renders it on a terminal, at several widths: no warning (such as "cannot adjust line")
    for columns in (60, 78, 98, 198):
        shown = subprocess.run(
            ["groff", "-man", "-ww", "-Tutf8", f"-rLL={columns}n", str(PAGE)], capture_output=True, text=True
        )
        assert shown.returncode == 0 and shown.stderr == "", (columns, shown.stderr)


def _width(word: str) -> int:
    """The columns a roff word takes on a terminal: its escapes as the characters they print."""
    word = re.sub(r"\\f[BRIP]|\\&", "", word)
    word = re.sub(r"\\\[u[0-9A-F]{4}\]|\\-|\\e", "x", word)
    return len(word)


def test_no_word_is_wider_than_a_terminal_page() -> None:
    """What makes troff warn "cannot adjust line" on a terminal, found without groff.

    A word (no space in it) wider than the text column at MANWIDTH=80 cannot be set in a filled,
    justified line (a choice list such as `--type [fact|decision|...]`). Such a list may break
    after each `|` (\\:), and the page is set left-aligned (.ad l), so a broken line needs no
    stretching.
    """
    page = generator().render()
    assert page.index(".ad l\n") < page.index(".SH NAME\n")
    widest = max(
        (word for line in page.splitlines() if not line.startswith(".") for word in re.split(r"\s|\\:", line)),
        key=_width,
    )
    assert _width(widest) <= 66, widest  # about what 80 columns hold past the indents
    assert "[fact|\\:decision|\\:" in page


def test_dash_h_prints_help_for_the_program_and_every_command() -> None:
    top = run_cli("-h")
    assert top.stdout.startswith("Usage: git memzoi [OPTIONS] COMMAND [ARGS]...")
    assert "hook" in top.stdout
    for name in available():
        result = run_cli(name, "-h")
        assert result.stdout.startswith(f"Usage: git memzoi {name} "), name
        command = cli.get_command(click.Context(cli), name)
        if isinstance(command, click.Group):
            for sub in command.list_commands(click.Context(command)):
                assert run_cli(name, sub, "-h").stdout.startswith(f"Usage: git memzoi {name} {sub} ")


def test_pyproject_installs_the_page_into_share_man() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert config["tool"]["setuptools"]["data-files"]["share/man/man1"] == ["git_memzoi/man/git-memzoi.1"]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """git memzoi installed for real (not editable) into a fresh venv, from a copy of the sources.

    pip runs from the test venv but targets the new one (--python), so the test venv's own
    install of git memzoi is never touched.
    """
    work = tmp_path_factory.mktemp("install")
    src = work / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    shutil.copytree(ROOT / "git_memzoi", src / "git_memzoi", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    target = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(target)], check=True)
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(target / "bin" / "python"),
            "install",
            "--quiet",
            "--no-deps",
            str(src),
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert shutil.which("git-memzoi", path=str(VENV_BIN)), "the test venv's git-memzoi must stay installed"
    return target


def test_install_puts_the_page_in_share_man(installed: Path) -> None:
    page = installed / "share" / "man" / "man1" / "git-memzoi.1"
    assert page.read_bytes() == PAGE.read_bytes()
    assert (installed / "bin" / "git-memzoi").is_file()


@pytest.mark.skipif(shutil.which("man") is None, reason="the man program is not installed")
def test_man_and_git_help_find_the_installed_page(installed: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("MANPATH", "MANOPT")}
    env.update(
        PATH=f"{installed / 'bin'}{os.pathsep}{env['PATH']}",
        MANPAGER="cat",
        PAGER="cat",
        MANWIDTH="100",
        GIT_PAGER="cat",
    )
    where = subprocess.run(["man", "-w", "git-memzoi"], capture_output=True, text=True, env=env)
    assert where.stdout.strip() == str(installed / "share" / "man" / "man1" / "git-memzoi.1")
    for argv in (["git", "help", "memzoi"], ["git", "memzoi", "--help"]):
        shown = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path)
        assert shown.returncode == 0, shown.stderr
        assert "git memzoi hook pre-receive" in shown.stdout and "MEMZOI_LOCK_TIMEOUT" in shown.stdout


@pytest.mark.skipif(shutil.which("man") is None, reason="the man program is not installed")
def test_the_set_up_scripts_make_the_page_findable_for_an_editable_install(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "git-memzoi").symlink_to(shutil.which("git-memzoi", path=str(VENV_BIN)))
    done = subprocess.run(
        ["bash", "-c", f'. "{ROOT}/scripts/_venv.sh" && link_manpage "{venv}"'], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("MANPATH", "MANOPT")}
    # only the new venv's bin: the page must come from its share/man, not from this test venv's
    rest = [d for d in env["PATH"].split(os.pathsep) if Path(d).resolve() != VENV_BIN.resolve()]
    env.update(
        PATH=os.pathsep.join([str(venv / "bin"), *rest]), MANPAGER="cat", PAGER="cat", MANWIDTH="100", GIT_PAGER="cat"
    )
    link = venv / "share" / "man" / "man1" / "git-memzoi.1"
    assert link.is_symlink() and link.resolve() == PAGE.resolve()
    where = subprocess.run(["man", "-w", "git-memzoi"], capture_output=True, text=True, env=env)
    assert Path(where.stdout.strip()).resolve() == PAGE.resolve(), where.stderr
    shown = subprocess.run(["git", "memzoi", "--help"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert shown.returncode == 0 and "No manual entry" not in shown.stderr
    assert "git memzoi hook pre-receive" in shown.stdout
    again = subprocess.run(
        ["bash", "-c", f'. "{ROOT}/scripts/_venv.sh" && link_manpage "{venv}"'], capture_output=True, text=True
    )
    assert again.returncode == 0, "linking twice is fine"


def test_dash_h_names_every_client_agent_install_knows() -> None:
    from git_memzoi.agents.merge_config import CLIENTS

    names = {"claude": "Claude Code", "codex": "Codex", "gemini": "Gemini CLI", "copilot": "Copilot CLI"}
    assert set(CLIENTS) == set(names)
    shown = subprocess.run(
        [str(VENV_BIN / "git-memzoi"), "-h"], capture_output=True, text=True, env={**os.environ, "COLUMNS": "200"}
    )
    line = next(line for line in shown.stdout.splitlines() if line.strip().startswith("agent "))
    assert all(name in line for name in names.values()), line
