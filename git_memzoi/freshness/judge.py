"""Judge records against the tree: is what each one cites still there since the commit that last wrote it?

A record is `unverified` when, between the commit that last wrote its file (`since`) and the tree
judged, a path it cites was deleted or renamed, an `applies_to` scope lost every file, or an
identifier it cites left the files of its scope (the whole tree outside `.memzoi/` when it has
none). Only what the writing commit held counts as evidence: a cited path that did not exist
then, or a name that did not occur in its scope then, was never a claim about this code.
A cited file merely edited, its names still there, keeps the record `current`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from git_memzoi.freshness.evidence import Evidence
from git_memzoi.gitrepo import codehistory
from git_memzoi.layout import MEMZOI_DIR, RECORDS

if TYPE_CHECKING:
    from git_memzoi.gitrepo.repo import GitRepo

#: What `git grep` searches for cited names: the tree outside `.memzoi/`.
CODE_PATHSPECS = (".", f":(exclude){MEMZOI_DIR}")


class Change(NamedTuple):
    """One piece of evidence that no longer holds."""

    path: str
    change: str  # deleted | renamed | scope-empty | identifier-gone
    to: str | None = None
    identifier: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        """The JSON object of the change."""
        return {"path": self.path, "change": self.change, "to": self.to, "identifier": self.identifier}


class Verdict(NamedTuple):
    """A record's freshness: its state, the commit that last wrote it, and what no longer holds."""

    state: str  # current | unverified
    since: str | None
    evidence: tuple[Change, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The `freshness` object of `--json` and the MCP tools."""
        return {"state": self.state, "since": self.since, "evidence": [c.as_dict() for c in self.evidence]}


CURRENT = Verdict("current", None)


class Subject(NamedTuple):
    """A record file to judge and what it cites."""

    path: str
    evidence: Evidence


def _within(path: str, scope: str) -> bool:
    return path == scope or path.startswith(scope + "/")


def _moved_folder(folder: str, gone: dict[str, str | None]) -> str | None:
    """Where a folder went: the destination most of its files moved to under the same names, if most did."""
    inside = {old: new for old, new in gone.items() if old.startswith(folder + "/")}
    if not inside:
        return None
    targets: Counter[str] = Counter()
    for old, new in inside.items():
        tail = old[len(folder) :]
        if new is not None and new.endswith(tail) and len(new) > len(tail):
            targets[new[: -len(tail)]] += 1
    if not targets:
        return None
    target, count = targets.most_common(1)[0]
    return target if count * 2 >= len(inside) else None


class _Judge:
    """One judging pass: every git question asked once, for every subject."""

    def __init__(self, repo: GitRepo, head: str) -> None:
        self.repo, self.head = repo, head
        self.kinds: dict[tuple[str, str], tuple[str, str] | None] = {}
        self._gone: dict[str, dict[str, str | None]] = {}

    def gone(self, since: str) -> dict[str, str | None]:
        if since not in self._gone:
            self._gone[since] = codehistory.gone_paths(self.repo, since, self.head)
        return self._gone[since]

    def path_change(self, since: str, path: str, *, scope: bool) -> Change | None:
        """How a path held at `since` changed by the judged tree: None when it is still there."""
        then = self.kinds.get((since, path))
        if then is None or self.kinds.get((self.head, path)) is not None:
            return None
        gone = self.gone(since)
        to = gone.get(path) if then[1] == "blob" else _moved_folder(path, gone)
        if to is not None:
            return Change(path, "renamed", to)
        return Change(path, "scope-empty" if scope and then[1] == "tree" else "deleted")


def _scopes_at(judge: _Judge, rev: str, scopes: Sequence[str]) -> list[str]:
    return [scope for scope in scopes if judge.kinds.get((rev, scope)) is not None]


def _holds(found: dict[str, set[str]], name: str, scopes: Sequence[str]) -> bool:
    files = found.get(name, set())
    if not scopes:
        return bool(files)
    return any(_within(f, scope) for f in files for scope in scopes)


def judge(
    repo: GitRepo, head: str, subjects: Sequence[Subject], known: dict[str, str] | None = None
) -> dict[str, Verdict]:
    """The verdict of every subject (by record path) at commit `head`; no evidence, or no writing commit: current.

    `known`: the commit that last wrote a subject's file, where the caller knows it still is (not asked of git).
    """
    checkable = [s for s in subjects if not s.evidence.empty]
    known = known or {}
    writers = {s.path: known[s.path] for s in checkable if s.path in known}
    writers |= codehistory.last_writers(repo, head, [s.path for s in checkable if s.path not in known], RECORDS)
    if cut := codehistory.shallow_commits(repo):  # a shallow clone: a file's writer there is not known
        writers = {path: writer for path, writer in writers.items() if writer not in cut}
    j = _Judge(repo, head)
    asks: list[tuple[str, str]] = []
    for s in checkable:
        since = writers.get(s.path)
        if since is not None:
            for path in (*s.evidence.scopes, *s.evidence.paths):
                asks += [(since, path), (head, path)]
    j.kinds = codehistory.object_kinds(repo, asks)
    names = {name for s in checkable if s.path in writers for name in s.evidence.identifiers}
    at_head = codehistory.occurrences(repo, head, names, CODE_PATHSPECS)
    verdicts: dict[str, Verdict] = {s.path: CURRENT for s in subjects}
    missing: dict[str, list[tuple[Subject, str, list[str]]]] = {}
    for s in checkable:
        since = writers.get(s.path)
        if since is None:
            continue
        changes = [c for scope in s.evidence.scopes if (c := j.path_change(since, scope, scope=True))]
        changes += [c for path in s.evidence.paths if (c := j.path_change(since, path, scope=False))]
        scopes_then = _scopes_at(j, since, s.evidence.scopes)
        for name in s.evidence.identifiers:
            if not _holds(at_head, name, _scopes_at(j, head, scopes_then) if scopes_then else []):
                missing.setdefault(since, []).append((s, name, scopes_then))
        verdicts[s.path] = Verdict("unverified" if changes else "current", since, tuple(changes))
    _judge_names(j, missing, verdicts)
    return verdicts


def _judge_names(
    j: _Judge, missing: dict[str, list[tuple[Subject, str, list[str]]]], verdicts: dict[str, Verdict]
) -> None:
    """Names absent from the judged tree: evidence gone only when the writing commit held them in scope."""
    for since, items in missing.items():
        then = codehistory.occurrences(j.repo, since, {name for _, name, _ in items}, CODE_PATHSPECS)
        for s, name, scopes in items:
            if not _holds(then, name, scopes):
                continue
            files = sorted(f for f in then.get(name, set()) if not scopes or any(_within(f, sc) for sc in scopes))
            old = verdicts[s.path]
            gone = Change(
                files[0] if len(files) == 1 else (scopes[0] if scopes else "."), "identifier-gone", None, name
            )
            verdicts[s.path] = Verdict("unverified", since, (*old.evidence, gone))


def subjects_of(rows: Iterable[tuple[str, Evidence]]) -> list[Subject]:
    """Subjects from (record path, evidence) pairs."""
    return [Subject(path, ev) for path, ev in rows]
