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
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

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
#: A row the base holds: (path, oid, size, mtime_ns, ctime_ns, ino, dev, record_id); the stat is None
#: for runtime rows.
BaseRow = tuple[str, str, int | None, int | None, int | None, int | None, int | None, str]
#: A file the base holds as invalid: (path, oid, size, mtime_ns, ctime_ns, ino, dev, record_id, problems
#: JSON); record_id is set when the file is valid on its own but lost its ID to another file.
BaseInvalid = tuple[str, str, int | None, int | None, int | None, int | None, int | None, str | None, str]
#: Where a base row or invalid file holds its record ID, and an invalid file its problems.
ID_AT: Final = 7
PROBLEMS_AT: Final = 8

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
    try:
        base = Base(path=path, own=own, meta=index_db.read_meta(conn))
        if base.meta.get("parser") != staleness.parser_version():
            return None
        if paths is None:
            base.rows = {row[0]: row for row in conn.execute(f"SELECT path, oid, {STAT_COLUMNS}, record_id FROM files")}
        else:
            one = f"SELECT path, oid, {STAT_COLUMNS}, record_id FROM files WHERE path = ?"
            base.rows = {row[0]: row for p in paths for row in conn.execute(one, (p,))}
        base.rows.update((row[0], row) for row in conn.execute(_RUNTIME_ROWS, _RUNTIME_RANGE))
        base.invalid = {
            row[0]: row for row in conn.execute(f"SELECT path, oid, {STAT_COLUMNS}, record_id, problems FROM invalid")
        }
        base.facts = [
            {k: str(v) for k, v in zip(FACT_KEYS, row, strict=True)}
            for row in conn.execute(f"SELECT {', '.join(FACT_KEYS)} FROM facts ORDER BY seq")
        ]
        base.max_rowid = conn.execute("SELECT coalesce(max(rowid), 0) FROM records").fetchone()[0]
        return base
    except (sqlite3.DatabaseError, StateError):
        return None
    finally:
        conn.close()


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
        return {rows[p][ID_AT] for p in self.dropped if p.startswith(RECORDS + "/")}


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
        changes.added = [Todo(rel, "repo", scan.full(rel), st, None) for rel, st in sorted(scan.files.items())]
        changes.added += [
            Todo(doc.path, doc.store, None, None, doc.document.encode("utf-8")) for doc in runtime.documents
        ]
        return changes
    rows, invalid = base.rows, base.invalid
    stat_trusted = base.own
    for rel, st in scan.files.items():
        old = rows.get(rel) or invalid.get(rel)
        if old is None:
            changes.added.append(Todo(rel, "repo", scan.full(rel), st, None))
            continue
        old_oid, old_stat = old[1], old[2:7]
        raw = None
        vouch: Vouch
        known = tracked.get(rel) if tracked is not None else None
        if stat_trusted and old_stat == st and st.mtime_ns < trusted_before:
            oid, vouch = old_oid, "stat"
        elif known is not None and known[1:] == (
            st.size & 0xFFFFFFFF,
            st.mtime_ns,
            st.ctime_ns,
            st.ino & 0xFFFFFFFF,
            st.dev & 0xFFFFFFFF,
        ):
            oid, vouch = known[0], "git-index"
        elif st.size > MAX_FILE_BYTES:  # never read to be hashed: make refuses it by this size
            changes.changed.append(Todo(rel, "repo", scan.full(rel), st, None))
            continue
        else:
            try:
                with open(scan.full(rel), "rb") as handle:
                    raw = handle.read()
            except OSError:  # the row is made again, and says why it cannot be
                changes.changed.append(Todo(rel, "repo", scan.full(rel), st, None))
                continue
            oid, vouch = blob_oid(raw), "hash"
        if oid != old_oid:
            changes.changed.append(Todo(rel, "repo", scan.full(rel), st, raw))
        elif rel in rows:
            changes.unchanged[rel] = vouch
            if old_stat != st:
                changes.restat.append((*st, rel))
        else:
            bad = invalid[rel]
            changes.unchanged_invalid[rel] = (rel, oid, *st, bad[ID_AT], bad[PROBLEMS_AT])
    for doc in runtime.documents:
        data = doc.document.encode("utf-8")
        old = rows.get(doc.path)
        if old is not None and old[1] == blob_oid(data):
            changes.unchanged[doc.path] = "hash"
        else:
            (changes.changed if old is not None else changes.added).append(Todo(doc.path, doc.store, None, None, data))
    present = {doc.path for doc in runtime.documents}
    for path in rows:
        if path not in scan.files and path not in present and _looked_at(path, scope):
            changes.removed.append(path)
    for path, bad in invalid.items():
        if path not in scan.files and not _looked_at(path, scope):
            changes.unchanged_invalid[path] = bad
    return changes


def _looked_at(path: str, scope: frozenset[str] | None) -> bool:
    return scope is None or path in scope or not path.startswith(RECORDS + "/")


def problems_of(bad: BaseInvalid) -> list[RawProblem]:
    """The stored problems of an invalid file: [line, code, message, severity] entries."""
    entries: list[RawProblem] = json.loads(bad[PROBLEMS_AT])
    return entries
