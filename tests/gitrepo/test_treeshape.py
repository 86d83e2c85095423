"""Raw trees read fast say what reading them an entry at a time says: the same entries, the same first fault."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_memzoi.gitrepo.treeshape import (
    TREE_MODE,
    TreeEntry,
    _first_fault,
    _parse_tree_slowly,
    entry_fault,
    parse_tree,
)

NAMES = st.sampled_from([b"a", b"b", b"a.md", b"b-c", b".", b"..", b"", b".GIT", b"x/y", b"\xff", b"a b"])
ENTRY = st.tuples(st.sampled_from([0o100644, 0o100755, 0o120000, TREE_MODE, 0o160000]), NAMES)


def raw_tree(entries: list[tuple[int, bytes]]) -> bytes:
    return b"".join(f"{mode:o} ".encode() + name + b"\x00" + bytes([n]) * 20 for n, (mode, name) in enumerate(entries))


@settings(max_examples=300, deadline=None)
@given(entries=st.lists(ENTRY, max_size=8), cut=st.integers(min_value=0, max_value=400), junk=st.binary(max_size=6))
def test_the_fast_reading_equals_the_slow_one(entries: list[tuple[int, bytes]], cut: int, junk: bytes) -> None:
    raw = raw_tree(entries)
    for data in (raw, raw[:cut], raw[:cut] + junk + raw[cut:]):
        try:
            slow: list[TreeEntry] | str = _parse_tree_slowly(data, 20)
        except ValueError as exc:
            slow = str(exc)
        try:
            fast: list[TreeEntry] | str = parse_tree(data, 20)
        except ValueError as exc:
            fast = str(exc)
        assert fast == slow
        if isinstance(fast, list):
            assert entry_fault(fast) == _first_fault(fast)


def test_each_fault_is_named() -> None:
    ordered = [(0o100644, b"a"), (TREE_MODE, b"a.md"), (0o100644, b"b")]
    assert entry_fault(parse_tree(raw_tree(ordered), 20)) is None
    for entries, why in (
        ([(0o100644, b"a"), (0o100644, b"a")], "holds two entries named 'a'"),
        ([(0o100644, b"a"), (TREE_MODE, b"a")], "holds two entries named 'a'"),
        ([(0o100644, b"b"), (0o100644, b"a")], "holds entry 'a' out of git's order"),
        ([(0o100644, b".git")], "holds an entry named '.git', which git never writes"),
    ):
        assert entry_fault(parse_tree(raw_tree(entries), 20)) == why
    with pytest.raises(ValueError, match="no octal mode"):
        parse_tree(b"1009 a\x00" + b"x" * 20, 20)
