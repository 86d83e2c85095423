"""The records a range of commits leaves unverified: what `hook check BASE..TIP` reports in a pull request.

It costs what the range changed: the files it deleted or renamed, their folders and the names on
the lines it removed are looked up in the kept index of what TIP's record files cite
(`freshness.citations`; a path holding a space or a quote, which the index does not hold, is
looked for with one `git grep` of TIP's record files); only the
active records that cite one of them are read and judged at TIP (`freshness.judge`), and only
the evidence the range itself broke is reported. A record the range superseded, tombstoned or
rewrote is no longer invalidated: its status is not active, or it was last written after the change.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from git_memzoi.freshness.citations import BOUNDARY, cited_by
from git_memzoi.freshness.evidence import extract
from git_memzoi.freshness.judge import Change, Subject, judge
from git_memzoi.freshness.writers import Writers
from git_memzoi.gitrepo import codehistory
from git_memzoi.layout import MEMZOI_DIR, RECORDS

if TYPE_CHECKING:
    from git_memzoi.gitrepo.repo import GitRepo


class Invalidation(NamedTuple):
    """A record the range leaves unverified, what it broke, and the proposal that settles it."""

    record_id: str
    path: str
    evidence: tuple[Change, ...]
    suggest: str  # supersede | tombstone
    command: str

    def as_json(self) -> dict[str, Any]:
        """The object `hook check --json` lists under `invalidated`."""
        return {
            "record_id": self.record_id,
            "evidence": [c.as_dict() for c in self.evidence],
            "suggest": self.suggest,
            "command": self.command,
        }


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def _proposal(record_id: str, title: str, evidence: Sequence[Change], scopes: Sequence[str]) -> tuple[str, str]:
    """(suggest, command): a supersede that names where a path went (its `applies_to` moved along), else a
    tombstone. The supersede reads the corrected body on stdin."""
    moved = [c for c in evidence if c.change == "renamed" and c.to]
    if moved:
        reason = "; ".join(f"{c.path} moved to {c.to}" for c in moved)
        applies = "".join(f" --applies-to {_quote(c.to)}" for c in moved if c.to and c.path in scopes)
        command = (
            f"git memzoi propose --action supersede --target {_quote(record_id)} --reason {_quote(reason)}"
            f" --title {_quote(title)}{applies} --body-file -"
        )
        return "supersede", command
    what = "; ".join(
        f"{c.identifier or c.path} {c.change.replace('-', ' ')}" + (f" ({c.path})" if c.identifier else "")
        for c in evidence
    )
    return "tombstone", (
        f"git memzoi propose --action tombstone --target {_quote(record_id)} "
        f"--reason {_quote('the code it cites changed: ' + what)}"
    )


def _gone_folders(repo: GitRepo, tip: str, gone: dict[str, str | None]) -> set[str]:
    """The folders of gone files that `tip` no longer holds."""
    folders = {"/".join(path.split("/")[:end]) for path in gone for end in range(1, path.count("/") + 1)}
    kinds = codehistory.object_kinds(repo, [(tip, folder) for folder in folders])
    return {folder for folder in folders if kinds.get((tip, folder)) is None}


class _Fields(NamedTuple):
    record_id: str
    status: str
    title: str
    applies_to: list[str]
    source_ref: str | None
    body: str


_ALIAS = re.compile(r"(^|[\s\[{,:-])[&*!]")


def _frontmatter(raw: bytes, path: str) -> tuple[dict[str, Any], str] | None:
    """(frontmatter mapping, body) of a record file; libyaml's safe loader when the text has no anchor, alias or
    tag (what the profile refuses anyway, and what could make a small file expensive), else the profile's parser."""
    import yaml

    from git_memzoi.errors import MemzoiError
    from git_memzoi.profile.frontmatter import parse, split

    try:
        parts = split(raw, path)
        if parts is None:
            return None
        front, body, _ = parts
        if _ALIAS.search(front) is None and hasattr(yaml, "CSafeLoader"):
            data = yaml.load(front, Loader=yaml.CSafeLoader)
        else:
            doc = parse(raw, path)
            data, body = doc.data, doc.body
    except (MemzoiError, yaml.YAMLError, RecursionError):
        return None
    return (data, body) if isinstance(data, dict) else None


def _record_fields(raw: bytes, path: str) -> _Fields | None:
    """What judging a record file needs, or None when it cannot be read as a record."""
    loaded = _frontmatter(raw, path)
    if loaded is None:
        return None
    data, body = loaded
    rid, status, title, applies = data.get("id"), data.get("status"), data.get("title"), data.get("applies_to") or []
    ref = data.get("source_ref")
    if not all(isinstance(v, str) for v in (rid, status, title)) or not isinstance(applies, list):
        return None
    return _Fields(
        str(rid),
        str(status),
        str(title),
        [a for a in applies if isinstance(a, str)],
        ref if isinstance(ref, str) else None,
        body,
    )


_BEFORE = frozenset(" \t`'\"([,:")
_AFTER = frozenset(" \t`'\"),]#:")


def _cites_path(line: str, path: str) -> bool:
    """Whether `line` names `path` whole: not inside a longer name, perhaps as `./path`, `path/` or `path/**`."""
    start = line.find(path)
    while start != -1:
        head, tail = line[:start], line[start + len(path) :]
        head = head[:-2] if head.endswith("./") else head
        if (not head or head[-1] in _BEFORE) and (
            not tail
            or tail[0] in _AFTER
            or tail.startswith("/**")
            or tail == "/"
            or (tail[:1] == "/" and tail[1] in _AFTER)
        ):
            return True
        start = line.find(path, start + 1)
    return False


def _citing(repo: GitRepo, tip: str, paths: set[str], names: set[str]) -> list[str]:
    """The record files at `tip` with a line citing one of `paths` (whole) or `names` (in backticks)."""
    ticked = {*(f"`{name}`" for name in names), *(f"`{name}()`" for name in names)}
    files: set[str] = set()
    for f, line in codehistory.matching_lines(repo, tip, {*paths, *ticked}, [RECORDS]):
        if f in files or not f.endswith(".md"):
            continue
        if any(t in line for t in ticked) or any(p in line and _cites_path(line, p) for p in paths):
            files.add(f)
    return sorted(files)


def _cited(repo: GitRepo, tip: str, paths: set[str], names: set[str], kept: Path) -> list[str]:
    """The record files at `tip` that may cite one of `paths` or `names`: the kept index, a grep for odd paths."""
    odd = {path for path in paths if BOUNDARY.search(path)}
    files = set(_citing(repo, tip, odd, set())) if odd else set()
    files |= cited_by(repo, tip, (paths - odd) | names, kept)
    return sorted(f for f in files if f.endswith(".md"))


def _writers(repo: GitRepo, tip: str, subjects: list[Subject], oids: dict[str, str], kept: Path) -> dict[str, str]:
    """The commits that last wrote the subjects' files: from the writers kept for a recent commit, else one walk
    finding those of every record file at `tip` (kept, so that the next check at another tip walks no history)."""
    memo = Writers(kept)
    known = memo.known(repo, tip, {s.path: oids[s.path] for s in subjects})
    if all(s.path in known or s.evidence.empty for s in subjects):
        return known
    every = {p for p in codehistory.tree_blobs(repo, tip, RECORDS) if p.endswith(".md")}
    memo.carried = {p: w for p, w in memo.carried.items() if p in every}
    found = codehistory.last_writers(repo, tip, every - set(memo.carried), RECORDS)
    memo.keep(tip, found)
    return known | {s.path: found[s.path] for s in subjects if s.path in found}


def invalidated(repo: GitRepo, base: str, tip: str, kept: Path) -> list[Invalidation]:
    """The active records at `tip` that the changes `base`..`tip` leave unverified, by record ID (`kept`: the
    folder of kept citation indexes, index/citation_store.py)."""
    gone = {p: to for p, to in codehistory.gone_paths(repo, base, tip).items() if not p.startswith(MEMZOI_DIR + "/")}
    names = codehistory.removed_names(repo, base, tip, MEMZOI_DIR)
    if not gone and not names:
        return []
    folders = _gone_folders(repo, tip, gone) if gone else set()
    files = _cited(repo, tip, {*gone, *folders}, names, kept)
    if not files:
        return []
    oids = codehistory.tree_blobs(repo, tip, *files)
    data = codehistory.blobs(repo, oids.values())
    records: dict[str, _Fields] = {}
    subjects: list[Subject] = []
    for f, oid in oids.items():
        fields = _record_fields(data.get(oid, b""), f)
        if fields is None or fields.status != "active":
            continue
        records[f] = fields
        subjects.append(Subject(f, extract(fields.applies_to, fields.source_ref, fields.body)))
    writers = _writers(repo, tip, subjects, oids, kept)
    cut = codehistory.shallow_commits(repo)
    lost = sorted(path for path, writer in writers.items() if writer in cut)
    if lost:
        raise codehistory.GitQueryError(
            f"the history is shallow: the commit that last wrote {lost[0]} is not in this clone "
            "(fetch the whole history, e.g. fetch-depth: 0)"
        )
    verdicts = judge(repo, tip, subjects, writers)
    out = []
    for f, verdict in verdicts.items():
        broke = tuple(
            c
            for c in verdict.evidence
            if c.path in gone or c.path in folders or (c.identifier is not None and c.identifier in names)
        )
        if verdict.state == "unverified" and broke:
            scopes = next(s.evidence.scopes for s in subjects if s.path == f)
            rec = records[f]
            suggest, command = _proposal(rec.record_id, rec.title, broke, scopes)
            out.append(Invalidation(rec.record_id, f, broke, suggest, command))
    return sorted(out, key=lambda i: (i.record_id, i.path))
