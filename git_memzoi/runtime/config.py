"""Config precedence: built-in, $MEMZOI_HOME/config.toml, the project's config.toml, .memzoi/config.toml.

Later files override earlier ones key by key. An unknown key, a bad value or a file that is
not TOML is reported with its file and key; nothing is silently ignored.

Checked by hand rather than by a pydantic model: every command reads its config, and importing
pydantic would cost more than most commands' own work. The messages are pydantic's wording.
The sections are NamedTuples (read-only), which are cheap to create: every command and every
agent hook reads its config, and loading dataclasses (inspect behind it) would cost more.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, NamedTuple

from git_memzoi.errors import ConfigError
from git_memzoi.runtime import DEFAULT_SESSION_LEASE_HOURS


class WorkflowConfig(NamedTuple):
    """[workflow]: how proposals are approved."""

    proposal_approval: Literal["manual", "auto"] = "manual"


class RetentionConfig(NamedTuple):
    """[retention]: the session lease."""

    session_lease_hours: float = DEFAULT_SESSION_LEASE_HOURS


class RecallConfig(NamedTuple):
    """[recall]: search and context defaults."""

    search_limit: int = 10
    context_budget: int = 800
    #: more groups of words that mean the same (`[["pg", "postgres"]]`), added to recall.query's vocabulary
    synonyms: tuple[tuple[str, ...], ...] = ()


class HooksConfig(NamedTuple):
    """[hooks]: what the client hooks allow."""

    allow_in_place_edits: bool = False
    require_proposals: bool = False


class FreshnessConfig(NamedTuple):
    """[freshness]: what `hook check` does with records a range leaves unverified (docs/freshness.md)."""

    #: fail the check until each record the range invalidates is superseded, tombstoned or re-written in it
    require_review: bool = False


class AgentsConfig(NamedTuple):
    """[agents]: how agent integrations answer warnings."""

    #: what `agent hook claude` answers for a `risk` record: ask the user, deny the tool call,
    #: or only add the warning to the agent's context
    risk_decision: Literal["ask", "deny", "context"] = "ask"
    #: characters of standing rules, checkpoint and inbox a session starts with (Claude Code cuts at 10,000)
    session_budget: int = 6000
    #: characters of context a prompt or a tool call gets at most
    prompt_budget: int = 2400


class ImportConfig(NamedTuple):
    """[import]: what `git memzoi import` leaves out."""

    #: globs of repository paths never read (as `--exclude`), e.g. `["docs/legacy/**", "**/*.local.md"]`
    exclude: tuple[str, ...] = ()


class Config(NamedTuple):
    """The merged config: one object per section."""

    workflow: WorkflowConfig = WorkflowConfig()
    retention: RetentionConfig = RetentionConfig()
    recall: RecallConfig = RecallConfig()
    hooks: HooksConfig = HooksConfig()
    agents: AgentsConfig = AgentsConfig()
    freshness: FreshnessConfig = FreshnessConfig()
    import_: ImportConfig = ImportConfig()


class _Invalid(Exception):
    """A value a check refused: the message, without file, key or value."""


def _literal(*allowed: str) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if not isinstance(value, str) or value not in allowed:
            quoted = [repr(a) for a in allowed]
            raise _Invalid(f"Input should be {', '.join(quoted[:-1])} or {quoted[-1]}")
        return value

    return check


def _bounded(value: Any, ge: float | None, gt: float | None, le: float) -> None:
    # nan fails every comparison; the upper bound is checked first, so it is what nan reports
    if not value <= le:
        raise _Invalid(f"Input should be less than or equal to {le}")
    if gt is not None and not value > gt:
        raise _Invalid(f"Input should be greater than {gt}")
    if ge is not None and not value >= ge:
        raise _Invalid(f"Input should be greater than or equal to {ge}")


def _number(*, gt: float, le: float) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _Invalid("Input should be a valid number")
        _bounded(value, None, gt, le)
        return float(value)

    return check


def _integer(*, ge: int, le: int) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _Invalid("Input should be a valid integer")
        _bounded(value, ge, None, le)
        return value

    return check


#: A config synonym group: 2 to 16 words of 1 to 40 characters each.
MAX_GROUPS, MAX_GROUP = 200, 16


def _groups(value: Any) -> Any:
    if not isinstance(value, list) or len(value) > MAX_GROUPS:
        raise _Invalid(f"Input should be a list of at most {MAX_GROUPS} lists of words")
    for number, group in enumerate(value):
        if not isinstance(group, list) or not 2 <= len(group) <= MAX_GROUP:
            raise _Invalid(f"item {number}: Input should be a list of 2 to {MAX_GROUP} words")
        for word in group:
            if not isinstance(word, str) or not 1 <= len(word) <= 40 or not word.strip() or not word.isprintable():
                raise _Invalid(f"item {number}: {word!r} should be a word of 1 to 40 printable characters")
    return tuple(tuple(str(word) for word in group) for group in value)


#: At most this many `[import] exclude` globs, each of at most MAX_GLOB characters.
MAX_GLOBS, MAX_GLOB = 200, 300


def _globs(value: Any) -> Any:
    if not isinstance(value, list) or len(value) > MAX_GLOBS:
        raise _Invalid(f"Input should be a list of at most {MAX_GLOBS} globs")
    for number, glob in enumerate(value):
        if not isinstance(glob, str) or not 1 <= len(glob) <= MAX_GLOB or not glob.isprintable():
            raise _Invalid(f"item {number}: {glob!r} should be a glob of 1 to {MAX_GLOB} printable characters")
    return tuple(value)


def _boolean(value: Any) -> Any:
    if not isinstance(value, bool):
        raise _Invalid("Input should be a valid boolean")
    return value


#: section -> (its class, key -> check); strict: no value is converted from another type.
SCHEMA: dict[str, tuple[type, dict[str, Callable[[Any], Any]]]] = {
    "workflow": (WorkflowConfig, {"proposal_approval": _literal("manual", "auto")}),
    "retention": (RetentionConfig, {"session_lease_hours": _number(gt=0, le=168)}),
    "recall": (
        RecallConfig,
        {"search_limit": _integer(ge=1, le=1000), "context_budget": _integer(ge=50, le=100_000), "synonyms": _groups},
    ),
    "hooks": (HooksConfig, {"allow_in_place_edits": _boolean, "require_proposals": _boolean}),
    "agents": (
        AgentsConfig,
        {
            "risk_decision": _literal("ask", "deny", "context"),
            "session_budget": _integer(ge=1000, le=10_000),
            "prompt_budget": _integer(ge=400, le=10_000),
        },
    ),
    "freshness": (FreshnessConfig, {"require_review": _boolean}),
    "import": (ImportConfig, {"exclude": _globs}),
}

assert [f.rstrip("_") for f in Config._fields] == list(SCHEMA)


class ConfigSource(NamedTuple):
    """One config file's bytes and the name to report it by (a path, or `REV:.memzoi/config.toml`)."""

    name: str
    data: bytes | None


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _build(name: str, data: dict[str, Any]) -> Config:
    """The Config `data` describes, or ConfigError for its first problem.

    Problems are found in the order pydantic reported them: section by section in schema order
    (each section's keys in schema order, then its unknown keys), then unknown sections.
    """
    sections: dict[str, Any] = {}
    for section, (cls, checks) in SCHEMA.items():
        if section not in data:
            continue
        given = data[section]
        if not isinstance(given, dict):
            raise ConfigError(
                f"{name}: {section}: Input should be a valid dictionary or instance of {cls.__name__} (got {given!r})"
            )
        values: dict[str, Any] = {}
        for key, check in checks.items():
            if key in given:
                try:
                    values[key] = check(given[key])
                except _Invalid as exc:
                    raise ConfigError(f"{name}: {section}.{key}: {exc} (got {given[key]!r})") from None
        for key in given:
            if key not in checks:
                raise ConfigError(f"{name}: unknown key '{section}.{key}'")
        sections[section + "_" if section == "import" else section] = cls(**values)  # `import` is a keyword
    for key in data:
        if key not in SCHEMA:
            raise ConfigError(f"{name}: unknown key {key!r}")
    return Config(**sections)


def _parse(source: ConfigSource) -> dict[str, Any]:
    assert source.data is not None
    try:
        text = source.data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{source.name}: not UTF-8 text") from None
    data = loads_toml(source.name, text)
    _build(source.name, data)  # each file must be valid on its own, so errors name it
    return data


#: The deepest TOML any config file may nest: tables, arrays and inline tables inside one
#: another, or the parts of one dotted key. tomllib's cost grows with the square of a dotted
#: key's parts (100,000 took minutes and gigabytes) and it recurses into nested values.
TOML_MAX_NESTING = 100
#: Strings and comments, which may hold any bracket or dot: taken out before nesting is counted.
_TOML_OPAQUE = r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*'


def loads_toml(name: str, text: str) -> dict[str, Any]:
    """`text` parsed by tomllib; ConfigError naming `name` (and the line) when it is not TOML or nests
    deeper than TOML_MAX_NESTING, judged before tomllib reads it."""
    import tomllib  # only when a config file exists (Command start-up: search)

    deep = _too_deep(text)
    if deep is not None:
        raise ConfigError(
            f"{name}:{deep}: nested deeper than {TOML_MAX_NESTING} levels (tables, arrays or dotted keys)"
        )
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{name}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{name}: nested too deeply to read") from None


def _too_deep(text: str) -> int | None:
    """The line where `text` first nests deeper than TOML_MAX_NESTING, else None (linear in its length)."""
    import re  # re caches the compiled patterns

    # every string and comment becomes `s` with its newlines kept, so line numbers stay
    plain = re.sub(_TOML_OPAQUE, lambda m: "s" + "\n" * m.group().count("\n"), text)
    depth = 0
    for number, line in enumerate(plain.split("\n"), start=1):
        for char in line if any(bracket in line for bracket in "[]{}") else ():
            if char in "[{":
                depth += 1
                if depth > TOML_MAX_NESTING:
                    return number
            elif char in "]}":
                depth -= 1
        # a dotted key: in a [table] header, or before an `=` (inline tables' keys after `{` or `,`)
        keys = [line.partition("]")[0]] if line.lstrip().startswith("[") else []
        keys += [piece.partition("=")[0] for piece in re.split(r"[{,]", line) if "=" in piece]
        if any(key.count(".") >= TOML_MAX_NESTING for key in keys):
            return number
    return None


def load(sources: list[ConfigSource]) -> Config:
    """Merge `sources` in precedence order (lowest first); missing files are skipped."""
    merged: dict[str, Any] = {}
    for source in sources:
        if source.data is not None:
            merged = _merge(merged, _parse(source))
    return _build("config", merged)


def file_source(path: Path) -> ConfigSource:
    """The config file at `path` (its bytes, or None when it does not exist)."""
    try:
        return ConfigSource(str(path), path.read_bytes())
    except (FileNotFoundError, NotADirectoryError):  # a file where a folder of its path goes: no such file either
        return ConfigSource(str(path), None)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
