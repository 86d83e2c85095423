"""Read what planning needs from the work tree and git, once, into an immutable Snapshot."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from git_memzoi.errors import FormatError, Refused
from git_memzoi.gitrepo import GitRepo
from git_memzoi.lifecycle.packets import GITATTRIBUTES, MEMZOI, RECORDS
from git_memzoi.profile import concept_id as concept
from git_memzoi.profile import frontmatter
from git_memzoi.profile.timefmt import format_rfc3339
from git_memzoi.runtime import clock


@dataclass(frozen=True)
class RecordInfo:
    """What planning needs to know about one file under records/ (from its frontmatter, unvalidated)."""

    path: str
    id: str | None
    status: str | None
    scope: str | None
    origin: tuple[str, str] | None
    is_symlink: bool = False


@dataclass(frozen=True)
class TargetFacts:
    """A supersede or tombstone target: its bytes, whether the work tree matches HEAD, and HEAD's blob.

    `change_after` is the history fallback for proposals that carry no target blob: a commit
    after proposal.proposed_at that changed the target (None when none was seen, or not asked).
    """

    path: str
    raw: bytes
    clean: bool
    head_blob: str | None
    change_after: tuple[str, datetime] | None = None


@dataclass(frozen=True)
class Snapshot:
    """The state one plan is made from; install checks the files again before it writes."""

    workdir: Path
    files: frozenset[str]
    dirs: frozenset[str]
    symlinks: frozenset[str]
    contents: Mapping[str, bytes]
    records: tuple[RecordInfo, ...]
    repository_key: str
    repository_name: str
    target: TargetFacts | None = None
    _by_id: dict[str, RecordInfo] = field(default_factory=dict, repr=False, compare=False)

    def exists(self, path: str) -> bool:
        return path in self.files or path in self.dirs or path in self.symlinks

    def read(self, path: str) -> bytes | None:
        """The bytes of a gathered path, None when it does not exist."""
        if path in self.contents:
            return self.contents[path]
        if not self.exists(path):
            return None
        raise KeyError(f"{path} was not gathered into the snapshot")

    def record(self, record_id: str) -> RecordInfo | None:
        if not self._by_id:
            for info in self.records:
                if info.id is not None:
                    self._by_id.setdefault(info.id, info)
        return self._by_id.get(record_id)

    def record_with_origin(self, origin_key: str, route: str) -> RecordInfo | None:
        for info in self.records:
            if info.origin == (origin_key, route):
                return info
        return None


#: Parsed frontmatter facts per record file, keyed by its stat, so repeated applies parse each file once.
_CACHE: dict[str, tuple[tuple[int, int, int], RecordInfo]] = {}


def _record_info(root: Path, rel: str) -> RecordInfo:
    full = root / rel
    st = full.lstat()
    key = (st.st_ino, st.st_size, st.st_mtime_ns)
    cached = _CACHE.get(str(full))
    if cached is not None and cached[0] == key:
        return cached[1]
    info = RecordInfo(rel, None, None, None, None)
    try:
        data = frontmatter.parse(full.read_bytes(), rel).data
    except (FormatError, OSError):
        data = {}
    origin = data.get("origin")
    origin_pair = None
    if isinstance(origin, dict) and isinstance(origin.get("origin_key"), str) and isinstance(origin.get("route"), str):
        origin_pair = (origin["origin_key"], origin["route"])

    def text(name: str) -> str | None:
        value = data.get(name)
        return value if isinstance(value, str) else None

    info = RecordInfo(rel, text("id"), text("status"), text("scope"), origin_pair)
    _CACHE[str(full)] = (key, info)
    return info


def _walk(root: Path) -> tuple[set[str], set[str], set[str]]:
    files: set[str] = set()
    dirs: set[str] = set()
    links: set[str] = set()
    top = root / MEMZOI
    if top.is_symlink():
        links.add(MEMZOI)
        return files, dirs, links
    if not top.is_dir():
        return files, dirs, links
    dirs.add(MEMZOI)
    for folder, subdirs, names in os.walk(top):
        base = Path(folder)
        rel_base = base.relative_to(root).as_posix()
        for name in list(subdirs):
            rel = f"{rel_base}/{name}"
            if (base / name).is_symlink():
                links.add(rel)
                subdirs.remove(name)
            else:
                dirs.add(rel)
        for name in names:
            rel = f"{rel_base}/{name}"
            (links if (base / name).is_symlink() else files).add(rel)
    return files, dirs, links


def require_initialised(repo: GitRepo) -> Path:
    """The work tree root, refusing when .memzoi/ is missing or not a real folder."""
    root = repo.require_workdir()
    top = root / MEMZOI
    if top.is_symlink():
        raise Refused(f"{MEMZOI} is a symlink; memory must live in a real folder of the work tree")
    if not top.is_dir():
        raise Refused(f"{MEMZOI}/ does not exist in {root}", hint="run git memzoi init first")
    return root


def gather(repo: GitRepo, read: Iterable[str] = (), target_id: str | None = None,
           since: datetime | None = None) -> Snapshot:
    """Snapshot .memzoi/ (every path, every record's facts, the bytes of `read`) and the target's state.

    With `since` (a proposal without a target blob), the target's history after that moment is read too.
    """
    root = require_initialised(repo)
    files, dirs, links = _walk(root)
    if (root / GITATTRIBUTES).is_symlink():
        links.add(GITATTRIBUTES)
    elif (root / GITATTRIBUTES).is_file():
        files.add(GITATTRIBUTES)
    records = tuple(_record_info(root, rel) if rel not in links else RecordInfo(rel, None, None, None, None, True)
                    for rel in sorted(files | links) if rel.startswith(RECORDS + "/") and rel.endswith(".md"))
    target_path = None
    if target_id is not None:
        target_path = next((info.path for info in records if info.id == target_id and not info.is_symlink), None)
    contents: dict[str, bytes] = {}
    for rel in set(read) | ({target_path} if target_path else set()):
        if rel in files:
            contents[rel] = (root / rel).read_bytes()
    target = None
    if target_path is not None:
        target = TargetFacts(target_path, contents[target_path], repo.is_clean(target_path),
                             repo.head_blob(target_path),
                             repo.change_after(target_path, since) if since is not None else None)
    return Snapshot(root, frozenset(files), frozenset(dirs), frozenset(links), contents, records,
                    repo.repository_key, repo.name, target)


def record_concept_id(path: str) -> str | None:
    try:
        return concept.from_record_path(path[len(RECORDS) + 1:])
    except FormatError:
        return None


def raw_frontmatter(raw: bytes, path: str) -> dict[str, Any]:
    return frontmatter.parse(raw, path).data


def who(repo: GitRepo) -> str:
    """Who is acting: MEMZOI_ACTOR, else git config user.name, else the OS user."""
    name = os.environ.get("MEMZOI_ACTOR")
    if name and name.strip():
        return name.strip()
    from git_memzoi.gitrepo.commit import config_value

    configured = config_value(repo, "user.name")
    if configured:
        return configured.strip()
    from git_memzoi.gitrepo.identity import os_user

    return os_user() or "unknown"


def now_text() -> str:
    """The lifecycle's timestamp for now: RFC 3339 UTC to the second (commit times have no finer grain)."""
    return format_rfc3339(clock.now().replace(microsecond=0))
