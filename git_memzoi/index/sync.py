"""The build behind `rebuild` and `open_index`: scan, a change set, one writer.

1. A stat sweep proves the installed index true: nothing is read, parsed or written (`noop`;
   see `index.staleness`).
2. Otherwise `index.changeset` compares the work tree and shared.db with a base index: this
   worktree's own, or else a sibling worktree's (a fresh linked worktree of the same commit
   reuses nearly every row), or nothing (a first build, or `--full`: every file is added). Only
   files whose stat moved are read, and only those whose blob OID changed are made again, from
   the content-addressed parse cache when any worktree already parsed the same bytes.
3. `index.write` applies that change set to a copy of the base (or a new index) and installs
   it with one `os.replace`; when nothing changed, nothing is written.

After a write of known files (`apply`), `refresh_paths` runs the same pipeline on just those
paths, instead of sweeping every record file.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from contextlib import closing
from typing import TYPE_CHECKING, Any

from git_memzoi.index import index_db, staleness
from git_memzoi.index.index_db import connect_installed
from git_memzoi.index.outcome import InvalidRecords, OutOfScope, RebuildReport
from git_memzoi.index.scan import RACY_NS, Scan, file_stat_signature, scan_paths, scan_records
from git_memzoi.layout import MEMZOI_DIR, RECORDS, SUFFIX

if TYPE_CHECKING:
    from git_memzoi.index.changeset import Base
    from git_memzoi.index.write import Settings
    from git_memzoi.profile.document import Problem
    from git_memzoi.runtime.workspace import Workspace

Progress = Callable[[int, int], None]
#: From this many record files, a worktree new to its index reads blob OIDs from git's index.
GIT_INDEX_MIN = 200


def _verified(
    ws: Workspace, scan: Scan | None, shared_sig: list[int] | None, report: RebuildReport, started: float
) -> RebuildReport | None:
    """The no-op fast path: a stat sweep proves the installed index true; no reads, no parsing.

    Without `scan`, the sweep is `staleness.current`'s (the digest alone); with it, `verify`
    also compares each file's stat with its row."""
    path = ws.layout.index_db
    conn = connect_installed(path)
    if conn is None:
        return None
    with closing(conn):
        meta = index_db.read_meta(conn)
        if scan is None:
            workdir = str(ws.repo.require_workdir())
            lease = ws.config.retention.session_lease_hours
            found = staleness.current(path, conn, meta, ws.layout.shared_db, workdir, lease, str(ws.repo.git_dir))
        else:
            current = file_stat_signature(str(ws.layout.shared_db)) if shared_sig is not None else None
            found = staleness.verify(ws, conn, meta, scan, current)
    if found is None:
        return None
    report.records, report.runtime, report.reused = found.records, found.runtime, found.records + found.runtime
    if found.problems:
        # late: pydantic, only when there are problems (BENCHMARKS.md, "Command start-up": no-op `rebuild`)
        from git_memzoi.profile.document import Problem

        report.problems = sorted(
            (Problem(p, *entry) for p, entry in found.problems), key=lambda q: (q.path, q.line, q.code)
        )
    report.duration = time.perf_counter() - started
    return report


def _noop(
    ws: Workspace, scan: Scan | None, shared_sig: list[int] | None, report: RebuildReport, started: float, strict: bool
) -> RebuildReport | None:
    verified = _verified(ws, scan, shared_sig, report, started)
    if verified is not None:
        errors = [q for q in verified.problems if q.severity == "error"]
        if strict and errors:
            raise InvalidRecords(errors)
    return verified


def noop(ws: Workspace, *, strict: bool, digest: bool = True) -> RebuildReport | None:
    """The report of a rebuild with nothing to do, or None when there is something to do.

    Only reads (a stat sweep against the installed index), so it needs no writer lock: the
    index it vouches for stays true whether or not a writer replaces it meanwhile. The sweep's
    digest is tried first (unless `digest` is False: the caller just did); when it differs, each
    file's stat is compared with its row.
    """
    started = time.perf_counter()
    report = RebuildReport(index_path=str(ws.layout.index_db), full=False)
    if digest:
        found = _noop(ws, None, None, report, started, strict)
        if found is not None:
            return found
    workdir = str(ws.repo.require_workdir())
    now_ns = time.time_ns()
    shared_sig = file_stat_signature(str(ws.layout.shared_db), now_ns)
    return _noop(ws, scan_records(workdir, now_ns), shared_sig, report, started, strict)


def sync(ws: Workspace, *, full: bool, strict: bool, progress: Progress | None) -> RebuildReport:
    """Bring the installed index in line with the work tree and shared.db (see the module docstring)."""
    started = time.perf_counter()
    workdir = str(ws.repo.require_workdir())
    layout = ws.layout
    index_path = layout.index_db
    report = RebuildReport(index_path=str(index_path), full=full)
    now_ns = time.time_ns()
    shared_sig = file_stat_signature(str(layout.shared_db), now_ns)
    scan: Scan = scan_records(workdir, now_ns)
    if not full:
        verified = _noop(ws, scan, shared_sig, report, started, strict)
        if verified is not None:
            return verified
    # imported here, not at the top: the no-op path above never loads the parser, pydantic or the
    # profile models (BENCHMARKS.md, "Command start-up": no-op `rebuild`)
    from git_memzoi.index.changeset import diff, load_base, sibling_indexes
    from git_memzoi.index.mirror import read_runtime
    from git_memzoi.index.write import write

    runtime = read_runtime(layout.shared_db)
    base: Base | None = None
    if not full:
        base = load_base(index_path, own=True)
        if base is None:
            for sibling in sibling_indexes(layout.worktrees, index_path):
                base = load_base(sibling, own=False)
                if base is not None:
                    report.seeded_from = str(sibling)
                    break
    trusted_before = 0
    tracked = None
    if base is not None and base.own:
        # rows are trusted by stat when older than the last moment their content was confirmed
        trusted_before = staleness.confirmed_ns(base.meta, staleness.read_check(index_path)) - RACY_NS
    elif base is not None and len(scan.files) >= GIT_INDEX_MIN:
        # a worktree new to this index: git's own stat cache names the blob of every unchanged file
        from git_memzoi.index.git_index import tracked_stats  # late: see above

        tracked = tracked_stats(ws.repo.git_dir, RECORDS + "/")
    changes = diff(base, scan, runtime, trusted_before=trusted_before, tracked=tracked)
    report.git_index = sum(1 for vouch in changes.unchanged.values() if vouch == "git-index")
    settings = _settings(ws, full=full, strict=strict, scanned_ns=now_ns, progress=progress)
    build_id = write(changes, runtime, report, _scan_problems(scan), settings)
    check: dict[str, Any] = {
        "workdir": workdir,
        "dirs": scan.dirs,
        "shared": shared_sig,
        "files": len(scan.files),
        "verified_ns": now_ns,
    }
    if not scan.symlinks and not scan.undecodable:
        # what the next sweep compares: the stats this build confirmed, so the first no-op after a
        # build is answered by the sweep alone (a file changed since the scan has another stat)
        check["digest"] = scan.digest()
    if build_id is None and base is not None:
        build_id = base.meta.get("build_id")
        if not any(st.mtime_ns >= trusted_before for st in scan.files.values()):
            # nothing was read to confirm it: the rows are as confirmed as they were
            check["verified_ns"] = (staleness.read_check(index_path) or {}).get("verified_ns", now_ns)
    staleness.write_check(index_path, check | {"build_id": build_id})
    report.duration = time.perf_counter() - started
    return report


def refresh_paths(ws: Workspace, paths: Iterable[str]) -> RebuildReport | None:
    """Bring the installed index in line after a write of `paths` (repository-relative), looking at no other file.

    The rows of those paths (and shared.db's runtime documents, which are few) are brought in
    line by the same change set and writer as `sync`; the check beside the index keeps vouching
    for what it vouched for before, and for nothing more: the folders written to are left for the
    next reader to sweep, and the stat digest of the last sweep is dropped. None, with nothing
    changed, when that is not enough: no installed index, a check that does not vouch for it, a
    path that is not a regular file, or a record ID shared with a file outside `paths`.
    """
    # late, as in `sync`: this module is on the read path (BENCHMARKS.md, "Command start-up": no-op `rebuild`)
    from git_memzoi.index.changeset import diff, load_base
    from git_memzoi.index.mirror import read_runtime
    from git_memzoi.index.write import write

    started = time.perf_counter()
    workdir = str(ws.repo.require_workdir())
    layout = ws.layout
    index_path = layout.index_db
    scope = frozenset(p for p in paths if p.startswith(RECORDS + "/") and p.endswith(SUFFIX))
    now_ns = time.time_ns()
    shared_sig = file_stat_signature(str(layout.shared_db), now_ns)
    check = staleness.read_check(index_path)
    base = load_base(index_path, own=True, paths=sorted(scope))
    if (
        base is None
        or check is None
        or check.get("build_id") != base.meta.get("build_id")
        or check.get("workdir") != workdir
        or base.meta.get("workdir") != workdir
    ):
        return None
    scan = scan_paths(workdir, scope)
    if scan is None:
        return None
    runtime = read_runtime(layout.shared_db)
    report = RebuildReport(index_path=str(index_path))
    changes = diff(base, scan, runtime, trusted_before=staleness.confirmed_ns(base.meta, check) - RACY_NS, scope=scope)
    try:
        settings = _settings(ws, full=False, strict=False, scanned_ns=int(base.meta.get("scanned_ns", "0")))
        build_id = write(changes, runtime, report, [], settings)
    except OutOfScope:
        return None
    known = base.rows.keys() | base.invalid.keys()
    files = int(check.get("files", 0)) + len(scan.files.keys() - known) - len(scope & known - scan.files.keys())
    dirs: dict[str, Any] = dict(check.get("dirs") or {})
    for path in scope:
        folder = os.path.dirname(path)
        while folder not in dirs and folder != MEMZOI_DIR:  # a folder the write created
            dirs[folder] = None
            folder = os.path.dirname(folder)
        dirs[folder] = None  # written to just now: the next reader sweeps
    fresh_check = {k: v for k, v in check.items() if k not in ("digest", "index")}
    staleness.write_check(
        index_path,
        fresh_check
        | {"build_id": build_id or base.meta.get("build_id"), "dirs": dirs, "shared": shared_sig, "files": files},
    )
    report.duration = time.perf_counter() - started
    return report


def _settings(
    ws: Workspace, *, full: bool, strict: bool, scanned_ns: int, progress: Progress | None = None
) -> Settings:
    from git_memzoi.index.write import Settings  # late: see `sync`

    return Settings(
        index_path=ws.layout.index_db,
        parse_cache=ws.layout.parse_cache,
        lease=ws.config.retention.session_lease_hours,
        use_cache=not full,
        strict=strict,
        scanned_ns=scanned_ns,
        progress=progress,
    )


def _scan_problems(scan: Scan) -> list[Problem]:
    """Files the scan found that cannot be records: symlinks, names that are not UTF-8."""
    from git_memzoi.profile.document import Problem  # late: pydantic (see `sync`)

    problems = [Problem(rel, 1, "symlink", "memory files must be regular files, not symlinks") for rel in scan.symlinks]
    return problems + [
        Problem(rel, 1, "path-encoding", "file and folder names must be UTF-8; this one is not indexed")
        for rel in scan.undecodable
    ]
