"""Validated .memzoi/ trees kept between hook runs, by tree OID, so the next commit is checked as a delta.

A tree's validation is a function of its OID (and of this validator's version), so a summary
stored under `$MEMZOI_HOME/projects/<key>/hook-trees/<tree>.json` never goes stale: the
pre-commit hook stores the state of the tree it accepted, and the next commit, whose HEAD
holds that tree, starts from it instead of parsing every file. It is a cache: a missing,
unreadable or foreign-version file is ignored and the tree is validated from scratch.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from git_memzoi import __version__
from git_memzoi.hooks.treestate import Loader, TreeState

#: Bump when what validation reports for a tree changes; the package version is part of it too.
SUMMARY_VERSION = f"{__version__}+t1"
#: Trees kept: the last few commits' trees of each branch a developer moves between.
KEEP = 16


class TreeCache:
    """Tree states by .memzoi/ subtree OID, as JSON summaries in one folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, tree: str) -> Path:
        return self.folder / f"{tree}.json"

    def has(self, tree: str) -> bool:
        """Whether a state of `tree` is stored (it may still fail to load)."""
        return self._path(tree).is_file()

    def load(self, tree: str, loader: Loader) -> TreeState | None:
        """The stored state of `tree`, or None when there is none this version can trust."""
        try:
            data = json.loads(self._path(tree).read_bytes())
            if data.get("version") != SUMMARY_VERSION or data.get("tree") != tree:
                return None
            state = TreeState.from_summary(data, loader)
            os.utime(self._path(tree))  # recently used: pruned last
            return state
        except (OSError, ValueError, TypeError, KeyError, AttributeError):
            return None  # absent or damaged: validate the tree from scratch

    def save(self, tree: str, state: TreeState) -> None:
        """Store the state of `tree` (best effort: a cache that cannot be written is just not used)."""
        data = {"version": SUMMARY_VERSION, "tree": tree, **state.summary()}
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            text = json.dumps(data, separators=(",", ":"))  # dumps, not dump: the C encoder
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=self.folder)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            # No fsync: a summary lost or torn by a crash fails to load and is rebuilt.
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
