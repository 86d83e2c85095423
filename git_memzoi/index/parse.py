"""Turn one record file's bytes into an index payload (or its problems), independent of where it lives.

The payload is what the parse cache stores under the file's blob OID, so it must not depend on
the file's path: problems carry no path until they are placed, and the body is kept as an
offset into the document text rather than a second copy.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from typing import Any

from git_memzoi.profile.document import InvalidDocument, Problem, read_record
from git_memzoi.profile.frontmatter import FENCE

#: Below this many files, parsing in worker processes costs more than it saves.
PARALLEL_MIN = 800
_CHUNK = 200


def blob_oid(data: bytes) -> str:
    """The git blob OID of `data` (what `git hash-object` prints)."""
    digest = hashlib.sha1(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


def parse_payload(raw: bytes, where: str) -> dict[str, Any]:
    """Validate a record file; return {"ok": fields…} or {"problems": [...]} (problems without a path)."""
    try:
        parsed = read_record(raw, where)
    except InvalidDocument as exc:
        return {"problems": [[p.line, p.code, p.message, p.severity] for p in exc.problems]}
    record, doc = parsed.record, parsed.doc
    front = doc.frontmatter_text
    match = 0 if front.startswith("id:") else front.find("\nid:") + 1
    id_line = front.count("\n", 0, match) + 2 if match >= 0 else 2
    return {"ok": {
        "id": record.id,
        "type": record.type,
        "lane": record.lane,
        "status": record.status,
        "visibility": record.visibility,
        "scope": record.scope,
        "title": record.title,
        "description": record.description,
        "tags": list(record.tags or []),
        "applies_to": list(record.applies_to or []),
        "source": record.source,
        "source_ref": record.source_ref,
        "proposal_id": record.proposal_id,
        "supersedes": record.supersedes,
        "timestamp": record.timestamp,
        "confidence": float(record.confidence),
        "retention": record.retention.model_dump(exclude_none=True),
        # the body follows "---\n" + frontmatter + "---\n" (a record's body is never empty)
        "body_start": len(front) + 2 * (len(FENCE) + 1),
        "id_line": id_line,
    }}


def problems_of(payload: dict[str, Any], path: str) -> list[Problem]:
    """The payload's problems, placed at `path`."""
    return [Problem(path, line, code, message, severity) for line, code, message, severity in payload["problems"]]


def _parse_chunk(chunk: list[tuple[str, str, bytes]]) -> list[tuple[str, str]]:
    return [(oid, json.dumps(parse_payload(raw, where), separators=(",", ":"))) for oid, where, raw in chunk]


def die_with_parent(parent: int) -> None:
    """Pool initializer: a worker never outlives the process that forked it.

    A killed rebuild (SIGKILL cannot be caught) would otherwise leave its workers blocked on the
    task pipe forever, holding the caller's stdout and stderr open. On Linux the kernel kills a
    worker when its parent dies (PR_SET_PDEATHSIG); everywhere, a watchdog thread exits the
    worker once its parent process has changed (it was reparented).
    """
    import signal
    import sys
    import threading

    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError):  # no prctl here: the watchdog alone does it
            pass
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), name="memzoi-parent-watch", daemon=True).start()


def _watch_parent(parent: int) -> None:
    import time

    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def workers() -> int:
    """How many parser processes a large parse may use (the CPUs this process may run on)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def parse_many(items: list[tuple[str, str, bytes]], on_chunk: Callable[[list[tuple[str, str]]], None]) -> None:
    """Parse (oid, where, raw) items, handing `on_chunk` each batch of (oid, payload JSON text) as it is done.

    Large batches are parsed by forked worker processes while the caller consumes finished
    batches; each file is parsed exactly as `parse_payload` would here. `on_chunk` always runs
    in the calling thread.
    """
    count = workers()
    chunks = [items[start:start + _CHUNK] for start in range(0, len(items), _CHUNK)]
    context = None
    if len(items) >= PARALLEL_MIN and count > 1:
        import multiprocessing

        try:
            context = multiprocessing.get_context("fork")
        except ValueError:  # no fork on this platform: parse here
            context = None
    if context is None:
        for chunk in chunks:
            on_chunk(_parse_chunk(chunk))
        return
    with context.Pool(min(count, len(chunks)), die_with_parent, (os.getpid(),)) as pool:
        for results in pool.imap_unordered(_parse_chunk, chunks):
            on_chunk(results)
