"""Which record files at a commit cite a path or a name: a lookup in the kept index of their records tree.

`hook check BASE..TIP` reads and judges only the records that cite what the range deleted,
renamed or removed (freshness/invalidated.py). The words each record file could cite are kept
per records tree OID (index/citation_store.py, under `$MEMZOI_HOME`): a range that leaves the
records as they were costs a lookup of its own words; a records tree not kept yet is made from
a kept one by reading only the record files that differ (`git diff-tree` of the two trees), or,
with none kept (a fresh clone), from every record file once.

The words are a superset of the evidence `freshness.evidence` derives, read from the text
without parsing YAML: every word of the `applies_to` and `source_ref` lines of the frontmatter
(and of any line that is not a plain `key:` line of another field), and every word of the body's
lines that hold a backtick, each as written, without a trailing `/**` or slashes, and without a
leading `./`. A frontmatter whose citing lines hold an escape, an alias, an anchor or a tag
cannot be read so: that file is found by every lookup. Whether a file found really cites what
changed is decided by judging it, so finding more files costs time, never a wrong answer.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from git_memzoi.errors import MemzoiError
from git_memzoi.gitrepo import codehistory
from git_memzoi.index.citation_store import EVERY, Citations, CitationStore
from git_memzoi.layout import RECORDS
from git_memzoi.profile.frontmatter import split

if TYPE_CHECKING:
    from git_memzoi.gitrepo.repo import GitRepo

#: What separates words: a path or a name holding one of these is not found by the index (the caller greps for it).
BOUNDARY = re.compile(r"[\s`'\"()\[\]{},:#]+")
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)[ \t]*:")
_CITING_KEYS = frozenset({"applies_to", "source_ref"})
#: An escape, an alias, an anchor or a tag: the value is not the text as written.
_UNREAD = re.compile(r"\\|(^|[\s\[{,:-])[&*!]")


@cache
def fingerprint() -> str:
    """The package version and a digest of this module: an index made by other rules is never read."""
    from git_memzoi import __version__

    digest = hashlib.sha256(__version__.encode())
    try:
        digest.update(Path(__file__).read_bytes())
    except OSError:
        digest.update(b"unreadable")
    return f"{__version__}:{digest.hexdigest()[:16]}"


def _variants(segment: str) -> Iterable[str]:
    yield segment
    scope = (segment[:-3] if segment.endswith("/**") else segment).strip("/")
    yield scope
    while scope.startswith("./"):
        scope = scope[2:].strip("/")
    yield scope


def _citing_lines(front: str) -> str:
    """The frontmatter lines that can hold `applies_to` and `source_ref` (those of another plain key left out)."""
    kept, keep = [], True
    for line in front.split("\n"):
        key = _KEY.match(line)
        if key is not None:
            keep = key.group(1) in _CITING_KEYS
        elif line and line[0] not in " \t-#":
            keep = True  # not a plain key: read it
        if keep:
            kept.append(line)
    return "\n".join(kept)


def words(raw: bytes) -> set[str]:
    """The words a record file is found by (EVERY alone when its citing lines cannot be read as written)."""
    try:
        parts = split(raw)
    except MemzoiError:
        return set()  # not a record: never judged
    if parts is None:
        return set()
    front, body, _ = parts
    citing = _citing_lines(front)
    if _UNREAD.search(citing):
        return {EVERY}
    found: set[str] = set()
    for line in (citing, *(line for line in body.split("\n") if "`" in line)):
        for segment in BOUNDARY.split(line):
            if segment:
                found.update(_variants(segment))
    found.discard(EVERY)
    return found


def _rows(repo: GitRepo, blobs: dict[str, str]) -> list[tuple[str, set[str]]]:
    data = codehistory.blobs(repo, set(blobs.values()))
    return [(path, words(data.get(oid, b""))) for path, oid in blobs.items()]


def _is_record(path: str) -> bool:
    return path.endswith(".md")


def _built(repo: GitRepo, store: CitationStore, tip: str, tree: str) -> Citations | list[tuple[str, set[str]]]:
    """The index of `tree` made from a kept one (or whole) and kept; its rows when it cannot be kept."""
    for kept in store.recent()[:1]:
        base = store.open(kept)
        if base is None:
            continue
        try:
            changed = codehistory.changed_blobs(repo, kept, tree)
            blobs = {f"{RECORDS}/{p}": oid for p, oid in changed.items() if oid is not None and _is_record(p)}
            rows = _rows(repo, blobs)
            if store.save(tree, rows, base, [f"{RECORDS}/{p}" for p in changed]):
                found = store.open(tree)
                if found is not None:
                    return found
        except codehistory.GitQueryError:
            pass  # the kept tree is no longer in the repository (pruned): made whole below
        finally:
            base.close()
    rows = _rows(repo, {p: oid for p, oid in codehistory.tree_blobs(repo, tip, RECORDS).items() if _is_record(p)})
    if store.save(tree, rows):
        found = store.open(tree)
        if found is not None:
            return found
    return rows  # a home that cannot be written: answered from the rows read


def cited_by(repo: GitRepo, tip: str, cited: set[str], folder: Path) -> set[str]:
    """The record files at `tip` that may cite one of `cited` (words without a BOUNDARY character)."""
    if not cited:
        return set()
    tree = codehistory.object_kinds(repo, [(tip, RECORDS)]).get((tip, RECORDS))
    if tree is None or tree[1] != "tree":
        return set()
    store = CitationStore(folder, fingerprint())
    index = store.open(tree[0]) or _built(repo, store, tip, tree[0])
    if isinstance(index, Citations):
        try:
            return index.citing(cited)
        finally:
            index.close()
    return {path for path, found in index if EVERY in found or not found.isdisjoint(cited)}
