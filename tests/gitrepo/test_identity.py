"""Repository identity: keys shared by linked worktrees, bare repositories, GIT_DIR."""

from __future__ import annotations

import re
from pathlib import Path

from support import git, make_repo, run_cli

KEY = re.compile(r"^[a-z0-9-]+-[0-9a-f]{16}$")


def test_linked_worktree_shares_repository_key_not_worktree_key(repo, tmp_path: Path) -> None:
    linked = repo.add_worktree("feature", tmp_path / "feature-wt")
    main = run_cli("doctor", "--json").json()
    other = run_cli("doctor", "--json", cwd=linked.path).json()
    assert main["repository_key"] == other["repository_key"]
    assert main["paths"]["shared_db"] == other["paths"]["shared_db"]
    assert main["paths"]["lock"] == other["paths"]["lock"]
    assert main["worktree_key"] != other["worktree_key"]
    assert main["paths"]["index_db"] != other["paths"]["index_db"]
    for key in (main["repository_key"], main["worktree_key"], other["worktree_key"]):
        assert KEY.match(key), key


def test_subfolder_and_symlinked_path_give_same_keys(repo, tmp_path: Path) -> None:
    sub = repo.path / "src" / "deep"
    sub.mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(repo.path)
    a = run_cli("doctor", "--json").json()
    b = run_cli("doctor", "--json", cwd=sub).json()
    c = run_cli("doctor", "--json", cwd=link).json()
    assert a["repository_key"] == b["repository_key"] == c["repository_key"]
    assert a["worktree_key"] == b["worktree_key"] == c["worktree_key"]


def test_bare_repository_and_git_dir_env(repo, tmp_path: Path, monkeypatch) -> None:
    bare = tmp_path / "server.git"
    git("clone", "-q", "--bare", str(repo.path), str(bare), cwd=tmp_path)
    data = run_cli("doctor", "--json", cwd=bare).json()
    assert data["repository"]["bare"] is True
    assert data["repository_key"].startswith("server-")
    monkeypatch.setenv("GIT_DIR", str(repo.path / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(repo.path))
    via_env = run_cli("doctor", "--json", cwd=tmp_path).json()
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_WORK_TREE")
    assert via_env["repository_key"] == run_cli("doctor", "--json").json()["repository_key"]


def test_outside_a_repository_is_exit_128(tmp_path: Path) -> None:
    result = run_cli("doctor", cwd=tmp_path, expect=128)
    assert "not a git repository" in result.stderr
    assert "Traceback" not in result.stderr


def test_init_is_idempotent_and_marks_log_union(tmp_path: Path) -> None:
    r = make_repo(tmp_path / "p", init_memzoi=False)
    first = run_cli("init", "--json", cwd=r.path).json()["created"]
    assert ".memzoi/index.md" in first and ".memzoi/log.md" in first and ".gitattributes" in first
    assert run_cli("init", "--json", cwd=r.path).json()["created"] == []
    assert ".memzoi/log.md merge=union" in (r.path / ".gitattributes").read_text()
