"""Install journals: the before- and after-image of every path a lifecycle step changes, fsync'd first.

A journal is one JSON file under `$MEMZOI_HOME/projects/<key>/journal/`, written atomically, so it
either exists whole or not at all. Its `committed` flag is set once the shared.db side committed;
the journal is deleted when the step is complete. A step with `--commit` also carries a `commit`
block: where HEAD and the index stood before, the message, and the commit object once it exists.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_memzoi.errors import StateError

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
            "entries": [{"path": e.path, "before": enc(e.before), "after": enc(e.after)} for e in self.entries],
        }
        if self.commit is not None:
            doc["commit"] = self.commit.to_json()
        return json.dumps(doc, indent=1).encode("utf-8")


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

        entries = tuple(Entry(str(e["path"]), dec(e["before"]), dec(e["after"])) for e in doc["entries"])
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
