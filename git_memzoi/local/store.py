"""Open shared.db for a workspace and turn runtime rows into validated profile records and back."""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from git_memzoi.errors import NotFound, StateError, UsageError
from git_memzoi.gitrepo.identity import actor
from git_memzoi.index import runtime_store, shared_db
from git_memzoi.index.runtime_store import RuntimeRow
from git_memzoi.layout import runtime_path
from git_memzoi.profile import frontmatter
from git_memzoi.profile.document import InvalidDocument, ParsedRecord, read_record
from git_memzoi.profile.models import Record
from git_memzoi.profile.timefmt import format_rfc3339
from git_memzoi.runtime import clock
from git_memzoi.runtime.workspace import Workspace

ID_PREFIX = {"local": "loc", "session": "ses"}


@dataclass(frozen=True)
class RuntimeRecord:
    """A runtime row with its validated record and body."""

    row: RuntimeRow
    record: Record
    data: dict[str, Any]
    body: str

    @property
    def id(self) -> str:
        return self.row.id

    @property
    def store(self) -> str:
        return self.row.store

    @property
    def path(self) -> str:
        """How citations name runtime memory: `shared.db:<store>/<id>`."""
        return runtime_path(self.row.store, self.row.id)


@contextmanager
def writing(ws: Workspace) -> Iterator[sqlite3.Connection]:
    """shared.db opened for writing (created on first use; fails closed when unreadable)."""
    conn = shared_db.connect(ws.layout.shared_db, actor=actor(ws.repo), owner=shared_db.owner_of(ws.repo.common_dir))
    try:
        yield conn
    finally:
        conn.close()


@contextmanager
def reading(ws: Workspace) -> Iterator[sqlite3.Connection | None]:
    """shared.db opened read-only, or None when it does not exist yet (nothing stored so far)."""
    if not ws.layout.shared_db.exists():
        yield None
        return
    conn = shared_db.connect(ws.layout.shared_db, readonly=True)
    try:
        yield conn
    finally:
        conn.close()


def now_text() -> str:
    """The clock's now as RFC 3339."""
    return format_rfc3339(clock.now())


def new_id(store: str) -> str:
    """A fresh runtime record ID: `loc_`/`ses_`, the UTC date, and 10 random hex digits."""
    return f"{ID_PREFIX[store]}_{clock.now().strftime('%Y%m%d')}_{secrets.token_hex(5)}"


def render(data: dict[str, Any], body: str, where: str) -> str:
    """Render a runtime record and validate it as a profile record; UsageError names the bad field."""
    text = frontmatter.render(data, body)
    try:
        read_record(text.encode("utf-8"), where)
    except InvalidDocument as exc:
        first = exc.problems[0]
        raise UsageError(f"{where}: {first.code}: {first.message}") from None
    return text


def parse(row: RuntimeRow) -> RuntimeRecord:
    """Validate a stored row; a row that no longer reads as a record is broken runtime state."""
    where = runtime_path(row.store, row.id)
    try:
        parsed: ParsedRecord = read_record(row.document.encode("utf-8"), where)
    except InvalidDocument as exc:
        raise StateError(
            f"{exc.problems[0]}",
            hint="the stored runtime record no longer validates; forget it with `git memzoi local forget`",
        ) from None
    return RuntimeRecord(row, parsed.record, parsed.doc.data, parsed.doc.body)


def load(conn: sqlite3.Connection | None, record_id: str, store: str | None = None) -> RuntimeRecord:
    """The runtime record `record_id` (in `store`), or NotFound."""
    row = runtime_store.get_record(conn, record_id) if conn is not None else None
    if row is None or (store is not None and row.store != store):
        what = {"local": "local memory record", "session": "checkpoint"}.get(store or "", "runtime record")
        raise NotFound(
            f"no {what} {record_id!r} in shared.db",
            hint="list them with `git memzoi local list` or `git memzoi checkpoint list`",
        )
    return parse(row)
