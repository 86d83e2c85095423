"""A tree validated as a chain of deltas reports exactly what validate_tree reports for it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from git_memzoi.gitrepo.history import FileEntry
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
