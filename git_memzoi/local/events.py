"""The audit event stream of shared.db, read row by row."""

from __future__ import annotations

from collections.abc import Iterator

from git_memzoi.index import runtime_store
from git_memzoi.index.runtime_store import Event
from git_memzoi.local import store
from git_memzoi.runtime.workspace import Workspace


def stream(ws: Workspace, *, since: int = 0, limit: int | None = None) -> Iterator[Event]:
    """Events with seq > `since` (at most `limit`), oldest first; nothing when shared.db does not exist yet."""
    with store.reading(ws) as conn:
        if conn is None:
            return
        yield from runtime_store.iter_events(conn, since=since, limit=limit)
