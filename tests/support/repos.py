"""Real repositories made with pygit2, real git for what must go through it, and file ages."""

from __future__ import annotations

import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pygit2

AUTHOR = pygit2.Signature("Test Author", "author@example.com", 1767225600, 0)  # 2026-01-01T00:00:00Z


@dataclass
class Repo:
    """A real repository made with pygit2, with helpers to write files and commit."""

    path: Path
    git: pygit2.Repository

    def write(self, rel: str, text: str | bytes) -> Path:
        target = self.path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, str):
            target.write_text(text, encoding="utf-8")
        else:
            target.write_bytes(text)
        return target

    def commit(self, message: str = "change", paths: list[str] | None = None, when: int | None = None) -> str:
        index = self.git.index
        if paths is None:
            index.add_all()
        else:
            for rel in paths:
                if (self.path / rel).exists():
                    index.add(rel)
                else:
                    index.remove(rel)
        index.write()
        tree = index.write_tree()
        sig = pygit2.Signature(AUTHOR.name, AUTHOR.email, when or AUTHOR.time, 0)
        parents = [] if self.git.head_is_unborn else [self.git.head.target]
        ref = "HEAD" if self.git.head_is_unborn else self.git.head.name
        return str(self.git.create_commit(ref, sig, sig, message, tree, parents))

    def add_worktree(self, name: str, where: Path) -> Repo:
        branch = self.git.branches.local.create(name, self.git.head.peel(pygit2.Commit))
        wt = self.git.add_worktree(name, str(where), branch)
        return Repo(Path(wt.path), pygit2.Repository(wt.path))


def make_repo(path: Path, *, init_memzoi: bool = True) -> Repo:
    path.mkdir(parents=True, exist_ok=True)
    git = pygit2.init_repository(str(path), initial_head="main")
    repo = Repo(path, git)
    repo.write("README.md", "# project\n")
    if init_memzoi:
        from git_memzoi.runtime.init import init_tree

        init_tree(path)
    repo.commit("initial")
    return repo


def git(*args: str, cwd: Path, check: bool = True, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Real git, for the few things that must go through it (push, hooks, aliases)."""
    return subprocess.run(["git", *args], cwd=cwd, check=check, capture_output=True, text=True, input=input)


def age(root: Path, seconds: float) -> None:
    """Make every file and folder under `root` look `seconds` old (the index never trusts stats younger than that)."""
    then = time.time() - seconds
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            os.utime(os.path.join(folder, name), (then, then), follow_symlinks=False)
    os.utime(root, (then, then))
