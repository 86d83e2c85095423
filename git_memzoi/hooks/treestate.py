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
documents. A state can be stored as a summary (`image` / `from_image`): an SQLite database
of each file's entry, facts and problems and each file's cross-file errors (hooks/treeimage.py).
Read back, nothing is loaded until a change asks: each file the change touches, each ID it
takes part in, is read from the database when first needed (`_fault`, `_fault_id`,
`_fault_ref`), and is kept in the state's tables from then on. A change so costs what it
touches, at any size of tree; a file is parsed again (through the state's `loader`) only when
a rule finds a problem there, for the line the problem names.

A state read from a summary remembers that summary's tree (`base`) and which files it changed
since (`moved`), so that it can be stored as a delta of it (`delta` / `rows_of`): the same
per-file rows for those files alone. `apply` takes a file's own validation either parsed now
(a TreeReport) or read back from such rows (Kept), and redoes the same cross-file checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path
from typing import Any, Literal, NamedTuple, TypeVar

from git_memzoi.gitrepo.history import FileEntry
from git_memzoi.hooks.treeimage import FileRow, TreeImage, Written
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
    """Files, per-file problems, facts and cross-file errors of one tree; `copy` then `apply` makes the next.

    Read from a summary (`from_image`), the tables hold what was read of it so far: the files
    in `_paths`, the IDs in `_ids`, the referred records in `_refs`; the rest is in `_image`.
    """

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
    #: the summary this state was read from (None: every file is in the tables)
    _image: TreeImage | None = None
    #: the files, IDs and referred records read from `_image` into the tables so far
    _paths: set[str] = field(default_factory=set)
    _ids: set[tuple[Kind, str]] = field(default_factory=set)
    _refs: set[str] = field(default_factory=set)
    #: the files read from `_image` that it holds (the others were absent there)
    _held: set[str] = field(default_factory=set)

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
            self._image,
            set(self._paths),
            set(self._ids),
            set(self._refs),
            set(self._held),
        )

    # reading a summary back, a row at a time -----------------------------------------
    def _fault(self, path: str) -> None:
        """Read file `path`'s rows from the summary into the tables, once."""
        if self._image is None or path in self._paths:
            return
        self._paths.add(path)
        row = self._image.file(path)
        if row is not None:
            self._held.add(path)
            self.entries[path] = FileEntry(row.oid, row.symlink)
            if row.facts is not None:
                self.facts[path] = _facts(row.facts)
            if row.problems:
                self.problems[path] = [_problem(path, x) for x in row.problems]
        cross = self._image.cross(path)
        if cross:
            self.cross[path] = [_problem(path, x) for x in cross]

    def _fault_id(self, key: tuple[Kind, str]) -> None:
        """Read which files use ID `key` into `_by_id`, once (the files read already, by their facts now)."""
        if self._image is None or key in self._ids:
            return
        self._ids.add(key)
        paths = {p for p in self._image.with_id(*key) if p not in self._paths}
        paths.update(p for p in self._paths if (f := self.facts.get(p)) is not None and (f.kind, f.id) == key)
        if paths:
            self._by_id[key] = frozenset(paths)

    def _fault_ref(self, ref: str) -> None:
        """Read which files refer to record ID `ref` into `_referrers`, once (as `_fault_id`)."""
        if self._image is None or ref in self._refs:
            return
        self._refs.add(ref)
        paths = {p for p in self._image.referrers(ref) if p not in self._paths}
        paths.update(p for p in self._paths if (f := self.facts.get(p)) is not None and ref in f.refs)
        if paths:
            self._referrers[ref] = frozenset(paths)

    def _using(self, kind: Kind, ident: str) -> frozenset[str]:
        self._fault_id((kind, ident))
        return self._by_id.get((kind, ident), frozenset())

    def _referring(self, ref: str) -> frozenset[str]:
        self._fault_ref(ref)
        return self._referrers.get(ref, frozenset())

    def entry(self, path: str) -> FileEntry | None:
        """The file at `path` in this tree, or None."""
        self._fault(path)
        return self.entries.get(path)

    def listing(self) -> dict[str, FileEntry]:
        """Every file of the tree (reads the whole summary: for tests and whole-tree answers)."""
        found = dict(self.entries)
        if self._image is not None:
            for path, oid, symlink in self._image.paths():
                if path not in self._paths:
                    found[path] = FileEntry(oid, symlink)
        return found

    def count(self) -> int:
        """How many files the tree holds."""
        if self._image is None:
            return len(self.entries)
        return self._image.count() - len(self._held) + len(self.entries)

    # storing ---------------------------------------------------------------------------
    def save_image(self, dest: Path) -> str:
        """Write the state as an SQLite database at `dest` (hooks/treeimage.py), read back by `from_image`.

        A state read from a summary writes a copy of that summary's database with the rows of the
        files it read replaced; one built from nothing writes every file. Returns its checksum.
        """
        if self._image is not None:
            return self._image.write((self._written(path) for path in sorted(self._paths)), dest)
        return TreeImage.create((self._written(path) for path in sorted(self.entries)), dest)

    def _written(self, path: str) -> Written:
        entry, facts = self.entries.get(path), self.facts.get(path)
        row = None
        if entry is not None:
            problems = [_problem_row(x) for x in self.problems.get(path, ())]
            row = FileRow(entry.oid, entry.is_symlink, list(facts) if facts is not None else None, problems)
        refs = facts.refs if facts is not None else ()
        return Written(path, row, refs, [_problem_row(x) for x in self.cross.get(path, ())])

    @classmethod
    def from_image(cls, image: TreeImage, loader: Loader | None = None) -> TreeState:
        """A state read back from a summary's database, a row at a time as changes ask."""
        return cls(loader=loader, _image=image)

    def moved(self) -> list[str]:
        """The files whose entry differs from the one they had in `base` (what a delta of it holds)."""
        return sorted(path for path, was in self._was.items() if self.entries.get(path) != was)

    def delta(self) -> dict[str, Any]:
        """The files changed since `base` as JSON data: each one's entry (a null blob ID: removed), facts, problems."""
        paths = self.moved()
        entries = [self.entries.get(p) for p in paths]
        return {
            "paths": paths,
            "oids": [e.oid if e is not None else None for e in entries],
            "symlinks": [p for p, e in zip(paths, entries, strict=True) if e is not None and e.is_symlink],
            "facts": {p: list(self.facts[p]) for p in paths if p in self.facts},
            "problems": {p: [_problem_row(x) for x in self.problems[p]] for p in paths if p in self.problems},
        }

    def kept_as(self, tree: str) -> None:
        """The state is now stored whole as tree `tree`: later deltas are of it."""
        self.base, self._was = tree, {}

    @staticmethod
    def rows_of(data: dict[str, Any]) -> Rows:
        """A delta's rows read back from `delta` (ValueError, TypeError or KeyError when it is not one)."""
        facts, problems = data["facts"], data["problems"]
        rows: Rows = {}
        for path, entry in _entries(data).items():
            if entry.oid is None:
                rows[path] = (None, None)
            else:
                rows[path] = (entry, _kept(path, facts.get(path), problems.get(path, ())))
        if not (set(facts) | set(problems)) <= {path for path, (entry, _) in rows.items() if entry is not None}:
            raise ValueError("a delta holds rows for files it does not name, or removes")
        return rows

    # changing ----------------------------------------------------------------------------
    def apply(self, changes: Iterable[tuple[str, FileEntry | None, TreeReport | Kept | None]]) -> None:
        """Replace files and redo the cross checks they can change.

        Each change is a path, its new entry (None: removed) and its own validation: parsed now
        (a TreeReport), or read back from a delta's rows (Kept, no document to hand).
        """
        changed: set[str] = set()
        touched: set[tuple[Kind, str]] = set()
        for path, entry, one in changes:
            self._fault(path)
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
            dirty |= self._using(kind, ident)
            if kind == "record":
                dirty |= self._referring(ident)
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

    def ids(self) -> tuple[set[str], set[str]]:
        """The IDs of the tree's records, and of its packets (reads every file's ID from a summary)."""
        found: dict[str, set[str]] = {"record": set(), "packet": set()}
        if self._image is not None:
            for path, kind, ident in self._image.ids():
                if path not in self._paths:
                    found[kind].add(ident)
        for item in self.facts.values():
            found[item.kind].add(item.id)
        return found["record"], found["packet"]

    def errors(self) -> list[Problem]:
        """Every error validate_tree would report for this tree, sorted by path and line."""
        found = [p for ps in self.problems.values() for p in ps if p.severity == "error"]
        found.extend(p for ps in self.cross.values() for p in ps)
        if self._image is not None:
            for path, rows, cross in self._image.error_rows():
                if path not in self._paths:
                    found.extend(p for p in (_problem(path, row) for row in rows) if cross or p.severity == "error")
        return sorted(found, key=lambda p: (p.path, p.line, p.code))

    def _index(self, path: str, item: Facts, *, remove: bool) -> None:
        change = _without if remove else _with
        self._fault_id((item.kind, item.id))
        change(self._by_id, (item.kind, item.id), path)
        for ref in item.refs:
            self._fault_ref(ref)
            change(self._referrers, ref, path)

    def _recheck(self, dirty: set[str]) -> None:
        """The cross-file rules over the dirty files plus everything they read; keep the dirty files' errors."""
        subset = set(dirty)
        for path in dirty:
            self._fault(path)
            item = self.facts.get(path)
            if item is None:
                continue
            subset |= self._using(item.kind, item.id)
            for ref in item.refs:
                subset |= self._using("record", ref)
        for path in subset:
            self._fault(path)
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


def _entries(data: dict[str, Any]) -> dict[str, FileEntry]:
    """Each file's entry from a delta's rows (a null blob ID: removed)."""
    paths, oids = data["paths"], data["oids"]
    if len(paths) != len(oids):
        raise ValueError("a delta's paths and blob IDs differ in number")
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
