"""Files git tracks that the work tree does not hold: the index entries a sparse checkout marks skip-worktree."""

from __future__ import annotations

from typing import TYPE_CHECKING

from git_memzoi.gitrepo.repo import GitRepo

if TYPE_CHECKING:  # pygit2 on first use: an index without skip-worktree entries never loads it (import plans)
    import pygit2

__all__ = ["skipped", "tracked"]

#: libgit2's GIT_INDEX_ENTRY_SKIP_WORKTREE, in an entry's extended flags (pygit2's IndexEntry does not carry them).
_SKIP_WORKTREE = 1 << 14


def _index(repo: GitRepo) -> pygit2.Index | None:
    import pygit2

    try:
        index: pygit2.Index = repo.pygit.index
        index.read(True)
    except pygit2.GitError:
        return None  # an index libgit2 cannot read is refused where it is written (gitrepo.commit)
    return index


def tracked(repo: GitRepo, paths: list[str]) -> list[str]:
    """Those of `paths` that git's index holds (the caller knows they are not in the work tree)."""
    index = _index(repo) if paths else None
    return [rel for rel in paths if index is not None and rel in index]


def skipped(repo: GitRepo, prefix: str) -> dict[str, str]:
    """{path: blob ID} of each skip-worktree index entry under `prefix/` ("": all of them): what sparse leaves out."""
    git_dir_index = repo.git_dir / "index"
    try:
        with open(git_dir_index, "rb") as handle:
            header = handle.read(8)
    except OSError:
        return {}
    # git writes extended flags, and so skip-worktree entries, only from index version 3 on
    if len(header) < 8 or header[:4] != b"DIRC" or int.from_bytes(header[4:8], "big") < 3:
        return {}
    index = _index(repo)
    if index is None:
        return {}
    from pygit2.ffi import C, ffi

    start = (prefix.rstrip("/") + "/").encode() if prefix.strip("/") else b""  # "": the whole index
    raw = index._index
    count = C.git_index_entrycount(raw)

    def path_at(position: int) -> bytes:
        return bytes(ffi.string(C.git_index_get_byindex(raw, position).path))

    low, high = 0, count  # entries are sorted by path: find the first one under the prefix
    while low < high:
        middle = (low + high) // 2
        if path_at(middle) < start:
            low = middle + 1
        else:
            high = middle
    found: list[str] = []
    for position in range(low, count):
        entry = C.git_index_get_byindex(raw, position)
        path = bytes(ffi.string(entry.path))
        if not path.startswith(start):
            break
        if entry.flags_extended & _SKIP_WORKTREE:
            found.append(path.decode("utf-8", "surrogateescape"))
    return {path: str(index[path].id) for path in found}
