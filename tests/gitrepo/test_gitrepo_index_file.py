"""gitrepo.index_file: tracked files read from git's index without pygit2 are exactly what pygit2's index gives."""

from __future__ import annotations

import os
from pathlib import Path

import pygit2
import pytest

from git_memzoi.gitrepo import files as gitfiles
from git_memzoi.gitrepo.index_file import entries
from git_memzoi.gitrepo.repo import GitRepo
from support import Repo, git


def _pygit2_listing(path: Path) -> dict[str, gitfiles.Tracked]:
    """The listing as pygit2 reads the index (what gitfiles.tracked returned before the speed path)."""
    link, commit = int(pygit2.enums.FileMode.LINK), int(pygit2.enums.FileMode.COMMIT)
    index = pygit2.Repository(str(path)).index
    return {e.path: gitfiles.Tracked(e.path, e.mode == link, str(e.id)) for e in index if e.mode != commit}


def _shaped(repo: Repo) -> GitRepo:
    """A repository whose index holds nested files, an executable, a symlink, a submodule and a non-ASCII name."""
    repo.write("AGENTS.md", "# Root\n\n## Rule\n\ntext\n")
    repo.write("pkg/deep/AGENTS.md", "## Nested\n\nmore\n")
    repo.write("tool.sh", "#!/bin/sh\n")
    os.chmod(repo.path / "tool.sh", 0o755)
    repo.write("docs/café.md", "# Café\n")
    os.symlink("AGENTS.md", repo.path / "CLAUDE.md")
    sub = git("rev-parse", "HEAD", cwd=repo.path).stdout.strip()
    git("update-index", "--add", "--cacheinfo", f"160000,{sub},vendor/lib", cwd=repo.path)
    git("add", "-A", cwd=repo.path)
    return GitRepo.at(repo.path / ".git", repo.path / ".git", repo.path)


def test_plain_index_is_read_without_pygit2_and_matches_it(repo: Repo) -> None:
    grepo = _shaped(repo)
    listed = entries(grepo.git_dir)
    assert listed is not None  # the speed path is taken for a version 2 index
    tracked = gitfiles.tracked(grepo)
    assert tracked == _pygit2_listing(repo.path)
    assert list(tracked) == list(_pygit2_listing(repo.path))
    assert tracked["CLAUDE.md"].link and not tracked["AGENTS.md"].link
    assert "vendor/lib" not in tracked and "docs/café.md" in tracked


def test_version_3_index_with_intent_to_add_is_read_and_matches(repo: Repo) -> None:
    grepo = _shaped(repo)
    repo.write("later.md", "# Later\n")
    git("add", "-N", "later.md", cwd=repo.path)  # an extended flag: git writes version 3
    assert (repo.path / ".git" / "index").read_bytes()[4:8] == b"\0\0\0\x03"
    assert entries(grepo.git_dir) is not None
    assert gitfiles.tracked(grepo) == _pygit2_listing(repo.path)
    assert "later.md" in gitfiles.tracked(grepo)


def test_a_version_4_index_falls_back_to_pygit2(repo: Repo) -> None:
    grepo = _shaped(repo)
    git("update-index", "--index-version", "4", cwd=repo.path)
    assert (repo.path / ".git" / "index").read_bytes()[4:8] == b"\0\0\0\x04"
    assert entries(grepo.git_dir) is None
    assert gitfiles.tracked(grepo) == _pygit2_listing(repo.path)


def test_a_split_index_is_left_to_pygit2(repo: Repo) -> None:
    grepo = _shaped(repo)
    git("update-index", "--split-index", cwd=repo.path)
    repo.write("touch.md", "# Touch\n")
    git("add", "touch.md", cwd=repo.path)  # the index now names a shared index file ("link")
    assert entries(grepo.git_dir) is None
    with pytest.raises(pygit2.GitError, match="link"):  # libgit2 reads no split index: as before
        gitfiles.tracked(grepo)


def test_a_conflict_falls_back_to_pygit2(repo: Repo) -> None:
    grepo = _shaped(repo)
    git("commit", "-qm", "shaped", cwd=repo.path)
    git("checkout", "-qb", "side", cwd=repo.path)
    repo.write("AGENTS.md", "# Side\n")
    git("commit", "-qam", "side", cwd=repo.path)
    git("checkout", "-q", "-", cwd=repo.path)
    repo.write("AGENTS.md", "# Main\n")
    git("commit", "-qam", "main", cwd=repo.path)
    assert git("merge", "side", cwd=repo.path, check=False).returncode != 0
    assert entries(grepo.git_dir) is None
    assert gitfiles.tracked(grepo) == _pygit2_listing(repo.path)


def test_a_missing_or_torn_index_falls_back(repo: Repo) -> None:
    grepo = _shaped(repo)
    index = repo.path / ".git" / "index"
    raw = index.read_bytes()
    index.write_bytes(raw[:-1] + bytes([raw[-1] ^ 1]))
    assert entries(grepo.git_dir) is None
    index.unlink()
    assert entries(grepo.git_dir) is None
    assert gitfiles.tracked(grepo) == _pygit2_listing(repo.path) == {}
