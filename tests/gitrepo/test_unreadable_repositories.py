"""Repositories git memzoi cannot read whole: every command refuses a SHA-256 repository in one line, with 128."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from support import git, memzoi_exe

SHA256_LINE = "a SHA-256 repository (extensions.objectFormat), which git memzoi cannot read"


def sha256_repo(tmp_path: Path) -> Path:
    """A SHA-256 repository with memory and two commits, made by real git."""
    work = tmp_path / "sha256"
    git("init", "-q", "--object-format=sha256", "-b", "main", str(work), cwd=tmp_path)
    (work / ".memzoi" / "records" / "project").mkdir(parents=True)
    (work / ".memzoi" / "config.toml").write_text("")
    (work / "README.md").write_text("# project\n")
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "initial", cwd=work)
    (work / "README.md").write_text("# project\n\nmore\n")
    git("commit", "-q", "-am", "second", cwd=work)
    return work


def refused(cwd: Path, *args: str, stdin: str = "") -> str:
    done = subprocess.run([memzoi_exe(), *args], cwd=cwd, input=stdin, capture_output=True, text=True, timeout=60)
    assert done.returncode == 128, (args, done.returncode, done.stderr)
    lines = done.stderr.splitlines()
    assert lines[0].startswith("git memzoi: ") and SHA256_LINE in lines[0], done.stderr
    assert lines[1].startswith("hint: ") and len(lines) == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    return lines[0]


@pytest.mark.parametrize(
    "args",
    [
        ("validate",),
        ("validate", "--rev", "HEAD"),
        ("propose", "--title", "Use Postgres", "--type", "decision", "--body", "We use Postgres."),
        ("hook", "check", "HEAD~1..HEAD"),
        ("hook", "check", "--json", "HEAD~1..HEAD"),
        ("status",),
        ("search", "postgres"),
        ("rebuild",),
        ("export", "okf"),
    ],
)
def test_every_command_refuses_a_sha256_repository_in_one_line(tmp_path: Path, args: tuple[str, ...]) -> None:
    work = sha256_repo(tmp_path)
    line = refused(work, *args)
    assert str(work) in line
    assert not (Path(os.environ["MEMZOI_HOME"]) / "projects").exists()  # nothing written for it


def test_hook_install_refuses_and_installs_nothing(tmp_path: Path) -> None:
    work = sha256_repo(tmp_path)
    before = sorted(p.name for p in (work / ".git" / "hooks").iterdir())
    refused(work, "hook", "install")
    assert sorted(p.name for p in (work / ".git" / "hooks").iterdir()) == before


def test_a_sha256_server_refuses_every_push_through_its_gates(tmp_path: Path) -> None:
    work = sha256_repo(tmp_path)
    bare = tmp_path / "server.git"
    git("init", "-q", "--bare", "--object-format=sha256", str(bare), cwd=tmp_path)
    git("push", "-q", str(bare), "main", cwd=work)
    tip = git("rev-parse", "HEAD", cwd=work).stdout.strip()
    zero = "0" * 64
    refused(bare, "hook", "pre-receive", stdin=f"{zero} {tip} refs/heads/main\n")
    refused(bare, "hook", "update", "refs/heads/main", zero, tip)
    refused(bare, "hook", "install")
    assert not (bare / "hooks" / "pre-receive").exists()


def test_a_commit_that_touches_memory_in_a_sha256_repository_is_refused_by_pre_commit(tmp_path: Path) -> None:
    work = sha256_repo(tmp_path)
    (work / ".memzoi" / "log.md").write_text("# Log\n")
    git("add", ".memzoi/log.md", cwd=work)
    refused(work, "hook", "pre-commit")
