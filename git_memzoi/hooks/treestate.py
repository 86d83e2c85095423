"""One .memzoi/ tree's validation, kept so that the next commit's tree is checked as a delta.

validate_tree is check_file on every file, then cross_check over all of them. A push of many
commits that each change memory would pay O(tree) per commit for cross_check alone, so a
TreeState keeps the per-file reports plus two indexes, and after a change re-runs
cross_check only on the files the change can affect: the changed ones, every record or
packet sharing an ID with them, and every file that refers to a changed record's ID
(a resolved packet's affected records, a proposal target, a supersedes link). The errors
at those files are replaced; every other file's cross-file errors cannot have changed.

A state can also be stored as a summary (`summary` / `from_summary`): each file's entry, ID,
references and problems, without the parsed documents. Files whose documents a later
cross-check needs are parsed again on demand through the state's `loader`, so a state read
back from a summary costs what the next change touches, not what the tree holds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from git_memzoi.gitrepo.history import FileEntry
from git_memzoi.profile.document import ParsedPacket, ParsedRecord, Problem
from git_memzoi.profile.tree import TreeReport, cross_check

Kind = Literal["record", "packet"]
K = TypeVar("K")
#: Parses one file of the tree again (path, entry) -> its own report, for states read from a summary.
Loader = Callable[[str, FileEntry], TreeReport]


def _with(table: dict[K, frozenset[str]], key: K, path: str) -> None:
    table[key] = table.get(key, frozenset()) | {path}


def _without(table: dict[K, frozenset[str]], key: K, path: str) -> None:
    rest = table.get(key, frozenset()) - {path}
    if rest:
        table[key] = rest
    else:
        table.pop(key, None)


@dataclass(frozen=True)
class _Item:
    """What cross-file rules see of one file: its kind, its ID, and the record IDs it refers to."""

    kind: Kind
    id: str
    refs: frozenset[str]


def _item(path: str, one: TreeReport) -> _Item | None:
    if path in one.records:
        record = one.records[path].record
        return _Item("record", record.id, frozenset([record.supersedes] if record.supersedes else []))
    if path in one.packets:
        packet = one.packets[path].packet
        refs = set(packet.resolution.affected_record_ids) if packet.resolution is not None else set()
        if packet.target_id is not None:
            refs.add(packet.target_id)
        return _Item("packet", packet.id, frozenset(refs))
    return None


@dataclass
class TreeState:
    """Files, per-file reports and cross-file errors of one tree; `copy` then `apply` makes the next."""

    entries: dict[str, FileEntry] = field(default_factory=dict)
    records: dict[str, ParsedRecord] = field(default_factory=dict)
    packets: dict[str, ParsedPacket] = field(default_factory=dict)
    problems: dict[str, list[Problem]] = field(default_factory=dict)
    cross: dict[str, list[Problem]] = field(default_factory=dict)
    _items: dict[str, _Item] = field(default_factory=dict)
    _by_id: dict[tuple[Kind, str], frozenset[str]] = field(default_factory=dict)
    _referrers: dict[str, frozenset[str]] = field(default_factory=dict)
    loader: Loader | None = None

    def copy(self) -> TreeState:
        """A state that `apply` can change without touching this one (tables are copied, sets shared)."""
        return TreeState(
            dict(self.entries),
            dict(self.records),
            dict(self.packets),
            dict(self.problems),
            dict(self.cross),
            dict(self._items),
            dict(self._by_id),
            dict(self._referrers),
            self.loader,
        )

    def summary(self) -> dict[str, Any]:
        """The state as plain JSON data: entries, IDs, references and problems, not parsed documents."""
        files = []
        for path, entry in sorted(self.entries.items()):
            item = self._items.get(path)
            files.append(
                [
                    path,
                    entry.oid,
                    entry.is_symlink,
                    item.kind if item else None,
                    item.id if item else None,
                    sorted(item.refs) if item else [],
                ]
            )
        return {
            "files": files,
            "problems": {p: [_problem_row(x) for x in ps] for p, ps in sorted(self.problems.items())},
            "cross": {p: [_problem_row(x) for x in ps] for p, ps in sorted(self.cross.items())},
        }

    @classmethod
    def from_summary(cls, data: dict[str, Any], loader: Loader) -> TreeState:
        """A state read back from `summary`; `loader` parses a file when a cross-check needs its document."""
        state = cls(loader=loader)
        by_id: dict[tuple[Kind, str], list[str]] = {}
        referrers: dict[str, list[str]] = {}
        for path, oid, is_symlink, kind, ident, refs in data["files"]:
            state.entries[path] = FileEntry(oid, bool(is_symlink))
            if kind is not None:
                state._items[path] = _Item(kind, ident, frozenset(refs))
                by_id.setdefault((kind, ident), []).append(path)
                for ref in refs:
                    referrers.setdefault(ref, []).append(path)
        # built in one pass rather than through _index: a summary holds every file of the tree
        state._by_id = {key: frozenset(paths) for key, paths in by_id.items()}
        state._referrers = {ref: frozenset(paths) for ref, paths in referrers.items()}
        state.problems = {p: [_problem(p, row) for row in rows] for p, rows in data["problems"].items()}
        state.cross = {p: [_problem(p, row) for row in rows] for p, rows in data["cross"].items()}
        return state

    def apply(self, changes: Iterable[tuple[str, FileEntry | None, TreeReport | None]]) -> None:
        """Replace files (path, entry, its own report; None entry: removed) and redo affected cross checks."""
        changed: set[str] = set()
        touched: set[tuple[Kind, str]] = set()
        for path, entry, one in changes:
            changed.add(path)
            old = self._items.pop(path, None)
            if old is not None:
                self._index(path, old, remove=True)
                touched.add((old.kind, old.id))
            self.entries.pop(path, None)
            self.records.pop(path, None)
            self.packets.pop(path, None)
            self.problems.pop(path, None)
            if entry is None or one is None:
                continue
            self.entries[path] = entry
            if one.problems:
                self.problems[path] = one.problems
            if path in one.records:
                self.records[path] = one.records[path]
            if path in one.packets:
                self.packets[path] = one.packets[path]
            new = _item(path, one)
            if new is not None:
                self._items[path] = new
                self._index(path, new, remove=False)
                touched.add((new.kind, new.id))
        dirty = set(changed)
        for kind, ident in touched:
            dirty |= self._by_id.get((kind, ident), frozenset())
            if kind == "record":
                dirty |= self._referrers.get(ident, frozenset())
        self._recheck(dirty)

    def recheck_all(self) -> None:
        """Run cross_check over the whole tree (what validate_tree does), replacing every cross error."""
        self.cross.clear()
        self._recheck(set(self._items))

    def ids(self) -> tuple[set[str], set[str]]:
        """The IDs of the tree's records, and of its packets."""
        return (
            {i.id for i in self._items.values() if i.kind == "record"},
            {i.id for i in self._items.values() if i.kind == "packet"},
        )

    def errors(self) -> list[Problem]:
        """Every error validate_tree would report for this tree, sorted by path and line."""
        found = [p for ps in self.problems.values() for p in ps if p.severity == "error"]
        found.extend(p for ps in self.cross.values() for p in ps)
        return sorted(found, key=lambda p: (p.path, p.line, p.code))

    def _index(self, path: str, item: _Item, *, remove: bool) -> None:
        change = _without if remove else _with
        change(self._by_id, (item.kind, item.id), path)
        for ref in item.refs:
            change(self._referrers, ref, path)

    def _recheck(self, dirty: set[str]) -> None:
        """cross_check over the dirty files plus everything their rules read; keep the dirty files' errors."""
        subset = set(dirty)
        for path in dirty:
            item = self._items.get(path)
            if item is None:
                continue
            subset |= self._by_id.get((item.kind, item.id), frozenset())
            for ref in item.refs:
                subset |= self._by_id.get(("record", ref), frozenset())
        self._load(subset)
        report = TreeReport(
            records={p: self.records[p] for p in subset if p in self.records},
            packets={p: self.packets[p] for p in subset if p in self.packets},
        )
        cross_check(report)
        found: dict[str, list[Problem]] = {}
        for problem in report.errors:
            if problem.path in dirty:
                found.setdefault(problem.path, []).append(problem)
        for path in dirty:
            if path in found:
                self.cross[path] = found[path]
            else:
                self.cross.pop(path, None)

    def _load(self, paths: Iterable[str]) -> None:
        """Parse again the files of `paths` whose documents a summary left out."""
        for path in paths:
            if path not in self._items or path in self.records or path in self.packets:
                continue
            if self.loader is None:
                raise RuntimeError(f"tree state has no document for {path} and no loader")
            one = self.loader(path, self.entries[path])
            if path in one.records:
                self.records[path] = one.records[path]
            elif path in one.packets:
                self.packets[path] = one.packets[path]


def _problem_row(problem: Problem) -> list[Any]:
    return [problem.line, problem.code, problem.message, problem.severity]


def _problem(path: str, row: list[Any]) -> Problem:
    line, code, message, severity = row
    return Problem(path, int(line), str(code), str(message), severity)
