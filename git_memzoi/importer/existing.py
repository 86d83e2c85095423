"""The records earlier imports made (and the record IDs already taken), read from the index or a commit."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from git_memzoi.errors import FormatError
from git_memzoi.gitrepo import files as gitfiles
from git_memzoi.importer import identity
from git_memzoi.layout import RECORDS, SUFFIX
from git_memzoi.runtime.workspace import Workspace

_LINE = re.compile(r"^(id|status|source_ref|  origin_key|  route):[ ]?(.*)$", re.MULTILINE)


@dataclass
class Existing:
    """An imported record: its ID, file, status, origin and provenance, and what a tombstone packet repeats."""

    id: str
    path: str
    status: str
    origin_key: str
    key_digest: str
    source_ref_text: str | None
    raw: bytes

    @cached_property
    def blob(self) -> str:
        """The record file's blob OID (what a supersede or tombstone packet names as its target_blob)."""
        return gitfiles.blob_oid(self.raw)

    @cached_property
    def source_ref(self) -> identity.SourceRef | None:
        """The parsed source_ref: only a record whose item is gone needs it, so it is parsed on first use."""
        return identity.parse_source_ref(self.source_ref_text)

    @cached_property
    def _data(self) -> dict[str, Any]:
        try:
            return _parse(self.raw, self.path)
        except FormatError:
            return {}

    @property
    def title(self) -> str:
        return str(self._data.get("title") or self.id)

    @property
    def type(self) -> str:
        return str(self._data.get("type") or "convention")

    @property
    def lane(self) -> str:
        return str(self._data.get("lane") or "semantic")

    @property
    def applies_to(self) -> tuple[str, ...]:
        applies = self._data.get("applies_to")
        return tuple(str(a) for a in applies) if isinstance(applies, list) else ()


def _parse(raw: bytes, path: str) -> dict[str, Any]:
    """A record's frontmatter through the YAML parser: only for what its plain lines do not say."""
    from git_memzoi.profile import frontmatter  # PyYAML stays unloaded while every record reads plainly

    return frontmatter.parse(raw, path).data


def _scalar(value: str) -> str | None:
    """A plain one-line YAML scalar as the file spells it, or None when it needs the YAML parser (quoted, folded)."""
    value = value.strip()
    if not value or value[0] in "'\"&*!|>{[%@`" or " #" in value:
        return None
    return value


def _fields(path: str, raw: bytes) -> dict[str, Any]:
    """id, status, source_ref and origin of a record: read off its lines when they are plain, else parsed."""
    text = raw.decode("utf-8", "replace")
    end = text.find("\n---", 3)
    found: dict[str, Any] = {}
    for key, value in _LINE.findall(text[: end if end > 0 else len(text)]):
        plain = _scalar(value)
        if plain is None:
            break
        found[key.strip()] = plain
    else:
        if {"id", "status", "origin_key", "route"} <= found.keys():
            origin = {"origin_key": found.pop("origin_key"), "route": found.pop("route")}
            return found | {"origin": origin}
    try:
        return _parse(raw, path)
    except FormatError:
        return {}


def _existing(path: str, raw: bytes) -> Existing | None:
    data = _fields(path, raw)
    origin = data.get("origin")
    if not isinstance(origin, dict) or origin.get("route") != identity.ROUTE:
        return None
    okey = origin.get("origin_key")
    digest = identity.key_part(okey) if isinstance(okey, str) else None
    if digest is None or not isinstance(data.get("id"), str):
        return None
    ref = data.get("source_ref")
    return Existing(
        id=data["id"],
        path=path,
        status=str(data.get("status")),
        origin_key=str(okey),
        key_digest=digest,
        source_ref_text=ref if isinstance(ref, str) else None,
        raw=raw,
    )


class Records:
    """Imported records and taken record IDs of the work tree (through index.db), or of a commit's tree."""

    def __init__(self, ws: Workspace, rev: str | None) -> None:
        self.imported: list[Existing] = []
        self._taken: set[str] = set()
        self._ws, self._rev = ws, rev
        self._files: dict[str, bytes] = {}  # with a commit: every record file's bytes, by path
        if ws.repo.workdir is not None:
            from git_memzoi.index import lookup

            conn = lookup.open_records(ws)
            try:
                for path, text in lookup.documents(conn, "route: " + identity.ROUTE):
                    found = _existing(path, text.encode("utf-8"))
                    if found is not None:
                        self.imported.append(found)
                # one query for every ID a plan may ask about, not one per item
                self._taken = lookup.record_ids(conn)
            finally:
                conn.close()
            return
        commit = ws.repo.resolve(rev or "HEAD")
        for file in ws.repo.tree_files(commit.tree, RECORDS):
            if file.oid == "symlink" or not file.path.endswith(SUFFIX):
                continue
            raw = file.read()
            self._files[file.path] = raw
            found = _existing(file.path, raw)
            if found is not None:
                self.imported.append(found)
            try:
                rid = _parse(raw, file.path).get("id")
            except FormatError:
                rid = None
            if isinstance(rid, str):
                self._taken.add(rid)

    def taken(self, record_id: str) -> bool:
        """Is `record_id` already some record's ID?"""
        return record_id in self._taken

    def at(self, concept_id: str) -> Existing | None:
        """The record at `concept_id`, whatever made it (an OKF bundle names its records so), or None."""
        path = f"{RECORDS}/{concept_id}{SUFFIX}"
        raw = self._raw(path)
        if raw is None:
            return None
        data = _fields(path, raw)
        origin = data.get("origin")
        okey = origin.get("origin_key") if isinstance(origin, dict) else None
        if not isinstance(data.get("id"), str):
            return None
        return Existing(data["id"], path, str(data.get("status")), str(okey or ""), "", None, raw)

    def _raw(self, path: str) -> bytes | None:
        """A record file's bytes where the other records were read: the work tree (a regular file), or the commit."""
        workdir = self._ws.repo.workdir
        if workdir is not None:
            full = workdir / path
            return full.read_bytes() if full.is_file() and not full.is_symlink() else None
        return self._files.get(path)
