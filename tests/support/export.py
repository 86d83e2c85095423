"""Canonical record files written line by line, as the export, MCP and client tests build them.

(support.recall.record_text builds its records through YAML, with more fields to set.)"""

from __future__ import annotations

import json
from pathlib import Path

from support.repos import Repo


def record_text(
    record_id: str,
    *,
    type: str = "decision",
    lane: str = "semantic",
    title: str | None = None,
    body: str | None = None,
    status: str = "active",
    visibility: str = "repo",
    applies_to: tuple[str, ...] = (),
    retention: str = "{}",
    description: str | None = None,
    supersedes: str | None = None,
) -> str:
    """A valid canonical record file."""
    title = title or record_id.replace("-", " ").capitalize()
    lines = [
        "---",
        f"id: {record_id}",
        "kind: memory",
        "profile: memzoi",
        f"type: {type}",
        f"lane: {lane}",
        f"title: {json.dumps(title, ensure_ascii=False)}",
    ]
    if description is not None:
        lines.append(f"description: {json.dumps(description, ensure_ascii=False)}")
    lines += [
        "timestamp: 2026-01-01T00:00:00Z",
        f"status: {status}",
        "scope: repo",
        f"visibility: {visibility}",
        "content_class: general_repo_knowledge",
        "confidence: 1.0",
    ]
    if applies_to:
        lines.append("applies_to:")
        lines += [f"  - {p}" for p in applies_to]
    if supersedes:
        lines.append(f"supersedes: {supersedes}")
    lines.append(f"retention: {retention}")
    lines += [
        "origin:",
        f"  origin_key: test:{record_id}",
        "  route: repository_materialization",
        "---",
        f"# {title}",
        "",
        body or f"The {title.lower()} body.",
        "",
    ]
    return "\n".join(lines)


def write_record(repo: Repo, concept_id: str, text: str) -> Path:
    return repo.write(f".memzoi/records/{concept_id}.md", text)
