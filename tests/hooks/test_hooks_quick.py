"""Client hooks exit before heavy imports when .memzoi/ is untouched, and pre-push by URL walks what it must."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pygit2
import pytest

from support import Repo, git, make_repo, run_cli, run_importtime
from support.hooks import Remote, make_remote, record, record_path

#: What an untouched commit or push must never load: the checks' dependencies.
FORBIDDEN = (
    "pygit2",
    "pydantic",
    "pydantic_core",
    "yaml",
    "mcp",
    "filelock",
    "sqlite3",
    "git_memzoi.hooks.checks",
    "git_memzoi.profile",
)
ZERO = "0" * 40


def imported(args: list[str], cwd: Path, stdin: str = "") -> tuple[int, str, set[str]]:
    """Run `git memzoi ARGS` under `python -X importtime`: exit code, stdout, modules loaded."""
    done, modules = run_importtime(args, cwd, input=stdin)
    return done.returncode, done.stdout, modules


def heavy(modules: set[str]) -> set[str]:
    return {m for m in modules if m in FORBIDDEN or m.startswith(tuple(f"{f}." for f in FORBIDDEN))}


def test_pre_commit_of_code_only_imports_nothing_heavy(repo: Repo) -> None:
    repo.write("src/app.py", "print(1)\n")
    git("add", "src/app.py", cwd=repo.path)
    code, out, modules = imported(["hook", "pre-commit", "--json"], repo.path)
    assert code == 0 and json.loads(out)["commits_checked"] == 0
    assert "git_memzoi.hooks.quick" in modules and heavy(modules) == set() and "click" not in modules


def test_pre_commit_of_memory_still_catches_a_bad_record(repo: Repo) -> None:
    repo.write(record_path("bad"), record("bad").replace("lane: semantic\n", ""))
    git("add", ".memzoi", cwd=repo.path)
    code, out, modules = imported(["hook", "pre-commit", "--json"], repo.path)
    assert code == 1 and "pydantic" in modules
    assert [p["code"] for p in json.loads(out)["problems"]] == ["field-missing"]


def test_pre_commit_from_a_subdirectory_still_sees_the_staged_memory(repo: Repo) -> None:
    repo.write(record_path("bad"), record("bad").replace("lane: semantic\n", ""))
    git("add", ".memzoi", cwd=repo.path)
    (repo.path / "src").mkdir()
    code, out, _ = imported(["hook", "pre-commit", "--json"], repo.path / "src")
    assert code == 1 and [p["code"] for p in json.loads(out)["problems"]] == ["field-missing"]


def test_pre_commit_through_git_is_quick_for_code_and_checks_memory(repo: Repo) -> None:
    run_cli("hook", "install", "--pre-commit")
    repo.write("src/app.py", "print(1)\n")
    git("add", "-A", cwd=repo.path)
    assert git("commit", "-q", "-m", "code", cwd=repo.path, check=False).returncode == 0
    repo.write(record_path("dup"), record("dup"))
    repo.write(".memzoi/records/project/other.md", record("dup"))
    git("add", "-A", cwd=repo.path)
    done = git("commit", "-q", "-m", "memory", cwd=repo.path, check=False)
    assert done.returncode == 1 and "id-duplicate" in done.stderr


def test_pre_commit_on_an_unborn_branch_runs_the_full_check(tmp_path: Path) -> None:
    path = tmp_path / "fresh"
    pygit2.init_repository(str(path), initial_head="main")
    (path / ".memzoi" / "records" / "project").mkdir(parents=True)
    (path / record_path("bad")).write_text(record("bad").replace("lane: semantic\n", ""))
    git("add", "-A", cwd=path)
    result = run_cli("hook", "pre-commit", "--json", cwd=path, expect=1)
    assert [p["code"] for p in result.json()["problems"]] == ["field-missing"]


def _push_lines(local: str, remote_sha: str, ref: str = "refs/heads/main") -> str:
    return f"refs/heads/main {local} {ref} {remote_sha}\n"


def _pre_push_by_url(remote: Remote, lines: str) -> Any:
    """`hook pre-push URL URL --json` in the clone, as git runs it for a push by URL; its JSON report."""
    url = str(remote.bare)
    return run_cli("hook", "pre-push", url, url, "--json", cwd=remote.work.path, input=lines).json()


def test_pre_push_of_code_only_imports_nothing_heavy(tmp_path: Path) -> None:
    remote = make_remote(tmp_path, hook="none")
    remote.accepted()
    old = remote.commit({"src/app.py": "print(2)\n"})
    new = remote.commit({"src/app.py": "print(3)\n"})
    code, out, modules = imported(
        ["hook", "pre-push", "origin", str(remote.bare), "--json"], remote.work.path, _push_lines(new, old)
    )
    assert code == 0 and json.loads(out)["commits_walked"] == 1
    assert heavy(modules) == set() and "click" not in modules


def _long_history(repo: Repo, commits: int) -> None:
    """`commits` code-only commits on top of HEAD (main), written with fast-import."""
    _long_history_on(repo, "main", commits)


def _long_history_on(repo: Repo, branch: str, commits: int) -> None:
    """`commits` code-only commits on top of `branch` (checked out), written with fast-import."""
    head = str(repo.git.head.target)
    stream = []
    for n in range(commits):
        content = f"print({n})\n".encode()
        stream.append(
            f"commit refs/heads/{branch}\nmark :{n + 1}\ncommitter T <t@example.com> {1767225600 + n} +0000\n"
            "data 4\nstep\n"
        )
        stream.append(f"from {head}\n" if n == 0 else "")
        stream.append(f"M 100644 inline src/app.py\ndata {len(content)}\n{content.decode()}\n")
    git("fast-import", "--quiet", "--force", cwd=repo.path, input="".join(stream))
    git("reset", "-q", "--hard", branch, cwd=repo.path)
    repo.git.index.read(force=True)


def test_pre_push_by_url_to_an_unknown_remote_walks_every_commit_no_ref_reaches(tmp_path: Path) -> None:
    work = make_repo(tmp_path / "work")
    _long_history(work, 250)
    bare = tmp_path / "server.git"
    git("init", "--bare", "-q", str(bare), cwd=tmp_path)
    tip = str(work.git.head.target)
    result = run_cli("hook", "pre-push", str(bare), str(bare), "--json", cwd=work.path, input=_push_lines(tip, ZERO))
    assert result.json()["commits_walked"] == 251  # the whole history, its root included

    # a bad record at the root, under 250 commits of code, is caught through a real push by URL
    git("checkout", "-q", "--orphan", "bad", cwd=work.path)
    work.write(record_path("bad"), record("bad").replace("lane: semantic\n", ""))
    git("add", "-A", cwd=work.path)
    git("commit", "-q", "--no-verify", "-m", "bad root", cwd=work.path)
    _long_history_on(work, "bad", 250)
    run_cli("hook", "install", "--pre-push", cwd=work.path)
    done = git("push", str(bare), "bad", cwd=work.path, check=False)
    assert done.returncode == 1
    assert "field-missing" in done.stderr
    assert git("for-each-ref", cwd=bare).stdout == ""


def test_pre_push_by_url_uses_the_tracking_refs_of_the_remote_with_that_url(tmp_path: Path) -> None:
    remote = make_remote(tmp_path, hook="none")
    remote.accepted()
    _long_history(remote.work, 30)
    git("fetch", "-q", "origin", cwd=remote.work.path)
    tip = str(remote.work.git.head.target)
    # pushing to a new branch by URL: the URL is origin's, whose tracking ref says what the server has
    assert _pre_push_by_url(remote, _push_lines(tip, ZERO, "refs/heads/topic"))["commits_walked"] == 30


@pytest.mark.parametrize("touch", [False, True])
def test_pre_push_by_url_of_one_commit_walks_one(tmp_path: Path, touch: bool) -> None:
    remote = make_remote(tmp_path, hook="none")
    remote.accepted()
    _long_history(remote.work, 50)
    git("push", "-q", str(remote.bare), "main", cwd=remote.work.path)
    git("update-ref", "-d", "refs/remotes/origin/main", cwd=remote.work.path)
    old = str(remote.work.git.head.target)
    files = {record_path("new"): record("new")} if touch else {"src/app.py": "print('new')\n"}
    new = remote.commit(files)
    result = _pre_push_by_url(remote, _push_lines(new, old))
    assert result["commits_walked"] == 1
    assert result["commits_checked"] == int(touch)


def _apply_one(title: str) -> None:
    body = f"{title}, always."
    pid = run_cli("propose", "--type", "convention", "--title", title, "--body", body, "--json").json()["id"]
    run_cli("approve", pid)
    run_cli("apply", pid)


def test_committing_what_apply_wrote_imports_none_of_the_checks(repo: Repo) -> None:
    run_cli("hook", "install", "--pre-commit")
    _apply_one("Use pnpm")
    git("add", "-A", ".memzoi", cwd=repo.path)
    assert git("commit", "-q", "-m", "pnpm", cwd=repo.path, check=False).returncode == 0  # the full check, once
    _apply_one("Use ruff")
    git("add", "-A", ".memzoi", cwd=repo.path)
    code, out, modules = imported(["hook", "pre-commit", "--json"], repo.path)
    assert code == 0 and json.loads(out)["commits_checked"] == 1
    assert (
        not {"pygit2", "pydantic", "yaml", "click", "git_memzoi.hooks.checks", "git_memzoi.profile.secrets"} & modules
    )
    assert git("commit", "-q", "-m", "ruff", cwd=repo.path, check=False).returncode == 0


def test_told_by_the_script_that_memory_differs_an_untouched_commit_still_passes(repo: Repo) -> None:
    repo.write("src/app.py", "print(1)\n")
    git("add", "src/app.py", cwd=repo.path)
    done = subprocess.run(
        [sys.executable, "-m", "git_memzoi", "hook", "pre-commit", "--json"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        env={**os.environ, "MEMZOI_STAGED": "asked"},
    )
    assert done.returncode == 0 and json.loads(done.stdout)["ok"] is True


@pytest.mark.parametrize("change", ["code", "too-large"])
def test_pre_receive_that_parses_no_file_loads_no_validator(tmp_path: Path, change: str) -> None:
    """A push of code only, or one refused by a record's size alone, never imports pydantic or the models.

    The server's hook accepted the first push and kept its tree, as an installed hook does.
    """
    remote = make_remote(tmp_path)
    remote.accepted()
    old = str(remote.work.git.head.target)
    if change == "code":
        new = remote.commit({"src/app.py": "print(2)\n"})
    else:
        new = remote.commit({record_path("huge"): record("huge") + "x" * (2 << 20) + "\n"})
    # the objects reach the server as a push brings them, with no ref naming them yet
    git("fetch", "-q", str(remote.work.path), "refs/heads/main", cwd=remote.bare)
    code, out, modules = imported(["hook", "pre-receive", "--json"], remote.bare, f"{old} {new} refs/heads/main\n")
    assert (code, change) in ((0, "code"), (1, "too-large")), out
    if change == "too-large":
        assert "file-too-large" in out
    assert not {m for m in modules if m.startswith(("pydantic", "git_memzoi.profile.models"))}
