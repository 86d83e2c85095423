"""One .memzoi/ tree's validation, kept so that the next commit's tree is checked as a delta.

validate_tree is check_file on every file, then cross_check over all of them. A push of many
commits that each change memory would pay O(tree) per commit for cross_check alone, so a
TreeState keeps the per-file reports plus two indexes, and after a change re-runs
cross_check only on the files the change can affect: the changed ones, every record or
packet sharing an ID with them, and every file that refers to a changed record's ID
(a resolved packet's affected records, a proposal target, a supersedes link). The errors
at those files are replaced; every other file's cross-file errors cannot have changed.

The cross-file rules read only each record's and packet's facts (profile.tree.Facts: kind,
ID, what it names, and the lines of those fields), so a state holds facts, never parsed
documents. A state can be stored as a summary (`summary` / `from_summary`): each file's
entry, facts and problems. Read back, the next change costs what it touches, and the whole
tree's cross-file rules re-run over facts; a file is parsed again (through the state's
`loader`) only when a rule finds a problem there, for the line the problem names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any, Literal, TypeVar

from git_memzoi.gitrepo.history import FileEntry
from git_memzoi.profile import frontmatter
from git_memzoi.profile.document import Problem
from git_memzoi.profile.tree import Facts, TreeReport, cross_problems, doc_of, facts_of

Kind = Literal["record", "packet"]
K = TypeVar("K")
#: Parses one file of the tree again (path, entry) -> its own report: for the line a problem names.
Loader = Callable[[str, FileEntry], TreeReport]


def _with(table: dict[K, frozenset[str]], key: K, path: str) -> None:
    table[key] = table.get(key, frozenset()) | {path}


def _without(table: dict[K, frozenset[str]], key: K, path: str) -> None:
    rest = table.get(key, frozenset()) - {path}
    if rest:
        table[key] = rest
    else:
        table.pop(key, None)


@dataclass
class TreeState:
    """Files, per-file problems, facts and cross-file errors of one tree; `copy` then `apply` makes the next."""

    entries: dict[str, FileEntry] = field(default_factory=dict)
    facts: dict[str, Facts] = field(default_factory=dict)
    problems: dict[str, list[Problem]] = field(default_factory=dict)
    cross: dict[str, list[Problem]] = field(default_factory=dict)
    _by_id: dict[tuple[Kind, str], frozenset[str]] = field(default_factory=dict)
    _referrers: dict[str, frozenset[str]] = field(default_factory=dict)
    #: the parsed frontmatter of files applied in this process, for the line a cross-file problem names
    _docs: dict[str, frontmatter.Document] = field(default_factory=dict)
    #: parses a file again when a cross-file problem needs a line and its document is not at hand
    loader: Loader | None = None
    #: files changed since the state was read from a summary (or all of them, built from nothing)
    drift: int = 0

    def copy(self) -> TreeState:
        """A state that `apply` can change without touching this one (tables are copied, sets shared)."""
        return TreeState(
            dict(self.entries),
            dict(self.facts),
            dict(self.problems),
            dict(self.cross),
            dict(self._by_id),
            dict(self._referrers),
            dict(self._docs),
            self.loader,
            self.drift,
        )

    def summary(self) -> dict[str, Any]:
        """The state as plain JSON data: entries, facts, their two indexes, and problems.

        The indexes are stored, not rebuilt, so that reading a summary back is a few
        comprehensions over lists, not a walk that builds them a file at a time.
        """
        paths = sorted(self.entries)
        return {
            "paths": paths,
            "oids": [self.entries[p].oid for p in paths],
            "symlinks": [p for p in paths if self.entries[p].is_symlink],
            "facts": {p: list(f) for p, f in sorted(self.facts.items())},
            "by_id": [[kind, ident, sorted(ps)] for (kind, ident), ps in sorted(self._by_id.items())],
            "referrers": {ref: sorted(ps) for ref, ps in sorted(self._referrers.items())},
            "problems": {p: [_problem_row(x) for x in ps] for p, ps in sorted(self.problems.items())},
            "cross": {p: [_problem_row(x) for x in ps] for p, ps in sorted(self.cross.items())},
        }

    @classmethod
    def from_summary(cls, data: dict[str, Any], loader: Loader | None = None) -> TreeState:
        """A state read back from `summary` (ValueError, TypeError or KeyError when it is not one)."""
        paths, oids = data["paths"], data["oids"]
        if len(paths) != len(oids):
            raise ValueError("a summary's paths and blob IDs differ in number")
        entries = dict(zip(paths, map(FileEntry, oids, repeat(False)), strict=True))
        for path in data["symlinks"]:
            entries[path] = FileEntry(entries[path].oid, True)
        return cls(
            entries=entries,
            facts={path: _facts(row) for path, row in data["facts"].items()},
            problems={p: [_problem(p, row) for row in rows] for p, rows in data["problems"].items()},
            cross={p: [_problem(p, row) for row in rows] for p, rows in data["cross"].items()},
            _by_id={(kind, ident): frozenset(ps) for kind, ident, ps in data["by_id"]},
            _referrers={ref: frozenset(ps) for ref, ps in data["referrers"].items()},
            loader=loader,
        )

    def apply(self, changes: Iterable[tuple[str, FileEntry | None, TreeReport | None]]) -> None:
        """Replace files (path, entry, its own report; None entry: removed) and redo affected cross checks."""
        changed: set[str] = set()
        touched: set[tuple[Kind, str]] = set()
        for path, entry, one in changes:
            changed.add(path)
            old = self.facts.pop(path, None)
            if old is not None:
                self._index(path, old, remove=True)
                touched.add((old.kind, old.id))
            self.entries.pop(path, None)
            self.problems.pop(path, None)
            self._docs.pop(path, None)
            if entry is None or one is None:
                continue
            self.entries[path] = entry
            if one.problems:
                self.problems[path] = one.problems
            new = facts_of(path, one)
            if new is not None:
                self.facts[path] = new
                doc = doc_of(path, one)
                if doc is not None:
                    self._docs[path] = doc
                self._index(path, new, remove=False)
                touched.add((new.kind, new.id))
        self.drift += len(changed)
        dirty = set(changed)
        for kind, ident in touched:
            dirty |= self._by_id.get((kind, ident), frozenset())
            if kind == "record":
                dirty |= self._referrers.get(ident, frozenset())
        self._recheck(dirty)

    def recheck_all(self) -> None:
        """Run the cross-file rules over the whole tree (what validate_tree does), replacing every cross error."""
        self.cross = {}
        for problem in cross_problems(self.facts, self._line_of, lambda path, severity: severity == "error"):
            self.cross.setdefault(problem.path, []).append(problem)

    def ids(self) -> tuple[set[str], set[str]]:
        """The IDs of the tree's records, and of its packets."""
        return (
            {i.id for i in self.facts.values() if i.kind == "record"},
            {i.id for i in self.facts.values() if i.kind == "packet"},
        )

    def errors(self) -> list[Problem]:
        """Every error validate_tree would report for this tree, sorted by path and line."""
        found = [p for ps in self.problems.values() for p in ps if p.severity == "error"]
        found.extend(p for ps in self.cross.values() for p in ps)
        return sorted(found, key=lambda p: (p.path, p.line, p.code))

    def _index(self, path: str, item: Facts, *, remove: bool) -> None:
        change = _without if remove else _with
        change(self._by_id, (item.kind, item.id), path)
        for ref in item.refs:
            change(self._referrers, ref, path)

    def _recheck(self, dirty: set[str]) -> None:
        """The cross-file rules over the dirty files plus everything they read; keep the dirty files' errors."""
        subset = set(dirty)
        for path in dirty:
            item = self.facts.get(path)
            if item is None:
                continue
            subset |= self._by_id.get((item.kind, item.id), frozenset())
            for ref in item.refs:
                subset |= self._by_id.get(("record", ref), frozenset())
        found: dict[str, list[Problem]] = {}
        facts = {p: self.facts[p] for p in subset if p in self.facts}
        for problem in cross_problems(
            facts, self._line_of, lambda path, severity: severity == "error" and path in dirty
        ):
            found.setdefault(problem.path, []).append(problem)
        for path in dirty:
            if path in found:
                self.cross[path] = found[path]
            else:
                self.cross.pop(path, None)

    def _line_of(self, path: str, loc: tuple[str, ...]) -> int:
        """The line of a field of the record or packet at `path`: its document, parsed again if need be."""
        doc = self._docs.get(path)
        if doc is None:
            if self.loader is None:
                raise RuntimeError(f"tree state has no document for {path} and no loader")
            doc = doc_of(path, self.loader(path, self.entries[path]))
        return doc.line_of(loc) if doc is not None else 1


def _facts(row: list[Any]) -> Facts:
    """Facts from a summary's row (its affected records, a JSON list, as a tuple)."""
    kind, ident, supersedes, applied, affected, target = row
    if kind not in ("record", "packet"):
        raise ValueError(f"not a record's or packet's facts: {row!r}")
    return Facts(kind, ident, supersedes, applied, tuple(affected) if affected else (), target)


def _problem_row(problem: Problem) -> list[Any]:
    return [problem.line, problem.code, problem.message, problem.severity]


def _problem(path: str, row: list[Any]) -> Problem:
    line, code, message, severity = row
    return Problem(path, int(line), str(code), str(message), severity)
