"""The seven read-only MCP tools as plain functions over recall: a result model plus its text.

Nothing here imports the MCP SDK, so the tools can be exercised without a protocol session;
`mcp.server` wraps them. Every tool reads; none proposes, approves, applies, rejects or edits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from git_memzoi.errors import UsageError
from git_memzoi.index.rebuild import open_index
from git_memzoi.recall.context import build_context
from git_memzoi.recall.handoff import build_handoff
from git_memzoi.recall.models import (
    Citation,
    ContextPack,
    ExpiryDecision,
    Handoff,
    Model,
    PrecheckResult,
    SearchResult,
)
from git_memzoi.recall.precheck import precheck
from git_memzoi.recall.records import explain, shareable_document, shareable_records
from git_memzoi.recall.search import search
from git_memzoi.runtime.workspace import Workspace


@dataclass(frozen=True)
class ToolOutput:
    """What a tool returns: the recall model (structured content) and text for the model to read."""

    model: Model
    text: str


#: Record resources: `memzoi://records/<concept-id>` (concept IDs need no escaping in a URI).
RECORD_URI_PREFIX = "memzoi://records/"
RECORD_URI_TEMPLATE = RECORD_URI_PREFIX + "{+concept_id}"


@dataclass(frozen=True)
class RecordResource:
    """One record as an MCP resource: its URI and what a client shows in a list."""

    uri: str
    concept_id: str
    record_id: str
    title: str
    description: str | None


def _cite(citation: Citation) -> str:
    parts = [citation.path]
    if citation.source is not None or citation.source_ref is not None:
        parts.append(f"source: {citation.source or 'null'} {citation.source_ref or ''}".rstrip())
    return "; ".join(parts)


def _unverified(freshness: dict[str, Any]) -> str:
    """ ", unverified" for a record whose cited code changed since it was written (docs/freshness.md)."""
    return "" if freshness["state"] == "current" else ", unverified"


def search_text(result: SearchResult) -> str:
    """Search hits as a short Markdown list, each with its record ID and evidence."""
    if not result.hits:
        return f"No current memory matches {result.query!r}."
    lines = [f"{len(result.hits)} record(s) match {result.query!r}:", ""]
    for hit in result.hits:
        flag = ("" if hit.current else " (query-only)") + _unverified(hit.freshness)
        lines.append(f"- **{hit.title}** [`{hit.record_id}`, {hit.type}, {hit.lane}, {hit.store}{flag}]")
        if hit.applies_to:
            lines.append("  applies to: " + ", ".join(f"`{p}`" for p in hit.applies_to))
        if hit.snippet:
            lines.append(f"  {' '.join(hit.snippet.split())}")
        lines.append(f"  cites: {_cite(hit.citation)}")
    return "\n".join(lines)


def precheck_text(result: PrecheckResult) -> str:
    """Precheck warnings, most severe first, each with what to do next."""
    if not result.warnings:
        return f"No warnings apply to {result.subject} {result.value!r}."
    lines = [f"{len(result.warnings)} warning(s) for {result.subject} {result.value!r}:", ""]
    for w in sorted(result.warnings, key=lambda w: (w.severity, w.title, w.record_id)):
        lines.append(
            f"- {w.type.upper()}: **{w.title}** [`{w.record_id}`{_unverified(w.freshness)}] (matched {w.matched})"
        )
        lines.append(f"  {' '.join(w.message.split())}")
        if w.next_step:
            lines.append(f"  next: {w.next_step}")
        lines.append(f"  cites: {_cite(w.citation)}")
    return "\n".join(lines)


def expiry_text(decision: ExpiryDecision) -> str:
    """Why a record is current or query-only, in a few lines."""
    state = "current" if decision.current else "query-only"
    lines = [
        f"`{decision.record_id}` ({decision.lane}, status {decision.status}) is {state}.",
        f"rule: {decision.rule}",
    ]
    if decision.boundary:
        lines.append(f"boundary: {decision.boundary} ({decision.boundary_kind})")
    lines.append(f"reason: {decision.reason}")
    lines.append(f"evaluated at: {decision.evaluated_at}")
    return "\n".join(lines)


def _need(value: str, name: str) -> str:
    if not value or not value.strip():
        raise UsageError(f"{name} must not be empty")
    return value


class MemoryTools:
    """One repository's read-only tools; calls recall exactly as the CLI does."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws

    def warm(self) -> None:
        """Open and refresh this worktree's index now, so a broken state fails before the first call."""
        open_index(self.ws, refresh=True).close()

    def search_memory(
        self,
        query: str,
        path: str | None = None,
        type: str | None = None,
        lane: str | None = None,
        limit: int | None = None,
        include_local: bool = False,
    ) -> ToolOutput:
        result = search(
            self.ws, _need(query, "query"), path=path, type=type, lane=lane, limit=limit, include_local=include_local
        )
        return ToolOutput(result, search_text(result))

    def build_context_pack(
        self, task: str, paths: Sequence[str] = (), budget: int | None = None, include_local: bool = False
    ) -> ToolOutput:
        pack: ContextPack = build_context(
            self.ws, _need(task, "task"), paths=tuple(paths), budget=budget, include_local=include_local
        )
        return ToolOutput(pack, pack.text)

    def precheck_path(self, path: str) -> ToolOutput:
        result = precheck(self.ws, path=_need(path, "path"))
        return ToolOutput(result, precheck_text(result))

    def precheck_command(self, command: str) -> ToolOutput:
        result = precheck(self.ws, command=_need(command, "command"))
        return ToolOutput(result, precheck_text(result))

    def precheck_action(self, action: str) -> ToolOutput:
        result = precheck(self.ws, action=_need(action, "action"))
        return ToolOutput(result, precheck_text(result))

    def inspect_memory_expiry(self, record_id: str) -> ToolOutput:
        decision = explain(self.ws, _need(record_id, "record_id"))
        return ToolOutput(decision, expiry_text(decision))

    def record_resources(self) -> list[RecordResource]:
        """Every current, non-private repository record as a resource, by path."""
        return [
            RecordResource(
                uri=RECORD_URI_PREFIX + concept, concept_id=concept, record_id=rid, title=title, description=description
            )
            for concept, rid, title, description in shareable_records(self.ws)
        ]

    def read_record(self, concept_id: str) -> str:
        """A record resource's text: the record file, byte for byte."""
        return shareable_document(self.ws, _need(concept_id, "concept_id"))

    def handoff(self, task: str, include_local: bool = False) -> ToolOutput:
        result: Handoff = build_handoff(self.ws, _need(task, "task"), include_local=include_local)
        return ToolOutput(result, result.text)
