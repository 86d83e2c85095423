"""Precheck: risk, warning and failed_attempt records that apply to a path, command or action.

A path matches through `applies_to` (an entry covers it, or lies inside the folder given).
A command matches by what it does (`recall.commands`: program, build files, verb, words, the folder it
runs in); an action through its words: a record must mention at least two of them
(or the only one), so `git push --force` finds "never force-push to main" but a record that
merely mentions "git" does not. Warnings come most severe first: risks, then warnings, then
failed attempts; within a type, the most specific match first.
"""

from __future__ import annotations

import math
import sqlite3
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from git_memzoi.errors import UsageError
from git_memzoi.freshness import state as freshness
from git_memzoi.index import fts, queries
from git_memzoi.index.index_db import RecordRow
from git_memzoi.index.queries import Filter
from git_memzoi.recall import commands, query
from git_memzoi.recall import paths as pathmatch
from git_memzoi.recall.models import PrecheckResult, PrecheckWarning
from git_memzoi.recall.records import citation, index_connection, now
from git_memzoi.recall.text import clean_body

if TYPE_CHECKING:
    from git_memzoi.runtime.workspace import Workspace

SEVERITY = {"risk": 1, "warning": 2, "failed_attempt": 3}
#: (row, what matched, rank within its type: lower is more specific)
Found = tuple[RecordRow, str, tuple[float, ...]]


def _filter(at: float) -> Filter:
    """Current, shareable, warning-shaped records (precheck never reads private or local memory)."""
    return Filter(now=at, types=tuple(SEVERITY))


def _message(row: RecordRow) -> str:
    text = row.description or clean_body(row.title, row.body).split("\n\n")[0]
    flat = " ".join(text.split())
    return flat if len(flat) <= 400 else flat[:399].rstrip() + "…"


def next_step(kind: str, record_id: str, subject: str, value: str) -> str:
    """What to do before going ahead."""
    doing = {"path": f"changing {value}", "command": f"running `{value}`", "action": value}[subject]
    if kind == "risk":
        return f"Read {record_id} before {doing}; confirm the mitigation it describes or ask a reviewer."
    if kind == "warning":
        return f"Follow {record_id} while {doing}, or get explicit approval to deviate from it."
    return f"This was tried before and failed: read {record_id} for why before {doing} again."


def _by_path(conn: sqlite3.Connection, path: str, flt: Filter) -> list[Found]:
    out: dict[int, Found] = {}
    for row, entry, base in queries.covering(conn, pathmatch.ancestors(path), flt):
        rank = (0, -len(base))  # covers the path; deeper scopes are more specific
        if row.rowid not in out or rank < out[row.rowid][2]:
            out[row.rowid] = (row, entry, rank)
    for row, entry in queries.inside(conn, path, flt):
        if row.rowid not in out:
            out[row.rowid] = (row, f"{entry} (inside {path})", (1, 0))
    return list(out.values())


def by_words(conn: sqlite3.Connection, text: str, flt: Filter) -> list[Found]:
    """Rows `flt` keeps whose text holds at least two of the text's significant words (or its only one)."""
    significant = fts.significant(text)
    if not significant:
        return []
    words = list(significant)
    held = queries.holding_terms(conn, [fts.terms(word)[0] for word in words], min(2, len(words)), flt)
    return [(row, "words: " + ", ".join(words[i] for i in which), (0, -len(which))) for row, which in held]


#: How much a command's program (or its build files' and ecosystem's words), its verb and each other word count.
PROGRAM_WEIGHT, VERB_WEIGHT, WORD_WEIGHT = 3, 2, 1
#: A record scoped to a folder the command `cd`s into counts as much as a held program.
FOLDER_WEIGHT = 3
#: A command's warnings: its best few, then only those holding at least this share of the best one's weight (in a
#: memory of thousands, records sharing two common words with a long command would otherwise fill the answer).
COMMAND_KEEP, COMMAND_FLOOR = 3, 0.5


def _quoted(word: str) -> str:
    return '"' + " ".join(fts.words(word)) + '"'  # `pg_dump`, `kafka-topics.sh`: a phrase of its words


def _command_terms(parsed: commands.Parsed) -> list[tuple[str, int]]:
    """(quoted FTS5 term, weight) of a parsed command: each program with its ecosystem's words, each verb, each
    other word; each once."""
    out: dict[str, int] = {}
    for step in parsed.steps:
        # the program and its build files' words are one term: `make` finds a record about the Makefile
        group = list(dict.fromkeys(_quoted(w) for w in (step.program, *step.ecosystem())))
        out.setdefault(group[0] if len(group) == 1 else "(" + " OR ".join(group) + ")", PROGRAM_WEIGHT)
        if step.verb:
            out.setdefault(f'"{step.verb}"', VERB_WEIGHT)
    for word in parsed.words:
        out.setdefault(f'"{word}"', WORD_WEIGHT)
    return list(out.items())[: fts.MAX_TERMS]


def _rarity(conn: sqlite3.Connection, terms: list[str]) -> list[float]:
    """How specific each term is in this memory, from 1 (held by one record) down to 0.25 (held by every one): words
    many records share weigh less, so a record sharing only common words with a command ranks last."""
    total = max(queries.record_count(conn), 1)
    return [max(0.25, 1 - math.log(max(queries.holding(conn, term), 1)) / math.log(total + 1)) for term in terms]


def by_command(conn: sqlite3.Connection, text: str, flt: Filter, workdir: Path | None = None) -> list[Found]:
    """Rows `flt` keeps for a command, by what it does: those holding at least two of its terms (or its only one),
    ranked by what they hold (its program or the program's build files weigh most, then its verb, then each other
    word), and those whose scope covers a folder it `cd`s into (from the repository root)."""
    parsed = commands.parse(text)
    terms = _command_terms(parsed)
    out: dict[int, Found] = {}
    if terms:
        held = queries.holding_terms(conn, [t for t, _ in terms], min(2, len(terms)), flt)
        rarity = _rarity(conn, [t for t, _ in terms]) if held else []
        for row, which in held:
            score = sum(terms[i][1] * rarity[i] for i in which)
            shown = ", ".join(terms[i][0].strip("()").replace('"', "").replace(" OR ", "/") for i in which)
            out[row.rowid] = (row, "words: " + shown, (0, -score))
    for folder in parsed.folders:
        try:
            base = pathmatch.normalise(folder, workdir)
        except UsageError:
            continue  # a folder outside the repository, or its root: nothing is scoped to it
        for row, entry, _ in queries.covering(conn, pathmatch.ancestors(base), flt):
            score = FOLDER_WEIGHT + (-out[row.rowid][2][1] if row.rowid in out else 0)
            out[row.rowid] = (row, f"runs in {base} ({entry})", (0, -score))
    return list(out.values())


#: A path's words (`by_path_words`) must weigh this much, by their rarity, for a record to come by them: the file's
#: name alone, or two rare words of its folders and name; words many records share weigh too little.
PATH_WORDS_FLOOR = 1.5
#: ... and one of the words it holds must be the file's own or its folder's, and not one most records hold.
OWN_RARITY = 0.3
#: File and folder names that say where code starts or lies, not what it is about: their words count as those of
#: the folders above.
GENERIC_NAMES = frozenset(
    "index main init __init__ mod lib utils util helpers types constants src source app internal pkg cmd".split()
)


def by_path_words(conn: sqlite3.Connection, path: str, flt: Filter) -> list[Found]:
    """Rows `flt` keeps that are about a repository path by their words: they name its file (`NuGet.config`,
    `gen-ai-attributes.ts`: a phrase, weighing as a command's program) or hold at least two words of its folders
    and its name (with their abbreviations' long forms: `config` finds "configuration"), whose rarity-weighted sum
    reaches PATH_WORDS_FLOOR; a manual rule (only on request) never. Rank (0, -score)."""
    folders, _, name = path.rpartition("/")
    stem, _, ext = name.rpartition(".") if "." in name.lstrip(".") else (name, "", "")
    weights: dict[str, int] = {}
    generic = stem.lower() in GENERIC_NAMES
    if len(fts.words(name)) > 1 and not generic:
        weights[_quoted(name)] = PROGRAM_WEIGHT
    # the file's own words and its folder's say what it is; the folders above and its extension, where it lies
    parent = folders.rsplit("/", 1)[-1]
    near = ("" if parent.lower() in GENERIC_NAMES else parent) + ("" if generic else f" {stem}")
    folders += f" {stem}" if generic else ""
    for text, weight in ((near, VERB_WEIGHT), (f"{folders.replace('/', ' ')} {ext}", WORD_WEIGHT)):
        for term in query.terms(text):
            weights.setdefault(term, weight)
    terms = list(weights)[: fts.MAX_TERMS]
    if not terms:
        return []
    held = queries.holding_terms(conn, terms, min(2, len(terms)), flt)
    rarity = _rarity(conn, terms) if held else []
    manual = queries.manual_rules(conn) if held else set()
    out: list[Found] = []
    for row, which in held:
        score = sum(weights[terms[i]] * rarity[i] for i in which)
        own = any(weights[terms[i]] > WORD_WEIGHT and rarity[i] >= OWN_RARITY for i in which)
        if own and score >= PATH_WORDS_FLOOR and row.rowid not in manual:
            shown = ", ".join(terms[i].strip("()").replace('"', "").split(" OR ")[0] for i in which)
            out.append((row, "words: " + shown, (0, -score)))
    return out


def _strongest(found: list[Found]) -> list[Found]:
    """The COMMAND_KEEP best matches of a command, and every other that holds at least COMMAND_FLOOR of the best
    one's weight."""
    ordered = sorted(found, key=lambda match: (match[2], match[0].record_id))
    best = max((-match[2][1] for match in found), default=0.0)
    return ordered[:COMMAND_KEEP] + [m for m in ordered[COMMAND_KEEP:] if -m[2][1] >= COMMAND_FLOOR * best]


def precheck(
    ws: Workspace,
    *,
    path: str | None = None,
    command: str | None = None,
    action: str | None = None,
    conn: sqlite3.Connection | None = None,
) -> PrecheckResult:
    """Warnings that apply to exactly one of a path, a command or an action, most severe first.

    `conn`: an index connection the caller opened (and closes) for several questions of one moment,
    so the index is checked against the files once, not once per question.
    """
    given = [
        (name, value) for name, value in (("path", path), ("command", command), ("action", action)) if value is not None
    ]
    if len(given) != 1:
        raise UsageError("give exactly one of path, command or action")
    subject: Literal["path", "command", "action"] = given[0][0]  # type: ignore[assignment]
    value = given[0][1]
    if not value.strip():
        raise UsageError("must not be empty", field=subject)
    flt = _filter(now()[1])
    with nullcontext(conn) if conn is not None else index_connection(ws) as db:
        if subject == "path":
            value = pathmatch.normalise(value, ws.repo.workdir)
            found = _by_path(db, value, flt)
        elif subject == "command":
            found = _strongest(by_command(db, value, flt, ws.repo.workdir))
        else:
            found = by_words(db, value, flt)
        fresh = freshness.verdicts(ws, db, [row for row, _, _ in found])
    # an unverified record follows the current ones of the same type and match
    found.sort(
        key=lambda f: (
            SEVERITY[f[0].type],
            f[2],
            fresh[f[0].path]["state"] != "current",
            -float(f[0].confidence),
            f[0].record_id,
            f[0].path,
        )
    )
    warnings = [
        PrecheckWarning(
            record_id=row.record_id,
            type=row.type,
            severity=SEVERITY[row.type],
            title=row.title,
            message=_message(row),
            matched=matched,
            next_step=next_step(row.type, row.record_id, subject, value),
            citation=citation(row),
            freshness=fresh[row.path],
        )
        for row, matched, _ in found
    ]
    return PrecheckResult(subject=subject, value=value, warnings=warnings)
