"""Validated .memzoi/ trees kept between hook runs, by tree OID, so the next check is a delta.

A tree's validation is a function of its OID and of the validator, so a summary stored under
`$MEMZOI_HOME/projects/<key>/hook-trees/<tree>.json` never goes stale, and a summary made in
another clone (a CI cache, see hooks/ci.py) holds for the same tree here: the key names the
content. Each file is a header line (format, validator fingerprint, tree OID, SHA-256 of the
body) and a body (the TreeState summary: each file's blob OID, facts and problems). It is a
cache: a missing, unreadable, truncated or altered file (the body's digest differs), one of
another validator, or one whose tree OID is not the one asked for, is ignored, and the tree
is validated from scratch.

A tree close to a kept one is stored as a delta of it instead (a few KB where a summary is
O(tree)): the header also names its base tree and the digest of the base's body, and the body
holds the rows of the files that differ from the base alone (TreeState.delta). A delta is read
as where to start (`start`): the base's summary and the delta's rows, which the checker takes
for each file whose blob in the tree diff from the base is the one the row names (a row naming
another blob is not used: the file is parsed). A delta whose base is not kept, is damaged, was
rewritten since, is itself a delta, or is of another validator is ignored as a damaged summary is.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from git_memzoi import __version__, hooks
from git_memzoi.hooks.treestate import Loader, Rows, TreeState

#: Bump when what a summary holds changes; the validator's fingerprint covers the rules.
FORMAT = "memzoi-tree-state 4"
#: The same for a delta of a kept summary.
DELTA_FORMAT = "memzoi-tree-delta 1"
#: Trees kept (summaries and deltas alike): the last few commits' trees of each branch a developer moves between.
KEEP = 16
#: The modules whose code decides what a tree's summary says.
_VALIDATOR_MODULES = ("profile", "hooks/treestate.py", "layout.py")


@cache
def validator_fingerprint() -> str:
    """The package version and a digest of the validating code: a summary made by other rules is never read."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256(__version__.encode())
    for name in _VALIDATOR_MODULES:
        base = package / name
        for path in sorted(base.rglob("*.py")) if base.is_dir() else [base]:
            try:
                digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
            except OSError:
                digest.update(b"unreadable")  # the same on every run: only the version then tells
    return f"{__version__}:{digest.hexdigest()[:16]}"


@contextmanager
def _uncollected() -> Iterator[None]:
    """Read a kept tree with the cyclic collector off.

    A summary is tens of thousands of small dicts, lists and tuples, none in a cycle: the
    collector's passes over them, while they are made and after, find nothing and cost a gate
    process a sixth of its time (BENCHMARKS.md, "Hook checks cost the change"). In a process that
    ends with its answer (git_memzoi.hooks.short_lived) they are then moved out of its reach.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if hooks.short_lived:
            gc.freeze()
        if collecting:
            gc.enable()


class Start(NamedTuple):
    """Where a tree's validation starts: the state of tree `tree` (None: the empty tree), and a delta's rows over it."""

    tree: str | None
    state: TreeState
    rows: Rows


class TreeCache:
    """Tree states by .memzoi/ subtree OID, as JSON summaries (or deltas of one) in one folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, tree: str) -> Path:
        return self.folder / f"{tree}.json"

    def has(self, tree: str) -> bool:
        """Whether a state of `tree` is stored, as a summary or a delta (it may still fail to load)."""
        return self._path(tree).is_file()

    def recent(self) -> list[str]:
        """The kept trees, the most recently used first."""
        try:
            kept = sorted(self.folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        except OSError:
            return []
        return [path.stem for path in kept]

    def load(self, tree: str, loader: Loader | None = None) -> TreeState | None:
        """The stored summary of `tree`, or None when there is none this validator can trust (or a delta)."""
        found = self._summary(tree, loader)
        return found[0] if found is not None else None

    def start(self, tree: str, loader: Loader | None = None) -> Start | None:
        """Where to start validating `tree`: its summary, or the summary its delta is of with the delta's rows.

        None when neither is stored, or what is stored cannot be trusted.
        """
        try:
            with _uncollected():
                header, body = self._read(tree)
            if header[0] == DELTA_FORMAT and len(header) == 6:
                base = self._summary(header[3], loader)  # a summary alone: a delta of a delta is a miss
                if base is None or base[1] != header[4]:
                    return None  # its base is not kept, or is not the summary it was made from
                found = Start(header[3], base[0], TreeState.rows_of(body))
            else:
                with _uncollected():
                    found = Start(tree, self._state(tree, header, body, loader), {})
            os.utime(self._path(tree))  # recently used: pruned last (a delta's base too)
            return found
        except (OSError, ValueError, TypeError, KeyError, AttributeError, IndexError):
            return None  # absent or damaged: validate the tree from scratch

    def _summary(self, tree: str, loader: Loader | None) -> tuple[TreeState, str] | None:
        """The stored summary of `tree` and its body's digest, or None."""
        try:
            with _uncollected():
                header, body = self._read(tree)
                state = self._state(tree, header, body, loader)
            os.utime(self._path(tree))  # recently used: pruned last
            return state, header[3]
        except (OSError, ValueError, TypeError, KeyError, AttributeError, IndexError):
            return None  # absent or damaged: validate the tree from scratch

    @staticmethod
    def _state(tree: str, header: list[Any], body: dict[str, Any], loader: Loader | None) -> TreeState:
        """The state a summary's checked header and body hold (ValueError: another format, or a delta)."""
        if header[0] != FORMAT or len(header) != 4:
            raise ValueError("not a summary of this format")
        state = TreeState.from_summary(body, loader)
        state.kept_as(tree)
        return state

    def _read(self, tree: str) -> tuple[list[Any], dict[str, Any]]:
        """A kept file's header and body, checked: this validator, this tree, the body's digest (ValueError if not)."""
        raw = self._path(tree).read_bytes()
        head, _, body = raw.partition(b"\n")
        header = json.loads(head)
        if (
            not isinstance(header, list)
            or len(header) < 4
            or header[1:3] != [validator_fingerprint(), tree]
            or header[-1] != hashlib.sha256(body).hexdigest()
        ):
            raise ValueError("another validator or tree, or a body altered after writing")
        data = json.loads(body)
        if not isinstance(data, dict):
            raise TypeError("a kept tree's body is not an object")
        return header, data

    def save(self, tree: str, state: TreeState) -> bool:
        """Store the state of `tree` whole (best effort: a cache that cannot be written is just not used)."""
        return self._write(tree, [FORMAT, validator_fingerprint(), tree], state.summary())

    def save_delta(self, tree: str, state: TreeState) -> bool:
        """Store the state of `tree` as a delta of the kept summary it was read from (`state.base`).

        The header names the base's body digest too: a delta of a base rewritten since is a miss.
        """
        if state.base is None:
            return False
        try:
            with self._path(state.base).open("rb") as handle:
                base_digest = json.loads(handle.readline())[-1]
        except (OSError, ValueError, IndexError, TypeError):
            return False  # its base is gone: nothing to be a delta of
        header = [DELTA_FORMAT, validator_fingerprint(), tree, state.base, base_digest]
        return self._write(tree, header, state.delta())

    def _write(self, tree: str, header: list[str], data: dict[str, Any]) -> bool:
        body = json.dumps(data, separators=(",", ":")).encode()  # dumps: the C encoder
        head = json.dumps([*header, hashlib.sha256(body).hexdigest()]).encode()
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=self.folder)
            with os.fdopen(fd, "wb") as handle:
                handle.write(head + b"\n" + body)
            # No fsync: a summary lost or torn by a crash fails its digest and is rebuilt.
            os.replace(tmp, self._path(tree))
            self._prune()
        except OSError:
            return False
        return True

    def _prune(self) -> None:
        kept = sorted(self.folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in kept[KEEP:]:
            try:
                old.unlink()
            except OSError:
                continue
