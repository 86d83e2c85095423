"""Is index.db still a true projection? The check the read path runs before every read.

Every read sweeps: one `lstat` per record file (`sweep.sweep`, no reads, no parsing) gives the
digest of every path and stat (size, mtime, ctime, inode, device), compared with the digest
the last check confirmed (the `index.db.check` file beside the index), together with the
parser, the work tree, the session lease and shared.db's stats. Equal, and no file modified
within RACY_NS of the moment the index's content was last confirmed (git's racy-clean rule),
the index is true: `current`. There is no window in which reads trust an older sweep, because
nothing cheaper sees a file edited in place (its folder does not change); but git's own index
can do the same comparison faster, in C, when it vouches for every record file
(`index.git_clean`: a sweep that confirmed the index asks git once, and later reads ask git).

When the digests differ, `verify` compares each file's stat with the row the index holds for
it (still without reading a file), and when that cannot vouch for the index either, the
rebuild path takes over: files whose stat moved, or that are racy, are hashed, and only those
whose blob OID changed are parsed again.

`unchanged` is `rebuild`'s "nothing to do" with the standard library only (cli/entry.py
answers a no-op `git memzoi rebuild` with it before click loads), `current` without an open
index; once it has read an index file, the check file keeps that file's meta and stored
problems (by the file's stat), and the next answer needs no SQLite at all. This module is
therefore light to import: nothing but the standard library (not even sqlite3) and
`index.sweep` at the top.
"""

from __future__ import annotations

import json
import os
import time

from git_memzoi import __version__
from git_memzoi.index import git_clean
from git_memzoi.index.sweep import (
    RACY_NS,
    file_stat_signature,
    load_cache,
    store_cache,
    sweep,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from git_memzoi.index.scan import Scan
    from git_memzoi.runtime.workspace import Workspace

    #: How many files the index holds as invalid, and their (path, problem) pairs.
    Stored = tuple[int, list[tuple[str, list[Any]]]]
    #: Where an index is read: shared.db, the work tree, the session lease, the git directory (None: sweep always).
    Place = tuple[Path, str, float, str | None]

CHECK_SUFFIX = ".check"


#: The parser's version tag: the parse cache keys its entries by it and every index records it (here, not
#: in index.parse_cache, so that the no-op read path loads no SQLite). Bump when what a parse produces
#: changes shape; the package version is part of it too.
PARSER_VERSION = f"{__version__}+p2"


def parser_version() -> str:
    """The parse cache's version tag, which every index records."""
    return PARSER_VERSION


def check_path(index_path: str | os.PathLike[str]) -> str:
    """`index.db.check`, beside the index."""
    return os.fspath(index_path) + CHECK_SUFFIX


def read_check(index_path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """What the last full check vouched for, or None."""
    data = load_cache(check_path(index_path))
    return data if isinstance(data, dict) else None


def write_check(
    index_path: str | os.PathLike[str], data: dict[str, Any], previous: dict[str, Any] | None = None
) -> None:
    """Record what the last full check vouched for (a cache: failing to write it is harmless)."""
    if (previous if previous is not None else read_check(index_path)) != data:
        store_cache(check_path(index_path), data)


def confirmed_ns(meta: dict[str, str], check: dict[str, Any] | None) -> int:
    """The last moment every row's content was confirmed (the build, or a later sweep that hashed racy files)."""
    confirmed = int(meta.get("scanned_ns", "0"))
    if check and check.get("build_id") == meta.get("build_id"):
        confirmed = max(confirmed, int(check.get("verified_ns", 0)))
    return confirmed


class Verified:
    """A sweep found the index true: its counts and the stored problems of invalid files."""

    __slots__ = ("problems", "records", "runtime")

    def __init__(self, records: int, runtime: int, problems: list[tuple[str, list[Any]]] | None = None) -> None:
        self.records = records
        self.runtime = runtime
        self.problems = problems if problems is not None else []  # (path, [line, code, message, severity])


def _agrees(
    meta: dict[str, str], check: dict[str, Any] | None, workdir: str, lease: float, shared_now: list[int] | None
) -> bool:
    """The index, its check file, the parser, the work tree, the lease and shared.db's stats all agree."""
    return (
        meta.get("parser") == parser_version()
        and meta.get("workdir") == workdir
        and float(meta.get("lease_hours", "nan")) == lease
        and check is not None
        and check.get("build_id") == meta.get("build_id")
        and check.get("shared") is not None
        and shared_now is not None
        and check.get("shared") == shared_now
    )


def _stored_problems(conn: sqlite3.Connection) -> tuple[int, list[tuple[str, list[Any]]]] | None:
    """How many files the index holds as invalid, and their problems; None when it cannot be read."""
    import sqlite3  # loaded by whoever opened `conn`

    try:
        bad = conn.execute("SELECT path, problems FROM invalid").fetchall()
    except sqlite3.DatabaseError:
        return None
    return len(bad), [(path, entry) for path, text in bad for entry in json.loads(text)]


def verify(
    ws: Workspace, conn: sqlite3.Connection, meta: dict[str, str], scan: Scan, shared_now: list[int] | None
) -> Verified | None:
    """Compare every record file's stat with the index (no reads, no parsing); None when anything differs."""
    import sqlite3  # loaded by whoever opened `conn`

    index_path = ws.layout.index_db
    workdir = str(ws.repo.require_workdir())
    check = read_check(index_path)
    if (
        scan.symlinks
        or scan.undecodable
        or not _agrees(meta, check, workdir, ws.config.retention.session_lease_hours, shared_now)
    ):
        return None
    assert check is not None
    stored_shared = check.get("shared")
    trusted_before = confirmed_ns(meta, check) - RACY_NS
    files = scan.files
    digest = scan.digest()
    if digest == check.get("digest") and scan.newest_ns < trusted_before:
        # every stat is what a previous sweep confirmed against the index: no need to read it again
        stored = _stored_problems(conn)
        if stored is None:
            return None
        write_check(index_path, check | {"dirs": scan.dirs}, check)
        invalid, problems = stored
        return Verified(len(files) - invalid, int(meta.get("runtime_records", "0")), problems)
    try:
        rows = conn.execute("SELECT path, size, mtime_ns, ctime_ns, ino, dev FROM files").fetchall()
        bad = conn.execute("SELECT path, size, mtime_ns, ctime_ns, ino, dev, problems FROM invalid").fetchall()
        runtime = int(meta.get("runtime_records", "0"))
    except sqlite3.DatabaseError:
        return None
    if len(rows) + len(bad) != len(files):
        return None
    for path, *stat in rows:
        st = files.get(path)
        if st is None or st != tuple(stat) or st.mtime_ns >= trusted_before:
            return None
    for path, *stat, _ in bad:
        st = files.get(path)
        if st is None or st != tuple(stat) or st.mtime_ns >= trusted_before:
            return None
    problems = [(path, entry) for path, *_, text in bad for entry in json.loads(text)]
    write_check(
        index_path,
        {
            "workdir": workdir,
            "dirs": scan.dirs,
            "shared": stored_shared,
            "files": len(files),
            "verified_ns": check.get("verified_ns", 0),
            "build_id": meta.get("build_id"),
            "digest": digest,
        },
        check,
    )
    return Verified(len(rows), int(runtime), problems)


def current(
    index_path: Path,
    conn: sqlite3.Connection,
    meta: dict[str, str],
    shared_db: Path,
    workdir: str,
    lease: float,
    git_dir: str | None = None,
) -> Verified | None:
    """The index open on `conn` (its meta `meta`) is true, by one sweep of every record file; None: ask `rebuild`.

    It says so only where `verify` would without reading the files table: the index and its
    check file agree with the parser, the work tree and `lease`; shared.db has the stats it had
    when the index last read it (the file that passed its integrity check then, so `rebuild`
    would not refuse it now); and a sweep of every record file gives the digest the last sweep
    confirmed, with no file modified recently enough to be racy. New folder signatures are
    recorded for the next reader.
    """
    return _current(
        index_path, read_check(index_path), meta, lambda: _stored_problems(conn), (shared_db, workdir, lease, git_dir)
    )


def _current(
    index_path: Path,
    check: dict[str, Any] | None,
    meta: dict[str, str],
    stored_problems: Callable[[], Stored | None],
    place: Place,
) -> Verified | None:
    """`current`, with the index's meta and stored problems given (`place`: shared.db, work tree, lease, git dir)."""
    shared_db, workdir, lease, git_dir = place
    now_ns = time.time_ns()
    if check is None or "digest" not in check:
        return None
    if not _agrees(meta, check, workdir, lease, file_stat_signature(str(shared_db), now_ns)):
        return None
    if git_dir is not None and git_clean.clean(check, git_dir, workdir, now_ns):
        files = int(check.get("files", -1))  # the record files the baseline's sweep saw are all still there
        kept: dict[str, Any] = {}
    else:
        before = git_clean.index_stat(git_dir, now_ns) if git_dir is not None else None
        walk = sweep(workdir, now_ns)
        if walk is None or walk.digest != check["digest"] or walk.newest_ns >= confirmed_ns(meta, check) - RACY_NS:
            return None
        files, kept = walk.files, {"dirs": walk.dirs}
        if git_dir is not None:
            kept["git"] = git_clean.baseline(check.get("git"), git_dir, workdir, before, (walk.files, walk.digest))
    stored = stored_problems()
    if stored is None or files < 0:
        return None
    write_check(index_path, check | kept, check)
    invalid, problems = stored
    return Verified(files - invalid, int(meta.get("runtime_records", "0")), problems)


def index_identity(index_path: Path) -> list[int] | None:
    """The installed index file's stat (a build installs a new file); None when missing or too recent to trust."""
    try:
        st = os.stat(index_path)
    except OSError:
        return None
    if st.st_mtime_ns >= time.time_ns() - RACY_NS:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def unchanged(
    index_path: Path, shared_db: Path, workdir: str, lease: float, git_dir: str | None = None
) -> Verified | None:
    """`rebuild`'s answer when nothing changed, from the standard library alone; None: ask `rebuild`.

    `current`, with the index's meta and stored problems as the check file keeps them for the
    installed file (`index_identity`: an index replaced or written since has another stat), so
    that SQLite is not even loaded; or else read from the index (as `index_db.connect_read` and
    `read_meta` do, without loading that module), and then kept in the check file for the next
    time (BENCHMARKS.md, no-op `git memzoi rebuild`).
    """
    check = read_check(index_path)
    if check is None or "digest" not in check:
        return None
    identity = index_identity(index_path)
    kept = check.get("index")
    place = (shared_db, workdir, lease, git_dir)
    if identity is not None and isinstance(kept, dict) and kept.get("identity") == identity:
        stored: Stored = (int(kept["invalid"]), [(str(path), list(entry)) for path, entry in kept["problems"]])
        return _current(index_path, check, dict(kept["meta"]), lambda: stored, place)
    return _unchanged_from_index(index_path, identity, place)


def _unchanged_from_index(index_path: Path, identity: list[int] | None, place: Place) -> Verified | None:
    """`unchanged`, reading the index's meta and stored problems from the index itself."""
    import sqlite3

    try:
        conn = sqlite3.connect(f"{index_path.as_uri()}?mode=ro&immutable=1", uri=True, isolation_level=None)
    except sqlite3.DatabaseError:
        return None
    try:  # closed by hand: a no-op `rebuild` answered before click runs this, and loads no contextlib
        meta = _light_meta(conn)
        stored = _stored_problems(conn) if meta is not None else None
    finally:
        conn.close()
    if meta is None or stored is None:
        return None
    verified = _current(index_path, read_check(index_path), meta, lambda: stored, place)
    check = read_check(index_path)
    if verified is not None and check is not None and identity is not None and identity == index_identity(index_path):
        invalid, problems = stored
        kept = {"identity": identity, "meta": meta, "invalid": invalid, "problems": problems}
        write_check(index_path, check | {"index": kept}, check)
    return verified


def _light_meta(conn: sqlite3.Connection) -> dict[str, str] | None:
    """The meta table of an index of this schema, or None (`index_db.read_meta` says why)."""
    import sqlite3

    from git_memzoi.layout import INDEX_SCHEMA_VERSION

    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] != INDEX_SCHEMA_VERSION:
            return None
        return dict(conn.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.DatabaseError:
        return None
