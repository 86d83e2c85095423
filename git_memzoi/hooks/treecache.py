"""Validated .memzoi/ trees kept between hook runs, by tree OID, so the next check is a delta.

A tree's validation is a function of its OID and of the validator, so a summary stored under
`$MEMZOI_HOME/projects/<key>/hook-trees/<tree>.json` never goes stale, and a summary made in
another clone (a CI cache, see hooks/ci.py) holds for the same tree here: the key names the
content. Each file is a header line (format, validator fingerprint, tree OID, SHA-256 of the
body) and a body (the TreeState summary: each file's blob OID, facts and problems). It is a
cache: a missing, unreadable, truncated or altered file (the body's digest differs), one of
another validator, or one whose tree OID is not the one asked for, is ignored, and the tree
is validated from scratch.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import tempfile
from functools import cache
from pathlib import Path

from git_memzoi import __version__, hooks
from git_memzoi.hooks.treestate import Loader, TreeState

#: Bump when what a summary holds changes; the validator's fingerprint covers the rules.
FORMAT = "memzoi-tree-state 4"
#: Trees kept: the last few commits' trees of each branch a developer moves between.
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


class TreeCache:
    """Tree states by .memzoi/ subtree OID, as JSON summaries in one folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, tree: str) -> Path:
        return self.folder / f"{tree}.json"

    def has(self, tree: str) -> bool:
        """Whether a state of `tree` is stored (it may still fail to load)."""
        return self._path(tree).is_file()

    def recent(self) -> list[str]:
        """The kept trees, the most recently used first."""
        try:
            kept = sorted(self.folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        except OSError:
            return []
        return [path.stem for path in kept]

    def load(self, tree: str, loader: Loader | None = None) -> TreeState | None:
        """The stored state of `tree`, or None when there is none this validator can trust."""
        try:
            raw = self._path(tree).read_bytes()
            head, _, body = raw.partition(b"\n")
            header = json.loads(head)
            if header != [FORMAT, validator_fingerprint(), tree, hashlib.sha256(body).hexdigest()]:
                return None  # another format, validator or tree, or a body altered after writing
            # A summary is tens of thousands of small dicts, lists and tuples, none in a cycle: the
            # collector's passes over them, while they are made and after, find nothing and cost
            # a gate process a sixth of its time (BENCHMARKS.md, "Hook checks cost the change")
            collecting = gc.isenabled()
            gc.disable()
            try:
                state = TreeState.from_summary(json.loads(body), loader)
                if hooks.short_lived:  # see git_memzoi.hooks
                    gc.freeze()
            finally:
                if collecting:
                    gc.enable()
            os.utime(self._path(tree))  # recently used: pruned last
            return state
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None  # absent or damaged: validate the tree from scratch

    def save(self, tree: str, state: TreeState) -> None:
        """Store the state of `tree` (best effort: a cache that cannot be written is just not used)."""
        body = json.dumps(state.summary(), separators=(",", ":")).encode()  # dumps: the C encoder
        head = json.dumps([FORMAT, validator_fingerprint(), tree, hashlib.sha256(body).hexdigest()]).encode()
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=self.folder)
            with os.fdopen(fd, "wb") as handle:
                handle.write(head + b"\n" + body)
            # No fsync: a summary lost or torn by a crash fails its digest and is rebuilt.
            os.replace(tmp, self._path(tree))
            self._prune()
        except OSError:
            return

    def _prune(self) -> None:
        kept = sorted(self.folder.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in kept[KEEP:]:
            try:
                old.unlink()
            except OSError:
                continue
