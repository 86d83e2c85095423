"""What the agent tests share: recorded Claude Code hook events, and the risk record they touch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from support.paths import FIXTURES
from support.recall import add_record
from support.repos import Repo

EVENTS = FIXTURES / "claude-hooks"


def event(name: str, cwd: Path, **override: Any) -> str:
    """A recorded hook event with the project directory filled in (and fields overridden)."""
    data = json.loads((EVENTS / f"{name}.json").read_text().replace("{CWD}", str(cwd)))
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(data.get(key), dict):
            data[key].update(value)
        else:
            data[key] = value
    return json.dumps(data)


def add_migrations_risk(repo: Repo, **fields: Any) -> None:
    """The risk record that applies to db/migrations/**, the path the edit events touch."""
    rid, title = "migrations-are-append-only", "Migrations are append-only"
    add_record(repo, "risks/migrations", rid, type="risk", title=title, applies_to=["db/migrations/**"], **fields)
