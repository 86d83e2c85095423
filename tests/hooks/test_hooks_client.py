"""Client hooks: install (core.hooksPath, worktrees, foreign hooks), pre-commit and pre-push through real git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2
import pytest
import yaml

from git_memzoi.hooks.install import MARKER
from support import ROOT, Repo, git, memzoi_exe, run_cli
from support.hooks import make_remote, packet, record, record_path


def hook_files(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(folder.iterdir()) if not p.name.endswith(".sample")}


def test_install_writes_pre_commit_and_pre_push_and_is_idempotent(repo: Repo) -> None:
    first = run_cli("hook", "install", "--json").json()
    hooks = repo.path / ".git" / "hooks"
    assert [(h["name"], h["action"]) for h in first["hooks"]] == [("pre-commit", "created"), ("pre-push", "created")]
    assert {h["path"] for h in first["hooks"]} == {str(hooks / "pre-commit"), str(hooks / "pre-push")}
    before = hook_files(hooks)
    assert MARKER in before["pre-commit"] and memzoi_exe() in before["pre-commit"]
    assert (hooks / "pre-push").stat().st_mode & 0o111
    again = run_cli("hook", "install", "--json").json()
    assert [h["action"] for h in again["hooks"]] == ["unchanged", "unchanged"]
    assert hook_files(hooks) == before


def test_install_honours_relative_hooks_path_from_a_subdirectory(repo: Repo) -> None:
    git("config", "core.hooksPath", ".githooks", cwd=repo.path)
    sub = repo.path / "src" / "deep"
    sub.mkdir(parents=True)
    result = run_cli("hook", "install", "--pre-commit", cwd=sub)
    assert (repo.path / ".githooks" / "pre-commit").is_file()
    assert not (sub / ".githooks").exists() and not (repo.path / ".git" / "hooks" / "pre-commit").exists()
    assert f"pre-commit hook created: {repo.path / '.githooks' / 'pre-commit'}" in result.stderr


def test_install_honours_absolute_hooks_path(repo: Repo, tmp_path: Path) -> None:
    shared = tmp_path / "shared-hooks"
    git("config", "core.hooksPath", str(shared), cwd=repo.path)
    run_cli("hook", "install", "--pre-push")
    assert list(hook_files(shared)) == ["pre-push"]


def test_linked_worktree_installs_into_the_common_hooks(repo: Repo, tmp_path: Path) -> None:
    linked = repo.add_worktree("feature", tmp_path / "feature")
    run_cli("hook", "install", "--pre-commit", cwd=linked.path)
    assert (repo.path / ".git" / "hooks" / "pre-commit").is_file()
    assert not (repo.path / ".git" / "worktrees" / "feature" / "hooks").exists()


def test_foreign_hook_is_never_overwritten(repo: Repo) -> None:
    hooks = repo.path / ".git" / "hooks"
    foreign = hooks / "pre-push"
    foreign.write_text("#!/bin/sh\nexec make lint\n")
    result = run_cli("hook", "install", expect=1)
    assert f"{foreign} exists and was not written by git memzoi" in result.stderr
    assert "git-memzoi hook pre-push" in result.stderr  # how to chain it
    assert foreign.read_text() == "#!/bin/sh\nexec make lint\n"
    assert not (hooks / "pre-commit").exists()  # refused as a whole: nothing half-installed


def test_pre_commit_install_in_a_bare_repository_is_a_usage_error(tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    pygit2.init_repository(str(bare), bare=True)
    result = run_cli("hook", "install", "--pre-commit", cwd=bare, expect=2)
    assert "--pre-receive" in result.stderr


def _commit(repo: Repo, *args: str) -> tuple[int, str]:
    result = git("commit", "-q", "-m", "change", *args, cwd=repo.path, check=False)
    return result.returncode, result.stderr


def test_pre_commit_through_git_commit(repo: Repo) -> None:
    run_cli("hook", "install", "--pre-commit")
    repo.write(record_path("use-redis"), record("use-redis"))
    git("add", ".memzoi", cwd=repo.path)
    assert _commit(repo) == (0, "")
    head = str(repo.git.head.target)
    repo.write(record_path("bad"), record("bad").replace("lane: semantic\n", ""))
    git("add", ".memzoi", cwd=repo.path)
    code, stderr = _commit(repo)
    assert code == 1
    assert f"{record_path('bad')}:1: field-missing: required field 'lane' is missing" in stderr
    assert "git memzoi: staged changes:" in stderr and "commit rejected" in stderr
    assert str(repo.git.head.target) == head


def test_pre_commit_sees_what_commit_a_stages(repo: Repo) -> None:
    repo.write(record_path("use-redis"), record("use-redis"))
    repo.commit("add record")
    run_cli("hook", "install", "--pre-commit")
    repo.write(record_path("use-redis"), record("use-redis", body="Edited in the work tree only."))
    # not staged: the index still equals HEAD, so a plain commit of something else passes
    repo.write("notes.txt", "n\n")
    git("add", "notes.txt", cwd=repo.path)
    assert _commit(repo)[0] == 0
    # `commit -a` stages into a temporary index (GIT_INDEX_FILE): the hook must read that one
    code, stderr = _commit(repo, "-a")
    assert code == 1 and "record-edited: record 'use-redis' is edited in place" in stderr


def test_pre_commit_scans_for_secrets(repo: Repo) -> None:
    run_cli("hook", "install", "--pre-commit")
    repo.write(record_path("deploy"), record("deploy", body="Use key AKIAABCDEFGHIJKLMNOP to deploy."))
    git("add", "-A", cwd=repo.path)
    code, stderr = _commit(repo)
    assert code == 1 and f"{record_path('deploy')}:24: secret: looks like an AWS access key" in stderr


def test_pre_commit_allows_a_clean_merge(repo: Repo) -> None:
    run_cli("hook", "install", "--pre-commit")
    base = repo.git.head.peel(pygit2.Commit)
    repo.git.branches.local.create("topic", base)
    repo.write(record_path("on-main"), record("on-main"))
    repo.commit("main record")
    repo.git.checkout("refs/heads/topic")
    repo.write(record_path("on-topic"), record("on-topic"))
    repo.commit("topic record")
    repo.git.checkout("refs/heads/main")
    git("merge", "-q", "--no-commit", "--no-ff", "topic", cwd=repo.path)
    assert (repo.path / ".git" / "MERGE_HEAD").exists()
    code, stderr = _commit(repo)
    assert code == 0, stderr
    assert len(repo.git.head.peel(pygit2.Commit).parents) == 2


def test_pre_commit_json_reports_an_untouched_memory(repo: Repo) -> None:
    repo.write("src/app.py", "print(1)\n")
    git("add", "src/app.py", cwd=repo.path)
    assert run_cli("hook", "pre-commit", "--json").json()["commits_checked"] == 0


def test_pre_push_runs_the_server_checks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    remote = make_remote(tmp_path, hook="none")
    monkeypatch.chdir(remote.work.path)
    run_cli("hook", "install", "--pre-push")
    remote.accepted()
    remote.commit({record_path("use-postgres"): None})
    before = remote.refs()
    result = remote.push()
    assert result.returncode == 1
    assert f"{record_path('use-postgres')}:1: record-deleted" in result.stderr
    assert "remote:" not in result.stderr  # refused locally, before anything was sent
    assert remote.refs() == before


def test_pre_push_skips_what_the_remote_already_has(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    remote = make_remote(tmp_path, hook="none")
    monkeypatch.chdir(remote.work.path)
    remote.accepted()
    remote.commit({".memzoi/proposals/pending/mem_1.md": packet("mem_1", sensitivity="local-only")})
    remote.accepted()  # no hook yet: the bad packet reaches the remote
    run_cli("hook", "install", "--pre-push")
    remote.commit({"notes.txt": "more\n"})
    result = remote.accepted()
    assert "sensitivity" not in result.stderr


def test_pre_commit_framework_manifest() -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    [hook] = hooks
    assert hook["id"] == "memzoi-validate"
    assert hook["entry"] == "git-memzoi hook pre-commit"
    assert hook["language"] == "python" and hook["pass_filenames"] is False
    assert hook["files"] == r"^\.memzoi/"


def test_pre_commit_framework_entry_runs_in_a_repository(repo: Repo) -> None:
    repo.write(record_path("use-redis"), record("use-redis"))
    git("add", "-A", cwd=repo.path)
    entry = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())[0]["entry"].split()
    result = subprocess.run(entry, cwd=repo.path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    repo.write(record_path("use-redis"), record("use-redis").replace("profile: memzoi\n", ""))
    git("add", "-A", cwd=repo.path)
    result = subprocess.run(entry, cwd=repo.path, capture_output=True, text=True)
    assert result.returncode == 1 and "use-redis.md" in result.stderr


def test_pre_push_without_a_remote_checks_a_given_range(repo: Repo) -> None:
    base = str(repo.git.head.target)
    repo.write(record_path("use-redis"), record("use-redis"))
    good = repo.commit("add")
    repo.write(record_path("use-redis"), record("use-redis", body="edited"))
    bad = repo.commit("edit")
    ok = run_cli("hook", "pre-push", "--json", input=f"HEAD {good} refs/heads/ci {base}\n")
    assert ok.json()["commits_walked"] == 1 and ok.json()["ok"] is True
    refused = run_cli("hook", "pre-push", "--json", input=f"HEAD {bad} refs/heads/ci {base}\n", expect=1)
    assert [(p["commit"], p["code"]) for p in refused.json()["problems"]] == [(bad, "record-edited")]
