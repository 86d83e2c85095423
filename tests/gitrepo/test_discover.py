"""Repository discovery without pygit2 agrees with pygit2 on every layout it answers for."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_memzoi.errors import MemzoiError
from git_memzoi.gitrepo.discover import find
from git_memzoi.gitrepo.repo import GitRepo, open_repo, open_with_pygit2
from support import git


def _commit(where: Path) -> None:
    (where / "README.md").write_text("# x\n")
    git("add", "README.md", cwd=where)
    git("commit", "-q", "-m", "initial", cwd=where)


def layouts(root: Path) -> dict[str, Path]:
    """Real repositories made with git: name -> a folder to start discovery from."""
    out: dict[str, Path] = {}
    main = root / "main"
    main.mkdir()
    git("init", "-q", cwd=main)
    _commit(main)
    (main / "src" / "deep").mkdir(parents=True)
    out["main"] = main
    out["main/src/deep"] = main / "src" / "deep"
    git("worktree", "add", "-q", "-b", "wt1", str(root / "wt1"), cwd=main)
    out["linked worktree"] = root / "wt1"
    git("worktree", "add", "-q", "-b", "inner", str(main / "src" / "inner"), cwd=main)
    out["worktree inside the main work tree"] = main / "src" / "inner"
    (root / "sepwt").mkdir()
    git("init", "-q", f"--separate-git-dir={root / 'sep.git'}", cwd=root / "sepwt")
    _commit(root / "sepwt")
    out["gitfile (separate git dir)"] = root / "sepwt"
    sub = root / "subsrc"
    sub.mkdir()
    git("init", "-q", cwd=sub)
    _commit(sub)
    git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "mod", cwd=main)
    out["submodule"] = main / "mod"
    git("init", "-q", "--bare", str(root / "bare.git"), cwd=root)
    out["bare"] = root / "bare.git"
    out["bare/refs"] = root / "bare.git" / "refs"
    out["inside .git"] = main / ".git" / "refs"
    (root / "plain").mkdir()
    out["not a repository"] = root / "plain"
    (root / "ext").mkdir()
    (main / "src" / "outside").symlink_to(root / "ext")  # a symlink in the work tree pointing out of it
    out["symlink out of the work tree"] = main / "src" / "outside"
    (root / "link-main").symlink_to(main)
    out["symlinked work tree"] = root / "link-main" / "src"
    out["symlinked linked worktree"] = _link(root, root / "wt1")
    return out


def _link(root: Path, target: Path) -> Path:
    link = root / ("link-" + str(target.relative_to(root)).replace(os.sep, "-"))
    if not link.exists():
        link.symlink_to(target)
    return link


def identity(repo: GitRepo) -> tuple[object, ...]:
    return (repo.git_dir, repo.common_dir, repo.workdir, repo.repository_key, repo.worktree_key)


def pygit2_identity(start: Path) -> tuple[object, ...] | None:
    try:
        return identity(open_with_pygit2(start))
    except MemzoiError:
        return None


def test_fast_path_matches_pygit2_across_layouts(tmp_path: Path) -> None:
    starts = layouts(tmp_path)
    answered: set[str] = set()

    @settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(name=st.sampled_from(sorted(starts)), depth=st.integers(0, 3), via_link=st.booleans())
    def check(name: str, depth: int, via_link: bool) -> None:
        start = starts[name]
        if start.is_dir() and depth and name not in ("bare", "bare/refs", "inside .git"):
            start = start.joinpath(*[f"d{i}" for i in range(depth)])
            start.mkdir(parents=True, exist_ok=True)
        if via_link:
            start = _link(tmp_path, start)
        fast = find(start)
        if fast is None:
            return
        answered.add(name)
        assert identity(GitRepo.at(*fast)) == pygit2_identity(start), name
        assert identity(open_repo(start)) == pygit2_identity(start), name

    check()
    # the plain layouts are the fast path's to answer; the odd ones are pygit2's
    assert {
        "main",
        "main/src/deep",
        "linked worktree",
        "worktree inside the main work tree",
        "gitfile (separate git dir)",
        "symlinked work tree",
        "symlinked linked worktree",
    } <= answered
    assert not answered & {"submodule", "bare", "bare/refs", "inside .git", "not a repository"}


@pytest.mark.parametrize("variable", ["GIT_DIR", "GIT_WORK_TREE", "GIT_CEILING_DIRECTORIES", "GIT_COMMON_DIR"])
def test_discovery_variables_leave_it_to_pygit2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, variable: str) -> None:
    starts = layouts(tmp_path)
    assert find(starts["main"]) is not None
    monkeypatch.setenv(variable, str(tmp_path))
    assert find(starts["main"]) is None


@pytest.mark.parametrize(
    "config", ["[core]\n\tworktree = /elsewhere\n", "[core]\n\tbare = true\n", "[include]\n\tpath = other.config\n"]
)
def test_config_that_moves_the_work_tree_is_left_to_pygit2(tmp_path: Path, config: str) -> None:
    starts = layouts(tmp_path)
    config_file = starts["main"] / ".git" / "config"
    config_file.write_text(config_file.read_text() + config)
    assert find(starts["main"]) is None


def test_pygit2_is_opened_lazily_and_reads_the_same_repository(tmp_path: Path) -> None:
    starts = layouts(tmp_path)
    repo = open_repo(starts["linked worktree"])
    assert repo._pygit is None
    head = repo.head_commit()
    assert head is not None and str(head.id) == git("rev-parse", "HEAD", cwd=starts["linked worktree"]).stdout.strip()
    assert Path(os.path.realpath(repo.pygit.workdir)) == repo.workdir
