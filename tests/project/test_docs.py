"""Every command and every option of the click tree is documented: in git-memzoi(1), in `-h`, and in docs/.

The tree is walked from cli/main.py's group down through every subgroup, so a command or option added
anywhere fails here until the man page is regenerated, its help says it, and a docs/*.md page that
names the command (as `git memzoi COMMAND`) explains the option too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import click
import pytest

from git_memzoi.cli.main import cli
from support import ROOT, run_cli

PAGE = (ROOT / "git_memzoi" / "man" / "git-memzoi.1").read_text(encoding="utf-8")
DOCS = {path.name: path.read_text(encoding="utf-8") for path in sorted((ROOT / "docs").glob("*.md"))}


def walk(group: click.Group, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    """Every visible command under `group`, depth first, with the words that call it."""
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, f"git memzoi {' '.join((*path, name))} is listed but does not load"
        if command.hidden:
            continue
        yield (*path, name), command
        if isinstance(command, click.Group):
            yield from walk(command, (*path, name))


COMMANDS = dict(walk(cli))


def options(command: click.Command) -> list[tuple[str, ...]]:
    """The visible options, each as all its spellings (`("-o", "--output")`, `("--commit", "--no-commit")`)."""
    return [
        (*param.opts, *param.secondary_opts)
        for param in command.params
        if isinstance(param, click.Option) and not param.hidden
    ]


def spellings(command: click.Command) -> list[str]:
    return [spelling for option in options(command) for spelling in option]


def said(word: str, text: str) -> bool:
    """`word` appears in `text` as a word of its own (`--all` is not found in `--all-worktrees`)."""
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


def roff(text: str) -> str:
    return text.replace("-", "\\-")


def plain(text: str) -> str:
    """roff's escaped dashes as plain ones."""
    return text.replace("\\-", "-")


def man_section(path: tuple[str, ...]) -> str:
    """The page's text for one command, from its .SS heading to the next heading, its roff dashes plain."""
    heading = roff(f'.SS "git memzoi {" ".join(path)}"\n')
    assert heading in PAGE, f"git-memzoi(1) has no section for git memzoi {' '.join(path)}"
    rest = PAGE[PAGE.index(heading) + len(heading) :]
    end = re.search(r"^\.S[SH] ", rest, re.MULTILINE)
    return plain(rest[: end.start()] if end else rest)


def man_terms(section: str) -> str:
    """The bold terms of a section's option list (`\\fB-o, --output DIR\\fR`), fonts dropped."""
    terms = [line for line in section.splitlines() if line.startswith("\\fB")]
    return re.sub(r"\\f[BIRP]", "", "\n".join(terms))


def docs_naming(path: tuple[str, ...]) -> dict[str, str]:
    """The docs/*.md pages that name the command as it is typed."""
    typed = "git memzoi " + " ".join(path)
    return {name: text for name, text in DOCS.items() if said(typed, text)}


def ids(path: tuple[str, ...]) -> str:
    return " ".join(path)


def test_the_walk_reaches_every_level() -> None:
    assert ("search",) in COMMANDS and ("hook", "pre-receive") in COMMANDS
    assert ("agent", "hook", "claude") in COMMANDS  # a group inside a group
    assert "--json" in spellings(COMMANDS[("search",)])


@pytest.mark.parametrize("path", list(COMMANDS), ids=ids)
def test_the_man_page_documents_the_command_and_each_option(path: tuple[str, ...]) -> None:
    terms = man_terms(man_section(path))
    missing = [spelling for spelling in spellings(COMMANDS[path]) if not said(spelling, terms)]
    assert missing == [], f"git-memzoi(1) on git memzoi {' '.join(path)} lacks {missing}"


@pytest.mark.parametrize("path", list(COMMANDS), ids=ids)
def test_dash_h_names_each_option(path: tuple[str, ...]) -> None:
    shown = run_cli(*path, "-h").stdout
    assert shown.startswith(f"Usage: git memzoi {' '.join(path)} ")
    missing = [spelling for spelling in spellings(COMMANDS[path]) if not said(spelling, shown)]
    assert missing == [], f"git memzoi {' '.join(path)} -h lacks {missing}"


@pytest.mark.parametrize("path", list(COMMANDS), ids=ids)
def test_docs_explain_the_command_and_each_option(path: tuple[str, ...]) -> None:
    pages = docs_naming(path)
    assert pages, f"no docs/*.md names `git memzoi {' '.join(path)}`"
    # one spelling is enough here: the docs say --output, and -h and the man page give -o beside it
    missing = [o for o in options(COMMANDS[path]) if not any(said(s, text) for s in o for text in pages.values())]
    assert missing == [], f"docs naming git memzoi {' '.join(path)} ({', '.join(pages)}) never say {missing}"


def test_the_programs_own_options_are_documented_everywhere() -> None:
    top = man_terms(plain(PAGE[: PAGE.index(".SH COMMANDS")]))
    shown = run_cli("-h").stdout
    everything = "\n".join(DOCS.values())
    for spelling in spellings(cli):
        assert said(spelling, top), spelling
        assert said(spelling, shown), spelling
        assert said(spelling, everything), spelling


@pytest.mark.parametrize(
    ("text", "word", "found"),
    [("git memzoi search --json", "--json", True), ("--all-worktrees", "--all", False), ("x-y --all", "--all", True)],
)
def test_a_word_is_found_only_whole(text: str, word: str, found: bool) -> None:
    assert said(word, text) is found
