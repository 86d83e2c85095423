"""Result models recall returns; the CLI renders them and the MCP server serialises them.

Plain classes, not pydantic models: every read command builds them, and importing pydantic would
cost more than the read itself. Nor dataclasses: creating a dataclass runs generated code, and
thirteen of them cost a read command more than its query. `Model` takes the fields from each
class's annotations (keyword arguments, defaults copied), and `model_dump()` gives the same
dictionaries pydantic gave.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Literal, TypeVar, dataclass_transform

Store = Literal["repo", "local", "session"]

_M = TypeVar("_M", bound="Model")


def _dump(value: Any) -> Any:
    if isinstance(value, Model):
        return {name: _dump(getattr(value, name)) for name in value.model_fields_order}
    if isinstance(value, list):
        return [_dump(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_dump(item) for item in value)
    if isinstance(value, dict):
        return {key: _dump(item) for key, item in value.items()}
    return value


@dataclass_transform(kw_only_default=True)
class Model:
    """A record of named fields (from the class's annotations) with the part of pydantic's API callers use."""

    model_fields_order: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls) -> None:
        names = tuple(
            name
            for name, kind in cls.__dict__.get("__annotations__", {}).items()  # noqa: RUF063  (inspect costs start-up)
            if not str(kind).startswith("ClassVar")
        )
        cls.model_fields_order = names
        cls._defaults = {name: cls.__dict__[name] for name in names if name in cls.__dict__}

    def __init__(self, **values: Any) -> None:
        for name in self.model_fields_order:
            if name in values:
                value = values.pop(name)
            elif name in self._defaults:
                default = self._defaults[name]
                value = list(default) if isinstance(default, list) else default
            else:
                raise TypeError(f"{type(self).__name__}() missing keyword argument {name!r}")
            setattr(self, name, value)
        if values:
            raise TypeError(f"{type(self).__name__}() got an unexpected keyword argument {next(iter(values))!r}")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(
            getattr(self, name) == getattr(other, name) for name in self.model_fields_order
        )

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.model_fields_order)
        return f"{type(self).__name__}({fields})"

    def model_dump(self, *, mode: str = "python") -> dict[str, Any]:
        """The fields as plain dicts and lists, nested models included (JSON-ready in either mode)."""
        out: dict[str, Any] = _dump(self)
        return out

    def model_dump_json(self) -> str:
        """The fields as one compact JSON document."""
        return json.dumps(self.model_dump(), ensure_ascii=False, separators=(",", ":"))

    def model_copy(self: _M, *, update: dict[str, Any]) -> _M:
        """A copy with some fields replaced."""
        return type(self)(**({name: getattr(self, name) for name in self.model_fields_order} | update))


class Citation(Model):
    """Evidence for a recalled record: source/source_ref exactly as stored (null stays null)."""

    record_id: str
    source: str | None
    source_ref: str | None
    proposal_id: str | None
    path: str  # `.memzoi/records/<concept-id>.md`, or `shared.db:<store>/<id>` for runtime memory


class ExpiryDecision(Model):
    """Why a record is current or query-only: the lane rule, the boundary and the reason."""

    record_id: str
    lane: str
    status: str
    current: bool
    rule: str  # e.g. "episodic: 30-day window from occurred_at"
    boundary: str | None  # RFC 3339 instant where the record becomes query-only, if any
    boundary_kind: str | None  # terminal | lease | cap | explicit | window | extension | status
    reason: str  # one sentence for a person
    evaluated_at: str  # RFC 3339 "now" the decision used
    facts: list[dict[str, str]] = []  # noqa: RUF012  (__init__ copies list defaults) authorised retention facts considered


class IndexedRecord(Model):
    """A record as the index holds it, with its raw file text for byte-exact exports."""

    record_id: str
    concept_id: str | None  # None for runtime (shared.db) memory
    store: Store
    path: str
    type: str
    lane: str
    status: str
    visibility: str
    title: str
    description: str | None
    body: str
    applies_to: list[str]
    tags: list[str]
    citation: Citation
    expiry: ExpiryDecision
    document: str  # the full file text, frontmatter and body, as stored


class Hit(Model):
    """One search result."""

    record_id: str
    store: Store
    title: str
    type: str
    lane: str
    status: str
    current: bool
    score: float
    snippet: str
    applies_to: list[str]
    citation: Citation
    freshness: dict[str, Any]  # state (current | unverified), since (commit or null), evidence (docs/freshness.md)


class SearchResult(Model):
    """Search hits, best first, with the filters the search applied."""

    query: str
    hits: list[Hit]
    filters: dict[str, str | int | bool | None]


class ContextItem(Model):
    """One record in a context pack: the text included and why it was chosen."""

    record_id: str
    store: Store
    type: str
    lane: str
    title: str
    text: str  # what the pack includes for this record
    words: int
    why: str  # e.g. "applies to src/auth/**; risk"
    citation: Citation
    freshness: dict[str, Any]


class Omission(Model):
    """A record a context pack left out, and why."""

    record_id: str
    title: str
    reason: str  # "over budget", "duplicate of <id>", ...


class Listed(Model):
    """A record a context pack names in one line (its full text did not fit): enough to ask for it by ID."""

    record_id: str
    type: str
    title: str
    scope: str  # the applies_to entry that matched, the record's first one, or "" (repository-wide)
    freshness: dict[str, Any]  # as ContextItem's (docs/freshness.md)


class ContextPack(Model):
    """A prompt-ready context pack for a task, fitted to a word budget."""

    task: str
    paths: list[str]
    budget: int  # words
    used: int  # words
    items: list[ContextItem]
    omitted: list[Omission]
    text: str  # the prompt-ready Markdown pack
    listed: list[Listed] = []  # noqa: RUF012  (__init__ copies list defaults) named in a line each, best first


class InboxItem(Model):
    """An open proposal: in the inbox, or a pending packet file."""

    proposal_id: str
    state: str
    action: str
    title: str
    file: str | None  # pending packet path, when there is one


class Checkpoint(Model):
    """A session memory checkpoint and its retention decision."""

    record_id: str
    task: str
    note: str
    started_at: str
    last_active_at: str | None
    current: bool
    expiry: ExpiryDecision


class Handoff(Model):
    """A context pack plus the open inbox and the session checkpoint, as one document."""

    task: str
    pack: ContextPack
    inbox: list[InboxItem]
    #: Open proposals beyond the ones `inbox` lists (recall.handoff.INBOX_LIMIT); `git memzoi proposals` has them.
    inbox_more: int = 0
    checkpoint: Checkpoint | None
    text: str


class PrecheckWarning(Model):
    """A risk, warning or failed attempt that applies, with what to do next."""

    record_id: str
    type: str  # risk | warning | failed_attempt
    severity: int  # lower is more severe
    title: str
    message: str
    matched: str  # what matched: the applies_to scope, or the command/action words
    next_step: str
    citation: Citation
    freshness: dict[str, Any]


class PrecheckResult(Model):
    """The warnings for one path, command or action, most severe first."""

    subject: Literal["path", "command", "action"]
    value: str
    warnings: list[PrecheckWarning]
