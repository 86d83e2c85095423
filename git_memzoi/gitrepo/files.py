"""Tracked files of the work tree (git's index) or of a commit's tree, as paths, modes and blob OIDs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from git_memzoi.gitrepo.repo import GitRepo


#: git's modes for a symlink and for a submodule (pygit2.enums.FileMode.LINK and COMMIT).
_LINK_MODE, _GITLINK_MODE = 0o120000, 0o160000


@dataclass(frozen=True)
class Tracked:
    """One tracked path: whether git stores it as a symlink, and its blob OID (None for a submodule)."""

    path: str
    link: bool
    oid: str | None


def tracked(repo: GitRepo, rev: str | None = None) -> dict[str, Tracked]:
    """Every file git tracks: the index of the work tree, or the tree of commit `rev`."""
    if rev is None:
        from git_memzoi.gitrepo.index_file import entries

        listed = entries(repo.git_dir)  # a plain index is read without loading pygit2
        if listed is not None:
            return {path: Tracked(path, mode == _LINK_MODE, oid) for path, mode, oid in listed if mode != _GITLINK_MODE}
    import pygit2  # pygit2 on first use (Command start-up: search)

    link_mode = int(pygit2.enums.FileMode.LINK)
    out: dict[str, Tracked] = {}
    if rev is None:
        for entry in repo.pygit.index:
            if entry.mode == int(pygit2.enums.FileMode.COMMIT):
                continue
            out[entry.path] = Tracked(entry.path, entry.mode == link_mode, str(entry.id))
        return out
    stack: list[tuple[str, pygit2.Tree]] = [("", repo.resolve(rev).tree)]
    while stack:
        base, node = stack.pop()
        for item in node:
            path = f"{base}{item.name}"
            if item.type == pygit2.enums.ObjectType.TREE:
                sub = repo.pygit[item.id]
                assert isinstance(sub, pygit2.Tree)
                stack.append((path + "/", sub))
            elif item.type == pygit2.enums.ObjectType.BLOB:
                out[path] = Tracked(path, item.filemode == pygit2.enums.FileMode.LINK, str(item.id))
    return out


def blob_bytes(repo: GitRepo, oid: str) -> bytes:
    """The bytes of blob `oid`."""
    import pygit2  # pygit2 on first use (Command start-up: search)

    blob = repo.pygit[oid]
    assert isinstance(blob, pygit2.Blob)
    return bytes(blob.data)


def blob_oid(data: bytes) -> str:
    """The OID git gives a blob holding `data` (as `git hash-object` does)."""
    import hashlib  # what pygit2.hash computes, without loading pygit2 (tens of ms) for a digest

    digest = hashlib.sha1(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()
