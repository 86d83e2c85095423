"""Canonical record files written line by line, as the export, MCP and client tests build them.

(support.recall.record_text builds its records through YAML, with more fields to set.)"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from support.repos import Repo


@dataclass(kw_only=True)
class RecordFields:
    """What a test record says besides its ID; each test names only the fields it cares about."""

    type: str = "decision"
    lane: str = "semantic"
    title: str | None = None
    body: str | None = None
    status: str = "active"
    visibility: str = "repo"
    applies_to: tuple[str, ...] = ()
    retention: str = "{}"
    description: str | None = None
    supersedes: str | None = None


def record_text(record_id: str, **fields: Any) -> str:
    """A valid canonical record file."""
    f = RecordFields(**fields)
    title = f.title or record_id.replace("-", " ").capitalize()
    lines = [
        "---",
        f"id: {record_id}",
        "kind: memory",
        "profile: memzoi",
        f"type: {f.type}",
        f"lane: {f.lane}",
        f"title: {json.dumps(title, ensure_ascii=False)}",
    ]
    if f.description is not None:
        lines.append(f"description: {json.dumps(f.description, ensure_ascii=False)}")
    lines += [
        "timestamp: 2026-01-01T00:00:00Z",
        f"status: {f.status}",
        "scope: repo",
        f"visibility: {f.visibility}",
        "content_class: general_repo_knowledge",
        "confidence: 1.0",
    ]
    if f.applies_to:
        lines.append("applies_to:")
        lines += [f"  - {p}" for p in f.applies_to]
    if f.supersedes:
        lines.append(f"supersedes: {f.supersedes}")
    lines.append(f"retention: {f.retention}")
    lines += [
        "origin:",
        f"  origin_key: test:{record_id}",
        "  route: repository_materialization",
        "---",
        f"# {title}",
        "",
        f.body or f"The {title.lower()} body.",
        "",
    ]
    return "\n".join(lines)


def write_record(repo: Repo, concept_id: str, text: str) -> Path:
    return repo.write(f".memzoi/records/{concept_id}.md", text)
