"""An incremental build: diff the work tree and shared.db against a base index, write the difference.

The base is this worktree's own index.db or, for a worktree new to its index, a sibling's.
Unchanged files keep their rows (their stats are refreshed when only the stat moved); changed
files are parsed (or taken from the parse cache) and their rows replaced; retention boundaries
are recomputed where facts or the session lease changed. The result is written to a temp copy
of the base and installed with one `os.replace`; when nothing changed, nothing is written.
"""

from __future__ import annotations

import json
import os
import time
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import FormatError, StateError
from git_memzoi.index import index_db, staleness
from git_memzoi.index.build import (
    GIT_INDEX_MIN, RECORDS_PREFIX, InvalidRecords, Progress, RebuildReport, _Base, _build_row, _facts_by_id,
    _open_sibling, _Pending, _problems_json, boundary_columns, connect_installed,
)
from git_memzoi.index.index_db import RECORD_COLUMNS
from git_memzoi.index.retention_rules import boundary as lane_boundary
from git_memzoi.index.scan import Scan
from git_memzoi.layout import INDEX_TEMP_PREFIX, RUNTIME_PATH_PREFIX
from git_memzoi.profile.applies import applies_to_base

if TYPE_CHECKING:
    from git_memzoi.index.mirror import RuntimeSnapshot
    from git_memzoi.profile.document import Problem
    from git_memzoi.runtime.workspace import Workspace

_CHUNK = 1000


def update(ws: "Workspace", *, base: _Base, scan: Scan, runtime: "RuntimeSnapshot", problems: list["Problem"],
           report: RebuildReport, lease: float, now_ns: int, shared_sig: list[int] | None, stat_trusted: bool,
           scanned_before: int, strict: bool, full: bool, progress: Progress | None,
           started: float) -> RebuildReport:
    """Bring `base` in line with the work tree and shared.db and install the result (see the module docstring)."""
    from git_memzoi.index.parse import blob_oid, parse_many, parse_payload, problems_of
    from git_memzoi.index.parse_cache import PARSER_VERSION, ParseCache
    from git_memzoi.profile import concept_id
    from git_memzoi.profile.document import Problem

    workdir = scan.workdir
    layout = ws.layout
    index_path = layout.index_db
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
        if not p.startswith(RUNTIME_PATH_PREFIX):
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
        rel = p[len(RECORDS_PREFIX):]
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
        if p in pending:
            line = pending[p].payload["ok"]["id_line"]  # type: ignore[index]
        else:
            # an unchanged file lost its ID to a new one: locate the problem on its `id:` line,
            # as a full build and `validate` do (a rare case, so one file is read and parsed again)
            with open(scan.full(p), "rb") as handle:
                line = parse_payload(handle.read(), p).get("ok", {}).get("id_line", 1)
        found = [Problem(p, line, "id-duplicate", f"record ID {rid!r} is also used by {first}")]
        problems.extend(found)
        oid = pending[p].oid if p in pending else base.rows[p][1]
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
    report.records = len([p for p in keep if p not in drop and not p.startswith(RUNTIME_PATH_PREFIX)]) + \
        len([i for i in inserts if i.store == "repo"])
    report.runtime = len([p for p in keep if p not in drop and p.startswith(RUNTIME_PATH_PREFIX)]) + \
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
    tmp = folder / f"{INDEX_TEMP_PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
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
                    applies.append((rowid, applies_to_base(entry), entry))
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


