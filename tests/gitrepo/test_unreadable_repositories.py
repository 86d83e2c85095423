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


# partial clones ---------------------------------------------------------------------------------


def blobless_clone(tmp_path: Path, records: int = 3) -> tuple[Path, Path]:
    """(server, clone): a bare repository that serves filters, and a `--filter=blob:none --no-checkout` clone
    of it whose last commit adds a record over `records` others; the clone holds no blob at all."""
    from support.hooks import record, record_path

    work = tmp_path / "src"
    git("init", "-q", "-b", "main", str(work), cwd=tmp_path)
    for i in range(records):
        path = work / record_path(f"kept-{i}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(record(f"kept-{i}"))
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "records", cwd=work)
    (work / record_path("use-redis")).write_text(record("use-redis"))
    git("add", ".", cwd=work)
    git("commit", "-q", "-m", "one more", cwd=work)
    server = tmp_path / "server.git"
    git("clone", "-q", "--bare", str(work), str(server), cwd=tmp_path)
    git("config", "uploadpack.allowFilter", "true", cwd=server)
    clone = tmp_path / "clone"
    git("clone", "-q", "--filter=blob:none", "--no-checkout", f"file://{server}", str(clone), cwd=tmp_path)
    listed = git("rev-list", "--objects", "--missing=print", "HEAD", cwd=clone).stdout
    assert sum(line.startswith("?") for line in listed.splitlines()) >= records + 1  # no blob is there
    return server, clone


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([memzoi_exe(), *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_hook_check_in_a_blobless_clone_fetches_what_it_reads(tmp_path: Path) -> None:
    _, clone = blobless_clone(tmp_path)
    done = run(clone, "hook", "check", "HEAD~1..HEAD")
    assert done.returncode == 0, done.stderr
    assert "memory OK" in done.stderr


def test_hook_check_in_a_blobless_clone_still_refuses_an_in_place_edit(tmp_path: Path) -> None:
    from support.hooks import record, record_path

    server, _ = blobless_clone(tmp_path)
    work = tmp_path / "src"
    (work / record_path("kept-1")).write_text(record("kept-1", body="Edited in place."))
    git("commit", "-q", "-am", "edit", cwd=work)
    git("push", "-q", str(server), "main", cwd=work)
    clone = tmp_path / "clone2"
    git("clone", "-q", "--filter=blob:none", "--no-checkout", f"file://{server}", str(clone), cwd=tmp_path)
    done = run(clone, "hook", "check", "HEAD~1..HEAD")
    assert done.returncode == 1, done.stderr
    assert f"{record_path('kept-1')}:" in done.stderr and "record-edited" in done.stderr


def test_a_blob_the_promisor_cannot_give_is_exit_3_in_one_line(tmp_path: Path) -> None:
    server, clone = blobless_clone(tmp_path)
    server.rename(tmp_path / "gone.git")  # the remote is unreachable now
    done = run(clone, "hook", "check", "HEAD~1..HEAD")
    assert done.returncode == 3, done.stderr
    first, hint = done.stderr.splitlines()[-2:]
    assert first.startswith("git memzoi: blob ") and "(a partial clone: remote 'origin' promises the blob; " in first
    assert "git could not fetch it: " in first
    assert hint.startswith("hint: let git fetch it")
    assert "Traceback" not in done.stderr
