"""Blob OIDs from git's index stat cache agree with git itself; racy and unknown formats fall back."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from git_memzoi.index.git_index import tracked_stats
from git_memzoi.index.parse import blob_oid
from support import Repo, git
from support.recall import add_record


def test_tracked_stats_match_git_ls_files(repo: Repo) -> None:
    for n in range(5):
        add_record(repo, f"g/{n}", f"g-{n}")
    git("add", "-A", cwd=repo.path)
    past = 1_600_000_000_000_000_000
    # git refreshes stat data on `update-index --refresh`; make the files older than the index first
    for path in (repo.path / ".memzoi/records/g").iterdir():
        os.utime(path, ns=(past, past))
    git("update-index", "--refresh", cwd=repo.path, check=False)
    stats = tracked_stats(repo.path / ".git", ".memzoi/records/")
    assert stats is not None and {p for p in stats if p.endswith(".md")} == {
        f".memzoi/records/g/{n}.md" for n in range(5)
    }
    listed = git("ls-files", "-s", ".memzoi/records/g", cwd=repo.path).stdout.splitlines()
    assert len(listed) == 5
    for line in listed:
        meta, path = line.split("\t")
        oid = meta.split()[1]
        assert stats[path][0] == oid == blob_oid((repo.path / path).read_bytes())
        st = os.stat(repo.path / path)
        assert stats[path][1:] == (
            st.st_size,
            st.st_mtime_ns,
            st.st_ctime_ns,
            st.st_ino & 0xFFFFFFFF,
            st.st_dev & 0xFFFFFFFF,
        )


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_entries_whose_stat_git_does_not_check_are_left_out(repo: Repo, flag: str) -> None:
    """git trusts an assume-unchanged entry whatever the file holds, and a skip-worktree one is not in
    the work tree it describes: neither vouches for a file's blob."""
    for n in range(3):
        add_record(repo, f"g/{n}", f"g-{n}")
    git("add", "-A", cwd=repo.path)
    past = 1_600_000_000_000_000_000
    for path in (repo.path / ".memzoi/records/g").iterdir():
        os.utime(path, ns=(past, past))
    git("update-index", "--refresh", cwd=repo.path, check=False)
    git("update-index", flag, ".memzoi/records/g/1.md", cwd=repo.path)
    stats = tracked_stats(repo.path / ".git", ".memzoi/records/g/")
    assert stats is not None and sorted(stats) == [".memzoi/records/g/0.md", ".memzoi/records/g/2.md"]


def test_racily_clean_entries_are_left_out_and_bad_indexes_give_nothing(repo: Repo, tmp_path: Path) -> None:
    add_record(repo, "g/fresh", "fresh-one")
    git("add", "-A", cwd=repo.path)  # written in the same second as the index: racily clean
    assert tracked_stats(repo.path / ".git", ".memzoi/records/") == {}
    (tmp_path / "index").write_bytes(b"DIRC\x00\x00\x00\x04\x00\x00\x00\x01")  # version 4: not read
    assert tracked_stats(tmp_path, ".memzoi/") is None
    (tmp_path / "index").write_bytes(b"DIRC\x00\x00\x00\x02\x00\x00\x00\x05truncated")
    assert tracked_stats(tmp_path, ".memzoi/") is None
    assert tracked_stats(tmp_path / "missing", ".memzoi/") is None


@pytest.mark.parametrize(
    "data", [b"", b"x", b"# AGENTS\n\n## Rule\n\ntext\n", "caf\u00e9\r\n".encode() * 300, bytes(range(256))]
)
def test_gitrepo_blob_oid_is_what_git_hash_object_prints(tmp_path: Path, data: bytes) -> None:
    import pygit2

    from git_memzoi.gitrepo.files import blob_oid as gitrepo_blob_oid

    (tmp_path / "f").write_bytes(data)
    printed = git("hash-object", "--no-filters", "f", cwd=tmp_path).stdout.strip()
    assert gitrepo_blob_oid(data) == printed == str(pygit2.hash(data))
