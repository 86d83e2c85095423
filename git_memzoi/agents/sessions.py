"""What an agent session was already given, so the hooks refer to a record by ID instead of repeating it.

One small JSON file per session under `$MEMZOI_HOME` (never in the work tree), named by a hash of
the client's `session_id`. It holds the record IDs the session received and the (record, scope)
pairs PreToolUse already explained. The state is bounded: at most MAX_IDS entries per session,
at most MAX_SESSIONS files, none older than MAX_AGE seconds (the oldest go first). Damaged or
unreadable state is treated as empty: forgetting only means a record is shown again.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from git_memzoi.gitrepo.discover import light_sha256
from git_memzoi.layout import TEMP_PREFIX
from git_memzoi.runtime.private import FILE_MODE, private_folder

MAX_IDS = 2_000
MAX_SESSIONS = 64
MAX_AGE = 7 * 24 * 3600
#: A state file larger than this is damaged or hostile; it is ignored.
MAX_BYTES = 256 * 1024


class SessionMemory:
    """The IDs one session was given; `save` writes them back and prunes other sessions' old files."""

    def __init__(self, folder: Path, session_id: str | None) -> None:
        self.folder = folder
        self.path = (
            folder / (_sha256_hex(session_id.encode("utf-8", "surrogatepass"))[:32] + ".json") if session_id else None
        )
        self.given: dict[str, None] = {}
        self._loaded: set[str] = set()
        if self.path is not None:
            self._load(self.path)

    def _load(self, path: Path) -> None:
        try:
            if path.stat().st_size > MAX_BYTES:
                return
            data = json.loads(path.read_bytes())
        except (OSError, ValueError):
            return
        if isinstance(data, dict) and isinstance(data.get("given"), list):
            self.given = {str(item): None for item in data["given"] if isinstance(item, str)}
            self._loaded = set(self.given)

    def seen(self, key: str) -> bool:
        """Whether this session was already given `key` (a record ID, or `record@scope`)."""
        return key in self.given

    def add(self, keys: list[str]) -> None:
        """Remember `keys` as given."""
        for key in keys:
            self.given[key] = None

    def save(self) -> None:
        """Write the state if it changed (the newest MAX_IDS keys), then drop old sessions' files."""
        if self.path is None or set(self.given) == self._loaded:
            return
        keep = list(self.given)[-MAX_IDS:]
        try:
            private_folder(self.folder)
            # Replaced whole, so a reader never sees half a file; not fsynced: losing it after a crash
            # only means a record is shown again, and an fsync per prompt would cost more than the answer.
            tmp = self.folder / f"{TEMP_PREFIX}{os.getpid()}-{time.monotonic_ns()}"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)  # tempfile costs the hook ms to import
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(json.dumps({"given": keep}).encode())
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
            self._prune()
        except OSError:
            return  # the answer still goes out; the next one may repeat a record

    def _prune(self) -> None:
        now = time.time()
        files: list[tuple[float, Path]] = []
        for entry in os.scandir(self.folder):
            if entry.name.endswith(".json") and entry.is_file(follow_symlinks=False):
                files.append((entry.stat(follow_symlinks=False).st_mtime, Path(entry.path)))
        files.sort(reverse=True)
        for number, (mtime, path) in enumerate(files):
            if number >= MAX_SESSIONS or now - mtime > MAX_AGE:
                path.unlink(missing_ok=True)


def _sha256_hex(data: bytes) -> str:
    digest = light_sha256()
    digest.update(data)
    return str(digest.hexdigest())
