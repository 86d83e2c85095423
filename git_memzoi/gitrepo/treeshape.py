"""Raw tree objects read as git checks them out: every entry, in stored order, with no name folded.

libgit2 looks a name up in a tree by binary search and its diffs pair entries in stored order,
so a tree with two entries of one name, or with entries out of git's order, shows the hooks one
file while `git checkout` writes another. The hooks therefore read the trees a push changes
under .memzoi/ from their raw bytes and refuse any that git itself would not have written.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from git_memzoi.profile.folding import alias_fault

#: The mode of a tree entry (git writes it as `40000`; libgit2 and git also read `040000` as one).
TREE_MODE = 0o40000
#: Names git never checks out (fsck's hasDot, hasDotdot, hasDotgit); `/` and NUL cannot be in one.
_RESERVED = (b".", b"..")
#: A root tree entry that may be .memzoi: cheap to search for before parsing the whole tree.
ROOT_MEMZOI = re.compile(rb" \.memzoi[\x00/]")


class TreeEntry(NamedTuple):
    """One entry of a raw tree object: its mode, name and object name, as stored."""

    mode: int
    name: bytes
    oid: bytes

    @property
    def is_tree(self) -> bool:
        return self.mode == TREE_MODE


#: What a root tree whose .memzoi entry is not the one a lookup finds holds, by History.odd_memzoi's kind.
ROOT_FAULTS = {
    "duplicate": "the root tree holds two entries named .memzoi; git checks out one unseen",
    "invalid-name": "the root tree holds an entry named .memzoi/..., which git never writes",
    "unsorted": "the root tree holds .memzoi out of git's order, where lookups miss it",
    "unreadable": "the root tree is not a well-formed tree object, so .memzoi cannot be read",
}


def malformed(why: str) -> str:
    """The message of a malformed-tree problem for a tree under .memzoi/ (`why`: the tree holds ...)."""
    return f"the tree {why}; a checkout would not match what was checked"


#: One entry's `<mode> <name>NUL`, its object name following: octal digits, then any bytes but NUL.
_ENTRY_HEAD = re.compile(rb"([0-7]+) ([^\x00]*)\x00")


def parse_tree(raw: bytes, oid_size: int) -> list[TreeEntry]:
    """Every `<mode> <name>NUL<oid>` entry of a raw tree object; ValueError when the bytes are not one.

    Each entry's head is matched by one regular expression (the scanning in C: a folder of
    thousands of records is read in a few milliseconds); bytes it does not match are read again
    by `_parse_tree_slowly`, which says where and why they are no tree.
    """
    entries = []
    pos, end = 0, len(raw)
    match = _ENTRY_HEAD.match
    while pos < end:
        head = match(raw, pos)
        if head is None or head.end() + oid_size > end:
            return _parse_tree_slowly(raw, oid_size)
        stop = head.end() + oid_size
        entries.append(TreeEntry(int(head[1], 8), head[2], raw[head.end() : stop]))
        pos = stop
    return entries


def _parse_tree_slowly(raw: bytes, oid_size: int) -> list[TreeEntry]:
    """parse_tree an entry at a time with find and slices, naming the first byte that is not a tree's."""
    entries = []
    pos, end = 0, len(raw)
    while pos < end:
        space = raw.find(b" ", pos)
        nul = raw.find(b"\x00", space + 1) if space >= 0 else -1
        if space <= pos or nul < 0 or nul + 1 + oid_size > end:
            raise ValueError(f"truncated entry at byte {pos}")
        digits = raw[pos:space]
        if not digits.isdigit() or not set(digits) <= set(b"01234567"):
            raise ValueError(f"entry at byte {pos} has no octal mode")
        entries.append(TreeEntry(int(digits, 8), raw[space + 1 : nul], raw[nul + 1 : nul + 1 + oid_size]))
        pos = nul + 1 + oid_size
    return entries


def show(name: bytes) -> str:
    """A tree entry name for a message: decoded, undecodable bytes escaped."""
    return name.decode("utf-8", "backslashreplace")


def entry_fault(entries: list[TreeEntry]) -> str | None:
    """Why git would not have written these entries (`holds ...`): an invalid, a duplicate or an out-of-order name;
    or why macOS or Windows would check them out otherwise (profile.folding.alias_fault).

    A sound tree (nearly every one) is told apart by whole-list operations: no name git never
    writes, as many distinct names as entries, and keys (a tree's name as if it ended in "/")
    already in order. Only a tree that fails
    one is read an entry at a time, for the first fault in its order.
    """
    names = [entry.name for entry in entries]
    keys = [entry.name + b"/" if entry.mode == TREE_MODE else entry.name for entry in entries]
    if (
        not any(not name or name in _RESERVED or b"/" in name or name.lower() == b".git" for name in names)
        and len(set(names)) == len(names)
        and keys == sorted(keys)
    ):
        return None if _plain_names(names) else alias_fault([show(name) for name in names])
    return _first_fault(entries)


def _plain_names(names: list[bytes]) -> bool:
    """True when every name is ASCII without capitals, `~`, `:` or a trailing dot or space: checked out as itself
    everywhere, and distinct names stay distinct (one pass over the names joined)."""
    joined = b"/".join(names) + b"/"
    return (
        joined.isascii()
        and joined == joined.lower()
        and b"~" not in joined
        and b":" not in joined
        and b"./" not in joined
        and b" /" not in joined
    )


def _first_fault(entries: list[TreeEntry]) -> str | None:
    names: set[bytes] = set()
    previous: bytes | None = None
    for entry in entries:
        name = entry.name
        if not name or name in _RESERVED or b"/" in name or name.lower() == b".git":
            return f"holds an entry named {show(name)!r}, which git never writes"
        if name in names:
            return f"holds two entries named {show(name)!r}"
        names.add(name)
        # git orders entries by name, a tree's name as if it ended in "/"
        key = name + b"/" if entry.is_tree else name
        if previous is not None and key <= previous:
            return f"holds entry {show(name)!r} out of git's order"
        previous = key
    return None if _plain_names(list(names)) else alias_fault([show(entry.name) for entry in entries])
