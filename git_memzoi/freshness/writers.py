"""The commits that last wrote record files, kept per commit, so that `hook check` pays for what changed since.

Judging a record needs the commit that last wrote its file (`codehistory.last_writers`: one
`git log` walking back from the tip until every file is found). A record written 40,000 commits
before the tip costs a walk of 40,000 commits, whatever the range changed. So the writers found
for a tip are kept (`<commit>.writers` beside the citation indexes, under `$MEMZOI_HOME`), and a
later check at another tip starts from the most recently kept commit K: a record file that no
commit on either side of K...tip wrote (`codehistory.written_between`, the same test a read uses
when HEAD moves) was last written where it was at K. Each writer taken from a kept file is
checked to hold the file with the blob the tip holds; a file that fails, was written in between,
or was not kept is asked of git. A missing, damaged or foreign file is a miss (derived state,
rebuilt by the next walk), and a folder that cannot be written keeps nothing.
"""

from __future__ import annotations

import json
import os
import re
import stat
import tempfile
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING

from git_memzoi.gitrepo import codehistory
from git_memzoi.layout import RECORDS
from git_memzoi.runtime.private import private_folder, trusted

if TYPE_CHECKING:
    from git_memzoi.gitrepo.repo import GitRepo

FORMAT = "memzoi-writers 1"
SUFFIX = ".writers"
TEMP_PREFIX = ".tmp-"
#: Commits kept: the last few tips whose check walked (a file holds every record file: 1 MB at 10,000 records).
KEEP = 4
#: The largest file read (a writer is a path and 40 hex digits: this holds some 100,000 records).
MAX_BYTES = 16 * 1024 * 1024
_SHA = re.compile(r"[0-9a-f]{40}")


def _read(path: Path, commit: str) -> dict[str, str] | None:
    """The writers kept for `commit` at `path`, or None when there is no file this code can trust."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO would block an open without it
        with os.fdopen(fd, "rb") as handle:
            seen = os.fstat(fd)
            if not stat.S_ISREG(seen.st_mode) or seen.st_size > MAX_BYTES or not trusted(seen):
                return None
            data = json.loads(handle.read(MAX_BYTES))
    except (OSError, ValueError):
        return None
    if not isinstance(data, list) or len(data) != 3 or data[:2] != [FORMAT, commit] or not isinstance(data[2], dict):
        return None
    found = {p: w for p, w in data[2].items() if isinstance(w, str) and _SHA.fullmatch(w) and p.startswith(RECORDS)}
    return found if len(found) == len(data[2]) else None


class Writers:
    """Kept last writers by commit, in one private folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        #: what `known` read: the kept commit's writers still true at its tip (carried into `keep`)
        self.carried: dict[str, str] = {}

    def _path(self, commit: str) -> Path:
        return self.folder / f"{commit}{SUFFIX}"

    def recent(self) -> list[str]:
        """The kept commits, the most recently used first."""
        found = []
        with suppress(OSError):
            for path in self.folder.glob(f"*{SUFFIX}"):
                name = path.name[: -len(SUFFIX)]
                if _SHA.fullmatch(name):
                    with suppress(OSError):
                        found.append((path.stat().st_mtime, name))
        return [commit for _, commit in sorted(found, reverse=True)]

    def known(self, repo: GitRepo, tip: str, blobs: dict[str, str]) -> dict[str, str]:
        """The writers of the files `blobs` names (path: its blob at `tip`) that a kept commit answers, checked."""
        for kept in self.recent()[:1]:
            found = _read(self._path(kept), kept)
            if not found:
                continue
            with suppress(OSError):
                os.utime(self._path(kept))
            try:
                written = codehistory.written_between(repo, kept, tip, RECORDS) if kept != tip else set()
                asked = {p: found[p] for p in blobs if p in found and p not in written}
                kinds = codehistory.object_kinds(repo, [(w, p) for p, w in asked.items()])
            except codehistory.GitQueryError:
                return {}  # the kept commit is no longer in the repository
            self.carried = {p: w for p, w in found.items() if p not in written}
            return {p: w for p, w in asked.items() if (k := kinds.get((w, p))) is not None and k[0] == blobs[p]}
        return {}

    def keep(self, tip: str, writers: dict[str, str]) -> None:
        """Keep `writers` for `tip`, with those `known` carried from a kept commit. Best effort."""
        merged = self.carried | writers
        if not merged:
            return
        try:
            private_folder(self.folder)
            fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=SUFFIX, dir=self.folder)
            try:
                with os.fdopen(fd, "w") as handle:
                    json.dump([FORMAT, tip, dict(sorted(merged.items()))], handle, separators=(",", ":"))
                os.replace(tmp, self._path(tip))
            finally:
                Path(tmp).unlink(missing_ok=True)
        except OSError:
            return
        for old in self.recent()[KEEP:]:
            with suppress(OSError):
                self._path(old).unlink(missing_ok=True)
