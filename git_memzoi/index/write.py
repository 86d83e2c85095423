"""The one index writer: applies a change set to a new or an existing index, and installs it.

A new index starts from the schema; an existing one is copied to a temp file first (an
installed index is never modified in place, see `index_db`), and only once the build turns out
to change something: when nothing changed, nothing is written. Rows are written as `index.rows`
hands over batches, each with its FTS entry and `applies` rows; a row is deleted with them too
(this module is the only one that writes FTS). Then:

- duplicate record IDs: of the valid record files sharing an ID, the first path keeps it (as
  `validate` reports them); each other one loses its row and is held as invalid, with the
  problem on its `id:` line;
- retention boundaries of unchanged rows whose facts (or, for sessions, the lease) changed;
- the invalid files, the retention facts and the meta;
- `strict` refuses to install anything when a file is invalid.

The result is installed with one `os.replace`.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_memzoi.index import index_db
from git_memzoi.index.changeset import STAT_COLUMNS, BaseInvalid, ChangeSet, StatColumns, invalid_file, problems_of
from git_memzoi.index.index_db import ROW_COLUMNS
from git_memzoi.index.outcome import InvalidRecords, OutOfScope, RebuildReport
from git_memzoi.index.parse_cache import PARSER_VERSION, ParseCache
from git_memzoi.index.rows import Job, Made, Todo, batches, boundary_columns, facts_by_id, make
from git_memzoi.layout import INDEX_TEMP_PREFIX, RUNTIME_PATH_PREFIX
from git_memzoi.profile.applies import applies_to_base
from git_memzoi.profile.document import Problem
from git_memzoi.profile.retention import boundary as lane_boundary
from git_memzoi.runtime.private import create_private, private_folder

if TYPE_CHECKING:
    from git_memzoi.index.mirror import RuntimeSnapshot
    from git_memzoi.index.scan import FileStat

_INSERT = f"INSERT INTO records ({', '.join(ROW_COLUMNS)}) VALUES ({', '.join('?' * len(ROW_COLUMNS))})"
_FTS_INSERT = "INSERT INTO records_fts (rowid, title, description, body, tags) VALUES (?, ?, ?, ?, ?)"
#: An external-content FTS5 entry is deleted by repeating what it indexed.
_FTS_DELETE = (
    "INSERT INTO records_fts (records_fts, rowid, title, description, body, tags) "
    "SELECT 'delete', rowid, title, description, body, tags FROM records WHERE path = ?"
)
_BATCH = 500  # values per `IN (…)` query


@dataclass(frozen=True)
class Settings:
    """What a build writes to and how: where, the lease, whether to trust the parse cache, strictness."""

    index_path: Path
    parse_cache: Path
    lease: float
    use_cache: bool
    strict: bool
    scanned_ns: int  # when the work tree was swept (stored in the meta)
    progress: Callable[[int, int], None] | None = None


class _Target:
    """The temp index being written: a copy of the base, or a new schema, made on first use."""

    def __init__(self, index_path: Path, base: Path | None) -> None:
        self.index_path = index_path
        self.base = base
        self.tmp: Path | None = None
        self._conn: sqlite3.Connection | None = None

    @property
    def opened(self) -> bool:
        return self._conn is not None

    @property
    def new(self) -> bool:
        return self.base is None

    def conn(self) -> sqlite3.Connection:
        if self._conn is None:
            folder = self.index_path.parent
            private_folder(folder)
            index_db.remove_stale_temps(folder)
            self.tmp = folder / f"{INDEX_TEMP_PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
            create_private(self.tmp)  # index.db mirrors private local memory: 0600, as is the copy of a base below
            if self.base is None:
                conn = index_db.create(self.tmp)  # secondary indexes come after the bulk load
            else:
                shutil.copyfile(self.base, self.tmp)
                conn = index_db.connect_build(self.tmp)
            self._conn = conn
            conn.execute("BEGIN")
        return self._conn

    def install(self) -> None:
        assert self._conn is not None and self.tmp is not None
        self._conn.execute("COMMIT")
        self._conn.close()
        self._conn = None
        os.replace(self.tmp, self.index_path)
        self.tmp = None

    def discard(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
        if self.tmp is not None:
            try:
                os.unlink(self.tmp)
            except OSError:
                pass
            self.tmp = None


class _Writer:
    """One build's rows, invalid files and problems, written to `target` as they come."""

    def __init__(
        self,
        target: _Target,
        changes: ChangeSet,
        job: Job,
        cache: ParseCache | None,
        report: RebuildReport,
        problems: list[Problem],
    ) -> None:
        base = changes.base
        self.target = target
        self.changes = changes
        self.job = job
        self.cache = cache
        self.report = report
        self.problems = problems
        self.next_rowid = base.max_rowid if base is not None else 0
        #: valid record files given a row by this build, with their record IDs: only what settling
        #: duplicate IDs needs, never the row (a cold build would otherwise hold every document)
        self.made: dict[str, str] = {}
        self.invalid: dict[str, BaseInvalid] = {}
        self.repo_rows = int(base.meta.get("repo_records", "0")) if base is not None else 0
        self.runtime_rows = int(base.meta.get("runtime_records", "0")) if base is not None else 0

    def drop(self, paths: list[str]) -> None:
        """Delete rows, with their FTS entries and `applies`."""
        if not paths:
            return
        conn = self.target.conn()
        keys = [(p,) for p in paths]
        conn.executemany(_FTS_DELETE, keys)
        conn.executemany("DELETE FROM applies WHERE record IN (SELECT rowid FROM records WHERE path = ?)", keys)
        conn.executemany("DELETE FROM records WHERE path = ?", keys)
        conn.executemany("DELETE FROM files WHERE path = ?", keys)
        for p in paths:
            if p.startswith(RUNTIME_PATH_PREFIX):
                self.runtime_rows -= 1
            else:
                self.repo_rows -= 1

    def add(self, batch: list[Made]) -> None:
        """Write a batch of made rows; hold invalid files and their problems; keep new parses."""
        rows, words, applies, stats = [], [], [], []
        parsed: dict[str, str] = {}
        for m in batch:
            if m.parsed is not None:
                parsed[m.oid] = m.parsed
                self.report.parsed += 1
            elif m.origin == "cache":
                self.report.cached += 1
            if m.problems is not None:
                found = [Problem(m.path, *entry) for entry in m.problems]
                self.problems.extend(found)
                if m.store == "repo":  # a runtime document's problems are reported, not held
                    self.invalid[m.path] = invalid_file(m.path, m.oid, _stat(m.stat), None, _json(found))
                continue
            assert m.row is not None
            self.next_rowid += 1
            row = m.row._replace(rowid=self.next_rowid)
            rows.append(row)
            words.append((row.rowid, row.title, row.description, row.body, row.tags))
            applies += [(self.next_rowid, applies_to_base(entry), entry) for entry in m.applies_to]
            if m.store == "repo":
                stats.append((m.path, m.oid, *_stat(m.stat), m.record_id))
                self.made[m.path] = m.record_id or ""
                self.repo_rows += 1
            else:
                self.runtime_rows += 1
        if rows:
            conn = self.target.conn()
            conn.executemany(_INSERT, rows)
            conn.executemany(_FTS_INSERT, words)
            conn.executemany("INSERT INTO applies (record, base, entry) VALUES (?, ?, ?)", applies)
            conn.executemany(
                f"INSERT INTO files (path, oid, {STAT_COLUMNS}, record_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", stats
            )
        if self.cache is not None:
            self.cache.put_many(parsed)

    def settle_duplicates(self) -> None:
        """Of the record files sharing an ID, the first path keeps it; the others are held as invalid.

        Only IDs this build touched (a row made or dropped) can change hands. Files that lost
        their ID before and did not change compete again for those; for any other ID they keep
        their stored problem.
        """
        touched = set(self.made.values()) | self.changes.dropped_ids()
        holders: dict[str, set[str]] = {rid: set() for rid in touched}
        for p, rid in self.made.items():
            holders[rid].add(p)
        contested = self._contested(holders)
        if self.changes.base is not None and touched:
            self._base_holders(sorted(touched), holders)
        scope = self.changes.scope
        for rid, paths in sorted(holders.items()):
            if len(paths) < 2 and not paths & contested.keys():
                continue
            if scope is not None and not paths <= scope:
                raise OutOfScope(rid)
            first, *others = sorted(paths)
            if first in contested:  # its rival is gone: it takes its ID back
                self.add(make([self._todo(first)], self.job))
            for p in others:
                self._lose(p, rid, first, contested.get(p))

    def _contested(self, holders: dict[str, set[str]]) -> dict[str, BaseInvalid]:
        """Unchanged files that lost their ID before, to an ID in `holders`: they compete again (added to it).

        Those that lost another ID keep their stored problem."""
        contested: dict[str, BaseInvalid] = {}
        for p, bad in self.changes.unchanged_invalid.items():
            if bad.record_id in holders:
                contested[p] = bad
                holders[bad.record_id].add(p)
            elif bad.record_id is not None:
                self.keep_invalid(bad)
        return contested

    def keep_invalid(self, bad: BaseInvalid) -> None:
        """Hold an unchanged invalid file as it was, its stored problems reported again."""
        self.invalid[bad.path] = bad
        self.problems += [Problem(bad.path, *entry) for entry in problems_of(bad)]

    def _base_holders(self, ids: list[str], holders: dict[str, set[str]]) -> None:
        """Add the paths the base keeps for these record IDs to `holders`."""
        conn = self.target.conn()
        for start in range(0, len(ids), _BATCH):
            chunk = ids[start : start + _BATCH]
            for rid, path in conn.execute(
                "SELECT record_id, path FROM records WHERE store = 'repo' AND "
                f"record_id IN ({', '.join('?' * len(chunk))})",
                chunk,
            ):
                holders[rid].add(path)

    def _lose(self, path: str, rid: str, first: str, bad: BaseInvalid | None) -> None:
        stat: StatColumns
        if bad is not None:
            oid, stat, line = bad.oid, bad.stat, int(problems_of(bad)[0][0])
        else:
            # a record that lost its ID to another file: made again for its `id:` line (rare)
            self.made.pop(path, None)
            m = make([self._todo(path)], self.job)[0]
            oid, stat, line = m.oid, _stat(m.stat), m.id_line
            self.drop([path])
        found = [Problem(path, line, "id-duplicate", f"record ID {rid!r} is also used by {first}")]
        self.problems += found
        self.invalid[path] = invalid_file(path, oid, stat, rid, _json(found))

    def _todo(self, path: str) -> Todo:
        st = self.changes.files[path]
        return Todo(path=path, store="repo", full=os.path.join(self.changes.workdir, path), stat=st, raw=None)

    def settle_boundaries(self, facts: list[dict[str, str]], lease: float) -> None:
        """Recompute the retention boundaries of kept rows whose facts changed (or sessions, for a new lease)."""
        base = self.changes.base
        if base is None:
            return
        lease_changed = float(base.meta.get("lease_hours", "nan")) != lease
        old = {tuple(sorted(f.items())) for f in base.facts}
        new = {tuple(sorted(f.items())) for f in facts}
        touched = sorted({dict(f)["record_id"] for f in old ^ new})
        if not touched and not lease_changed:
            return
        conn = self.target.conn()
        columns = "rowid, record_id, lane, status, retention"
        found: list[tuple[Any, ...]] = []
        for start in range(0, len(touched), _BATCH):
            chunk = touched[start : start + _BATCH]
            found += conn.execute(
                f"SELECT {columns} FROM records WHERE record_id IN ({', '.join('?' * len(chunk))})", chunk
            ).fetchall()
        if lease_changed:
            found += conn.execute(f"SELECT {columns} FROM records WHERE lane = 'session'").fetchall()
        updates = []
        for rowid, rid, lane, status, retention in dict.fromkeys(found):
            b = lane_boundary(rid, lane, status, json.loads(retention), self.job.facts.get(rid, ()), lease)
            updates.append(boundary_columns(b) | {"rowid": rowid})
        conn.executemany(
            "UPDATE records SET boundary = :boundary, boundary_at = :boundary_at, boundary_kind = :boundary_kind, "
            "rule = :rule, basis = :basis, facts = :facts WHERE rowid = :rowid",
            updates,
        )


def write(
    changes: ChangeSet, runtime: RuntimeSnapshot, report: RebuildReport, problems: list[Problem], settings: Settings
) -> str | None:
    """Apply `changes` (see the module docstring) and install the result: its build ID, or None when
    nothing changed and nothing was written. Fills `report`; `problems` are the scan's, reported with the rows'."""
    base = changes.base
    target = _Target(settings.index_path, base.path if base is not None else None)
    todo = changes.todo
    cache = ParseCache.open(settings.parse_cache) if todo else None  # made (or reset) before any worker reads it
    job = Job(facts_by_id(runtime.facts), settings.lease, settings.parse_cache, settings.use_cache)
    writer = _Writer(target, changes, job, cache, report, problems)
    try:
        _add_rows(writer, todo, settings.progress)
        if target.new:
            index_db.finish(target.conn())
        writer.settle_duplicates()
        writer.settle_boundaries(runtime.facts, settings.lease)
        for bad in changes.unchanged_invalid.values():
            if bad.record_id is None:
                writer.keep_invalid(bad)
        report.problems = sorted(problems, key=lambda q: (q.path, q.line, q.code))
        errors = [q for q in report.problems if q.severity == "error"]
        if settings.strict and errors:
            raise InvalidRecords(errors)
        build_id = _finish(writer, runtime, settings)
        if build_id is None:
            return None
        target.install()
    except BaseException:
        target.discard()
        raise
    finally:
        if cache is not None:
            cache.close()
    if settings.progress is not None and todo:
        settings.progress(len(todo), len(todo))
    report.changed = True
    return build_id


def _add_rows(writer: _Writer, todo: list[Todo], progress: Callable[[int, int], None] | None) -> None:
    """Drop the rows the change set drops, then write the made rows batch by batch."""
    writer.drop(writer.changes.dropped)
    done, total = 0, len(todo)
    for batch in batches(todo, writer.job):
        writer.add(batch)
        done += len(batch)
        if progress is not None:
            progress(done, total)


def _finish(writer: _Writer, runtime: RuntimeSnapshot, settings: Settings) -> str | None:
    """Write the stats, invalid files, facts and meta of a build that changed something: its new build ID.

    None when it changed nothing in this worktree's own index (nothing is written then)."""
    changes, report, target = writer.changes, writer.report, writer.target
    base = changes.base
    invalid = sorted(writer.invalid.values())
    invalid_changed = base is None or invalid != sorted(base.invalid.values())
    facts_changed = base is None or base.facts != runtime.facts
    report.reused = base.row_count - len(changes.dropped) if base is not None else 0
    report.removed = len(changes.removed)
    report.records, report.runtime = writer.repo_rows, writer.runtime_rows
    if base is not None and base.own and not (target.opened or changes.restat or invalid_changed or facts_changed):
        return None
    conn = target.conn()
    conn.executemany(
        "UPDATE files SET size = ?, mtime_ns = ?, ctime_ns = ?, ino = ?, dev = ? WHERE path = ?", changes.restat
    )
    if invalid_changed:
        conn.execute("DELETE FROM invalid")
        conn.executemany(
            f"INSERT INTO invalid (path, oid, {STAT_COLUMNS}, record_id, problems) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            invalid,
        )
    if facts_changed:
        conn.execute("DELETE FROM facts")
        conn.executemany(
            "INSERT INTO facts (seq, record_id, fact, until, reason, actor, created_at) "
            "VALUES (:seq, :record_id, :fact, :until, :reason, :actor, :created_at)",
            runtime.facts,
        )
    build_id = secrets.token_hex(8)
    index_db.write_meta(
        conn,
        {
            "build_id": build_id,
            "parser": PARSER_VERSION,
            "lease_hours": repr(float(settings.lease)),
            "scanned_ns": str(settings.scanned_ns),
            "workdir": changes.workdir,
            "repo_records": str(writer.repo_rows),
            "runtime_records": str(writer.runtime_rows),
        },
    )
    return build_id


def _stat(stat: FileStat | None) -> StatColumns:
    """A stat's columns (`changes.STAT_COLUMNS`), NULLs when there is none."""
    return (None, None, None, None, None) if stat is None else stat


def _json(problems: list[Problem]) -> str:
    return json.dumps([[p.line, p.code, p.message, p.severity] for p in problems])
