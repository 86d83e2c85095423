"""What an index build must do: the change set between a base index and the work tree plus shared.db.

The base is this worktree's own installed index, another worktree's (a worktree new to its index
starts from a sibling's, which holds nearly every row it needs), or nothing (a cold or `--full`
build: every file is added). Each record file and runtime document lands in one bucket:

- unchanged: the base's row stays, its content vouched for by the file's stat (the base is this
  worktree's, the stat - size, mtime, ctime, inode, device - is what it was when its content was
  confirmed, and the file is not racy), by the blob OID git's index stat cache names
  (`index.git_index`), or by hashing the file;
- added (the base has no row for the path) or changed (its blob OID differs): the row is made
  again by `index.rows`, from the parse cache or a parse;
- removed: the base holds a row whose file or runtime document is gone.

Files the base holds as invalid are unchanged or changed alike. A change set may be limited to a
scope of paths (after a write of known files): base rows outside it stay as they are, unlooked at.
"""

from __future__ import annotations

import json
import os
import sqlite3
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple

from git_memzoi.errors import StateError
from git_memzoi.index import index_db, staleness
from git_memzoi.index.mirror import FACT_KEYS
from git_memzoi.index.parse import blob_oid
from git_memzoi.index.rows import RawProblem, Todo
from git_memzoi.index.scan import FileStat, Scan
from git_memzoi.layout import MAX_FILE_BYTES, RECORDS, RUNTIME_PATH_PREFIX

if TYPE_CHECKING:
    from git_memzoi.index.git_index import Tracked
    from git_memzoi.index.mirror import RuntimeSnapshot

#: How an unchanged row's content was vouched for.
Vouch = Literal["stat", "git-index", "hash"]
#: The stat columns of `files` and `invalid`, in FileStat's order.
STAT_COLUMNS = "size, mtime_ns, ctime_ns, ino, dev"
#: A stat's columns (`STAT_COLUMNS`), NULLs for a runtime row or a file that could not be read.
StatColumns = tuple[int | None, int | None, int | None, int | None, int | None]


class BaseRow(NamedTuple):
    """A row the base holds, as `files` (and, for runtime rows, `records`) store it; no stat for runtime rows."""

    path: str
    oid: str
    size: int | None
    mtime_ns: int | None
    ctime_ns: int | None
    ino: int | None
    dev: int | None
    record_id: str

    @property
    def stat(self) -> StatColumns:
        """The stat columns, comparable with a FileStat."""
        return (self.size, self.mtime_ns, self.ctime_ns, self.ino, self.dev)


class BaseInvalid(NamedTuple):
    """A file held as invalid, as `invalid` stores it.

    `record_id` is set when the file is valid on its own but lost its ID to another file.
    """

    path: str
    oid: str
    size: int | None
    mtime_ns: int | None
    ctime_ns: int | None
    ino: int | None
    dev: int | None
    record_id: str | None
    problems: str  # JSON: [line, code, message, severity] entries

    @property
    def stat(self) -> StatColumns:
        """The stat columns, comparable with a FileStat."""
        return (self.size, self.mtime_ns, self.ctime_ns, self.ino, self.dev)


def invalid_file(path: str, oid: str, stat: StatColumns, record_id: str | None, problems: str) -> BaseInvalid:
    """A file held as invalid, with this stat (see BaseInvalid)."""
    size, mtime_ns, ctime_ns, ino, dev = stat
    return BaseInvalid(
        path=path,
        oid=oid,
        size=size,
        mtime_ns=mtime_ns,
        ctime_ns=ctime_ns,
        ino=ino,
        dev=dev,
        record_id=record_id,
        problems=problems,
    )


#: Runtime rows, by a range over the path index: every path from `shared.db:` up to `shared.db;`.
_RUNTIME_ROWS = "SELECT path, oid, NULL, NULL, NULL, NULL, NULL, record_id FROM records WHERE path >= ? AND path < ?"
_RUNTIME_RANGE = (RUNTIME_PATH_PREFIX, RUNTIME_PATH_PREFIX[:-1] + chr(ord(RUNTIME_PATH_PREFIX[-1]) + 1))


@dataclass
class Base:
    """The index a build starts from (see the module docstring)."""

    path: Path
    own: bool
    meta: dict[str, str]
    rows: dict[str, BaseRow] = field(default_factory=dict)
    invalid: dict[str, BaseInvalid] = field(default_factory=dict)
    facts: list[dict[str, str]] = field(default_factory=list)
    max_rowid: int = 0

    @property
    def row_count(self) -> int:
        """Rows (record files and runtime documents) the base index holds, whether loaded or not."""
        return int(self.meta.get("repo_records", "0")) + int(self.meta.get("runtime_records", "0"))


def load_base(path: Path, *, own: bool, paths: list[str] | None = None) -> Base | None:
    """The index at `path` as a base (None when missing, unreadable or from another parser version).

    `paths` limits the record files loaded to those (runtime rows, invalid files and facts are
    always loaded whole: they are few). A damaged index of this worktree is removed (it is derived).
    """
    conn = _connect(path, own)
    if conn is None:
        return None
    with closing(conn):
        return _load(conn, path, own, paths)


def _load(conn: sqlite3.Connection, path: Path, own: bool, paths: list[str] | None) -> Base | None:
    try:
        base = Base(path=path, own=own, meta=index_db.read_meta(conn))
        if base.meta.get("parser") != staleness.parser_version():
            return None
        if paths is None:
            found = conn.execute(f"SELECT path, oid, {STAT_COLUMNS}, record_id FROM files").fetchall()
        else:
            one = f"SELECT path, oid, {STAT_COLUMNS}, record_id FROM files WHERE path = ?"
            found = [row for p in paths for row in conn.execute(one, (p,))]
        found += conn.execute(_RUNTIME_ROWS, _RUNTIME_RANGE).fetchall()
        base.rows = {row.path: row for row in map(BaseRow._make, found)}
        invalid = conn.execute(f"SELECT path, oid, {STAT_COLUMNS}, record_id, problems FROM invalid")
        base.invalid = {bad.path: bad for bad in map(BaseInvalid._make, invalid)}
        base.facts = [
            {k: str(v) for k, v in zip(FACT_KEYS, row, strict=True)}
            for row in conn.execute(f"SELECT {', '.join(FACT_KEYS)} FROM facts ORDER BY seq")
        ]
        base.max_rowid = conn.execute("SELECT coalesce(max(rowid), 0) FROM records").fetchone()[0]
        return base
    except (sqlite3.DatabaseError, StateError):
        return None


def _connect(path: Path, own: bool) -> sqlite3.Connection | None:
    if own:
        return index_db.connect_installed(path)
    try:
        conn = index_db.connect_read(path)
        index_db.read_meta(conn)
        return conn
    except (sqlite3.DatabaseError, StateError):
        return None


def sibling_indexes(worktrees: Path, own: Path) -> list[Path]:
    """Other worktrees' indexes of this repository (folders under `worktrees`), newest first."""
    found = []
    try:
        for entry in os.scandir(worktrees):
            candidate = Path(entry.path) / own.name
            if candidate != own and candidate.exists():
                found.append((candidate.stat().st_mtime_ns, candidate))
    except OSError:
        return []
    return [p for _, p in sorted(found, reverse=True)]


@dataclass
class ChangeSet:
    """Everything a build changes relative to its base (see the module docstring)."""

    base: Base | None
    workdir: str
    #: the record files looked at, with their stats
    files: dict[str, FileStat]
    added: list[Todo] = field(default_factory=list)
    changed: list[Todo] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    #: path -> how its content was vouched for, for base rows that stay
    unchanged: dict[str, Vouch] = field(default_factory=dict)
    #: unchanged files whose stat moved: (*stat, path)
    restat: list[tuple[int, int, int, int, int, str]] = field(default_factory=list)
    #: files the base holds as invalid whose bytes did not change, with their current stat
    unchanged_invalid: dict[str, BaseInvalid] = field(default_factory=dict)
    #: the paths the change set is limited to (None: every record file was looked at)
    scope: frozenset[str] | None = None

    @property
    def todo(self) -> list[Todo]:
        """Every row to make: added, then changed."""
        return self.added + self.changed

    @property
    def dropped(self) -> list[str]:
        """Base rows to delete: removed ones, and changed ones (their new row, if any, replaces them)."""
        rows = self.base.rows if self.base is not None else {}
        return self.removed + [t.path for t in self.changed if t.path in rows]

    def dropped_ids(self) -> set[str]:
        """The record IDs of the record files whose base rows are dropped."""
        rows = self.base.rows if self.base is not None else {}
        return {rows[p].record_id for p in self.dropped if p.startswith(RECORDS + "/")}


def diff(
    base: Base | None,
    scan: Scan,
    runtime: RuntimeSnapshot,
    *,
    trusted_before: int,
    tracked: Tracked | None = None,
    scope: frozenset[str] | None = None,
) -> ChangeSet:
    """The change set from `base` to the files in `scan` and the runtime documents in `runtime`.

    A base row's stat is trusted when the base is this worktree's own, the file's stat is the
    row's, and its mtime is before `trusted_before` (racy otherwise); `tracked` (git's
    index stat cache) names the blob OID of files whose stat git vouches for. With `scope`, `scan`
    holds only those paths (present ones).
    """
    changes = ChangeSet(base, scan.workdir, scan.files, scope=scope)
    if base is None:
        changes.added = [_file_todo(scan, rel, None) for rel in sorted(scan.files)]
        changes.added += [
            Todo(path=doc.path, store=doc.store, full=None, stat=None, raw=doc.document.encode("utf-8"))
            for doc in runtime.documents
        ]
        return changes
    trust = _Trust(tracked, base.own, trusted_before)
    for rel in scan.files:
        _diff_file(changes, base, scan, rel, trust)
    _diff_runtime(changes, base, runtime)
    present = {doc.path for doc in runtime.documents}
    for path in base.rows:
        if path not in scan.files and path not in present and _looked_at(path, scope):
            changes.removed.append(path)
    for path, bad in base.invalid.items():
        if path not in scan.files and not _looked_at(path, scope):
            changes.unchanged_invalid[path] = bad
    return changes


class _Trust(NamedTuple):
    """What vouches for a file's content without reading it (see `diff`)."""

    tracked: Tracked | None
    by_stat: bool
    before: int


def _file_todo(scan: Scan, rel: str, raw: bytes | None) -> Todo:
    return Todo(path=rel, store="repo", full=scan.full(rel), stat=scan.files[rel], raw=raw)


def _diff_file(changes: ChangeSet, base: Base, scan: Scan, rel: str, trust: _Trust) -> None:
    """Put one record file of the work tree in its bucket."""
    old = base.rows.get(rel) or base.invalid.get(rel)
    if old is None:
        changes.added.append(_file_todo(scan, rel, None))
        return
    st = scan.files[rel]
    vouched = _vouch(old, st, trust)
    raw = None
    vouch: Vouch
    if vouched is not None:
        oid, vouch = vouched
    else:
        if st.size > MAX_FILE_BYTES:  # never read to be hashed: `rows` refuses it by this size
            changes.changed.append(_file_todo(scan, rel, None))
            return
        try:
            with open(scan.full(rel), "rb") as handle:
                raw = handle.read()
        except OSError:  # the row is made again, and says why it cannot be
            changes.changed.append(_file_todo(scan, rel, None))
            return
        oid, vouch = blob_oid(raw), "hash"
    if oid != old.oid:
        changes.changed.append(_file_todo(scan, rel, raw))
    elif isinstance(old, BaseRow):
        changes.unchanged[rel] = vouch
        if old.stat != st:
            changes.restat.append((*st, rel))
    else:
        changes.unchanged_invalid[rel] = invalid_file(rel, oid, st, old.record_id, old.problems)


def _vouch(old: BaseRow | BaseInvalid, st: FileStat, trust: _Trust) -> tuple[str, Vouch] | None:
    """The blob OID of a file whose content is vouched for without reading it, and by what; None: hash it."""
    if trust.by_stat and old.stat == st and st.mtime_ns < trust.before:
        return old.oid, "stat"
    known = trust.tracked.get(old.path) if trust.tracked is not None else None
    if known is not None and known[1:] == (
        st.size & 0xFFFFFFFF,
        st.mtime_ns,
        st.ctime_ns,
        st.ino & 0xFFFFFFFF,
        st.dev & 0xFFFFFFFF,
    ):
        return known[0], "git-index"
    return None


def _diff_runtime(changes: ChangeSet, base: Base, runtime: RuntimeSnapshot) -> None:
    """Put each runtime document of shared.db in its bucket."""
    for doc in runtime.documents:
        data = doc.document.encode("utf-8")
        old = base.rows.get(doc.path)
        if old is not None and old.oid == blob_oid(data):
            changes.unchanged[doc.path] = "hash"
        else:
            todo = Todo(path=doc.path, store=doc.store, full=None, stat=None, raw=data)
            (changes.changed if old is not None else changes.added).append(todo)


def _looked_at(path: str, scope: frozenset[str] | None) -> bool:
    return scope is None or path in scope or not path.startswith(RECORDS + "/")


def problems_of(bad: BaseInvalid) -> list[RawProblem]:
    """The stored problems of an invalid file: [line, code, message, severity] entries."""
    entries: list[RawProblem] = json.loads(bad.problems)
    return entries
