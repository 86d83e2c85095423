"""A build from nothing (first index, or `rebuild --full`): rows stream into the new index as they are made.

With no base index every file needs a row. Each file is read, hashed, looked up in the parse
cache, parsed when the cache does not have it, and turned into a finished row, by worker
processes when there are many files (each does exactly what this process would); this process
writes the rows, their FTS entries and the new cache entries batch by batch while later
batches are still being parsed. Only the secondary indexes, duplicate-ID resolution and the
final replace wait for the last batch.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import FormatError
from git_memzoi.index import index_db, staleness
from git_memzoi.index.index_db import RECORD_COLUMNS
from git_memzoi.layout import INDEX_TEMP_PREFIX, RECORDS, RUNTIME_PATH_PREFIX
from git_memzoi.profile.applies import applies_to_base

if TYPE_CHECKING:
    from git_memzoi.index.build import RebuildReport
    from git_memzoi.index.mirror import RuntimeSnapshot
    from git_memzoi.index.scan import Scan
    from git_memzoi.profile.document import Problem
    from git_memzoi.runtime.workspace import Workspace

_INSERT = f"INSERT INTO records (rowid, {', '.join(RECORD_COLUMNS)}) VALUES ({', '.join('?' * (len(RECORD_COLUMNS) + 1))})"
_FTS = "INSERT INTO records_fts (rowid, title, description, body, tags) VALUES (?, ?, ?, ?, ?)"
_FTS_DELETE = ("INSERT INTO records_fts (records_fts, rowid, title, description, body, tags) "
               "VALUES ('delete', ?, ?, ?, ?, ?)")
_COL = {name: i for i, name in enumerate(RECORD_COLUMNS)}
_CHUNK = 200

#: What workers need besides their chunk, set before they fork (so nothing is pickled for it).
_JOB: dict[str, Any] = {}

# One made row: (path, oid, size, mtime_ns, cache_text or None, row or None, problems or None,
# record_id, id_line, applies_to)
Made = tuple[str, str, Any, Any, Any, Any, Any, Any, int, list[str]]


def _make(chunk: list[tuple[str, str, str | None, Any, Any, bytes | None]]) -> list[Made]:
    """Read, hash, look up or parse, and build the row of each (path, store, full path, size, mtime, raw)."""
    from git_memzoi.index.build import _build_row, _Pending
    from git_memzoi.index.parse import blob_oid, parse_payload
    from git_memzoi.index.parse_cache import ParseCache
    from git_memzoi.profile import concept_id

    loaded: list[tuple[Any, ...]] = []
    for path, store, full, size, mtime, raw in chunk:
        if raw is None:
            try:
                with open(full, "rb") as handle:  # type: ignore[arg-type]
                    raw = handle.read()
            except OSError as exc:
                loaded.append((path, store, None, size, mtime, [[1, "unreadable", f"cannot read: {exc.strerror}",
                                                                  "error"]]))
                continue
        loaded.append((path, store, raw, size, mtime, None))
    oids = {path: blob_oid(raw) for path, _, raw, _, _, bad in loaded if bad is None}
    hits: dict[str, Any] = {}
    if not _JOB.get("full"):
        cache = ParseCache.open(_JOB["cache"], readonly=True)
        try:
            hits = cache.get_many(oids.values())
        finally:
            cache.close()
    out: list[Made] = []
    for path, store, raw, size, mtime, bad in loaded:
        if bad is not None:
            out.append((path, "", size, mtime, None, None, bad, None, 1, []))
            continue
        oid = oids[path]
        text = None
        payload = hits.get(oid)
        if payload is None:
            payload = parse_payload(raw, path)
            text = json.dumps(payload, separators=(",", ":"))
        if "problems" in payload:
            out.append((path, oid, size, mtime, text, None, payload["problems"], None, 1, []))
            continue
        concept = None
        if store == "repo":
            try:
                concept = concept_id.from_record_path(path[len(RECORDS) + 1:])
            except FormatError as exc:
                out.append((path, oid, size, mtime, text, None, [[1, exc.code, exc.message, "error"]], None, 1, []))
                continue
        fields = payload["ok"]
        item = _Pending(path, store, oid, raw.decode("utf-8"), size, mtime)
        item.payload = payload
        row = _build_row(item, concept, _JOB["facts"], _JOB["lease"])
        out.append((path, oid, size, mtime, text, row, None, fields["id"], fields["id_line"], fields["applies_to"]))
    return out


def _batches(items: list[tuple[Any, ...]]) -> Iterator[list[Made]]:
    """Made rows, batch by batch: in worker processes when there are many, here otherwise."""
    from git_memzoi.index.parse import PARALLEL_MIN, die_with_parent, workers

    chunks = [items[start:start + _CHUNK] for start in range(0, len(items), _CHUNK)]
    count = workers()
    if len(items) < PARALLEL_MIN or count < 2:
        for chunk in chunks:
            yield _make(chunk)
        return
    import multiprocessing

    try:
        context = multiprocessing.get_context("fork")
    except ValueError:  # no fork here: do the work in this process
        for chunk in chunks:
            yield _make(chunk)
        return
    with context.Pool(min(count, len(chunks)), die_with_parent, (os.getpid(),)) as pool:
        yield from pool.imap_unordered(_make, chunks)


def build_fresh(ws: "Workspace", *, scan: "Scan", runtime: "RuntimeSnapshot", problems: list["Problem"],
                check: dict[str, Any], now_ns: int, report: "RebuildReport", strict: bool, full: bool,
                lease: float, started: float, progress: Callable[[int, int], None] | None) -> "RebuildReport":
    """Write a complete new index for every record file and runtime document, and install it."""
    from git_memzoi.index.build import InvalidRecords, _facts_by_id
    from git_memzoi.index.parse_cache import PARSER_VERSION, ParseCache
    from git_memzoi.profile.document import Problem

    index_path = ws.layout.index_db
    folder = index_path.parent
    folder.mkdir(parents=True, exist_ok=True)
    index_db.remove_stale_temps(folder)
    tmp = folder / f"{INDEX_TEMP_PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
    items: list[tuple[Any, ...]] = [(rel, "repo", scan.full(rel), st.size, st.mtime_ns, None)
                                    for rel, st in sorted(scan.files.items())]
    items += [(doc.path, doc.store, None, None, None, doc.document.encode("utf-8")) for doc in runtime.documents]
    invalid_rows: list[tuple[Any, ...]] = []
    by_id: dict[str, list[tuple[str, int, int, tuple[Any, ...]]]] = {}
    made_rows: dict[str, tuple[str, Any, Any]] = {}
    next_rowid = 0
    done, total = 0, len(items)
    build_id = secrets.token_hex(8)
    _JOB.update(facts=_facts_by_id(runtime.facts), lease=lease, cache=ws.layout.parse_cache, full=full)
    ParseCache.open(ws.layout.parse_cache).close()  # created (or reset) once, before any worker reads it
    cache = ParseCache.open(ws.layout.parse_cache)
    conn = index_db.create(tmp)
    try:
        conn.execute("BEGIN")
        if progress is not None:
            progress(0, total)
        for batch in _batches(items):
            rows, fts, applies, stats, fresh = [], [], [], [], {}
            for path, oid, size, mtime, text, row, bad, rid, id_line, entries in batch:
                if text is not None:
                    fresh[oid] = text
                    report.parsed += 1
                elif oid:
                    report.cached += 1
                if bad is not None:
                    found = [Problem(path, *entry) for entry in bad]
                    problems.extend(found)
                    if not path.startswith(RUNTIME_PATH_PREFIX):
                        invalid_rows.append((path, oid, size, mtime, None, _json(found)))
                    continue
                next_rowid += 1
                rows.append((next_rowid, *row))
                words = (next_rowid, row[_COL["title"]], row[_COL["description"]],
                         row[_COL["document"]][row[_COL["body_start"]]:], row[_COL["tags"]])
                fts.append(words)
                applies += [(next_rowid, applies_to_base(e), e) for e in entries]
                if not path.startswith(RUNTIME_PATH_PREFIX):
                    by_id.setdefault(rid, []).append((path, next_rowid, id_line, words))
                    made_rows[path] = (oid, size, mtime)
                    stats.append((path, oid, size, mtime, rid))
            conn.executemany(_INSERT, rows)
            conn.executemany(_FTS, fts)
            conn.executemany("INSERT INTO applies (record, base, entry) VALUES (?, ?, ?)", applies)
            conn.executemany("INSERT INTO files (path, oid, size, mtime_ns, record_id) VALUES (?, ?, ?, ?, ?)",
                             stats)
            cache.put_many(fresh)
            done += len(batch)
            if progress is not None:
                progress(done, total)

        # duplicate record IDs: the first path keeps the ID, as `validate` reports it
        for rid, holders in by_id.items():
            if len(holders) < 2:
                continue
            holders.sort()
            first = holders[0][0]
            for path, rowid, id_line, words in holders[1:]:
                conn.execute("DELETE FROM records WHERE rowid = ?", (rowid,))
                conn.execute("DELETE FROM applies WHERE record = ?", (rowid,))
                conn.execute("DELETE FROM files WHERE path = ?", (path,))
                conn.execute(_FTS_DELETE, words)
                found = [Problem(path, id_line, "id-duplicate", f"record ID {rid!r} is also used by {first}")]
                problems.extend(found)
                oid, size, mtime = made_rows[path]
                invalid_rows.append((path, oid, size, mtime, rid, _json(found)))
        report.problems = sorted(problems, key=lambda q: (q.path, q.line, q.code))
        errors = [q for q in report.problems if q.severity == "error"]
        if strict and errors:
            raise InvalidRecords(errors)
        index_db.finish(conn)
        conn.executemany("INSERT INTO invalid (path, oid, size, mtime_ns, record_id, problems) "
                         "VALUES (?, ?, ?, ?, ?, ?)", invalid_rows)
        conn.executemany("INSERT INTO facts (seq, record_id, fact, until, reason, actor, created_at) "
                         "VALUES (:seq, :record_id, :fact, :until, :reason, :actor, :created_at)", runtime.facts)
        counts = conn.execute("SELECT sum(store = 'repo'), sum(store != 'repo') FROM records").fetchone()
        index_db.write_meta(conn, {"build_id": build_id, "parser": PARSER_VERSION, "lease_hours": repr(float(lease)),
                                   "scanned_ns": str(now_ns), "workdir": check["workdir"],
                                   "repo_records": str(counts[0] or 0), "runtime_records": str(counts[1] or 0)})
        conn.execute("COMMIT")
        conn.close()
        if progress is not None:
            progress(total, total)
        os.replace(tmp, index_path)
    except BaseException:
        conn.close()
        _unlink(tmp)
        raise
    finally:
        cache.close()
        _JOB.clear()
    staleness.write_check(index_path, check | {"build_id": build_id})
    report.records, report.runtime = int(counts[0] or 0), int(counts[1] or 0)
    report.changed = True
    report.duration = time.perf_counter() - started
    return report


def _json(problems: list["Problem"]) -> str:
    return json.dumps([[p.line, p.code, p.message, p.severity] for p in problems])


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
