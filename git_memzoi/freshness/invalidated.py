"""The records a range of commits leaves unverified: what `hook check BASE..TIP` reports in a pull request.

It costs what the range changed: the files it deleted or renamed and the names on the lines it
removed are looked for, as fixed strings, in TIP's record files (one `git grep`); only the
active records that cite one of them are read and judged at TIP (`freshness.judge`), and only
the evidence the range itself broke is reported. A record the range superseded, tombstoned or
rewrote is no longer invalidated: its status is not active, or it was last written after the change.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from git_memzoi.freshness.evidence import extract
from git_memzoi.freshness.judge import Change, Subject, judge
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


def _record_fields(raw: bytes, path: str) -> _Fields | None:
    """What judging a record file needs, or None when it cannot be read as a record."""
    from git_memzoi.errors import MemzoiError
    from git_memzoi.profile.frontmatter import parse

    try:
        doc = parse(raw, path)
    except MemzoiError:
        return None
    data = doc.data
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
        doc.body,
    )


def invalidated(repo: GitRepo, base: str, tip: str) -> list[Invalidation]:
    """The active records at `tip` that the changes `base`..`tip` leave unverified, by record ID."""
    gone = {p: to for p, to in codehistory.gone_paths(repo, base, tip).items() if not p.startswith(MEMZOI_DIR + "/")}
    names = codehistory.removed_names(repo, base, tip, MEMZOI_DIR)
    if not gone and not names:
        return []
    folders = _gone_folders(repo, tip, gone) if gone else set()
    cited = codehistory.occurrences(repo, tip, {*gone, *folders, *names}, [RECORDS])
    files = sorted({f for found in cited.values() for f in found if f.endswith(".md")})
    if not files:
        return []
    kinds = codehistory.object_kinds(repo, [(tip, f) for f in files])
    oids = {f: k[0] for f in files if (k := kinds.get((tip, f))) is not None and k[1] == "blob"}
    data = codehistory.blobs(repo, oids.values())
    records: dict[str, _Fields] = {}
    subjects: list[Subject] = []
    for f, oid in oids.items():
        fields = _record_fields(data.get(oid, b""), f)
        if fields is None or fields.status != "active":
            continue
        records[f] = fields
        subjects.append(Subject(f, extract(fields.applies_to, fields.source_ref, fields.body)))
    out = []
    for f, verdict in judge(repo, tip, subjects).items():
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
