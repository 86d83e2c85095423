"""An OKF bundle (what `git memzoi export okf` writes) as import items: one record file, one item.

A bundle is a folder holding `index.md` and `records/<concept-id>.md`, each record a memzoi
profile memory file. Its item keeps the record's concept ID, type, lane, title, body and the
fields a proposal may carry (description, applies_to, tags, content_class, visibility,
confidence, retention); nothing is invented, and the packet says `source: import`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from git_memzoi.errors import FormatError
from git_memzoi.gitrepo.files import blob_oid
from git_memzoi.importer.formats import Item, control_of
from git_memzoi.importer.sources import BUNDLE_INDEX, BUNDLE_NAME, BUNDLE_RECORDS, MAX_SOURCE_BYTES, Loaded
from git_memzoi.layout import SUFFIX
from git_memzoi.profile import oneline

#: Record fields a proposal carries over as they are (besides type, lane, title, applies_to and the body).
KEPT = ("description", "tags", "content_class", "visibility", "confidence", "retention")


def concept_of(path: str) -> str | None:
    """The concept ID of a bundle record path (`…/records/<concept-id>.md`), or None."""
    marker = BUNDLE_RECORDS + "/"
    at = 0 if path.startswith(marker) else path.find("/" + marker) + 1
    if at == 0 and not path.startswith(marker):
        return None
    tail = path[at + len(marker) :]
    return tail.removesuffix(SUFFIX) if tail.endswith(SUFFIX) and tail != SUFFIX else None


def _field_error(src: Loaded, doc: Any, name: str, why: str) -> FormatError:
    return FormatError("import-okf", f"{name}: {why}", path=src.real, line=doc.line_of((name,)))


def item(src: Loaded) -> Item:
    """The one item of a bundle record file; a file that is no memzoi record is an error naming it."""
    from git_memzoi.profile import frontmatter, vocab

    concept_id = concept_of(src.named)
    if concept_id is None:
        raise FormatError("import-okf", "not a record file of an OKF bundle (records/<concept-id>.md)", path=src.real)
    try:
        doc = frontmatter.parse(src.text.encode("utf-8"), src.real)
    except FormatError as exc:
        raise FormatError("import-okf", f"{exc.code}: {exc.message}", path=src.real, line=exc.line) from None
    data = doc.data
    if data.get("kind") != "memory":
        raise _field_error(src, doc, "kind", "not `memory`: an OKF bundle holds records")
    for name, allowed in (("type", vocab.MEMORY_TYPES), ("lane", vocab.LANES)):
        if data.get(name) not in allowed:
            raise _field_error(src, doc, name, f"{data.get(name)!r} is none of the profile's values")
    title = data.get("title")
    if not isinstance(title, str) or not title.strip():
        raise _field_error(src, doc, "title", "missing or not text")
    applies = data.get("applies_to") or []
    if not isinstance(applies, list) or not all(isinstance(a, str) for a in applies):
        raise _field_error(src, doc, "applies_to", "not a list of paths")
    kept = {k: data[k] for k in KEPT if data.get(k) not in (None, "", [], {})}
    body = doc.body.strip("\n")
    lines = src.text.split("\n")
    first = doc.body_line
    while first < len(lines) and not lines[first - 1].strip():
        first += 1
    last = max(first, first + body.count("\n"))
    found = Item("okf", src, (concept_id,), title, body, first, last, data["type"], data["lane"], tuple(applies))
    found.concept_id = concept_id
    found.kept = kept
    control = control_of(found)  # a YAML escape ("\e") puts one in without a raw byte in the file
    if control is not None:
        raise _field_error(src, doc, control[0], f"holds the control character {oneline.shown(control[1])}")
    return found


def is_bundle(folder: Path) -> bool:
    """Does `folder` look like an OKF bundle (its index.md and records/), or a bundle's records/ folder?"""
    if folder.name == BUNDLE_RECORDS and folder.is_dir():
        return True
    return (folder / BUNDLE_INDEX).is_file() and (folder / BUNDLE_RECORDS).is_dir()


def read_bundle(folder: Path) -> list[Loaded]:
    """The record files of a bundle git does not track (`folder`: the bundle, or its records/ folder).

    Each is named `okf/records/<concept-id>.md`, so the plan and its packets do not depend on where
    the bundle lies on this machine; an error names the file on disk.
    """
    records = folder if folder.name == BUNDLE_RECORDS else folder / BUNDLE_RECORDS
    out: list[Loaded] = []
    for path in sorted(records.rglob("*" + SUFFIX)):
        named = f"{BUNDLE_NAME}/{BUNDLE_RECORDS}/{path.relative_to(records).as_posix()}"
        loaded = _load(path, named)
        try:
            item(loaded)
        except FormatError as exc:
            raise FormatError(exc.code, exc.message, path=str(path), line=exc.line) from None
        out.append(loaded)
    return out


def _load(path: Path, named: str) -> Loaded:
    if path.is_symlink() or not path.is_file():
        raise FormatError("import-okf", "not a regular file: a bundle's records are plain files", path=str(path))
    if os.path.getsize(path) > MAX_SOURCE_BYTES:
        raise FormatError("import-too-large", f"larger than {MAX_SOURCE_BYTES} bytes", path=str(path))
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise FormatError("import-encoding", "not UTF-8 text", path=str(path), line=line) from None
    return Loaded(named, named, "okf", text.replace("\r\n", "\n").removeprefix("\ufeff"), blob_oid(raw))
