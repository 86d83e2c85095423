"""Where an imported rule reaches the agent, derived from the activation its `source_ref` kept (stdlib only).

A rule file's activation (Cursor `alwaysApply` / `globs` / `description`, Claude and Cline `paths`,
Copilot `applyTo`, Windsurf `trigger`) survives import in `source_ref` (docs/import.md). The index
derives from it, as runtime state and never as a record field, one mode per record:

- `always`: the record reaches the agent as its scope says (every record that is not an imported
  rule file narrowed by its activation, and `alwaysApply: true`, `trigger: always_on`, `applyTo: **`);
- `glob`: only when a path matching one of the original globs is touched or named (never standing);
- `requested`: an agent-requested rule (a description and nothing else) and an imported ADR: by relevance only;
- `manual`: only on request (a Cursor rule with neither, `trigger: manual`, an `.instructions.md`
  without `applyTo`, a Cline workflow: `.clinerules/workflows/`, which Cline runs by name and never
  loads as a rule).

`mode_sql` is the same decision as `mode`, for index.db's triggers; `matches` reads the original globs
(brace sets, `**`, a glob without a slash matching at any depth) relative to the rule file's folder.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import parse_qsl, unquote

__all__ = ["ALWAYS", "GLOB", "MANUAL", "REQUESTED", "globs", "matches", "mode", "mode_sql", "origin", "origin_sql"]

ALWAYS, GLOB, REQUESTED, MANUAL = "always", "glob", "requested", "manual"
#: Cline's workflows: run by name (`/release.md`), never loaded as rules.
CLINE_WORKFLOWS = ".clinerules/workflows/"
#: The activation keys that hold globs, in the order a rule file is read.
GLOB_KEYS = ("globs", "applyTo", "paths")
#: Globs that mean every file: the rule is always on.
_EVERYWHERE = ("**", "**/*")
#: The folders rule files live in; a rule's globs are relative to the folder that holds this one.
_RULE_DIRS = (".cursor/rules/", ".claude/rules/", ".github/instructions/", ".windsurf/rules/", ".clinerules/")
#: Standing order by origin: the root instruction files, records not imported, nested and tool files, ADRs.
ROOT_FILE, NATIVE, NESTED, ADR = 0, 1, 2, 3


def _params(ref: str) -> tuple[str, dict[str, str]] | None:
    if not ref.startswith("import:") or "?" not in ref:
        return None
    path, _, query = ref[len("import:") :].partition("?")
    return unquote(path), dict(parse_qsl(query, keep_blank_values=True))


def mode(ref: str | None) -> str:
    """The activation mode of a record whose `source_ref` is `ref` (ALWAYS for anything not imported)."""
    parsed = _params(ref or "")
    if parsed is None:
        return ALWAYS
    values = parsed[1]
    trigger = values.get("trigger", "")
    if values.get("alwaysApply", "").lower() == "true" or trigger == "always_on":
        return ALWAYS
    if trigger == "manual" or (values.get("format") == "cline-rule" and parsed[0].startswith(CLINE_WORKFLOWS)):
        return MANUAL
    if trigger == "model_decision":
        return REQUESTED
    for key in GLOB_KEYS:
        if values.get(key):
            return ALWAYS if values[key].strip() in _EVERYWHERE else GLOB
    fmt = values.get("format", "")
    if fmt == "adr":
        return REQUESTED  # a decision's record is background: by relevance, never standing
    if fmt == "cursor-rule":
        return REQUESTED if values.get("description") else MANUAL
    return MANUAL if fmt == "copilot-rule" else ALWAYS


def origin(ref: str | None) -> tuple[int, str, int]:
    """(origin class, source path, first line): the standing order of a record by where it came from."""
    parsed = _params(ref or "")
    if parsed is None:
        return (NATIVE, "", 0)
    path, values = parsed
    first = re.match(r"\d+", values.get("lines", ""))
    line = int(first.group()) if first else 0
    if values.get("format") == "adr":
        return (ADR, path, line)
    return (ROOT_FILE if "/" not in path else NESTED, path, line)


def globs(ref: str | None) -> tuple[str, list[str]]:
    """(the folder a rule's globs are relative to, its globs) from `ref`; no globs for anything else."""
    parsed = _params(ref or "")
    if parsed is None:
        return "", []
    path, values = parsed
    found = next((values[key] for key in GLOB_KEYS if values.get(key)), "")
    folder = ""
    for rules in _RULE_DIRS:
        at = ("/" + path).find("/" + rules)
        if at >= 0:
            folder = path[: max(at - 1, 0)] if at else ""
            break
    return folder, [g.strip() for g in _split(found) if g.strip()]


def _split(text: str) -> list[str]:
    """Comma-separated globs, a comma inside braces (`*.{ts,tsx}`) kept in its glob."""
    out: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text:
        depth += (char == "{") - (char == "}")
        if char == "," and depth <= 0:
            out.append("".join(current))
            current = []
        else:
            current.append(char)
    out.append("".join(current))
    return out


def _braces(glob: str) -> list[str]:
    """`a.{ts,tsx}` -> [`a.ts`, `a.tsx`] (nested sets too)."""
    match = re.search(r"\{([^{}]*)\}", glob)
    if match is None:
        return [glob]
    head, tail = glob[: match.start()], glob[match.end() :]
    return [expanded for option in match.group(1).split(",") for expanded in _braces(head + option + tail)]


@lru_cache(maxsize=512)
def _pattern(glob: str) -> re.Pattern[str]:
    text = glob.removeprefix("./").lstrip("/")
    if "/" not in text.rstrip("/"):
        text = "**/" + text  # a glob without a slash matches at any depth, as the clients read it
    if text.endswith("/"):
        text += "**"
    out, at = [], 0
    while at < len(text):
        if text.startswith("**/", at):
            out.append("(?:.*/)?")
            at += 3
        elif text.startswith("**", at):
            out.append(".*")
            at += 2
        elif text[at] == "*":
            out.append("[^/]*")
            at += 1
        elif text[at] == "?":
            out.append("[^/]")
            at += 1
        else:
            out.append(re.escape(text[at]))
            at += 1
    return re.compile("".join(out) + "(?:/.*)?")


def matches(ref: str | None, path: str) -> str | None:
    """The original glob of `ref`'s rule that `path` (repository-relative) matches, or None."""
    folder, found = globs(ref)
    if folder:
        if not path.startswith(folder + "/"):
            return None
        path = path[len(folder) + 1 :]
    for glob in found:
        if glob.startswith("!"):
            continue
        if any(_pattern(each).fullmatch(path) for each in _braces(glob)):
            return glob
    return None


def _query(ref: str) -> str:
    """SQL: the query of a source_ref between '&'s, so that every key is preceded and every value followed by one."""
    return f"('&' || substr({ref}, instr({ref}, '?') + 1) || '&')"


def _has(ref: str, key: str) -> str:
    return f"instr({_query(ref)}, '&{key}=') > 0"


def _is(ref: str, key: str, value: str) -> str:
    return f"instr({_query(ref)}, '&{key}={value}&') > 0"


def _filled(ref: str, key: str) -> str:
    return f"({_has(ref, key)} AND NOT {_is(ref, key, '')})"


def mode_sql(row: str) -> str:
    """SQL: `mode` of the row `row` (new or old), for index.db's triggers."""
    ref = f"{row}.source_ref"
    everywhere = " OR ".join(_is(ref, key, value) for key in GLOB_KEYS for value in _EVERYWHERE)
    any_glob = " OR ".join(_filled(ref, key) for key in GLOB_KEYS)
    return (
        f"(CASE WHEN {ref} IS NULL OR substr({ref}, 1, 7) <> 'import:' OR instr({ref}, '?') = 0 THEN '{ALWAYS}' "
        f"WHEN lower({_query(ref)}) LIKE '%&alwaysapply=true&%' OR {_is(ref, 'trigger', 'always_on')} THEN '{ALWAYS}' "
        f"WHEN {_is(ref, 'trigger', 'manual')} THEN '{MANUAL}' "
        f"WHEN {_is(ref, 'format', 'cline-rule')} AND substr({ref}, 8, {len(CLINE_WORKFLOWS)}) = '{CLINE_WORKFLOWS}' "
        f"THEN '{MANUAL}' "
        f"WHEN {_is(ref, 'trigger', 'model_decision')} THEN '{REQUESTED}' "
        f"WHEN {everywhere} THEN '{ALWAYS}' "
        f"WHEN {any_glob} THEN '{GLOB}' "
        f"WHEN {_is(ref, 'format', 'adr')} THEN '{REQUESTED}' "
        f"WHEN {_is(ref, 'format', 'cursor-rule')} AND {_filled(ref, 'description')} THEN '{REQUESTED}' "
        f"WHEN {_is(ref, 'format', 'cursor-rule')} OR {_is(ref, 'format', 'copilot-rule')} THEN '{MANUAL}' "
        f"ELSE '{ALWAYS}' END)"
    )


def origin_sql(row: str) -> str:
    """SQL: `origin`'s class of the row `row`, for index.db's standing table."""
    ref = f"{row}.source_ref"
    path = f"substr({ref}, 8, instr({ref}, '?') - 8)"
    return (
        f"(CASE WHEN {ref} IS NULL OR substr({ref}, 1, 7) <> 'import:' OR instr({ref}, '?') = 0 THEN {NATIVE} "
        f"WHEN {_is(ref, 'format', 'adr')} THEN {ADR} WHEN instr({path}, '/') = 0 THEN {ROOT_FILE} ELSE {NESTED} END)"
    )


def source_sql(row: str) -> str:
    """SQL: the source path (still quoted) of the row `row`, '' when not imported."""
    ref = f"{row}.source_ref"
    return f"(CASE WHEN substr({ref}, 1, 7) = 'import:' AND instr({ref}, '?') > 0 THEN substr({ref}, 8, instr({ref}, '?') - 8) ELSE '' END)"  # noqa: E501


def line_sql(row: str) -> str:
    """SQL: the first line of the row `row`'s source span (0 when not imported)."""
    ref = f"{row}.source_ref"
    query = _query(ref)
    return f"(CASE WHEN instr({query}, '&lines=') > 0 THEN CAST(substr({query}, instr({query}, '&lines=') + 7) AS INTEGER) ELSE 0 END)"  # noqa: E501
