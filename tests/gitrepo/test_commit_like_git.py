"""apply --commit makes the commit the user's git would: identity, dates, gpg and ssh signatures, commit hooks."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

import pygit2
import pytest

from git_memzoi.index import shared_db
from git_memzoi.runtime.workspace import Workspace
from support import Repo, git, run_cli
from support.lifecycle import APPLIED_AT, at, one_line_error, packet, snapshot, write_packet

PID = "mem_2026_03_01_auth_abc123"
RECORD = ".memzoi/records/semantic/decisions/protected-routes-must-validate-sessions-server-side.md"
RESOLVED = f".memzoi/proposals/resolved/applied/{PID}.md"


@pytest.fixture
def ready(repo: Repo) -> Repo:
    """A committed pending packet, and an unrelated change staged that the apply commit must leave out."""
    shared_db.connect(Workspace.open(repo.path).layout.shared_db).close()
    pending = write_packet(repo, packet(PID))
    repo.commit("add packet", paths=[pending])
    repo.write("README.md", "# staged, not part of the apply\n")
    index = repo.git.index
    index.add("README.md")
    index.write()
    at(APPLIED_AT)
    return repo


def _head(repo: Repo) -> pygit2.Commit:
    return pygit2.Repository(str(repo.path)).head.peel(pygit2.Commit)


def _hook(folder: Path, name: str, script: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def _staged(repo: Repo) -> list[str]:
    return sorted(git("diff", "--cached", "--no-renames", "--name-only", cwd=repo.path).stdout.split())


# identity -----------------------------------------------------------------------


def test_identity_from_git_config_when_no_environment(ready: Repo, monkeypatch) -> None:
    for var in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(var, raising=False)
    git("config", "user.name", "Repo User", cwd=ready.path)
    git("config", "user.email", "repo@example.com", cwd=ready.path)
    git("config", "committer.email", "committer@example.com", cwd=ready.path)
    run_cli("apply", PID, "--commit")
    head = _head(ready)
    assert (head.author.name, head.author.email) == ("Repo User", "repo@example.com")
    assert (head.committer.name, head.committer.email) == ("Repo User", "committer@example.com")


def test_git_dash_c_settings_count_as_git_would(ready: Repo, monkeypatch) -> None:
    for var in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.delenv(var, raising=False)
    done = git(
        "-c", "user.name=Given On The Command Line", "memzoi", "apply", PID, "--commit", cwd=ready.path, check=False
    )
    assert done.returncode == 0, done.stderr
    head = _head(ready)
    assert head.author.name == head.committer.name == "Given On The Command Line"


def test_environment_identity_and_dates_win(ready: Repo, monkeypatch) -> None:
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Env Author")
    monkeypatch.setenv("GIT_AUTHOR_DATE", "@1700000000 +0130")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-03-02T10:00:00+02:00")
    run_cli("apply", PID, "--commit")
    head = _head(ready)
    assert head.author.name == "Env Author" and (head.author.time, head.author.offset) == (1700000000, 90)
    assert (head.committer.time, head.committer.offset) == (1772438400, 120)


def test_unparseable_date_is_refused_before_anything_changes(ready: Repo, monkeypatch) -> None:
    monkeypatch.setenv("GIT_COMMITTER_DATE", "next tuesday-ish")
    before = snapshot(ready.path)
    line = one_line_error(run_cli("apply", PID, "--commit", expect=1).stderr)
    assert "GIT_COMMITTER_DATE" in line
    assert snapshot(ready.path) == before and _staged(ready) == ["README.md"]


# signing ------------------------------------------------------------------------


def _need(binary: str) -> str:
    found = shutil.which(binary)
    if found is None:
        pytest.skip(f"{binary} is not installed on this machine")
    return found


def test_gpg_signed_commit_verifies(ready: Repo, tmp_path: Path, monkeypatch) -> None:
    gpg = _need("gpg")
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700)
    monkeypatch.setenv("GNUPGHOME", str(home))
    try:
        subprocess.run(
            [
                gpg,
                "--batch",
                "--passphrase",
                "",
                "--quick-gen-key",
                "Signer <author@example.com>",
                "ed25519",
                "sign",
                "never",
            ],
            check=True,
            capture_output=True,
        )
        listing = subprocess.run(
            [gpg, "--list-secret-keys", "--with-colons"], check=True, capture_output=True, text=True
        ).stdout
        fingerprint = next(line.split(":")[9] for line in listing.splitlines() if line.startswith("fpr:"))
        git("config", "commit.gpgsign", "true", cwd=ready.path)
        git("config", "user.signingkey", fingerprint, cwd=ready.path)
        sha = run_cli("apply", PID, "--commit", "--json").json()["commit"]
        assert _head(ready).gpg_signature[0] is not None
        verified = git("verify-commit", "--raw", sha, cwd=ready.path, check=False)
        assert verified.returncode == 0 and f"VALIDSIG {fingerprint}" in verified.stderr, verified.stderr
    finally:
        gpgconf = shutil.which("gpgconf")
        if gpgconf is not None:  # stop the agent this test's key started
            subprocess.run([gpgconf, "--kill", "gpg-agent"], check=False, capture_output=True)


def test_ssh_signed_commit_verifies(ready: Repo, tmp_path: Path) -> None:
    keygen = _need("ssh-keygen")
    key = tmp_path / "signing_key"
    subprocess.run([keygen, "-q", "-t", "ed25519", "-N", "", "-C", "signer", "-f", str(key)], check=True)
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(f"author@example.com {Path(f'{key}.pub').read_text().strip()}\n")
    for name, value in (
        ("commit.gpgsign", "true"),
        ("gpg.format", "ssh"),
        ("user.signingkey", str(key)),
        ("gpg.ssh.allowedSignersFile", str(allowed)),
    ):
        git("config", name, value, cwd=ready.path)
    sha = run_cli("apply", PID, "--commit", "--json").json()["commit"]
    verified = git("verify-commit", sha, cwd=ready.path, check=False)
    assert verified.returncode == 0, verified.stderr
    assert 'Good "git" signature for author@example.com' in verified.stderr


def test_ssh_literal_public_key_signs_through_the_agent(ready: Repo, tmp_path: Path, monkeypatch) -> None:
    keygen, agent, add = _need("ssh-keygen"), _need("ssh-agent"), _need("ssh-add")
    key = tmp_path / "agent_key"
    subprocess.run([keygen, "-q", "-t", "ed25519", "-N", "", "-C", "signer", "-f", str(key)], check=True)
    socket = tmp_path / "agent.sock"
    started = subprocess.Popen([agent, "-D", "-a", str(socket)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        monkeypatch.setenv("SSH_AUTH_SOCK", str(socket))
        for _ in range(200):  # the agent creates its socket shortly after it starts
            if socket.exists():
                break
            time.sleep(0.05)
        subprocess.run([add, "-q", str(key)], check=True, capture_output=True)
        public = Path(f"{key}.pub").read_text().strip()
        allowed = tmp_path / "allowed_signers"
        allowed.write_text(f"author@example.com {public}\n")
        for name, value in (
            ("commit.gpgsign", "true"),
            ("gpg.format", "ssh"),
            ("user.signingkey", f"key::{public}"),
            ("gpg.ssh.allowedSignersFile", str(allowed)),
        ):
            git("config", name, value, cwd=ready.path)
        sha = run_cli("apply", PID, "--commit", "--json").json()["commit"]
        verified = git("verify-commit", sha, cwd=ready.path, check=False)
        assert verified.returncode == 0, verified.stderr
    finally:
        started.kill()
        started.wait()


def test_failed_signature_leaves_the_apply_staged(ready: Repo, tmp_path: Path) -> None:
    _hook(tmp_path / "bin", "fake-gpg", "echo 'gpg: signing failed: No secret key' >&2\nexit 2\n")
    git("config", "commit.gpgsign", "true", cwd=ready.path)
    git("config", "gpg.program", str(tmp_path / "bin" / "fake-gpg"), cwd=ready.path)
    head_before = _head(ready).id
    line = one_line_error(run_cli("apply", PID, "--commit", expect=1).stderr)
    assert "no commit was made" in line and "No secret key" in line
    assert _head(ready).id == head_before
    assert (ready.path / RESOLVED).is_file() and RECORD in _staged(ready)


# hooks --------------------------------------------------------------------------


def test_hooks_run_like_git_commit_only(ready: Repo, tmp_path: Path) -> None:
    hooks = tmp_path / "hooks"
    git("config", "core.hooksPath", str(hooks), cwd=ready.path)
    seen = tmp_path / "seen"
    _hook(hooks, "pre-commit", f'git diff --cached --name-only > "{seen}.pre"\n')
    _hook(hooks, "prepare-commit-msg", f'echo "$2" > "{seen}.source"\n')
    _hook(hooks, "commit-msg", 'printf "\\nReviewed-by: hook\\n" >> "$1"\n')
    _hook(hooks, "post-commit", f'git rev-parse HEAD > "{seen}.post"\n')
    sha = run_cli("apply", PID, "--commit", "--json").json()["commit"]
    # pre-commit sees HEAD plus exactly the apply's paths, not the unrelated staged README.md
    assert "README.md" not in Path(f"{seen}.pre").read_text().split()
    assert RECORD in Path(f"{seen}.pre").read_text().split()
    assert Path(f"{seen}.source").read_text().strip() == "message"
    assert _head(ready).message == f"memzoi: apply {PID}\n\nReviewed-by: hook\n"
    assert Path(f"{seen}.post").read_text().strip() == sha
    assert _staged(ready) == ["README.md"]


@pytest.mark.parametrize("hook", ["pre-commit", "commit-msg"])
def test_a_refusing_hook_leaves_the_apply_done_and_staged(ready: Repo, hook: str) -> None:
    _hook(ready.path / ".git" / "hooks", hook, "echo 'lint: trailing whitespace in a record' >&2\nexit 1\n")
    head_before = _head(ready).id
    result = run_cli("apply", PID, "--commit", expect=1)
    line = one_line_error(result.stderr)
    assert f"the {hook} hook refused the commit: lint: trailing whitespace in a record" in line, line
    assert f"applied {PID}" in line
    assert _head(ready).id == head_before
    assert (ready.path / RESOLVED).is_file() and (ready.path / RECORD).is_file()
    assert _staged(ready) == sorted(
        ["README.md", RECORD, RESOLVED, f".memzoi/proposals/pending/{PID}.md", ".memzoi/log.md"]
    )
    assert "nothing to do" in run_cli("apply", PID, "--commit").stderr  # the apply itself is done


def test_memzois_own_pre_commit_hook_passes_the_apply(ready: Repo) -> None:
    run_cli("hook", "install")
    sha = run_cli("apply", PID, "--commit", "--json").json()["commit"]
    assert str(_head(ready).id) == sha


# an index libgit2 cannot write --------------------------------------------------


def test_split_index_is_refused_and_nothing_changes(ready: Repo) -> None:
    git("config", "core.splitIndex", "true", cwd=ready.path)
    git("update-index", "--split-index", cwd=ready.path)
    before = snapshot(ready.path)
    head_before = _head(ready).id
    result = run_cli("apply", PID, "--commit", expect=1)
    line = one_line_error(result.stderr)
    assert str(ready.path / ".git" / "index") in line and "cannot write this index" in line, line
    assert snapshot(ready.path) == before and _head(ready).id == head_before
    assert _staged(ready) == ["README.md"]
    assert os.listdir(ready.path / ".git").count("index.lock") == 0


# where HEAD is ------------------------------------------------------------------


def test_detached_head_moves_to_the_apply_commit(ready: Repo) -> None:
    git("checkout", "-q", "--detach", cwd=ready.path)
    before = _head(ready).id
    sha = run_cli("apply", PID, "--commit", "--json").json()["commit"]
    git_repo = pygit2.Repository(str(ready.path))
    assert git_repo.head_is_detached and str(git_repo.head.target) == sha
    assert _head(ready).parents[0].id == before
    assert str(git_repo.branches["main"].target) == str(before)  # the branch stays where it was
    assert git("reflog", "-1", "--format=%gs", cwd=ready.path).stdout.strip() == f"commit: memzoi: apply {PID}"


def test_first_commit_on_an_unborn_branch(tmp_path: Path, monkeypatch) -> None:
    from git_memzoi.runtime.init import init_tree

    root = tmp_path / "fresh"
    pygit2.init_repository(str(root), initial_head="main")
    init_tree(root)
    monkeypatch.chdir(root)
    write_packet(Repo(root, pygit2.Repository(str(root))), packet(PID))
    at(APPLIED_AT)
    result = run_cli("apply", PID, "--commit", "--json").json()
    git_repo = pygit2.Repository(str(root))
    head = git_repo.head.peel(pygit2.Commit)
    assert str(head.id) == result["commit"] and head.parents == [] and git_repo.head.name == "refs/heads/main"
    committed = sorted(git("ls-tree", "-r", "--name-only", "HEAD", cwd=root).stdout.split())
    # the step's files, and every file init wrote, which git did not track yet
    init_files = [".gitattributes", ".memzoi/index.md", ".memzoi/proposals/pending/.gitkeep"]
    init_files.append(".memzoi/records/.gitkeep")
    assert committed == sorted({*(p for p in result["files"] if (root / p).exists()), *init_files})
    reflog = git("reflog", "-1", "--format=%gs", cwd=root).stdout.strip()
    assert reflog == f"commit (initial): memzoi: apply {PID}"


def test_reject_commit_goes_the_same_way(ready: Repo) -> None:
    _hook(ready.path / ".git" / "hooks", "commit-msg", 'printf "\\nRejected-by: hook\\n" >> "$1"\n')
    sha = run_cli("reject", PID, "--reason", "not needed", "--commit", "--json").json()["commit"]
    head = _head(ready)
    assert str(head.id) == sha and head.message == f"memzoi: reject {PID}\n\nRejected-by: hook\n"
    assert _staged(ready) == ["README.md"]
    assert sorted(
        git("diff", "--no-renames", "--name-only", "HEAD~1", "HEAD", cwd=ready.path).stdout.split()
    ) == sorted(
        [".memzoi/log.md", f".memzoi/proposals/pending/{PID}.md", f".memzoi/proposals/resolved/rejected/{PID}.md"]
    )
