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

A state read from a summary remembers that summary's tree (`base`) and which files it changed
since (`moved`), so that it can be stored as a delta of it (`delta` / `rows_of`): the same
per-file rows for those files alone. `apply` takes a file's own validation either parsed now
(a TreeReport) or read back from such rows (Kept), and redoes the same cross-file checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any, Literal, NamedTuple, TypeVar

from git_memzoi.gitrepo.history import FileEntry
from git_memzoi.profile import frontmatter
from git_memzoi.profile.document import Problem
from git_memzoi.profile.tree import Facts, TreeReport, cross_problems, doc_of, facts_of

Kind = Literal["record", "packet"]
K = TypeVar("K")
#: Parses one file of the tree again (path, entry) -> its own report: for the line a problem names.
Loader = Callable[[str, FileEntry], TreeReport]


class Kept(NamedTuple):
    """A file's own validation as a summary or delta keeps it: its facts (None: no record or packet) and problems."""

    facts: Facts | None
    problems: list[Problem]


#: A delta's rows: each path changed since its base, with its entry and own validation (both None: removed).
Rows = dict[str, tuple[FileEntry | None, Kept | None]]


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
    #: the tree of the summary this state was read from (None: built from nothing)
    base: str | None = None
    #: each file changed since `base`, with its entry there (None: absent)
    _was: dict[str, FileEntry | None] = field(default_factory=dict)

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
            self.base,
            dict(self._was),
        )

    def summary(self) -> dict[str, Any]:
        """The state as plain JSON data: entries, facts, their two indexes, and problems.

        The indexes are stored, not rebuilt, so that reading a summary back is a few
        comprehensions over lists, not a walk that builds them a file at a time.
        """
        return {
            **self._file_rows(sorted(self.entries)),
            "by_id": [[kind, ident, sorted(ps)] for (kind, ident), ps in sorted(self._by_id.items())],
            "referrers": {ref: sorted(ps) for ref, ps in sorted(self._referrers.items())},
            "cross": {p: [_problem_row(x) for x in ps] for p, ps in sorted(self.cross.items())},
        }

    def moved(self) -> list[str]:
        """The files whose entry differs from the one they had in `base` (what a delta of it holds)."""
        return sorted(path for path, was in self._was.items() if self.entries.get(path) != was)

    def delta(self) -> dict[str, Any]:
        """The files changed since `base` as plain JSON data: the rows `summary` writes (a null blob ID: removed)."""
        return self._file_rows(self.moved())

    def kept_as(self, tree: str) -> None:
        """The state is now stored whole as tree `tree`: later deltas are of it."""
        self.base, self._was = tree, {}

    def _file_rows(self, paths: list[str]) -> dict[str, Any]:
        """Each file's entry (a null blob ID: absent), facts and own problems, for `paths` (sorted)."""
        entries = [self.entries.get(p) for p in paths]
        return {
            "paths": paths,
            "oids": [e.oid if e is not None else None for e in entries],
            "symlinks": [p for p, e in zip(paths, entries, strict=True) if e is not None and e.is_symlink],
            "facts": {p: list(self.facts[p]) for p in paths if p in self.facts},
            "problems": {p: [_problem_row(x) for x in self.problems[p]] for p in paths if p in self.problems},
        }

    @classmethod
    def from_summary(cls, data: dict[str, Any], loader: Loader | None = None) -> TreeState:
        """A state read back from `summary` (ValueError, TypeError or KeyError when it is not one)."""
        return cls(
            entries=_entries(data, removals=False),
            facts={path: _facts(row) for path, row in data["facts"].items()},
            problems={p: [_problem(p, row) for row in rows] for p, rows in data["problems"].items()},
            cross={p: [_problem(p, row) for row in rows] for p, rows in data["cross"].items()},
            _by_id={(kind, ident): frozenset(ps) for kind, ident, ps in data["by_id"]},
            _referrers={ref: frozenset(ps) for ref, ps in data["referrers"].items()},
            loader=loader,
        )

    @staticmethod
    def rows_of(data: dict[str, Any]) -> Rows:
        """A delta's rows read back from `delta` (ValueError, TypeError or KeyError when it is not one)."""
        facts, problems = data["facts"], data["problems"]
        rows: Rows = {}
        for path, entry in _entries(data, removals=True).items():
            if entry.oid is None:
                rows[path] = (None, None)
            else:
                rows[path] = (entry, _kept(path, facts.get(path), problems.get(path, ())))
        if not (set(facts) | set(problems)) <= {path for path, (entry, _) in rows.items() if entry is not None}:
            raise ValueError("a delta holds rows for files it does not name, or removes")
        return rows

    def apply(self, changes: Iterable[tuple[str, FileEntry | None, TreeReport | Kept | None]]) -> None:
        """Replace files and redo the cross checks they can change.

        Each change is a path, its new entry (None: removed) and its own validation: parsed now
        (a TreeReport), or read back from a delta's rows (Kept, no document to hand).
        """
        changed: set[str] = set()
        touched: set[tuple[Kind, str]] = set()
        for path, entry, one in changes:
            changed.add(path)
            if self.base is not None and path not in self._was:
                self._was[path] = self.entries.get(path)
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
            new = self._own(path, one)
            if new is not None:
                self._index(path, new, remove=False)
                touched.add((new.kind, new.id))
        dirty = set(changed)
        for kind, ident in touched:
            dirty |= self._by_id.get((kind, ident), frozenset())
            if kind == "record":
                dirty |= self._referrers.get(ident, frozenset())
        self._recheck(dirty)

    def _own(self, path: str, one: TreeReport | Kept) -> Facts | None:
        """Take a file's own problems, facts and (parsed now) document; its facts, to index."""
        if isinstance(one, Kept):
            new, problems, doc = one.facts, one.problems, None
        else:
            new, problems, doc = facts_of(path, one), one.problems, doc_of(path, one)
        if problems:
            self.problems[path] = problems
        if new is not None:
            self.facts[path] = new
        if new is not None and doc is not None:
            self._docs[path] = doc
        return new

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


def _entries(data: dict[str, Any], *, removals: bool) -> dict[str, FileEntry]:
    """Each file's entry from a summary's or delta's rows; with `removals`, a null blob ID (removed) is allowed."""
    paths, oids = data["paths"], data["oids"]
    if len(paths) != len(oids):
        raise ValueError("a summary's paths and blob IDs differ in number")
    if not removals and None in oids:
        raise ValueError("a summary names a file without its blob ID")
    entries = dict(zip(paths, map(FileEntry, oids, repeat(False)), strict=True))
    for path in data["symlinks"]:
        entries[path] = FileEntry(entries[path].oid, True)
    return entries


def _kept(path: str, facts: list[Any] | None, problems: Iterable[list[Any]]) -> Kept:
    return Kept(_facts(facts) if facts is not None else None, [_problem(path, row) for row in problems])


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
