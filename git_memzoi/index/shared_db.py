"""shared.db: the durable local authority one repository key shares across its linked worktrees.

It holds the DB-local proposal inbox, local and session memory, authorised retention facts,
hashed rejection lookups and the audit event log. It is never discarded by rebuild. When it
cannot be read, every command that needs it fails closed (StateError); it is never recreated
over an existing file.

Opening it runs SQLite's integrity check over every page, except when the file (and its WAL)
still has the stats it had when a check last found it good (`shared.db.checked` beside it
keeps them; stats too recent to trust are never kept). The check reads the whole file, which
costs tens of milliseconds on a large one; a file whose stats have not moved holds the same
pages, so only the first open after a write pays it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from git_memzoi.errors import NoSpace, StateError, from_environment
from git_memzoi.index.sweep import file_stat_signature, load_cache, store_cache
from git_memzoi.profile.timefmt import format_rfc3339
from git_memzoi.runtime import clock
from git_memzoi.runtime.private import private_folder

SCHEMA_VERSION = 3
BUSY_TIMEOUT_MS = 30_000
#: Beside shared.db: the stats of the file (and its WAL) as the last integrity check found it good.
CHECKED_SUFFIX = ".checked"

_SCHEMA = """
CREATE TABLE proposals (
    id            TEXT PRIMARY KEY,          -- proposal ID (the packet's `id`)
    state         TEXT NOT NULL CHECK (state IN ('pending','validated','approved','applied','rejected')),
    packet        TEXT NOT NULL,             -- the full packet file text (frontmatter + body)
    body_digest   TEXT NOT NULL,             -- sha256 of the normalised body, for duplicate refusal
    file_id       TEXT,                      -- pending packet file ID when it was written with --packet
    created_at    TEXT NOT NULL,
    updated_at    TEXT NOT NULL,
    reviewer      TEXT,
    reason        TEXT,
    resolved_at   TEXT,
    affected_ids  TEXT,                      -- JSON list of affected record IDs
    target_blob   TEXT                       -- supersede/tombstone: the target's blob OID when proposed
);
CREATE INDEX proposals_state ON proposals(state);
CREATE INDEX proposals_body ON proposals(body_digest);

CREATE TABLE runtime_records (
    id          TEXT PRIMARY KEY,            -- record ID
    store       TEXT NOT NULL CHECK (store IN ('local','session')),
    document    TEXT NOT NULL,               -- the full record file text (frontmatter + body)
    status      TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    worktree_key TEXT                        -- where it was written (informational)
);
CREATE INDEX runtime_records_store ON runtime_records(store, status);

CREATE TABLE retention_facts (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    record_id   TEXT NOT NULL,
    fact        TEXT NOT NULL CHECK (fact IN ('episodic_extension')),
    until       TEXT NOT NULL,
    reason      TEXT NOT NULL,
    actor       TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
CREATE INDEX retention_facts_record ON retention_facts(record_id);

CREATE TABLE rejections (
    alias_sha256  TEXT PRIMARY KEY,          -- sha256 of a proposal ID or file ID (never the alias)
    receipt_id    TEXT NOT NULL,             -- the hash-only receipt's ID
    receipt_path  TEXT NOT NULL,             -- .memzoi path of the resolved receipt
    created_at    TEXT NOT NULL
);

CREATE TABLE meta (
    key    TEXT PRIMARY KEY,                 -- repository_id (the memzoi-id of the repository it belongs to),
    value  TEXT NOT NULL                     -- common_dir (where that repository's git directory was)
);

CREATE TABLE events (
    seq      INTEGER PRIMARY KEY AUTOINCREMENT,
    at       TEXT NOT NULL,
    actor    TEXT NOT NULL,
    action   TEXT NOT NULL,
    ids      TEXT NOT NULL,                  -- JSON list of the IDs involved
    detail   TEXT NOT NULL                   -- JSON object
);
"""


#: Statements that bring a shared.db from version N to N + 1, run in one transaction per step.
_MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: ("ALTER TABLE proposals ADD COLUMN target_blob TEXT",),
    2: ("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",),
}

#: The meta keys that bind a shared.db to its repository.
META_REPOSITORY_ID = "repository_id"
META_COMMON_DIR = "common_dir"


class Owner:
    """The repository a shared.db belongs to: its ID and where its common git directory is."""

    __slots__ = ("common_dir", "repository_id")

    def __init__(self, repository_id: str, common_dir: str) -> None:
        self.repository_id = repository_id
        self.common_dir = common_dir

    def __repr__(self) -> str:
        return f"Owner({self.repository_id!r}, {self.common_dir!r})"


class Mismatch(StateError):
    """shared.db belongs to another repository than the one at this path."""


def _fail(path: Path, why: str) -> StateError:
    return StateError(
        f"{path}: shared.db is unreadable: {why}",
        hint="shared.db is durable authority and is never recreated over; "
        "restore it from a backup or move it aside deliberately",
    )


class Connection(sqlite3.Connection):
    """A shared.db connection that knows who acts through it, so every audit event names them."""

    actor: str | None = None


def connect(
    path: Path,
    *,
    create: bool = True,
    readonly: bool = False,
    actor: str | None = None,
    owner: Owner | None = None,
) -> sqlite3.Connection:
    """Open shared.db, creating it only when no file exists; fail closed on anything unreadable.

    `actor` names who acts for the audit events written through this connection. A writer
    names its repository as `owner`: a new shared.db records it, one made before the binding
    existed takes it, and one that belongs to another repository is refused (Mismatch).
    """
    exists = path.exists()
    stats = file_stat_signature(str(path), time.time_ns()) if exists else None  # before the file is opened
    if not exists and (readonly or not create):
        raise StateError(f"{path}: shared.db does not exist yet", hint="run a command that writes memory first")
    if not exists:
        _create_new(path, owner)
    conn: sqlite3.Connection | None = None
    try:
        conn = _open(path, readonly=readonly)
        conn.actor = actor
        _prepare(conn, path, stats, readonly=readonly, owner=owner)
        return conn
    except sqlite3.DatabaseError as exc:
        if conn is not None:
            conn.close()
        raise _database_error(path, exc) from None
    except StateError:
        if conn is not None:
            conn.close()
        raise


def _open(path: Path, *, readonly: bool) -> Connection:
    if readonly:
        return sqlite3.connect(
            f"{path.as_uri()}?mode=ro",
            uri=True,
            timeout=BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=False,
            factory=Connection,
        )
    return sqlite3.connect(
        path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False, factory=Connection
    )


def _prepare(conn: Connection, path: Path, stats: list[int] | None, *, readonly: bool, owner: Owner | None) -> None:
    """Check an opened shared.db (schema version, integrity) and bring it to this version's settings and schema."""
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version == 0:
        # a new shared.db is linked into place complete (_create_new): an existing file
        # without the schema (empty, truncated, someone else's) is never written over
        raise _fail(path, "it is empty or has no memzoi schema version")
    if version > SCHEMA_VERSION:
        raise _fail(path, f"schema version {version}; this git memzoi reads version {SCHEMA_VERSION}")
    if stats is None or load_cache(f"{path}{CHECKED_SUFFIX}") != stats:
        _check_integrity(conn, path, stats)
    if not readonly:  # only now, on a file known good: setting WAL writes to the file
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")
    if version < SCHEMA_VERSION:
        _upgrade(conn if not readonly else None, path)
    if owner is not None and not readonly:
        _bind(conn, path, owner)


def _check_integrity(conn: sqlite3.Connection, path: Path, stats: list[int] | None) -> None:
    """Every page, before anything is read or written: a corrupt page anywhere fails closed now,
    not halfway through a write. Remembered by the file's stat (`stats`), when it has one."""
    problems = [row[0] for row in conn.execute("PRAGMA quick_check(3)")]
    if problems != ["ok"]:
        lines = [line for p in problems for line in p.splitlines() if line and not line.startswith("***")]
        detail = lines or problems
        raise _fail(path, f"integrity check: {detail[0]}")
    if stats is not None:
        store_cache(f"{path}{CHECKED_SUFFIX}", stats)  # losing it only costs a check


def _database_error(path: Path, exc: sqlite3.DatabaseError) -> StateError:
    """What an SQLite error opening shared.db means: no space or a read-only file system, or an unreadable file."""
    code = exc.sqlite_errorname or ""
    known = None if "CORRUPT" in code or "NOTADB" in code else from_environment(exc, str(path.parent))
    if known is not None:  # no space, read-only: the file itself may be fine
        return (NoSpace if isinstance(known, NoSpace) else StateError)(f"{path}: {known}", hint=known.hint)
    return _fail(path, str(exc))


def _create_new(path: Path, owner: Owner | None) -> None:
    """Build a complete shared.db beside `path` and link it into place, so no reader ever sees it half made.

    os.link refuses to replace an existing file: when two processes race, one file wins and
    the other's copy is discarded; neither overwrites the other.
    """
    private_folder(path.parent)
    fd, tmp_name = tempfile.mkstemp(prefix=".shared-db-", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        with closing(sqlite3.connect(tmp, isolation_level=None)) as conn:
            _create_schema(conn, tmp, False)
            if owner is not None:
                _bind(conn, tmp, owner)
            conn.execute("PRAGMA journal_mode = WAL")
        for leftover in (Path(f"{tmp}-wal"), Path(f"{tmp}-shm")):
            leftover.unlink(missing_ok=True)
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
    finally:
        tmp.unlink(missing_ok=True)


def _create_schema(conn: sqlite3.Connection, path: Path, existed: bool) -> int:
    """Create schema v1 once, even when two processes race to open a new shared.db."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == 0:
            tables = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            if tables:
                raise _fail(path, "it holds tables but no memzoi schema version")
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            version = SCHEMA_VERSION
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    return int(version)


def _upgrade(conn: sqlite3.Connection | None, path: Path) -> None:
    """Migrate an older shared.db in place, step by step; a read-only caller gets a short writable connection."""
    own = conn is None
    writer = conn if conn is not None else sqlite3.connect(path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")
        try:
            version = writer.execute("PRAGMA user_version").fetchone()[0]  # again: another process may have won
            while version < SCHEMA_VERSION:
                if version not in _MIGRATIONS:
                    raise _fail(path, f"schema version {version} cannot be upgraded to {SCHEMA_VERSION}")
                for statement in _MIGRATIONS[version]:
                    writer.execute(statement)
                version += 1
                writer.execute(f"PRAGMA user_version = {version}")
        except BaseException:
            writer.execute("ROLLBACK")
            raise
        writer.execute("COMMIT")
    finally:
        if own:
            writer.close()


def _bind(conn: sqlite3.Connection, path: Path, owner: Owner) -> None:
    """Record `owner` in a shared.db that names none yet; refuse one that names another repository."""
    with transaction(conn):
        conn.execute(
            "INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?), (?, ?)",
            (META_REPOSITORY_ID, owner.repository_id, META_COMMON_DIR, owner.common_dir),
        )
        recorded = conn.execute("SELECT value FROM meta WHERE key = ?", (META_REPOSITORY_ID,)).fetchone()[0]
    if recorded != owner.repository_id:
        raise mismatch(path, recorded, owner.repository_id)


def mismatch(path: Path, recorded: str, current: str | None) -> Mismatch:
    """The refusal for a shared.db that another repository made."""
    mine = f"this repository's is {current}" if current else "this repository has none yet"
    return Mismatch(
        f"{path}: shared.db belongs to another repository (memzoi-id {recorded}; {mine})",
        hint="a repository was replaced at this path; run `git memzoi doctor` for how to set the old state aside",
    )


def recorded_owner(path: Path) -> Owner | None:
    """The repository an existing shared.db names, read without the integrity check; None when it names none."""
    try:
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
    except sqlite3.DatabaseError:
        return None
    with closing(conn):
        try:
            rows = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        except sqlite3.DatabaseError:
            return None  # no meta table (older or damaged): connect() says what is wrong with it
    found = rows.get(META_REPOSITORY_ID)
    return Owner(found, rows.get(META_COMMON_DIR, "")) if isinstance(found, str) else None


def verify(path: Path, repository_id: str | None) -> None:
    """Refuse (Mismatch) when the shared.db at `path` belongs to a repository other than `repository_id`.

    A shared.db that names no repository (made before the binding existed) is accepted: its
    first writer binds it.
    """
    if not path.exists():
        return
    found = recorded_owner(path)
    if found is not None and found.repository_id != repository_id:
        raise mismatch(path, found.repository_id, repository_id)


def owner_of(common_dir: Path) -> Owner:
    """The repository at `common_dir` as a writer names it, its ID made on first need."""
    from git_memzoi.runtime import repoid

    return Owner(repoid.ensure(common_dir), str(common_dir))


def verify_for(path: Path, common_dir: Path) -> None:
    """`verify` shared.db against the repository whose common git directory is `common_dir` (nothing is written)."""
    if not path.exists():
        return
    from git_memzoi.runtime import repoid

    verify(path, repoid.read(common_dir))


def rebind(path: Path, owner: Owner) -> None:
    """Point a shared.db at `owner`'s common git directory (after the folder moved under a new key)."""
    with closing(connect(path, create=False)) as conn, transaction(conn):
        conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?), (?, ?)",
            (META_REPOSITORY_ID, owner.repository_id, META_COMMON_DIR, owner.common_dir),
        )


def check(path: Path) -> None:
    """Raise StateError when an existing shared.db is corrupt (used before rebuild touches anything)."""
    if not path.exists():
        return
    connect(path, readonly=True).close()  # connect runs the integrity check


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE … COMMIT, rolled back on any exception."""
    if conn.in_transaction:
        yield conn
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def actor() -> str:
    """Who is acting when the connection was not told: MEMZOI_ACTOR, else the OS user."""
    from git_memzoi.gitrepo.identity import os_user

    return os.environ.get("MEMZOI_ACTOR") or os_user() or "unknown"


def append_event(
    conn: sqlite3.Connection,
    action: str,
    ids: list[str],
    detail: dict[str, Any] | None = None,
    *,
    who: str | None = None,
) -> None:
    """Append an audit event; call inside the transaction of the write it describes."""
    conn.execute(
        "INSERT INTO events (at, actor, action, ids, detail) VALUES (?, ?, ?, ?, ?)",
        (
            format_rfc3339(clock.now()),
            who or getattr(conn, "actor", None) or actor(),
            action,
            json.dumps(ids),
            json.dumps(detail or {}, sort_keys=True),
        ),
    )
