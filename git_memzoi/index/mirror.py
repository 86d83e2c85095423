"""Read shared.db's runtime memory (local and session records, retention facts) for the index to mirror.

Read-only: it never creates or writes shared.db. A missing shared.db means no runtime memory;
one that exists but cannot be read fails closed (StateError from shared_db.connect).
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

from git_memzoi.errors import StateError
from git_memzoi.index import shared_db
from git_memzoi.layout import runtime_path


@dataclass(frozen=True, slots=True)
class RuntimeDocument:
    """One runtime_records row as the index needs it."""

    record_id: str
    store: str
    document: str

    @property
    def path(self) -> str:
        """How the index and citations name it: `shared.db:<store>/<id>`."""
        return runtime_path(self.store, self.record_id)


@dataclass
class RuntimeSnapshot:
    """Everything the index mirrors from shared.db, with a content signature."""

    documents: list[RuntimeDocument] = field(default_factory=list)
    facts: list[dict[str, str]] = field(default_factory=list)


#: The columns of a retention fact, as shared.db and index.db both hold them.
FACT_KEYS = ("seq", "record_id", "fact", "until", "reason", "actor", "created_at")


def read_runtime(path: Path) -> RuntimeSnapshot:
    """Runtime records and retention facts from shared.db (empty when it does not exist)."""
    if not path.exists():
        return RuntimeSnapshot()
    with closing(shared_db.connect(path, readonly=True)) as conn:
        try:
            rows = conn.execute("SELECT id, store, document FROM runtime_records ORDER BY store, id").fetchall()
            facts = conn.execute(f"SELECT {', '.join(FACT_KEYS)} FROM retention_facts ORDER BY seq").fetchall()
        except sqlite3.DatabaseError as exc:
            raise StateError(
                f"{path}: shared.db is unreadable: {exc}",
                hint="shared.db is durable authority and is never recreated over; "
                "restore it from a backup or move it aside deliberately",
            ) from None
    return RuntimeSnapshot(
        documents=[RuntimeDocument(record_id=rid, store=store, document=text) for rid, store, text in rows],
        facts=[{k: str(v) for k, v in zip(FACT_KEYS, f, strict=True)} for f in facts],
    )
