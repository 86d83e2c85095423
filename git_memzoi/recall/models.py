"""Result models recall returns; the CLI renders them and the MCP server serialises them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Store = Literal["repo", "local", "session"]

_FROZEN = ConfigDict(frozen=True)


class Citation(BaseModel):
    """Evidence for a recalled record: source/source_ref exactly as stored (null stays null)."""

    model_config = _FROZEN
    record_id: str
    source: str | None
    source_ref: str | None
    proposal_id: str | None
    path: str  # `.memzoi/records/<concept-id>.md`, or `shared.db:<store>/<id>` for runtime memory


class ExpiryDecision(BaseModel):
    """Why a record is current or query-only: the lane rule, the boundary and the reason."""

    model_config = _FROZEN
    record_id: str
    lane: str
    status: str
    current: bool
    rule: str                  # e.g. "episodic: 30-day window from occurred_at"
    boundary: str | None       # RFC 3339 instant where the record becomes query-only, if any
    boundary_kind: str | None  # terminal | lease | cap | explicit | window | extension | status
    reason: str                # one sentence for a person
    evaluated_at: str          # RFC 3339 "now" the decision used
    facts: list[dict[str, str]] = []  # authorised retention facts that were considered


class IndexedRecord(BaseModel):
    """A record as the index holds it, with its raw file text for byte-exact exports."""

    model_config = _FROZEN
    record_id: str
    concept_id: str | None     # None for runtime (shared.db) memory
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
    document: str              # the full file text, frontmatter and body, as stored


class Hit(BaseModel):
    """One search result."""

    model_config = _FROZEN
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


class SearchResult(BaseModel):
    model_config = _FROZEN
    query: str
    hits: list[Hit]
    filters: dict[str, str | int | bool | None]


class ContextItem(BaseModel):
    model_config = _FROZEN
    record_id: str
    store: Store
    type: str
    lane: str
    title: str
    text: str                  # what the pack includes for this record
    words: int
    why: str                   # e.g. "applies to src/auth/**; risk"
    citation: Citation


class Omission(BaseModel):
    model_config = _FROZEN
    record_id: str
    title: str
    reason: str                # "over budget", "duplicate of <id>", ...


class ContextPack(BaseModel):
    model_config = _FROZEN
    task: str
    paths: list[str]
    budget: int                # words
    used: int                  # words
    items: list[ContextItem]
    omitted: list[Omission]
    text: str                  # the prompt-ready Markdown pack


class InboxItem(BaseModel):
    model_config = _FROZEN
    proposal_id: str
    state: str
    action: str
    title: str
    file: str | None           # pending packet path, when there is one


class Checkpoint(BaseModel):
    model_config = _FROZEN
    record_id: str
    task: str
    note: str
    started_at: str
    last_active_at: str | None
    current: bool
    expiry: ExpiryDecision


class Handoff(BaseModel):
    model_config = _FROZEN
    task: str
    pack: ContextPack
    inbox: list[InboxItem]
    checkpoint: Checkpoint | None
    text: str


class PrecheckWarning(BaseModel):
    model_config = _FROZEN
    record_id: str
    type: str                  # risk | warning | failed_attempt
    severity: int              # lower is more severe
    title: str
    message: str
    matched: str               # what matched: the applies_to scope, or the command/action words
    next_step: str
    citation: Citation


class PrecheckResult(BaseModel):
    model_config = _FROZEN
    subject: Literal["path", "command", "action"]
    value: str
    warnings: list[PrecheckWarning]
