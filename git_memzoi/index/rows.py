"""Index rows from record bytes: read, hash, take the payload from the parse cache or parse, build the row.

Every row an index build writes is made here, for a cold build and for one changed file alike.
Many files are made by forked worker processes (one per CPU: a cold build is mostly parsing),
each doing exactly what this process would; the caller consumes finished batches meanwhile.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from git_memzoi.errors import FormatError
from git_memzoi.index import fts
from git_memzoi.index.index_db import RecordRow, instant
from git_memzoi.index.parse import blob_oid, parse_payload
from git_memzoi.index.parse_cache import ParseCache
from git_memzoi.index.scan import FileStat
from git_memzoi.layout import MAX_FILE_BYTES, RECORDS
from git_memzoi.profile import concept_id
from git_memzoi.profile.retention import Boundary
from git_memzoi.profile.retention import boundary as lane_boundary
from git_memzoi.profile.timefmt import format_rfc3339

if TYPE_CHECKING:
    from multiprocessing.pool import AsyncResult

#: Below this many rows, making them in worker processes costs more than it saves.
PARALLEL_MIN = 800
#: Rows per batch handed to a worker (and written by the caller in one go).
CHUNK = 100
#: Batches in flight per worker: made rows wait in the caller's memory only this far ahead of the writer.
AHEAD = 2
#: The pool's threads in the caller (task, result and worker handlers) need little stack.
_POOL_STACK = 512 * 1024

#: Where a row's payload comes from: the parse cache, or a parse now.
Origin = Literal["cache", "parse"]
#: A problem as a payload stores it: [line, code, message, severity].
RawProblem = list[Any]


class Todo(NamedTuple):
    """A record file or runtime document whose row must be made."""

    path: str  # repository path, or shared.db:<store>/<id>
    store: str  # repo | local | session
    full: str | None  # the file to read; None when `raw` holds the bytes
    stat: FileStat | None  # None for a runtime document
    raw: bytes | None


class Made(NamedTuple):
    """A made row, or why there is none (`problems`)."""

    path: str
    store: str
    oid: str  # "" when the file could not be read
    stat: FileStat | None
    origin: Origin | None  # None when the file could not be read
    parsed: str | None  # the payload as JSON text when parsed now (for the parse cache)
    row: RecordRow | None  # its rowid is given by the writer
    problems: list[RawProblem] | None
    record_id: str | None
    id_line: int  # the line of the record's `id:` key
    applies_to: list[str]


@dataclass(frozen=True)
class Job:
    """What making a row needs besides its bytes: retention facts by record ID, the lease, the cache."""

    facts: dict[str, list[dict[str, str]]]
    lease: float
    cache: Path
    use_cache: bool = True


def facts_by_id(facts: Iterable[dict[str, str]]) -> dict[str, list[dict[str, str]]]:
    """Retention facts grouped by the record they are about."""
    out: dict[str, list[dict[str, str]]] = {}
    for fact in facts:
        out.setdefault(fact["record_id"], []).append(fact)
    return out


def make(chunk: list[Todo], job: Job) -> list[Made]:
    """Read, hash, look up or parse, and build the row of each item."""
    loaded: list[tuple[Todo, bytes]] = []
    out: list[Made] = []
    for item in chunk:
        raw = item.raw
        if raw is None and item.stat is not None and item.stat.size > MAX_FILE_BYTES:
            # refused by the size the sweep took: a crafted gigabyte is never read on the read path
            message = f"file is {item.stat.size} bytes; the limit is {MAX_FILE_BYTES}"
            out.append(_unmade(item, "file-too-large", message))
            continue
        if raw is None:
            try:
                with open(item.full, "rb") as handle:  # type: ignore[arg-type]
                    raw = handle.read(MAX_FILE_BYTES + 1)  # one byte over is enough to refuse it
            except OSError as exc:
                out.append(_unmade(item, "unreadable", f"cannot read: {exc.strerror}"))
                continue
        loaded.append((item, raw))
    oids = [blob_oid(raw) for _, raw in loaded]
    hits: dict[str, Any] = {}
    if job.use_cache and loaded:
        with closing(ParseCache.open(job.cache, readonly=True)) as cache:
            hits = cache.get_many(oids)
    for (item, raw), oid in zip(loaded, oids, strict=True):
        out.append(_made(item, raw, oid, hits.get(oid), job))
    return out


def _unmade(item: Todo, code: str, message: str) -> Made:
    """The row-less result for a file that is not read: its problem at line 1."""
    problems = [[1, code, message, "error"]]
    return _rowless(item, "", None, None, problems)


def _rowless(item: Todo, oid: str, origin: Origin | None, parsed: str | None, problems: list[RawProblem]) -> Made:
    """The result for a file that has problems instead of a row."""
    return Made(
        path=item.path,
        store=item.store,
        oid=oid,
        stat=item.stat,
        origin=origin,
        parsed=parsed,
        row=None,
        problems=problems,
        record_id=None,
        id_line=1,
        applies_to=[],
    )


def _made(item: Todo, raw: bytes, oid: str, payload: dict[str, Any] | None, job: Job) -> Made:
    parsed = None
    origin: Origin = "cache"
    if payload is None:
        payload = parse_payload(raw, item.path)
        parsed = json.dumps(payload, separators=(",", ":"))
        origin = "parse"
    problems: list[RawProblem] | None = payload.get("problems")
    concept = None
    if problems is None and item.store == "repo":
        try:
            concept = concept_id.from_record_path(item.path[len(RECORDS) + 1 :])
        except FormatError as exc:
            problems = [[1, exc.code, exc.message, "error"]]
    if problems is not None:
        return _rowless(item, oid, origin, parsed, problems)
    fields = payload["ok"]
    row = build_row(item.path, item.store, oid, raw.decode("utf-8"), concept, fields, job)
    return Made(
        path=item.path,
        store=item.store,
        oid=oid,
        stat=item.stat,
        origin=origin,
        parsed=parsed,
        row=row,
        problems=None,
        record_id=fields["id"],
        id_line=fields["id_line"],
        applies_to=fields["applies_to"],
    )


def build_row(
    path: str, store: str, oid: str, document: str, concept: str | None, f: dict[str, Any], job: Job
) -> RecordRow:
    """The records row of a valid record's payload fields (rowid 0: the writer numbers it)."""
    b = lane_boundary(f["id"], f["lane"], f["status"], f["retention"], job.facts.get(f["id"], ()), job.lease)
    return RecordRow(
        rowid=0,
        path=path,
        store=store,  # type: ignore[arg-type]  # repo | local | session, as the Todo says
        record_id=f["id"],
        concept_id=concept,
        type=f["type"],
        lane=f["lane"],
        status=f["status"],
        visibility=f["visibility"],
        scope=f["scope"],
        confidence=f["confidence"],
        oid=oid,
        timestamp=f["timestamp"],
        source=f["source"],
        source_ref=f["source_ref"],
        proposal_id=f["proposal_id"],
        supersedes=f["supersedes"],
        **boundary_columns(b),
        retention=_dumps(f["retention"]),
        tags_json=_dumps(f["tags"]),
        applies_json=_dumps(f["applies_to"]),
        title=f["title"],
        description=f["description"],
        # the tags, then the words of the CamelCase identifiers the record cites (the tokenizer keeps those whole)
        tags=" ".join(
            [*f["tags"], fts.identifier_words(f["title"], f["description"], document[f["body_start"] :])]
        ).strip(),
        body_start=f["body_start"],
        document=document,
    )


def boundary_columns(b: Boundary) -> dict[str, Any]:
    """The records columns a retention boundary fills, by name."""
    if b.at is None and not b.facts:
        return {
            "boundary": None,
            "boundary_at": None,
            "boundary_kind": b.kind,
            "rule": b.rule,
            "basis": b.basis,
            "facts": "[]",
        }
    return {
        "boundary": instant(b.at) if b.at is not None else None,
        "boundary_at": format_rfc3339(b.at) if b.at is not None else None,
        "boundary_kind": b.kind,
        "rule": b.rule,
        "basis": b.basis,
        "facts": _dumps(list(b.facts)),
    }


def _dumps(value: Any) -> str:
    """JSON text, without the encoder for the empty lists and mappings most rows carry."""
    if not value:
        return "[]" if isinstance(value, list) else "{}"
    return json.dumps(value)


def batches(todo: list[Todo], job: Job) -> Iterator[list[Made]]:
    """Made rows, batch by batch (in no particular order): in worker processes when there are many."""
    chunks = [todo[start : start + CHUNK] for start in range(0, len(todo), CHUNK)]
    count = workers()
    context = None
    if len(todo) >= PARALLEL_MIN and count > 1:
        try:
            context = multiprocessing.get_context("fork")
        except ValueError:  # no fork on this platform: make them here
            context = None
    if context is None:
        for chunk in chunks:
            yield make(chunk, job)
        return
    few_arenas()
    size = min(count, len(chunks))
    previous = threading.stack_size(_POOL_STACK)
    try:
        pool = context.Pool(size, _start_worker, (os.getpid(), job))
    finally:
        threading.stack_size(previous)
    with pool:
        # a bounded window, not imap: rows made faster than they are written would otherwise pile up
        pending: deque[AsyncResult[list[Made]]] = deque()
        rest = iter(chunks)
        for chunk in islice(rest, size * AHEAD):
            pending.append(pool.apply_async(_make_in_worker, (chunk,)))
        while pending:
            made = pending.popleft().get()
            for chunk in islice(rest, 1):
                pending.append(pool.apply_async(_make_in_worker, (chunk,)))
            yield made


def few_arenas() -> None:
    """Let glibc's malloc use at most two arenas in this process and the workers it forks.

    Each thread that allocates otherwise gets an arena of its own, and each arena reserves 64 MB
    of address space: with the pool's threads, a build under `ulimit -v` ran out of address space
    long before it ran out of memory. Elsewhere (no glibc), nothing happens.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes  # only where glibc may be

        ctypes.CDLL(None).mallopt(_M_ARENA_MAX, 2)
    except (OSError, AttributeError):
        pass


_M_ARENA_MAX = -8  # glibc's malloc.h


#: The job of this worker process (set by the pool's initializer; None in the calling process).
_worker_job: Job | None = None


def _start_worker(parent: int, job: Job) -> None:
    global _worker_job
    die_with_parent(parent)
    _worker_job = job


def _make_in_worker(chunk: list[Todo]) -> list[Made]:
    assert _worker_job is not None
    return make(chunk, _worker_job)


def workers() -> int:
    """How many worker processes a large build may use (the CPUs this process may run on)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def die_with_parent(parent: int) -> None:
    """A worker never outlives the process that forked it.

    A killed rebuild (SIGKILL cannot be caught) would otherwise leave its workers blocked on the
    task pipe forever, holding the caller's stdout and stderr open. On Linux the kernel kills a
    worker when its parent dies (PR_SET_PDEATHSIG); everywhere, a watchdog thread exits the
    worker once its parent process has changed (it was reparented).
    """
    if sys.platform.startswith("linux"):
        try:
            import ctypes  # only where prctl exists

            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError):  # no prctl here: the watchdog alone does it
            pass
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), name="memzoi-parent-watch", daemon=True).start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)
