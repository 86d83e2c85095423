"""The build behind `rebuild`: diff the work tree and shared.db against a base index, write a new one.

The base is this worktree's own index, else a sibling worktree's (a fresh linked worktree of
the same commit then reuses nearly every row), else nothing. Files whose stat is unchanged
are not read; files whose blob OID is unchanged are not parsed; changed files come from the
content-addressed parse cache when any worktree already parsed the same bytes. The result is
written to a temp copy of the base and installed with one `os.replace`.
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
from git_memzoi.index.index_db import RECORD_COLUMNS, TEMP_PREFIX, instant
from git_memzoi.index.retention_rules import Boundary
from git_memzoi.index.retention_rules import boundary as lane_boundary
from git_memzoi.index.scan import RACY_NS, Scan, file_stat_signature, scan_records

if TYPE_CHECKING:
    from git_memzoi.index.mirror import RuntimeSnapshot
    from git_memzoi.profile.document import Problem
    from git_memzoi.runtime.workspace import Workspace

Progress = Callable[[int, int], None]
_CHUNK = 1000
#: From this many record files, a worktree new to its index reads blob OIDs from git's index.
GIT_INDEX_MIN = 200
RECORDS_PREFIX = ".memzoi/records/"


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
    root = ws.layout.project / "worktrees"
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
        verified = _verified(ws, scan, shared_sig, report, started)
        if verified is not None:
            errors = [q for q in verified.problems if q.severity == "error"]
            if strict and errors:
                raise InvalidRecords(errors)
            return verified
    # the slow path: only now load the parser and the profile models
    from git_memzoi.index.mirror import read_runtime
    from git_memzoi.index.parse import blob_oid, parse_many, parse_payload, problems_of
    from git_memzoi.index.parse_cache import PARSER_VERSION, ParseCache
    from git_memzoi.profile import concept_id
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
    if base is None:  # nothing to start from: stream every row into a new index
        from git_memzoi.index.fresh import build_fresh

        check = {"workdir": workdir, "dirs": scan.dirs, "shared": shared_sig, "files": len(scan.files),
                 "verified_ns": now_ns}
        return build_fresh(ws, scan=scan, runtime=runtime, problems=problems, check=check, now_ns=now_ns,
                           report=report, strict=strict, full=full, lease=lease, started=started,
                           progress=progress)
    keep: dict[str, str] = {}                   # repo path -> record_id, kept row
    keep_invalid: dict[str, tuple[Any, ...]] = {}
    stat_updates: list[tuple[int, int, str]] = []
    pending: dict[str, _Pending] = {}

    # 1. repository files: stat, then blob OID, decide what must be rebuilt
    tracked = None
    if not stat_trusted and len(scan.files) >= GIT_INDEX_MIN:
        # a worktree new to this index: git's own stat cache names the blob of every unchanged file
        from git_memzoi.index.git_index import tracked_stats

        tracked = tracked_stats(ws.repo.git_dir, RECORDS_PREFIX)
    for rel, st in scan.files.items():
        old_row = base.rows.get(rel)
        old_bad = base.invalid.get(rel)
        old_oid, old_size, old_mtime = (old_row[1:4] if old_row else old_bad[0:3] if old_bad else (None, None, None))
        known = tracked.get(rel) if tracked else None
        if (stat_trusted and old_oid is not None and old_size == st.size and old_mtime == st.mtime_ns
                and st.mtime_ns < scanned_before):
            oid = old_oid
            raw = None
        elif (known is not None and known[1] == st.size & 0xFFFFFFFF and known[2] == st.mtime_ns
              and known[3] == st.ino & 0xFFFFFFFF):
            oid = known[0]
            raw = None
            if oid == old_oid and (old_size != st.size or old_mtime != st.mtime_ns):
                stat_updates.append((st.size, st.mtime_ns, rel))
        else:
            try:
                with open(scan.full(rel), "rb") as handle:
                    raw = handle.read()
            except OSError as exc:
                problems.append(Problem(rel, 1, "unreadable", f"cannot read: {exc.strerror}"))
                continue
            oid = blob_oid(raw)
            if oid == old_oid and (old_size != st.size or old_mtime != st.mtime_ns):
                stat_updates.append((st.size, st.mtime_ns, rel))
        if oid == old_oid and old_row is not None:
            keep[rel] = old_row[4]
            continue
        if oid == old_oid and old_bad is not None and old_bad[3] is None:
            keep_invalid[rel] = (oid, st.size, st.mtime_ns, None, old_bad[4])
            problems.extend(Problem(rel, *entry) for entry in json.loads(old_bad[4]))
            continue
        if raw is None:
            with open(scan.full(rel), "rb") as handle:
                raw = handle.read()
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = ""
        pending[rel] = _Pending(rel, "repo", oid, text, st.size, st.mtime_ns, raw)

    # 2. runtime documents from shared.db
    for doc in runtime.documents:
        data = doc.document.encode("utf-8")
        oid = blob_oid(data)
        old_row = base.rows.get(doc.path)
        if old_row is not None and old_row[1] == oid:
            keep[doc.path] = old_row[4]
            continue
        pending[doc.path] = _Pending(doc.path, doc.store, oid, doc.document, None, None, data)

    # 3. payloads: parse cache, then the parser (in worker processes when there are many)
    total = done = 0
    if pending:
        cache = ParseCache.open(layout.parse_cache)
        try:
            hits = {} if full else cache.get_many(item.oid for item in pending.values())
            todo: dict[str, tuple[str, str, bytes]] = {}
            for item in pending.values():
                if item.oid in hits:
                    item.payload = hits[item.oid]
                    report.cached += 1
                elif item.oid not in todo:
                    todo[item.oid] = (item.oid, item.path, item.raw)
            total = len(todo) + len(pending)
            fresh: dict[str, str] = {}

            def tick(results: list[tuple[str, str]]) -> None:
                nonlocal done
                fresh.update(results)
                done += len(results)
                if progress is not None:
                    progress(done, total)

            parse_many(list(todo.values()), tick)
            decoded = {oid: json.loads(text) for oid, text in fresh.items()}
            for item in pending.values():
                if item.payload is None:
                    item.payload = decoded[item.oid]
                    report.parsed += 1
            cache.put_many(fresh)
        finally:
            cache.close()

    # 4. placement: concept IDs, duplicate record IDs (first path wins, as validate reports them)
    concept: dict[str, str] = {}
    invalid_rows: list[tuple[Any, ...]] = [(p, *v) for p, v in keep_invalid.items()]
    valid_ids: dict[str, str] = {}
    candidates: list[tuple[str, str]] = []   # (path, record_id) of valid repo records
    for p, rid in keep.items():
        if not p.startswith("shared.db:"):
            candidates.append((p, rid))
    for p, bad in base.invalid.items():
        if bad[3] is not None and p in scan.files and p not in pending:
            # valid on its own but a duplicate last time: it competes again, from the cache
            st = scan.files[p]
            with open(scan.full(p), "rb") as handle:
                raw = handle.read()
            item = _Pending(p, "repo", blob_oid(raw), raw.decode("utf-8"), st.size, st.mtime_ns, raw)
            item.payload = parse_payload(raw, p)
            pending[p] = item
    for p, item in pending.items():
        if item.store != "repo":
            continue
        payload = item.payload or {}
        if "problems" in payload:
            found = problems_of(payload, p)
            problems.extend(found)
            invalid_rows.append((p, item.oid, item.size, item.mtime_ns, None, _problems_json(found)))
            continue
        rel = p[len(".memzoi/records/"):]
        try:
            concept[p] = concept_id.from_record_path(rel)
        except FormatError as exc:
            found = [Problem(p, 1, exc.code, exc.message)]
            problems.extend(found)
            invalid_rows.append((p, item.oid, item.size, item.mtime_ns, None, _problems_json(found)))
            continue
        candidates.append((p, payload["ok"]["id"]))
    losers: dict[str, tuple[str, str]] = {}
    for p, rid in sorted(candidates):
        if rid in valid_ids:
            losers[p] = (rid, valid_ids[rid])
        else:
            valid_ids[rid] = p
    for p, (rid, first) in losers.items():
        line = pending[p].payload["ok"]["id_line"] if p in pending else 1  # type: ignore[index]
        found = [Problem(p, line, "id-duplicate", f"record ID {rid!r} is also used by {first}")]
        problems.extend(found)
        oid = pending[p].oid if p in pending else base.rows[p][1]  # type: ignore[union-attr]
        st = scan.files[p]
        invalid_rows.append((p, oid, st.size, st.mtime_ns, rid, _problems_json(found)))
    for p, item in pending.items():
        if item.store != "repo" and "problems" in (item.payload or {}):
            problems.extend(problems_of(item.payload, p))  # type: ignore[arg-type]

    report.problems = sorted(problems, key=lambda q: (q.path, q.line, q.code))
    if strict and [q for q in report.problems if q.severity == "error"]:
        raise InvalidRecords([q for q in report.problems if q.severity == "error"])

    # 5. the diff against the base
    present = set(scan.files) | {d.path for d in runtime.documents}
    base_paths = set(base.rows)
    drop = {p for p in base_paths if p not in present or p in pending or p in losers}
    inserts = [item for p, item in pending.items()
               if "ok" in (item.payload or {}) and p not in losers and (item.store != "repo" or p in concept)]
    facts_by_id = _facts_by_id(runtime.facts)
    boundary_updates: list[tuple[Any, ...]] = []
    base_lease = float(base.meta.get("lease_hours", "nan"))
    facts_changed = base.facts != runtime.facts
    if facts_changed or base_lease != lease:
        old = {tuple(sorted(f.items())) for f in base.facts}
        new = {tuple(sorted(f.items())) for f in runtime.facts}
        touched = {dict(f)["record_id"] for f in old ^ new}
        boundary_updates = _recompute(base, keep, drop, touched, base_lease != lease, facts_by_id, lease)

    report.removed = len([p for p in drop if p not in pending])
    report.reused = len([p for p in keep if p not in drop])
    report.records = len([p for p in keep if p not in drop and not p.startswith("shared.db:")]) + \
        len([i for i in inserts if i.store == "repo"])
    report.runtime = len([p for p in keep if p not in drop and p.startswith("shared.db:")]) + \
        len([i for i in inserts if i.store != "repo"])

    old_invalid = sorted((p, *v) for p, v in base.invalid.items())
    changed = (not base.own or bool(drop) or bool(inserts) or bool(stat_updates)
               or bool(boundary_updates) or facts_changed or base_lease != lease
               or sorted(invalid_rows) != old_invalid)
    check = {"workdir": workdir, "dirs": scan.dirs, "shared": shared_sig,
             "files": len(scan.files), "verified_ns": now_ns}
    if not changed:
        previous = staleness.read_check(index_path) or {}
        if not any(st.mtime_ns >= scanned_before for st in scan.files.values()):
            check["verified_ns"] = previous.get("verified_ns", now_ns)
        staleness.write_check(index_path, check | {"build_id": base.meta.get("build_id")})
        report.duration = time.perf_counter() - started
        return report

    # 6. write a new index next to the old one and replace it
    import secrets
    import shutil

    folder = index_path.parent
    folder.mkdir(parents=True, exist_ok=True)
    index_db.remove_stale_temps(folder)
    tmp = folder / f"{TEMP_PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
    build_id = secrets.token_hex(8)
    try:
        shutil.copyfile(base.path, tmp)  # type: ignore[arg-type]
        conn = index_db.connect_build(tmp)
        try:
            conn.execute("BEGIN")
            if drop:
                conn.executemany("DELETE FROM records WHERE path = ?", [(p,) for p in sorted(drop)])
                conn.executemany("DELETE FROM files WHERE path = ?", [(p,) for p in sorted(drop)])
            rowid = base.max_rowid
            rows, applies, stats = [], [], []
            for item in sorted(inserts, key=lambda i: i.path):
                rowid += 1
                rows.append((rowid, *_build_row(item, concept.get(item.path), facts_by_id, lease)))
                if item.store == "repo":
                    stats.append((item.path, item.oid, item.size, item.mtime_ns,
                                  item.payload["ok"]["id"]))  # type: ignore[index]
                for entry in item.payload["ok"]["applies_to"]:  # type: ignore[index]
                    applies.append((rowid, entry[:-3] if entry.endswith("/**") else entry, entry))
            marks = ", ".join("?" * (len(RECORD_COLUMNS) + 1))
            insert = f"INSERT INTO records (rowid, {', '.join(RECORD_COLUMNS)}) VALUES ({marks})"
            for start in range(0, len(rows), _CHUNK):
                conn.executemany(insert, rows[start:start + _CHUNK])
                if progress is not None:
                    done = min(done + len(rows[start:start + _CHUNK]), total)
                    progress(done, total)
            conn.executemany("INSERT INTO applies (record, base, entry) VALUES (?, ?, ?)", applies)
            conn.executemany("INSERT INTO files (path, oid, size, mtime_ns, record_id) VALUES (?, ?, ?, ?, ?)",
                             stats)
            if stat_updates:
                conn.executemany("UPDATE files SET size = ?, mtime_ns = ? WHERE path = ?", stat_updates)
            if boundary_updates:
                conn.executemany("UPDATE records SET boundary = ?, boundary_at = ?, boundary_kind = ?, rule = ?, "
                                 "basis = ?, facts = ? WHERE rowid = ?", boundary_updates)
            conn.execute("DELETE FROM invalid")
            conn.executemany("INSERT INTO invalid (path, oid, size, mtime_ns, record_id, problems) "
                             "VALUES (?, ?, ?, ?, ?, ?)", invalid_rows)
            conn.execute("DELETE FROM facts")
            conn.executemany("INSERT INTO facts (seq, record_id, fact, until, reason, actor, created_at) "
                             "VALUES (:seq, :record_id, :fact, :until, :reason, :actor, :created_at)", runtime.facts)
            index_db.write_meta(conn, {
                "build_id": build_id, "parser": PARSER_VERSION, "lease_hours": repr(float(lease)),
                "scanned_ns": str(now_ns), "workdir": workdir,
                "repo_records": str(report.records), "runtime_records": str(report.runtime),
            })
            conn.execute("COMMIT")
        finally:
            conn.close()
        if progress is not None:
            progress(total, total)
        os.replace(tmp, index_path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    staleness.write_check(index_path, check | {"build_id": build_id})
    report.changed = True
    report.duration = time.perf_counter() - started
    return report


def _recompute(base: _Base, keep: dict[str, str], drop: set[str], touched: set[str], lease_changed: bool,
               facts: dict[str, list[dict[str, str]]], lease: float) -> list[tuple[Any, ...]]:
    """New boundary columns for kept rows whose facts changed (or, when the lease changed, sessions)."""
    conn = connect_installed(base.path) if base.own else _open_sibling(base.path)  # type: ignore[arg-type]
    if conn is None:
        raise StateError(f"{base.path}: index.db vanished during a rebuild")
    updates = []
    try:
        for rowid, path, rid, lane, status, retention in conn.execute(
                "SELECT rowid, path, record_id, lane, status, retention FROM records"):
            if path not in keep or path in drop:
                continue
            if rid in touched or (lease_changed and lane == "session"):
                b = lane_boundary(rid, lane, status, json.loads(retention), facts.get(rid, ()), lease)
                updates.append((*boundary_columns(b), rowid))
    finally:
        conn.close()
    return updates


def _problems_json(problems: list["Problem"]) -> str:
    return json.dumps([[p.line, p.code, p.message, p.severity] for p in problems])


