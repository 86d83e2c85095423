"""index.db: the disposable per-worktree projection of canonical records plus shared runtime mirrors.

An installed index.db is never modified in place: every change builds a new file (a copy of
the old one, or an empty schema) under a temp name and `os.replace`s it over the old one, so
a reader holds a consistent index for as long as its connection lives, and a rebuild killed
half-way leaves the old index serving. Readers open it read-only and immutable.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal, NamedTuple

from git_memzoi.errors import StateError
from git_memzoi.index import activation
from git_memzoi.layout import INDEX_SCHEMA_VERSION, INDEX_TEMP_PREFIX

SCHEMA_VERSION = INDEX_SCHEMA_VERSION
#: Rows hold a whole record file (2-4 KB); larger pages waste less space around them.
PAGE_SIZE = 16384
#: A build's page cache: writes go to the OS page cache anyway (no journal, no fsync); a larger cache
#: only grows the build's resident memory with the index (BENCHMARKS.md, rebuild peak memory).
BUILD_CACHE_KIB = 2048
#: Kinds of record that hold everywhere when nothing narrows them to a path (`recall.standing`).
STANDING_TYPES = ("risk", "warning", "constraint", "convention", "decision", "preference", "procedure")
#: `applies_to` entries that cover the whole repository.
WHOLE_REPOSITORY = frozenset({"**", "./**", ".", "./", "/**"})
#: Standing kinds ranked first (rank 0; every other standing kind is 1).
STANDING_FIRST = ("risk", "warning")


class RecordRow(NamedTuple):
    """One row of `records`: the row a writer inserts and a reader gets back, field by field.

    `tags` is the space-joined text FTS indexes; `tags_json`/`applies_json` keep the lists.
    `boundary` is the retention boundary as Unix seconds (None: none), compared with the clock at
    query time. The Markdown body is `document[body_start:]`: SQL reads it as the virtual column
    `body`, Python as the property of the same name.
    """

    rowid: int
    # small columns that filters read come first, so a filter never reads past the long texts
    path: str  # .memzoi/records/<concept-id>.md or shared.db:<store>/<id>
    store: Literal["repo", "local", "session"]
    record_id: str
    concept_id: str | None
    type: str
    lane: str
    status: str
    visibility: str
    scope: str
    boundary: float | None
    confidence: float
    oid: str  # git blob OID of the file (or of the runtime document text)
    timestamp: str
    source: str | None
    source_ref: str | None
    proposal_id: str | None
    supersedes: str | None
    boundary_at: str | None  # the boundary as RFC 3339 text
    boundary_kind: str | None
    rule: str
    basis: str
    facts: str  # JSON list of the retention facts the boundary considered
    retention: str  # JSON mapping of the record's retention fields
    tags_json: str
    applies_json: str
    title: str
    description: str | None
    tags: str
    body_start: int  # where the Markdown body starts in the document (characters)
    document: str

    @property
    def body(self) -> str:
        """The Markdown body (what FTS indexes as `body`)."""
        return self.document[self.body_start :]

    def is_current(self, now: float) -> bool:
        """Active and strictly before the retention boundary at `now` (Unix seconds), as `current_filter`."""
        return self.status == "active" and (self.boundary is None or self.boundary > now)


#: Every column of a record row, in RecordRow's order (`rowid` first).
ROW_COLUMNS: tuple[str, ...] = RecordRow._fields
#: The columns a writer fills besides `rowid`, in insert order.
RECORD_COLUMNS: tuple[str, ...] = ROW_COLUMNS[1:]

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE records (
    rowid INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,     -- .memzoi/records/<concept-id>.md or shared.db:<store>/<id>
    store TEXT NOT NULL,           -- repo | local | session
    record_id TEXT NOT NULL,
    concept_id TEXT,
    type TEXT NOT NULL, lane TEXT NOT NULL, status TEXT NOT NULL, visibility TEXT NOT NULL,
    scope TEXT NOT NULL, boundary REAL, confidence REAL NOT NULL,
    oid TEXT NOT NULL,             -- git blob OID of the file (or of the runtime document text)
    timestamp TEXT NOT NULL, source TEXT, source_ref TEXT, proposal_id TEXT, supersedes TEXT,
    boundary_at TEXT, boundary_kind TEXT, rule TEXT NOT NULL, basis TEXT NOT NULL, facts TEXT NOT NULL,
    retention TEXT NOT NULL, tags_json TEXT NOT NULL, applies_json TEXT NOT NULL,
    title TEXT NOT NULL, description TEXT, tags TEXT NOT NULL,
    body_start INTEGER NOT NULL,   -- where the Markdown body starts in the document (characters)
    document TEXT NOT NULL,
    body TEXT GENERATED ALWAYS AS (substr(document, body_start + 1)) VIRTUAL
);
CREATE TABLE files (               -- the work-tree stat of each indexed record file (a narrow table:
    path TEXT PRIMARY KEY,         -- sweeps and incremental builds read it, never the records)
    oid TEXT NOT NULL, size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL, ino INTEGER NOT NULL, dev INTEGER NOT NULL, record_id TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE applies (
    record INTEGER NOT NULL,       -- records.rowid
    base TEXT NOT NULL,            -- the entry without a trailing /**
    entry TEXT NOT NULL
);
CREATE TABLE invalid (
    path TEXT PRIMARY KEY, oid TEXT NOT NULL,
    size INTEGER, mtime_ns INTEGER, ctime_ns INTEGER, ino INTEGER, dev INTEGER,
    record_id TEXT,                -- set when the file is valid on its own but duplicates an ID
    problems TEXT NOT NULL         -- JSON list of problems
);
CREATE TABLE facts (
    seq INTEGER PRIMARY KEY, record_id TEXT NOT NULL, fact TEXT NOT NULL, until TEXT NOT NULL,
    reason TEXT NOT NULL, actor TEXT NOT NULL, created_at TEXT NOT NULL
);
CREATE INDEX facts_record ON facts(record_id);
CREATE TABLE standing (            -- the rows that are standing rules by type and scope: their rank, and the
    record INTEGER PRIMARY KEY,    -- records.rowid; the columns a filter reads and a rule's line shows,
    first INTEGER NOT NULL,        -- as in records (0 for risks and warnings, else 1)
    confidence REAL NOT NULL, timestamp TEXT NOT NULL, record_id TEXT NOT NULL,
    store TEXT NOT NULL, type TEXT NOT NULL, lane TEXT NOT NULL, status TEXT NOT NULL,
    visibility TEXT NOT NULL, boundary REAL, title TEXT NOT NULL,
    origin INTEGER NOT NULL,       -- where it came from (index.activation.origin): root file, not imported, nested, ADR
    source TEXT NOT NULL,          -- its source file as source_ref names it ('' when not imported)
    line INTEGER NOT NULL,         -- the first line of its span there
    source_ref TEXT                -- as in records: what a client's hook compares with the files it loads itself
);
CREATE TABLE activation (          -- imported rules whose activation narrows where they reach the agent
    record INTEGER PRIMARY KEY,    -- records.rowid
    mode TEXT NOT NULL             -- glob | requested | manual (index.activation.mode); `always` rows are absent
);
{standing_triggers}
CREATE VIRTUAL TABLE records_fts USING fts5(
    title, description, body, tags, content='records', content_rowid='rowid',
    tokenize='porter unicode61 remove_diacritics 2'
);
"""


def _sql_list(values: Iterable[str]) -> str:
    return ", ".join(f"'{v}'" for v in sorted(values))


def _is_standing(row: str) -> str:
    """SQL: the row `row` (new or old) is a standing rule by type, scope and activation (`standing.is_standing`)."""
    return (
        f"{row}.type IN ({_sql_list(STANDING_TYPES)}) AND ({row}.applies_json = '[]' OR EXISTS (SELECT 1 FROM "
        f"json_each({row}.applies_json) e WHERE e.type = 'text' AND e.value IN ({_sql_list(WHOLE_REPOSITORY)}))) "
        f"AND {activation.mode_sql(row)} = '{activation.ALWAYS}'"
    )


_STANDING_ROW = (
    f"new.rowid, CASE WHEN new.type IN ({_sql_list(STANDING_FIRST)}) THEN 0 ELSE 1 END, "
    "new.confidence, new.timestamp, new.record_id, new.store, new.type, new.lane, new.status, new.visibility, "
    f"new.boundary, new.title, {activation.origin_sql('new')}, {activation.source_sql('new')}, "
    f"{activation.line_sql('new')}, new.source_ref"
)
_NARROWED = f"{activation.mode_sql('new')} <> '{activation.ALWAYS}'"
#: `standing` follows `records` through triggers, so every writer (a full build, an incremental one
#: that copies the old index, a boundary update) keeps it in step at the cost of the rows it changes.
#: Each trigger is one line: `_statements` ends a statement at a line ending in ";".
_STANDING_TRIGGERS = f"""
CREATE TRIGGER standing_insert AFTER INSERT ON records WHEN {_is_standing("new")} BEGIN INSERT INTO standing VALUES ({_STANDING_ROW}); END;
CREATE TRIGGER standing_delete AFTER DELETE ON records BEGIN DELETE FROM standing WHERE record = old.rowid; END;
CREATE TRIGGER standing_update AFTER UPDATE OF type, applies_json, confidence, timestamp, record_id, store, lane, status, visibility, boundary, title, source_ref ON records BEGIN DELETE FROM standing WHERE record = old.rowid; INSERT INTO standing SELECT {_STANDING_ROW} WHERE {_is_standing("new")}; END;
CREATE TRIGGER activation_insert AFTER INSERT ON records WHEN {_NARROWED} BEGIN INSERT INTO activation VALUES (new.rowid, {activation.mode_sql("new")}); END;
CREATE TRIGGER activation_delete AFTER DELETE ON records BEGIN DELETE FROM activation WHERE record = old.rowid; END;
CREATE TRIGGER activation_update AFTER UPDATE OF source_ref ON records BEGIN DELETE FROM activation WHERE record = old.rowid; INSERT INTO activation SELECT new.rowid, {activation.mode_sql("new")} WHERE {_NARROWED}; END;
"""  # noqa: E501
_SCHEMA = _SCHEMA.replace("{standing_triggers}\n", _STANDING_TRIGGERS.lstrip("\n"))

#: Built after a bulk load (faster than maintaining them row by row).
_INDEXES = """
CREATE INDEX records_id ON records(record_id);
CREATE INDEX records_type ON records(type, status);
CREATE INDEX applies_base ON applies(base);
CREATE INDEX applies_record ON applies(record);
CREATE INDEX standing_rank ON standing(first, origin, source, line, confidence DESC, timestamp DESC, record_id);
"""


def _statements(script: str) -> list[str]:
    out, current = [], []
    for line in script.splitlines():
        current.append(line)
        joined = "\n".join(current).strip()
        if joined.endswith(";"):
            out.append(joined)
            current = []
    return out


def create(path: Path) -> sqlite3.Connection:
    """A new, empty index at `path` (a temp file), tuned for one bulk write."""
    conn = connect_build(path)
    conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
    for statement in _statements(_SCHEMA):
        conn.execute(statement)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    return conn


def finish(conn: sqlite3.Connection) -> None:
    """After a bulk load: build the secondary indexes.

    There are no triggers: `index.write` writes each row's FTS entry and `applies` rows itself
    (an FTS insert from a trigger costs two to three times as much, BENCHMARKS.md "cold full rebuild")."""
    for statement in _statements(_INDEXES):
        conn.execute(statement)


def connect_build(path: Path) -> sqlite3.Connection:
    """Open a temp index for writing. No journal and no fsync: a crash discards the temp file."""
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode = OFF")
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute(f"PRAGMA cache_size = -{BUILD_CACHE_KIB}")
    conn.execute("PRAGMA temp_store = MEMORY")
    return conn


def connect_read(path: Path) -> sqlite3.Connection:
    """Open an installed index read-only (raises sqlite3 errors; callers decide)."""
    conn = sqlite3.connect(
        f"{path.as_uri()}?mode=ro&immutable=1", uri=True, isolation_level=None, check_same_thread=False
    )
    return conn


def read_meta(conn: sqlite3.Connection) -> dict[str, str]:
    """The meta table as a dict; raises StateError when this is not a readable index of our schema."""
    try:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version != SCHEMA_VERSION:
            raise StateError(f"index.db has schema version {version}, expected {SCHEMA_VERSION}")
        return dict(conn.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.DatabaseError as exc:
        raise StateError(f"index.db is unreadable: {exc}") from None


def write_meta(conn: sqlite3.Connection, values: dict[str, Any]) -> None:
    """Set meta keys (strings stay strings, anything else is stored as JSON)."""
    conn.executemany(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
        [(k, v if isinstance(v, str) else json.dumps(v)) for k, v in values.items()],
    )


def remove_stale_temps(folder: Path) -> None:
    """Delete temp indexes left by rebuilds that died (their process is gone)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if not name.startswith(INDEX_TEMP_PREFIX):
            continue
        pid_text = name[len(INDEX_TEMP_PREFIX) :].split("-", 1)[0]
        if pid_text.isdigit() and _alive(int(pid_text)):
            continue
        try:
            os.unlink(folder / name)
        except OSError:
            pass


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def instant(moment: Any) -> float:
    """How index.db stores an instant (Unix seconds); the clock is compared in the same unit."""
    return float(moment.timestamp())


def current_filter(alias: str = "records") -> str:
    """SQL keeping current rows: status active and strictly before any retention boundary (`:now`)."""
    return f"({alias}.status = 'active' AND ({alias}.boundary IS NULL OR {alias}.boundary > :now))"


def connect_installed(path: Path) -> sqlite3.Connection | None:
    """Open an installed index; None when it is missing, or damaged (then it is removed: it is derived)."""
    if not path.exists():
        return None
    try:
        conn = connect_read(path)
        read_meta(conn)
        return conn
    except (sqlite3.DatabaseError, StateError):
        try:
            path.unlink()
        except OSError:
            pass
        return None
