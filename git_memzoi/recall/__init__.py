"""Recall: retention decisions, search, context packs, handoff and precheck over the index.

Entry points (the CLI and the MCP server call exactly these):

- `recall.retention.decide(record, now, facts, lease_hours) -> ExpiryDecision` (pure)
- `recall.records.explain(ws, record_id) -> ExpiryDecision`
- `recall.search.search(ws, query, ...) -> SearchResult`
- `recall.context.build_context(ws, task, ...) -> ContextPack`
- `recall.handoff.build_handoff(ws, task) -> Handoff`
- `recall.precheck.precheck(ws, path=..., command=..., action=...) -> PrecheckResult`
- `recall.records.current_records(ws, include_private=False) -> list[IndexedRecord]`

Result types live in `recall.models`.
"""
