"""What the agent tests share: recorded hook events (Claude Code, Codex, Gemini CLI), the hook run, a risk record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.paths import FIXTURES
from support.recall import add_record
from support.repos import Repo
from support.running import run_cli

EVENTS = FIXTURES / "claude-hooks"


def event(name: str, cwd: Path, **override: Any) -> str:
    """A recorded Claude Code hook event with the project directory filled in (and fields overridden)."""
    return client_event("claude", name, cwd, **override)


def add_migrations_risk(repo: Repo, **fields: Any) -> None:
    """The risk record that applies to db/migrations/**, the path the edit events touch."""
    rid, title = "migrations-are-append-only", "Migrations are append-only"
    add_record(repo, "risks/migrations", rid, type="risk", title=title, applies_to=["db/migrations/**"], **fields)


def client_event(client: str, name: str, cwd: Path, **override: Any) -> str:
    """A recorded `client` hook event with the project directory filled in (and fields overridden)."""
    data = json.loads((FIXTURES / f"{client}-hooks" / f"{name}.json").read_text().replace("{CWD}", str(cwd)))
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key].update(value)
        else:
            data[key] = value
    return json.dumps(data)


def client_hook(client: str, text: str) -> tuple[dict[str, Any] | None, str]:
    """Run `agent hook CLIENT`; it always exits 0. Returns (parsed stdout or None when silent, stderr)."""
    result = run_cli("agent", "hook", client, input=text, expect=0)
    return (json.loads(result.stdout) if result.stdout.strip() else None), result.stderr
