"""Validated .memzoi/ trees kept between hook runs, by tree OID, so the next check is a delta.

A tree's validation is a function of its OID and of the validator, so a summary stored under
`$MEMZOI_HOME/projects/<key>/hook-trees/` never goes stale, and a summary made in another clone
(a CI cache, see hooks/ci.py) holds for the same tree here: the key names the content. A kept
tree is a file `<tree>.tree`: a header line (format, validator fingerprint, tree OID, ..., and
the SHA-256 of the body that follows). A summary's body is empty and its header names the
size and CRC-32 of its database, `<tree>.db` beside it (each file's blob OID, facts and
problems, see hooks/treeimage.py): a check reads from the database only the rows its change
touches. It is a cache: a missing, unreadable, truncated or altered file (a digest or checksum
differs), one that is not a regular file (a FIFO, a device) or is larger than any kept tree,
one of another validator, or one whose tree OID is not the one asked for, is ignored, and the
tree is validated from scratch.

A tree close to a kept one is stored as a delta of it instead (a few KB where a summary is
O(tree)): the header also names its base tree and the checksum of the base's database, and the
body holds the rows of the files that differ from the base alone, as JSON (TreeState.delta). A
delta is read as where to start (`start`): the base's summary and the delta's rows, which the
checker takes for each file whose blob in the tree diff from the base is the one the row names
(a row naming another blob is not used: the file is parsed). A delta whose base is not kept, is
damaged, was rewritten since, is itself a delta, or is of another validator is ignored as a
damaged summary is.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import stat
import tempfile
import time
from contextlib import suppress
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

from git_memzoi import __version__
from git_memzoi.hooks.treeimage import TreeImage
from git_memzoi.hooks.treestate import Loader, Rows, TreeState
from git_memzoi.runtime.private import private_folder

#: Bump when what a summary holds changes; the validator's fingerprint covers the rules.
FORMAT = "memzoi-tree-state 5"
#: The same for a delta of a kept summary.
DELTA_FORMAT = "memzoi-tree-delta 1"
#: The name of a kept tree's file: its OID, then this.
SUFFIX = ".tree"
#: The name of a kept summary's database: its tree's OID, then this.
DB_SUFFIX = ".db"
#: How the name of a file being written begins (renamed into place when whole).
TEMP_PREFIX = ".tmp-"
#: What reading a kept tree raises when it is absent, damaged, or not of this validator: a miss.
_DAMAGED = (OSError, ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError, sqlite3.Error)
#: The largest kept tree file read (a delta's rows are a few KB): a larger one is a miss, unread.
MAX_TREE_BYTES = 16 << 20
#: How old a temporary file of a write must be before pruning takes it for one a killed process left.
STALE_SECONDS = 3600
#: Trees kept (summaries and deltas alike): the last few commits' trees of each branch a developer moves between.
KEEP = 16
#: The modules whose code decides what a tree's summary says.
_VALIDATOR_MODULES = ("profile", "hooks/treestate.py", "hooks/treeimage.py", "layout.py")


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


class Start(NamedTuple):
    """Where a tree's validation starts: the state of tree `tree` (None: the empty tree), and a delta's rows over it."""

    tree: str | None
    state: TreeState
    rows: Rows


class TreeCache:
    """Tree states by .memzoi/ subtree OID, as summaries (or JSON deltas of one) in one folder.

    Each kept tree has a `<tree>.tree` file: a header line, and for a delta its rows. A summary's
    database is beside it, `<tree>.db`, and its header names the database's size and CRC-32.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, tree: str) -> Path:
        return self.folder / f"{tree}{SUFFIX}"

    def _db(self, tree: str) -> Path:
        return self.folder / f"{tree}{DB_SUFFIX}"

    def has(self, tree: str) -> bool:
        """Whether a state of `tree` is stored, as a summary or a delta (it may still fail to load)."""
        return self._path(tree).is_file()

    def recent(self) -> list[str]:
        """The kept trees, the most recently used first."""
        return [path.stem for path, _ in self._kept()]

    def _kept(self) -> list[tuple[Path, float]]:
        """Each kept tree's file and when it was last used, the most recent first (a file gone meanwhile left out)."""
        found = []
        try:
            for path in self.folder.glob(f"*{SUFFIX}"):
                if path.name.startswith(TEMP_PREFIX):
                    continue  # being written, or left by a killed write
                with suppress(OSError):
                    found.append((path, path.stat().st_mtime))
        except OSError:
            return []
        return sorted(found, key=lambda one: one[1], reverse=True)

    def load(self, tree: str, loader: Loader | None = None) -> TreeState | None:
        """The stored summary of `tree`, or None when there is none this validator can trust (or a delta)."""
        found = self._summary(tree, loader)
        return found[0] if found is not None else None

    def start(self, tree: str, loader: Loader | None = None) -> Start | None:
        """Where to start validating `tree`: its summary, or the summary its delta is of with the delta's rows.

        None when neither is stored, or what is stored cannot be trusted.
        """
        try:
            header, body = self._read(tree)
            if header[0] == DELTA_FORMAT and len(header) == 6:
                base = self._summary(header[3], loader)  # a summary alone: a delta of a delta is a miss
                if base is None or base[1] != header[4]:
                    return None  # its base is not kept, or is not the summary it was made from
                rows = json.loads(body)
                if not isinstance(rows, dict):
                    raise TypeError("a delta's body is not an object")
                found = Start(header[3], base[0], TreeState.rows_of(rows))
            else:
                found = Start(tree, self._state(tree, header, loader), {})
            self._touch(tree)  # recently used: pruned last (a delta's base too)
            return found
        except _DAMAGED:
            return None  # absent or damaged: validate the tree from scratch

    def _summary(self, tree: str, loader: Loader | None) -> tuple[TreeState, str] | None:
        """The stored summary of `tree` and its database's checksum, or None."""
        try:
            header, _ = self._read(tree)
            state = self._state(tree, header, loader)
            self._touch(tree)  # recently used: pruned last
            return state, header[3]
        except _DAMAGED:
            return None  # absent or damaged: validate the tree from scratch

    def _state(self, tree: str, header: list[Any], loader: Loader | None) -> TreeState:
        """The state a summary's checked header names (ValueError: another format, a delta, a damaged database)."""
        if header[0] != FORMAT or len(header) != 5 or not isinstance(header[3], str):
            raise ValueError("not a summary of this format")
        state = TreeState.from_image(TreeImage(self._db(tree), header[3]), loader)
        state.kept_as(tree)
        return state

    def _touch(self, tree: str) -> None:
        """Mark kept tree `tree` as used now (best effort: a folder that cannot be written is still read)."""
        with suppress(OSError):
            os.utime(self._path(tree))

    def _read(self, tree: str) -> tuple[list[Any], bytes]:
        """A kept file's header and body, checked: this validator, this tree, the body's digest (ValueError if not).

        Only a regular file of at most MAX_TREE_BYTES is read: a FIFO, a device or a folder is a miss, unopened.
        """
        fd = os.open(self._path(tree), os.O_RDONLY | os.O_NONBLOCK)  # a FIFO would block an open without it
        with os.fdopen(fd, "rb") as handle:
            seen = os.fstat(fd)
            if not stat.S_ISREG(seen.st_mode) or seen.st_size > MAX_TREE_BYTES:
                raise ValueError("not a file, or larger than any kept tree")
            raw = handle.read(MAX_TREE_BYTES + 1)
        head, _, body = raw.partition(b"\n")
        header = json.loads(head)
        if (
            not isinstance(header, list)
            or len(header) < 4
            or header[1:3] != [validator_fingerprint(), tree]
            or header[-1] != hashlib.sha256(body).hexdigest()
        ):
            raise ValueError("another validator or tree, or a body altered after writing")
        return header, body

    def save(self, tree: str, state: TreeState) -> bool:
        """Store the state of `tree` whole (best effort: a cache that cannot be written is just not used)."""
        try:
            private_folder(self.folder)
            fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=DB_SUFFIX, dir=self.folder)
            os.close(fd)
            try:
                checksum = state.save_image(Path(tmp))
                os.replace(tmp, self._db(tree))
            finally:
                Path(tmp).unlink(missing_ok=True)
        except (OSError, ValueError, sqlite3.Error):
            return False  # ValueError: the summary it is a copy of was replaced since it was read
        return self._write(tree, [FORMAT, validator_fingerprint(), tree, checksum], b"")

    def save_delta(self, tree: str, state: TreeState) -> bool:
        """Store the state of `tree` as a delta of the kept summary it was read from (`state.base`).

        The header names the base's database checksum too: a delta of a base rewritten since is a miss.
        """
        if state.base is None:
            return False
        try:
            base, _ = self._read(state.base)
            if base[0] != FORMAT:
                return False  # a delta of a delta is never read
        except _DAMAGED:
            return False  # its base is gone: nothing to be a delta of
        header = [DELTA_FORMAT, validator_fingerprint(), tree, state.base, base[3]]
        return self._write(tree, header, json.dumps(state.delta(), separators=(",", ":")).encode())

    def _write(self, tree: str, header: list[str], body: bytes) -> bool:
        head = json.dumps([*header, hashlib.sha256(body).hexdigest()]).encode()
        try:
            private_folder(self.folder)
            fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=SUFFIX, dir=self.folder)
            with os.fdopen(fd, "wb") as handle:
                handle.write(head + b"\n" + body)
            # No fsync: a file lost or torn by a crash fails its digest and is rebuilt.
            os.replace(tmp, self._path(tree))
            self._prune()
        except OSError:
            return False
        return True

    def _prune(self) -> None:
        """Delete all but the KEEP most recently used kept trees, and what a killed write left (STALE_SECONDS old):
        a temporary file, or a summary's database without its header."""
        kept = self._kept()
        doomed = [path for old, _ in kept[KEEP:] for path in (old, old.with_suffix(DB_SUFFIX))]
        stale = time.time() - STALE_SECONDS
        for path in self.folder.glob(f"{TEMP_PREFIX}*"):
            with suppress(OSError):
                if path.lstat().st_mtime < stale:
                    doomed.append(path)
        # a summary's database whose header never followed it (a write killed between the two)
        for path in self.folder.glob(f"*{DB_SUFFIX}"):
            with suppress(OSError):
                headless = not path.name.startswith(TEMP_PREFIX) and not path.with_suffix(SUFFIX).exists()
                if headless and path.lstat().st_mtime < stale:
                    doomed.append(path)
        for path in doomed:
            with suppress(OSError):
                path.unlink(missing_ok=True)
