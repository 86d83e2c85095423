"""Read what planning needs from the work tree, the index and git into a Snapshot, at the cost of the change.

Nothing here walks every record: record facts (IDs, statuses, scopes, origins, paths) come from
this worktree's index.db (refreshed incrementally as the read path refreshes it) when a plan asks
for them, and paths are probed with one lstat each when a plan asks about them.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from git_memzoi.errors import FormatError, IdentityUnknown, MemzoiError, Refused, UsageError
from git_memzoi.gitrepo import GitRepo, sparse
from git_memzoi.gitrepo.commit import config_value
from git_memzoi.gitrepo.repo import TreeFile
from git_memzoi.index import lookup
from git_memzoi.index.rebuild import open_index, rebuild
from git_memzoi.layout import INDEX_FILE, LOG, MEMZOI_DIR, RECORDS, REPO_CONFIG, SUFFIX
from git_memzoi.profile import frontmatter, oneline
from git_memzoi.profile.timefmt import format_rfc3339
from git_memzoi.runtime import clock
from git_memzoi.runtime.workspace import Workspace

#: The files directly under .memzoi/ that every step may read: each must be a regular file or missing.
FIXED_FILES = (LOG, f"{MEMZOI_DIR}/{INDEX_FILE}", REPO_CONFIG)


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


class Nodes:
    """What each path a plan asks about is (file, dir, symlink, or nothing): one lstat per path, remembered."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._kind: dict[str, str | None] = {}

    def kind(self, rel: str) -> str | None:
        if rel not in self._kind:
            try:
                mode = os.lstat(self.root / rel).st_mode
            except (OSError, ValueError):
                self._kind[rel] = None
            else:
                self._kind[rel] = "symlink" if stat.S_ISLNK(mode) else "dir" if stat.S_ISDIR(mode) else "file"
        return self._kind[rel]


class NodeKind(Container[str]):
    """`path in snap.files` (or .dirs, .symlinks), answered by probing that one path."""

    def __init__(self, nodes: Nodes, kind: str) -> None:
        self._nodes = nodes
        self._want = kind

    def __contains__(self, rel: object) -> bool:
        return isinstance(rel, str) and self._nodes.kind(rel) == self._want


class RecordFacts:
    """Record facts by ID and by origin, from index.db (opened on first use) and the files it calls invalid."""

    def __init__(self, ws: Workspace, root: Path) -> None:
        self._ws = ws
        self._root = root
        self._conn: sqlite3.Connection | None = None
        self._odd: list[RecordInfo] | None = None
        self._all: list[RecordInfo] | None = None  # every record file, when the index is unavailable
        self._by_id: dict[str, list[RecordInfo]] = {}

    def _db(self) -> sqlite3.Connection | None:
        """The index, or None when it cannot be opened or built: then every record file is read instead."""
        if self._conn is None and self._all is None:
            try:
                self._conn = lookup.open_records(self._ws)
            except (MemzoiError, OSError, sqlite3.Error):
                self._all = [_record_info(self._root, rel) for rel in _record_files(self._root)]
        return self._conn

    def refresh(self) -> None:
        """Bring the index up to date by a full stat sweep (when a fact it gave proved stale), and forget answers."""
        if self._conn is not None:
            self._conn.close()
        self._conn, self._all, self._odd = None, None, None
        self._by_id.clear()
        try:
            rebuild(self._ws)
            self._conn = open_index(self._ws)
        except (MemzoiError, OSError, sqlite3.Error):
            self._all = [_record_info(self._root, rel) for rel in _record_files(self._root)]

    def _invalid(self, db: sqlite3.Connection) -> list[RecordInfo]:
        """Files the index holds as invalid, with their unvalidated frontmatter facts (usually none)."""
        if self._odd is None:
            self._odd = [
                _record_info(self._root, rel) for rel in lookup.invalid_paths(db) if (self._root / rel).is_file()
            ]
        return self._odd

    def with_id(self, record_id: str) -> list[RecordInfo]:
        """Every record file whose frontmatter has this ID (valid or not), by path."""
        db = self._db()
        if db is None:
            assert self._all is not None
            return [info for info in self._all if info.id == record_id]
        if record_id not in self._by_id:
            found = [
                RecordInfo(path, record_id, status, scope, None)
                for path, status, scope in lookup.with_id(db, record_id)
            ]
            found += [info for info in self._invalid(db) if info.id == record_id]
            self._by_id[record_id] = sorted(found, key=lambda info: info.path)
        return self._by_id[record_id]

    def with_origin(self, origin_key: str, route: str) -> RecordInfo | None:
        """The first record file (by path) whose origin is exactly (origin_key, route)."""
        db = self._db()
        if db is None:
            assert self._all is not None
            return next((info for info in self._all if info.origin == (origin_key, route)), None)
        # a key YAML writes verbatim is a substring of every file that holds it: only those are parsed
        verbatim = origin_key.isprintable() and not any(c in origin_key for c in "'\"\\")
        found = [
            info
            for info in (
                _facts(path, text.encode("utf-8"))
                for path, text in lookup.documents(db, origin_key if verbatim else None)
            )
            if info.origin == (origin_key, route)
        ]
        found += [info for info in self._invalid(db) if info.origin == (origin_key, route)]
        return min(found, key=lambda info: info.path) if found else None


class LeftOut:
    """Files under .memzoi/ that git tracks but a sparse checkout leaves out of the work tree (read on first use).

    A plan that sees only the work tree would overwrite them, or reuse their record IDs.
    """

    def __init__(self, repo: GitRepo) -> None:
        self._repo = repo
        self._paths: dict[str, str] | None = None
        self._ids: dict[str, str] | None = None

    def paths(self) -> dict[str, str]:
        """{path: blob ID} of every left-out file under .memzoi/."""
        if self._paths is None:
            self._paths = sparse.skipped(self._repo, MEMZOI_DIR)
        return self._paths

    def holds(self, rel: str) -> bool:
        return rel in self.paths()

    def path_with_id(self, record_id: str) -> str | None:
        """The left-out record file whose frontmatter carries this ID (the first by path), or None."""
        if self._ids is None:
            self._ids = {}
            for path, oid in sorted(self.paths().items()):
                if path.startswith(RECORDS + "/") and path.endswith(SUFFIX):
                    found = _facts(path, TreeFile(path, oid, self._repo.pygit).read()).id
                    if found is not None:
                        self._ids.setdefault(found, path)
        return self._ids.get(record_id)


@dataclass(frozen=True)
class Snapshot:
    """The state one plan is made from; install checks the files again before it writes."""

    workdir: Path
    files: Container[str]
    dirs: Container[str]
    symlinks: Container[str]
    contents: Mapping[str, bytes]
    facts: RecordFacts | None
    repository_key: str
    repository_name: str
    target: TargetFacts | None = None
    target_paths: tuple[str, ...] = ()  # every record file carrying the target's ID
    left_out: LeftOut | None = None  # tracked files a sparse checkout leaves out

    def exists(self, path: str) -> bool:
        return path in self.files or path in self.dirs or path in self.symlinks

    def read(self, path: str) -> bytes | None:
        """The bytes of a gathered path, None when it does not exist."""
        if path in self.contents:
            return self.contents[path]
        if not self.exists(path):
            return None
        raise KeyError(f"{path} was not gathered into the snapshot")

    def records_with_id(self, record_id: str) -> list[RecordInfo]:
        if self.facts is None:
            raise KeyError("record facts were not gathered into the snapshot")
        return self.facts.with_id(record_id)

    def record(self, record_id: str) -> RecordInfo | None:
        found = self.records_with_id(record_id)
        return found[0] if found else None

    def record_with_origin(self, origin_key: str, route: str) -> RecordInfo | None:
        if self.facts is None:
            raise KeyError("record facts were not gathered into the snapshot")
        return self.facts.with_origin(origin_key, route)


def _facts(rel: str, raw: bytes) -> RecordInfo:
    """ID, status, scope and origin from a record's frontmatter, unvalidated (None for what is missing)."""
    try:
        data = frontmatter.parse(raw, rel).data
    except FormatError:
        data = {}
    origin = data.get("origin")
    origin_pair = None
    if isinstance(origin, dict) and isinstance(origin.get("origin_key"), str) and isinstance(origin.get("route"), str):
        origin_pair = (origin["origin_key"], origin["route"])

    def text(name: str) -> str | None:
        value = data.get(name)
        return value if isinstance(value, str) else None

    return RecordInfo(rel, text("id"), text("status"), text("scope"), origin_pair)


def _record_info(root: Path, rel: str) -> RecordInfo:
    try:
        return _facts(rel, (root / rel).read_bytes())
    except OSError:
        return RecordInfo(rel, None, None, None, None)


def _record_files(root: Path) -> list[str]:
    """Every regular .md file under records/, sorted (the fallback when the index is unavailable)."""
    out: list[str] = []
    for folder, subdirs, names in os.walk(root / RECORDS):
        base = Path(folder)
        subdirs[:] = [name for name in subdirs if not (base / name).is_symlink()]
        rel_base = base.relative_to(root).as_posix()
        out += [f"{rel_base}/{name}" for name in names if name.endswith(SUFFIX) and not (base / name).is_symlink()]
    return sorted(out)


def require_initialised(repo: GitRepo) -> Path:
    """The work tree root, refusing when .memzoi/ is missing or not a real folder."""
    root = repo.require_workdir()
    top = root / MEMZOI_DIR
    if top.is_symlink():
        raise Refused(f"{MEMZOI_DIR} is a symlink; memory must live in a real folder of the work tree")
    if not top.is_dir():
        raise Refused(f"{MEMZOI_DIR}/ does not exist in {root}", hint="run git memzoi init first")
    nodes = Nodes(root)
    for rel in FIXED_FILES:
        _require_file(nodes, rel)
    return root


def _require_file(nodes: Nodes, rel: str) -> None:
    """Refuse (exit 1, naming it) a symlink or folder where the memory file `rel` belongs; a missing one is fine."""
    kind = nodes.kind(rel)
    if kind == "symlink":
        raise Refused(f"{rel} is a symlink; memory files and folders must be real", code="symlink")
    if kind == "dir":
        raise Refused(f"{rel} is a folder where a memory file belongs", code="not-a-file")


def gather(
    ws: Workspace,
    read: Iterable[str] = (),
    target_id: str | None = None,
    since: datetime | None = None,
    records: bool = False,
) -> Snapshot:
    """The state a plan needs: the bytes of `read`, record facts when `records` (or a target) asks, the target.

    With `since` (a proposal without a target blob), the target's history after that moment is read too.
    """
    repo = ws.repo
    root = require_initialised(repo)
    nodes = Nodes(root)
    facts = RecordFacts(ws, root) if records or target_id is not None else None
    contents: dict[str, bytes] = {}
    for rel in set(read):
        _require_file(nodes, rel)
        if nodes.kind(rel) == "file":
            contents[rel] = (root / rel).read_bytes()
    target = None
    target_paths: tuple[str, ...] = ()
    if facts is not None and target_id is not None:
        target_paths, target = _target(facts, nodes, root, target_id)
        if target is None or _facts(target.path, target.raw).id != target_id:
            # not exactly one file, or one that no longer carries the ID: the index may be behind an
            # edit made in place just now, so look again after a full sweep before refusing
            facts.refresh()
            target_paths, target = _target(facts, nodes, root, target_id)
        if target is not None:
            contents[target.path] = target.raw
            target = TargetFacts(
                target.path,
                target.raw,
                repo.is_clean(target.path),
                repo.head_blob(target.path),
                repo.change_after(target.path, since) if since is not None else None,
            )
    return Snapshot(
        root,
        NodeKind(nodes, "file"),
        NodeKind(nodes, "dir"),
        NodeKind(nodes, "symlink"),
        contents,
        facts,
        repo.repository_key,
        repo.name,
        target,
        target_paths,
        LeftOut(repo) if facts is not None else None,
    )


def _target(facts: RecordFacts, nodes: Nodes, root: Path, target_id: str) -> tuple[tuple[str, ...], TargetFacts | None]:
    """Every path carrying the target ID, and the target's bytes when exactly one regular file does."""
    paths = tuple(info.path for info in facts.with_id(target_id))
    if len(paths) != 1 or nodes.kind(paths[0]) != "file":
        return paths, None
    return paths, TargetFacts(paths[0], (root / paths[0]).read_bytes(), False, None)


def who(repo: GitRepo) -> str:
    """Who proposes or reviews: MEMZOI_ACTOR, else git's author name; with neither, refused as git refuses a commit."""
    for where, name in (
        ("MEMZOI_ACTOR", os.environ.get("MEMZOI_ACTOR")),
        ("GIT_AUTHOR_NAME", os.environ.get("GIT_AUTHOR_NAME")),
        ("author.name", config_value(repo, "author.name")),
        ("user.name", config_value(repo, "user.name")),
    ):
        if name and name.strip():
            bad = oneline.first_control(name.strip())
            if bad is not None:  # it would be written into packets and log.md as a name
                raise UsageError(f"{where} holds the control character {oneline.shown(bad)}; a name is one line")
            return name.strip()
    raise IdentityUnknown(
        "author identity unknown: a proposal or review names who made it",
        hint='set it as for git commits: git config user.name "Your Name" (or MEMZOI_ACTOR=NAME)',
    )


def now_text() -> str:
    """The lifecycle's timestamp for now: RFC 3339 UTC to the second (commit times have no finer grain)."""
    return format_rfc3339(clock.now().replace(microsecond=0))
