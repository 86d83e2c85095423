"""The records earlier imports made (and the record IDs already taken), read from the index or a commit."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from git_memzoi.errors import FormatError
from git_memzoi.gitrepo import files as gitfiles
from git_memzoi.importer import identity
from git_memzoi.layout import RECORDS, SUFFIX
from git_memzoi.profile import frontmatter
from git_memzoi.runtime.workspace import Workspace


@dataclass(frozen=True)
class Existing:
    """An imported record: its ID, file, status, origin and provenance, and what a tombstone packet repeats."""

    id: str
    path: str
    status: str
    origin_key: str
    key_digest: str
    source_ref: identity.SourceRef | None
    title: str
    type: str
    lane: str
    blob: str
    applies_to: tuple[str, ...]


def _existing(path: str, raw: bytes) -> Existing | None:
    try:
        data: dict[str, Any] = frontmatter.parse(raw, path).data
    except FormatError:
        return None
    origin = data.get("origin")
    if not isinstance(origin, dict) or origin.get("route") != identity.ROUTE:
        return None
    okey = origin.get("origin_key")
    digest = identity.key_part(okey) if isinstance(okey, str) else None
    if digest is None or not isinstance(data.get("id"), str):
        return None
    ref = data.get("source_ref")
    applies = data.get("applies_to")
    return Existing(
        id=data["id"],
        path=path,
        status=str(data.get("status")),
        origin_key=str(okey),
        key_digest=digest,
        source_ref=identity.parse_source_ref(ref if isinstance(ref, str) else None),
        title=str(data.get("title") or data["id"]),
        type=str(data.get("type") or "convention"),
        lane=str(data.get("lane") or "semantic"),
        blob=gitfiles.blob_oid(raw),
        applies_to=tuple(str(a) for a in applies) if isinstance(applies, list) else (),
    )


class Records:
    """Imported records and taken record IDs of the work tree (through index.db), or of a commit's tree."""

    def __init__(self, ws: Workspace, rev: str | None) -> None:
        self.imported: list[Existing] = []
        self._taken: set[str] = set()
        self._conn: sqlite3.Connection | None = None
        if ws.repo.workdir is not None:
            from git_memzoi.index import lookup

            self._conn = lookup.open_records(ws)
            for path, text in lookup.documents(self._conn, "route: " + identity.ROUTE):
                found = _existing(path, text.encode("utf-8"))
                if found is not None:
                    self.imported.append(found)
            return
        commit = ws.repo.resolve(rev or "HEAD")
        for file in ws.repo.tree_files(commit.tree, RECORDS):
            if file.oid == "symlink" or not file.path.endswith(SUFFIX):
                continue
            raw = file.read()
            found = _existing(file.path, raw)
            if found is not None:
                self.imported.append(found)
            try:
                rid = frontmatter.parse(raw, file.path).data.get("id")
            except FormatError:
                rid = None
            if isinstance(rid, str):
                self._taken.add(rid)

    def taken(self, record_id: str) -> bool:
        """Is `record_id` already some record's ID?"""
        if self._conn is not None:
            from git_memzoi.index import lookup

            return bool(lookup.with_id(self._conn, record_id))
        return record_id in self._taken

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
