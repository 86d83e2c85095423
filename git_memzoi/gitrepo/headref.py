"""The commit HEAD names, read from the git directory's files: no process, no pygit2 (the read path's cost).

It answers for a detached HEAD and a branch whose ref is a loose file or in packed-refs; for
anything else (reftable, a symbolic ref outside refs/heads/, an unreadable file) it says it
cannot, and the caller asks git (`gitrepo.codehistory.head_commit`).
"""

from __future__ import annotations

import os

_HEX = frozenset("0123456789abcdef")


def is_sha(text: str) -> bool:
    """A full object name (SHA-1 or SHA-256 hex)."""
    return len(text) in (40, 64) and set(text) <= _HEX


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return None


def _packed(common_dir: str, ref: str) -> str | None:
    text = _read(os.path.join(common_dir, "packed-refs"))
    for line in (text or "").splitlines():
        sha, _, name = line.partition(" ")
        if name == ref and is_sha(sha):
            return sha
    return None


def head_from_files(git_dir: os.PathLike[str] | str, common_dir: os.PathLike[str] | str) -> tuple[bool, str | None]:
    """(answered, sha): the HEAD commit from the git directory's files; answered False means "ask git"."""
    head = _read(os.path.join(git_dir, "HEAD"))
    if head is None:
        return False, None
    if is_sha(head):
        return True, head
    if not head.startswith("ref: refs/heads/"):
        return False, None
    ref = head[len("ref: ") :]
    for folder in (git_dir, common_dir):
        loose = _read(os.path.join(folder, ref))
        if loose is not None:
            return (True, loose) if is_sha(loose) else (False, None)
    packed = _packed(os.fspath(common_dir), ref)
    return (True, packed) if packed is not None else (False, None)
