"""Install journals: the before- and after-image of every path a lifecycle step changes, fsync'd first.

A journal is one JSON file under `$MEMZOI_HOME/projects/<key>/journal/`, written atomically, so it
either exists whole or not at all. Its `committed` flag is set once the shared.db side committed;
the journal is deleted when the step is complete. A step with `--commit` also carries a `commit`
block: where HEAD and the index stood before, the message, and the commit object once it exists.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_memzoi.errors import StateError
from git_memzoi.layout import LOG

SUFFIX = ".json"
VERSION = 1


@dataclass(frozen=True)
class Entry:
    path: str
    before: bytes | None
    after: bytes | None


@dataclass(frozen=True)
class CommitStep:
    """The git commit of a step: HEAD's ref and commit and the paths' index entries before, and the commit made."""

    message: str
    ref: str
    head: str | None
    index_before: tuple[tuple[str, str | None, int], ...]
    oid: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "message": self.message,
            "ref": self.ref,
            "head": self.head,
            "oid": self.oid,
            "index_before": [list(e) for e in self.index_before],
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> CommitStep:
        entries = tuple((str(p), None if o is None else str(o), int(m)) for p, o, m in doc["index_before"])
        return cls(
            str(doc["message"]),
            str(doc["ref"]),
            None if doc["head"] is None else str(doc["head"]),
            entries,
            None if doc["oid"] is None else str(doc["oid"]),
        )


@dataclass(frozen=True)
class Journal:
    """One step in flight: where its work tree is, what it changes, and whether its database side committed."""

    txid: str
    operation: str
    proposal_id: str
    workdir: str
    entries: tuple[Entry, ...]
    new_dirs: tuple[str, ...]
    committed: bool = False
    commit: CommitStep | None = None

    def to_bytes(self) -> bytes:
        def enc(data: bytes | None) -> str | None:
            return None if data is None else base64.b64encode(data).decode("ascii")

        doc: dict[str, Any] = {
            "version": VERSION,
            "txid": self.txid,
            "operation": self.operation,
            "proposal_id": self.proposal_id,
            "workdir": self.workdir,
            "committed": self.committed,
            "new_dirs": list(self.new_dirs),
            "entries": [_entry_json(e, enc) for e in self.entries],
        }
        if self.commit is not None:
            doc["commit"] = self.commit.to_json()
        return json.dumps(doc, indent=1).encode("utf-8")


def appended_to(path: str, before: bytes | None, after: bytes | None) -> bytes | None:
    """`before` when this change of log.md only appends whole lines to it; None for any other change."""
    if path != LOG or before is None or after is None or not before.endswith(b"\n"):
        return None
    return before if len(after) > len(before) and after.startswith(before) else None


def _entry_json(entry: Entry, enc: Callable[[bytes | None], str | None]) -> dict[str, Any]:
    """An entry as the journal holds it: both images, or for an append to log.md, the appended bytes
    and the size and digest of what they were appended to (the log has no size limit; its images do not
    belong in every journal write)."""
    before = appended_to(entry.path, entry.before, entry.after)
    if before is None or entry.after is None:
        return {"path": entry.path, "before": enc(entry.before), "after": enc(entry.after)}
    return {
        "path": entry.path,
        "before_size": len(before),
        "before_sha256": hashlib.sha256(before).hexdigest(),
        "appended": enc(entry.after[len(before) :]),
    }


def _appended_entry(root: Path, doc: dict[str, Any], dec: Callable[[str | None], bytes | None]) -> Entry:
    """An append entry with its images rebuilt from the file, which holds one of them when the step left it so.

    When its first `before_size` bytes are no longer what the step appended to, someone changed the
    file since: the entry gets no images (None, None), and recovery leaves the file as it is.
    """
    path, size, digest, tail = (
        str(doc["path"]),
        int(doc["before_size"]),
        str(doc["before_sha256"]),
        dec(doc["appended"]),
    )
    if tail is None:
        raise ValueError(f"{path}: an append entry without appended bytes")
    try:
        with open(root / path, "rb") as handle:
            base = handle.read(size)
    except OSError:
        return Entry(path, None, None)
    if len(base) != size or hashlib.sha256(base).hexdigest() != digest:
        return Entry(path, None, None)
    return Entry(path, base, base + tail)


def new_txid() -> str:
    """Sortable by start time, unique across processes."""
    return f"{time.time_ns():020d}-{os.getpid()}-{secrets.token_hex(4)}"


def path_for(journal_dir: Path, txid: str) -> Path:
    return journal_dir / f"{txid}{SUFFIX}"


def load(path: Path) -> Journal:
    """Read a journal (raises StateError when it is not one)."""
    try:
        doc = json.loads(path.read_bytes())
        if doc.get("version") != VERSION:
            raise ValueError(f"version {doc.get('version')!r}")

        def dec(text: str | None) -> bytes | None:
            return None if text is None else base64.b64decode(text.encode("ascii"), validate=True)

        entries = tuple(
            _appended_entry(Path(str(doc["workdir"])), e, dec)
            if "appended" in e
            else Entry(str(e["path"]), dec(e["before"]), dec(e["after"]))
            for e in doc["entries"]
        )
        commit = CommitStep.from_json(doc["commit"]) if doc.get("commit") is not None else None
        return Journal(
            str(doc["txid"]),
            str(doc["operation"]),
            str(doc["proposal_id"]),
            str(doc["workdir"]),
            entries,
            tuple(str(d) for d in doc.get("new_dirs", [])),
            bool(doc["committed"]),
            commit,
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise StateError(
            f"{path}: unreadable install journal: {exc}",
            hint="inspect it; move it aside only once the work tree is known to be consistent",
        ) from None


def pending(journal_dir: Path) -> list[Path]:
    """Journals of steps that did not finish, oldest first."""
    if not journal_dir.is_dir():
        return []
    return sorted(p for p in journal_dir.iterdir() if p.name.endswith(SUFFIX) and p.is_file())
