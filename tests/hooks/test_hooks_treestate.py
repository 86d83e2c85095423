"""A tree validated as a chain of deltas, or read back as a delta of a kept summary, reports what validate_tree does."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import tempfile
import zlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_memzoi.gitrepo.history import FileEntry
from git_memzoi.hooks.treeimage import TreeImage
from git_memzoi.hooks.treestate import TreeState
from git_memzoi.profile.tree import SourceFile, TreeReport, check_file, validate_tree
from support.hooks import packet, record

RECORD_PATHS = [f".memzoi/records/project/r{n}.md" for n in range(4)]
PACKET_PATHS = [f".memzoi/proposals/resolved/applied/p{n}.md" for n in range(3)]
IDS = ["alpha", "beta", "gamma"]

record_text = st.builds(
    lambda rid, sup: record(rid, extra=f"supersedes: {sup}\n" if sup else ""),
    st.sampled_from(IDS),
    st.sampled_from([None, *IDS]),
)
packet_text = st.builds(
    lambda pid, rid: packet(pid, status="applied", affected=rid),
    st.sampled_from(["mem_1", "mem_2"]),
    st.sampled_from([*IDS, "delta"]),
)
operation = st.one_of(
    st.tuples(st.sampled_from(RECORD_PATHS), st.one_of(st.none(), record_text)),
    st.tuples(st.sampled_from(PACKET_PATHS), st.one_of(st.none(), packet_text)),
    st.tuples(st.sampled_from(RECORD_PATHS), st.just("not: [a record")),
)


def own_report(path: str, text: str) -> TreeReport:
    one = TreeReport()
    check_file(one, SourceFile(path, lambda: text.encode()), "committed")
    return one


@settings(max_examples=150, deadline=None)
@given(steps=st.lists(st.lists(operation, min_size=1, max_size=3), min_size=1, max_size=8))
def test_deltas_agree_with_full_validation(steps: list[list[tuple[str, str | None]]]) -> None:
    files: dict[str, str] = {}
    state = TreeState()
    for step in steps:
        state = state.copy()
        changes = []
        for path, text in dict(step).items():
            if text is None:
                files.pop(path, None)
                changes.append((path, None, None))
            else:
                files[path] = text
                changes.append((path, FileEntry(path, False), own_report(path, text)))
        state.apply(changes)
        full = validate_tree([SourceFile(p, lambda t=t: t.encode()) for p, t in sorted(files.items())], "committed")
        expected = sorted(full.errors, key=lambda p: (p.path, p.line, p.code))
        assert [str(p) for p in state.errors()] == [str(p) for p in expected]


def blob(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


@settings(max_examples=150, deadline=None)
@given(steps=st.lists(st.tuples(st.lists(operation, min_size=1, max_size=3), st.booleans()), min_size=1, max_size=8))
def test_a_kept_summary_and_a_delta_of_it_read_back_agree_with_full_validation(
    steps: list[tuple[list[tuple[str, str | None]], bool]],
) -> None:
    """Each tree stored as a delta of the last summary kept (or kept whole), read back with no file parsed."""
    with tempfile.TemporaryDirectory() as folder:
        kept_and_deltas_agree(steps, Path(folder))


def kept_and_deltas_agree(steps: list[tuple[list[tuple[str, str | None]], bool]], folder: Path) -> None:
    files: dict[str, str] = {}
    texts: dict[str, str] = {}  # blob ID: text, for the loader (the line a cross-file problem names)

    def loader(path: str, entry: FileEntry) -> TreeReport:
        return own_report(path, texts[entry.oid])

    state = TreeState(loader=loader)
    state.kept_as("empty")
    kept, kept_files = saved(state, folder), dict(files)
    for step, keep in steps:
        changes: list[tuple[str, FileEntry | None, TreeReport | None]] = []
        for path, text in dict(step).items():
            if text is None:
                files.pop(path, None)
                changes.append((path, None, None))
            else:
                files[path], texts[blob(text)] = text, text
                changes.append((path, FileEntry(blob(text), False), own_report(path, text)))
        state.apply(changes)
        differ = sorted(p for p in files.keys() | kept_files.keys() if files.get(p) != kept_files.get(p))
        assert state.moved() == differ
        rows = TreeState.rows_of(json.loads(json.dumps(state.delta())))
        again = TreeState.from_image(kept, loader)
        again.apply((path, *rows[path]) for path in differ)
        full = validate_tree([SourceFile(p, lambda t=t: t.encode()) for p, t in sorted(files.items())], "committed")
        expected = [str(p) for p in sorted(full.errors, key=lambda p: (p.path, p.line, p.code))]
        assert [str(p) for p in state.errors()] == expected
        assert [str(p) for p in again.errors()] == expected
        assert again.listing() == state.listing() == {p: FileEntry(blob(t), False) for p, t in files.items()}
        assert again.count() == state.count() == len(files)
        assert again.ids() == state.ids()
        if keep:  # stored whole: the next deltas are of this tree
            state.kept_as("tree")
            kept, kept_files = saved(state, folder), dict(files)
            assert state.moved() == []
            state = TreeState.from_image(kept, loader)  # read back: only what the next change touches is read
            state.kept_as("tree")


def test_rows_that_name_nothing_or_a_removed_file_are_refused() -> None:
    state = TreeState()
    state.kept_as("empty")
    text = record("alpha")
    state.apply([(RECORD_PATHS[0], FileEntry(blob(text), False), own_report(RECORD_PATHS[0], text))])
    good = state.delta()
    assert TreeState.rows_of(good)[RECORD_PATHS[0]][0] == FileEntry(blob(text), False)
    for bad in (
        {**good, "oids": []},  # paths and blob IDs differ in number
        {**good, "oids": [None]},  # facts of a removed file
        {**good, "facts": {RECORD_PATHS[1]: good["facts"][RECORD_PATHS[0]]}},  # facts of a file it does not name
        {**good, "facts": {RECORD_PATHS[0]: ["note", "alpha", None, False, [], None]}},  # no record's facts
    ):
        with pytest.raises((ValueError, TypeError, KeyError)):
            TreeState.rows_of(bad)


def saved(state: TreeState, folder: Path) -> TreeImage:
    """The state written as a summary's database in `folder`, opened again."""
    fd, name = tempfile.mkstemp(dir=folder, suffix=".db")
    os.close(fd)
    return TreeImage(Path(name), state.save_image(Path(name)))


def test_a_database_that_is_not_a_summary_or_whose_checksum_differs_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE files(path TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(ValueError, match="not a tree summary"):
        TreeImage(other, f"{zlib.crc32(other.read_bytes()):08x}-{other.stat().st_size}")
    kept = saved(TreeState(), tmp_path)
    with pytest.raises(ValueError, match="altered"):
        TreeImage(kept.path, "00000000")
    (tmp_path / "empty.db").touch()
    with pytest.raises(ValueError, match="empty"):
        TreeImage(tmp_path / "empty.db", "00000000")


def test_a_summary_read_back_reads_only_the_rows_a_change_touches(tmp_path: Path) -> None:
    """A change to one file of a kept tree reads that file's rows and its ID's, not the tree's."""
    texts = {f".memzoi/records/project/r{n}.md": record(f"id-{n}") for n in range(40)}
    state = TreeState()
    state.apply((path, FileEntry(blob(t), False), own_report(path, t)) for path, t in texts.items())
    again = TreeState.from_image(saved(state, tmp_path))
    dup, path = record("id-7"), ".memzoi/records/project/z.md"  # takes an ID another file holds
    again.apply([(path, FileEntry(blob(dup), False), own_report(path, dup))])
    assert again.entries.keys() == {path, ".memzoi/records/project/r7.md"}
    assert [p.code for p in again.errors()] == ["id-duplicate"]
    assert again.count() == 41
