"""Raw tree objects read as git checks them out: every entry, in stored order, with no name folded.

libgit2 looks a name up in a tree by binary search and its diffs pair entries in stored order,
so a tree with two entries of one name, or with entries out of git's order, shows the hooks one
file while `git checkout` writes another. The hooks therefore read the trees a push changes
under .memzoi/ from their raw bytes and refuse any that git itself would not have written.
"""

from __future__ import annotations

import re
from typing import NamedTuple

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


def parse_tree(raw: bytes, oid_size: int) -> list[TreeEntry]:
    """Every `<mode> <name>NUL<oid>` entry of a raw tree object; ValueError when the bytes are not one."""
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
    """Why git would not have written these entries (`holds ...`): an invalid, a duplicate or an out-of-order name."""
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
    return None
