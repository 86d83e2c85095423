"""The build behind `rebuild` and `open_index`: which of three paths brings index.db up to date.

1. A stat sweep proves the installed index true: nothing is read, parsed or written.
2. There is a base index (this worktree's own, or else a sibling worktree's, so that a fresh
   linked worktree of the same commit reuses nearly every row): `index.incremental` diffs
   against it, reading only files whose stat moved and parsing only those whose blob OID did.
3. There is nothing to start from (or `--full`): `index.fresh` streams every row into a new index.

Changed files come from the content-addressed parse cache when any worktree already parsed
the same bytes. Every change is written to a temp file installed with one `os.replace`.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import FormatError, StateError
from git_memzoi.index import index_db, staleness
from git_memzoi.index.index_db import instant
from git_memzoi.index.retention_rules import Boundary
from git_memzoi.index.retention_rules import boundary as lane_boundary
from git_memzoi.index.scan import RACY_NS, Scan, file_stat_signature, scan_records
from git_memzoi.layout import RECORDS

if TYPE_CHECKING:
    from git_memzoi.index.mirror import RuntimeSnapshot
    from git_memzoi.profile.document import Problem
    from git_memzoi.runtime.workspace import Workspace

Progress = Callable[[int, int], None]
_CHUNK = 1000
#: From this many record files, a worktree new to its index reads blob OIDs from git's index.
GIT_INDEX_MIN = 200
RECORDS_PREFIX = f"{RECORDS}/"


@dataclass
class RebuildReport:
    """What a rebuild did: how many files it parsed, took from the cache, reused or removed."""

    index_path: str
    records: int = 0          # repository records in the index
    runtime: int = 0          # runtime (local/session) records mirrored from shared.db
    parsed: int = 0           # files (or runtime documents) parsed from text
    cached: int = 0           # taken from the content-addressed parse cache
    reused: int = 0           # unchanged rows kept from the previous (or a sibling's) index
    removed: int = 0          # rows dropped
    problems: list["Problem"] = field(default_factory=list)
    duration: float = 0.0     # seconds
    changed: bool = False     # a new index.db was installed
    full: bool = False
    seeded_from: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The `rebuild --json` document."""
        return {
            "index_db": self.index_path, "records": self.records, "runtime_records": self.runtime,
            "parsed": self.parsed, "cached": self.cached, "reused": self.reused, "removed": self.removed,
            "changed": self.changed, "full": self.full, "seeded_from": self.seeded_from,
            "duration_s": round(self.duration, 4), "problems": [p.as_json() for p in self.problems],
        }


class InvalidRecords(FormatError):
    """`rebuild --strict` found record files that do not validate; nothing was installed."""

    def __init__(self, problems: list["Problem"]) -> None:
        first = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__("invalid-records", f"{first}{more}", path=first.path, line=first.line,
                         hint="fix the files (git memzoi validate lists every problem), or rebuild without --strict")
        self.problems = problems

    def __str__(self) -> str:
        return self.message


def connect_installed(path: Path) -> sqlite3.Connection | None:
    """Open an installed index; None when it is missing, or damaged (then it is removed: it is derived)."""
    if not path.exists():
        return None
    try:
        conn = index_db.connect_read(path)
        index_db.read_meta(conn)
        return conn
    except (sqlite3.DatabaseError, StateError):
        try:
            path.unlink()
        except OSError:
            pass
        return None


@dataclass
class _Base:
    """The index a build starts from: this worktree's own, a sibling's, or none."""

    path: Path | None = None
    own: bool = False
    meta: dict[str, str] = field(default_factory=dict)
    # path -> (rowid, oid, size, mtime_ns, record_id)
    rows: dict[str, tuple[int, str, int | None, int | None, str]] = field(default_factory=dict)
    invalid: dict[str, tuple[str, int | None, int | None, str | None, str]] = field(default_factory=dict)
    facts: list[dict[str, str]] = field(default_factory=list)
    max_rowid: int = 0


def _load_base(path: Path, own: bool) -> _Base | None:
    conn = connect_installed(path) if own else _open_sibling(path)
    if conn is None:
        return None
    try:
        base = _Base(path=path, own=own, meta=index_db.read_meta(conn))
        if base.meta.get("parser") != staleness.parser_version():
            return None
        for p, oid, size, mtime, rid in conn.execute("SELECT path, oid, size, mtime_ns, record_id FROM files"):
            base.rows[p] = (0, oid, size, mtime, rid)
        for rowid, p, oid, rid in conn.execute(  # runtime rows, by range over the path index
                "SELECT rowid, path, oid, record_id FROM records WHERE path >= 'shared.db:' AND path < 'shared.db;'"):
            base.rows[p] = (rowid, oid, None, None, rid)
        for p, oid, size, mtime, rid, problems in conn.execute(
                "SELECT path, oid, size, mtime_ns, record_id, problems FROM invalid"):
            base.invalid[p] = (oid, size, mtime, rid, problems)
        keys = ("seq", "record_id", "fact", "until", "reason", "actor", "created_at")
        base.facts = [{k: str(v) for k, v in zip(keys, row)}
                      for row in conn.execute(f"SELECT {', '.join(keys)} FROM facts ORDER BY seq")]
        base.max_rowid = conn.execute("SELECT coalesce(max(rowid), 0) FROM records").fetchone()[0]
        return base
    except (sqlite3.DatabaseError, StateError):
        return None
    finally:
        conn.close()


def _open_sibling(path: Path) -> sqlite3.Connection | None:
    try:
        conn = index_db.connect_read(path)
        index_db.read_meta(conn)
        return conn
    except (sqlite3.DatabaseError, StateError):
        return None


def _siblings(ws: "Workspace") -> list[Path]:
    """Other worktrees' indexes of this repository, newest first."""
    root = ws.layout.worktrees
    own = ws.layout.index_db
    found = []
    try:
        for entry in os.scandir(root):
            candidate = Path(entry.path) / own.name
            if candidate != own and candidate.exists():
                found.append((candidate.stat().st_mtime_ns, candidate))
    except OSError:
        return []
    return [p for _, p in sorted(found, reverse=True)]


@dataclass
class _Pending:
    """A file or runtime document whose row must be (re)built."""

    path: str
    store: str
    oid: str
    document: str
    size: int | None
    mtime_ns: int | None
    raw: bytes = b""
    payload: dict[str, Any] | None = None


def _facts_by_id(facts: Iterable[dict[str, str]]) -> dict[str, list[dict[str, str]]]:
    out: dict[str, list[dict[str, str]]] = {}
    for fact in facts:
        out.setdefault(fact["record_id"], []).append(fact)
    return out


def boundary_columns(b: Boundary) -> tuple[Any, ...]:
    """The records columns a retention boundary fills (boundary … facts)."""
    from git_memzoi.profile.timefmt import format_rfc3339

    if b.at is None and not b.facts:
        return (None, None, b.kind, b.rule, b.basis, "[]")
    return (instant(b.at) if b.at is not None else None, format_rfc3339(b.at) if b.at is not None else None,
            b.kind, b.rule, b.basis, _dumps(list(b.facts)))


def _dumps(value: Any) -> str:
    """JSON text, without the encoder for the empty lists and mappings most rows carry."""
    if not value:
        return "[]" if isinstance(value, list) else "{}"
    return json.dumps(value)


def _build_row(item: _Pending, concept: str | None, facts: dict[str, list[dict[str, str]]],
               lease: float) -> tuple[Any, ...]:
    f = item.payload["ok"]  # type: ignore[index]
    b = lane_boundary(f["id"], f["lane"], f["status"], f["retention"], facts.get(f["id"], ()), lease)
    boundary, boundary_at, kind, rule, basis, considered = boundary_columns(b)
    # the order of index_db.RECORD_COLUMNS
    return (item.path, item.store, f["id"], concept, f["type"], f["lane"], f["status"], f["visibility"],
            f["scope"], boundary, f["confidence"], item.oid, f["timestamp"],
            f["source"], f["source_ref"], f["proposal_id"], f["supersedes"], boundary_at, kind, rule, basis,
            considered, _dumps(f["retention"]), _dumps(f["tags"]), _dumps(f["applies_to"]), f["title"],
            f["description"], " ".join(f["tags"]), f["body_start"], item.document)


def _verified(ws: "Workspace", scan: Scan, shared_sig: list[int] | None, report: RebuildReport,
              started: float) -> RebuildReport | None:
    """The no-op fast path: a stat sweep proves the installed index true; no reads, no parsing."""
    path = ws.layout.index_db
    conn = connect_installed(path)
    if conn is None:
        return None
    try:
        meta = index_db.read_meta(conn)
        current = file_stat_signature(str(ws.layout.shared_db)) if shared_sig is not None else None
        found = staleness.verify(ws, conn, meta, scan, current)
    finally:
        conn.close()
    if found is None:
        return None
    report.records, report.runtime, report.reused = found.records, found.runtime, found.records + found.runtime
    if found.problems:
        from git_memzoi.profile.document import Problem

        report.problems = sorted((Problem(p, *entry) for p, entry in found.problems),
                                 key=lambda q: (q.path, q.line, q.code))
    report.duration = time.perf_counter() - started
    return report


def _noop(ws: "Workspace", scan: Scan, shared_sig: list[int] | None, report: RebuildReport, started: float,
          strict: bool) -> RebuildReport | None:
    verified = _verified(ws, scan, shared_sig, report, started)
    if verified is not None:
        errors = [q for q in verified.problems if q.severity == "error"]
        if strict and errors:
            raise InvalidRecords(errors)
    return verified


def noop(ws: "Workspace", *, strict: bool) -> RebuildReport | None:
    """The report of a rebuild with nothing to do, or None when there is something to do.

    Only reads (a stat sweep against the installed index), so it needs no writer lock: the
    index it vouches for stays true whether or not a writer replaces it meanwhile.
    """
    started = time.perf_counter()
    workdir = str(ws.repo.require_workdir())
    now_ns = time.time_ns()
    shared_sig = file_stat_signature(str(ws.layout.shared_db), now_ns)
    report = RebuildReport(index_path=str(ws.layout.index_db), full=False)
    return _noop(ws, scan_records(workdir, now_ns), shared_sig, report, started, strict)


def sync(ws: "Workspace", *, full: bool, strict: bool, progress: Progress | None) -> RebuildReport:
    """Bring the installed index in line with the work tree and shared.db (see the module docstring)."""
    started = time.perf_counter()
    workdir = str(ws.repo.require_workdir())
    layout = ws.layout
    index_path = layout.index_db
    report = RebuildReport(index_path=str(index_path), full=full)
    lease = ws.config.retention.session_lease_hours

    now_ns = time.time_ns()
    shared_sig = file_stat_signature(str(layout.shared_db), now_ns)
    scan: Scan = scan_records(workdir, now_ns)
    if not full:
        verified = _noop(ws, scan, shared_sig, report, started, strict)
        if verified is not None:
            return verified
    # the slow path: only now load the parser and the profile models
    from git_memzoi.index.mirror import read_runtime
    from git_memzoi.profile.document import Problem

    runtime: RuntimeSnapshot = read_runtime(layout.shared_db)

    base: _Base | None = None
    if not full:
        base = _load_base(index_path, own=True)
        if base is None:
            for sibling in _siblings(ws):
                base = _load_base(sibling, own=False)
                if base is not None:
                    report.seeded_from = str(sibling)
                    break
    stat_trusted = base is not None and base.own
    scanned_before = 0
    if base is not None:
        # rows are trusted by stat when older than the last moment their content was confirmed
        last_check = staleness.read_check(index_path) if base.own else None
        scanned_before = staleness.confirmed_ns(base.meta, last_check) - RACY_NS

    problems: list[Problem] = [Problem(rel, 1, "symlink", "memory files must be regular files, not symlinks")
                               for rel in scan.symlinks]
    problems += [Problem(rel, 1, "path-encoding", "file and folder names must be UTF-8; this one is not indexed")
                 for rel in scan.undecodable]
    if base is None:  # nothing to start from: stream every row into a new index
        from git_memzoi.index.fresh import build_fresh

        check = {"workdir": workdir, "dirs": scan.dirs, "shared": shared_sig, "files": len(scan.files),
                 "verified_ns": now_ns}
        return build_fresh(ws, scan=scan, runtime=runtime, problems=problems, check=check, now_ns=now_ns,
                           report=report, strict=strict, full=full, lease=lease, started=started,
                           progress=progress)
    from git_memzoi.index.incremental import update

    return update(ws, base=base, scan=scan, runtime=runtime, problems=problems, report=report, lease=lease,
                  now_ns=now_ns, shared_sig=shared_sig, stat_trusted=stat_trusted, scanned_before=scanned_before,
                  strict=strict, full=full, progress=progress, started=started)


def _problems_json(problems: list["Problem"]) -> str:
    return json.dumps([[p.line, p.code, p.message, p.severity] for p in problems])


