"""The installed hook scripts' shell early exit agrees with hooks.quick, through real `git commit` and `git push`.

The scripts end a commit or push that leaves .memzoi/ alone before Python starts. Here the
program they hand over to is a stand-in that records that it was called (and what it was
given) and refuses; a wrapper keeps the ref lines git gave pre-push, so that the same push can
be put to hooks.quick, whose early exit the shell's must never go beyond.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pygit2
import pytest

from git_memzoi.hooks import quick
from git_memzoi.hooks.install import script
from support import Repo, git, make_repo, memzoi_exe, run_cli
from support.hooks import Remote, make_remote, record, record_path

ZERO = "0" * 40


@dataclass
class Verdict:
    """What a hook run decided: the shell's exit 0 (`shell_exit`), or a hand-over to the program."""

    shell_exit: bool
    lines: str
    remote: str
    handed: str | None  # the stdin the program got (None: not called)


class Scripted:
    """A checkout whose pre-commit and pre-push are git memzoi's scripts over a recording stand-in."""

    def __init__(self, work: Path, scratch: Path) -> None:
        self.work = work
        self.scratch = scratch
        scratch.mkdir(parents=True, exist_ok=True)
        hooks = Path(git("rev-parse", "--git-path", "hooks", cwd=work).stdout.strip())
        if not hooks.is_absolute():
            hooks = work / hooks
        hooks.mkdir(parents=True, exist_ok=True)
        stand_in = scratch / "program"
        stand_in.write_text(f"#!/bin/sh\ncat > '{scratch}/handed'\nexit 3\n")
        stand_in.chmod(0o755)
        for name in ("pre-commit", "pre-push"):
            (scratch / name).write_text(script(name, str(stand_in)))
        wrapper = hooks / "pre-push"
        wrapper.write_text(
            "#!/bin/sh\n"
            "refs=$(cat)\n"
            f"printf '%s\\n' \"$refs\" > '{scratch}/lines'\n"
            f"printf '%s' \"$1\" > '{scratch}/remote'\n"
            f"printf '%s\\n' \"$refs\" | sh '{scratch}/pre-push' \"$@\"\n"
            f"echo $? > '{scratch}/rc'\n"
            "exit 1\n"
        )  # never let the push through: each scenario starts from the same remote
        wrapper.chmod(0o755)
        commit_hook = hooks / "pre-commit"
        commit_hook.write_text(f"#!/bin/sh\nexec sh '{scratch}/pre-commit' \"$@\"\n")
        commit_hook.chmod(0o755)

    def _reset(self) -> None:
        for name in ("lines", "remote", "rc", "handed"):
            (self.scratch / name).unlink(missing_ok=True)

    def _verdict(self) -> Verdict:
        handed = self.scratch / "handed"
        rc = (self.scratch / "rc").read_text().strip() if (self.scratch / "rc").exists() else ""
        lines = (self.scratch / "lines").read_text() if (self.scratch / "lines").exists() else ""
        remote = (self.scratch / "remote").read_text() if (self.scratch / "remote").exists() else ""
        text = handed.read_text() if handed.exists() else None
        assert (rc == "0") == (text is None), f"exit {rc} with the program {'not ' if text is None else ''}called"
        return Verdict(text is None, lines, remote, text)

    def push(self, *args: str) -> Verdict:
        self._reset()
        done = git("push", *args, cwd=self.work, check=False)
        assert done.returncode != 0  # the wrapper refuses every push
        return self._verdict()

    def commit(self, *args: str) -> bool:
        """`git commit`: True when the script exited 0 by itself (the commit is then made)."""
        self._reset()
        done = git("commit", "-q", "-m", "change", *args, cwd=self.work, check=False)
        called = (self.scratch / "handed").exists()
        assert (done.returncode == 0) != called, done.stderr
        return not called


def python_untouched(cwd: Path, remote: str, lines: str) -> bool:
    """Whether hooks.quick's early exit ends this push: no .memzoi/ change in the commits it plans."""
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return not quick.plan_push(remote, quick.parse_push_lines(lines)).touched
    except quick.GitUnclear:
        return False
    finally:
        os.chdir(old)


def agree(scripted: Scripted, *args: str, shell_exit: bool) -> Verdict:
    """Push; the shell exits by itself exactly when expected, and never where hooks.quick would not."""
    verdict = scripted.push(*args)
    assert verdict.shell_exit == shell_exit, verdict
    if verdict.shell_exit:
        assert python_untouched(scripted.work, verdict.remote, verdict.lines)
    else:
        assert verdict.handed == verdict.lines  # the program reads the same ref lines git gave
    return verdict


@pytest.fixture
def pushed(tmp_path: Path) -> tuple[Remote, Scripted]:
    remote = make_remote(tmp_path, hook="none")
    remote.accepted()
    return remote, Scripted(remote.work.path, tmp_path / "scratch")


def test_a_code_commit_exits_in_the_shell_by_name_and_by_url(pushed: tuple[Remote, Scripted]) -> None:
    remote, scripted = pushed
    remote.commit({"src/app.py": "print(1)\n"})
    agree(scripted, "origin", "main", shell_exit=True)
    git("update-ref", "-d", "refs/remotes/origin/main", cwd=remote.work.path)  # nothing tracked: by URL alone
    agree(scripted, str(remote.bare), "main", shell_exit=True)


def test_a_record_commit_is_handed_over(pushed: tuple[Remote, Scripted]) -> None:
    remote, scripted = pushed
    remote.commit({record_path("use-redis"): record("use-redis")})
    remote.commit({"src/app.py": "print(1)\n"})  # the record is not at the tip
    agree(scripted, str(remote.bare), "main", shell_exit=False)
    remote.commit({record_path("use-redis"): None})  # added then removed: each commit still touches
    agree(scripted, str(remote.bare), "main", shell_exit=False)


def test_merges_are_compared_with_their_first_parent(pushed: tuple[Remote, Scripted]) -> None:
    remote, scripted = pushed
    work = remote.work
    base = str(work.git.head.target)
    # a side branch of code merged into a main that gained a record: the merge takes nothing new into .memzoi/
    remote.commit({record_path("on-main"): record("on-main")})
    git("push", "-q", "--no-verify", "origin", "main", cwd=work.path)
    git("checkout", "-q", "-b", "side", base, cwd=work.path)
    work.write("src/side.py", "x = 1\n")
    git("add", "-A", cwd=work.path)
    git("commit", "-q", "--no-verify", "-m", "side code", cwd=work.path)
    git("checkout", "-q", "main", cwd=work.path)
    git("merge", "-q", "--no-ff", "--no-verify", "--no-edit", "side", cwd=work.path)
    assert len(work.git.head.peel(pygit2.Commit).parents) == 2
    agree(scripted, str(remote.bare), "main", shell_exit=True)

    # the other way round: a code main merged into a branch, whose first parent lacks the record
    git("checkout", "-q", "-b", "topic", base, cwd=work.path)
    git("push", "-q", "--no-verify", "origin", "topic", cwd=work.path)
    git("merge", "-q", "--no-ff", "--no-verify", "--no-edit", "main", cwd=work.path)
    verdict = agree(scripted, str(remote.bare), "topic", shell_exit=False)
    assert not python_untouched(work.path, verdict.remote, verdict.lines)


@pytest.mark.parametrize("with_memory", [False, True])
def test_an_unrelated_history_is_walked_to_its_root(pushed: tuple[Remote, Scripted], with_memory: bool) -> None:
    remote, scripted = pushed
    work = remote.work
    git("checkout", "-q", "--orphan", "other", cwd=work.path)
    git("rm", "-rq", "--cached", ".", cwd=work.path)
    files = {"only.txt": "alone\n", **({record_path("root"): record("root")} if with_memory else {})}
    for rel, text in files.items():
        work.write(rel, text)
    git("add", *files, cwd=work.path)
    git("commit", "-q", "--no-verify", "-m", "root", cwd=work.path)
    work.write("only.txt", "still alone\n")
    git("commit", "-q", "-a", "--no-verify", "-m", "second", cwd=work.path)
    # either way a ref-level rule objects: main's records would be gone
    agree(scripted, "--force", str(remote.bare), "other:main", shell_exit=False)


def test_deletions_exit_in_the_shell_and_new_refs_are_handed_over(pushed: tuple[Remote, Scripted]) -> None:
    remote, scripted = pushed
    work = remote.work
    git("push", "-q", "--no-verify", "origin", "main:topic", cwd=work.path)
    git("tag", "-a", "-m", "release", "v1", cwd=work.path)
    git("push", "-q", "--no-verify", "origin", "v1", cwd=work.path)
    agree(scripted, str(remote.bare), ":topic", shell_exit=True)
    agree(scripted, str(remote.bare), ":refs/tags/v1", shell_exit=True)
    # a new branch or tag: nothing in the ref lines says what the remote has
    remote.commit({"src/app.py": "print(1)\n"})
    agree(scripted, str(remote.bare), "main:fresh", shell_exit=False)
    git("tag", "-a", "-m", "two", "v2", cwd=work.path)
    agree(scripted, str(remote.bare), "v2", shell_exit=False)
    # a deletion pushed with a code commit: the shell still decides
    agree(scripted, str(remote.bare), "main", ":topic", shell_exit=True)
    # the remote's default branch: git-memzoi refuses deleting it (so does the shell hand it over
    # when no remote says which branch is its default)
    git("remote", "set-head", "origin", "--auto", cwd=work.path)
    agree(scripted, str(remote.bare), ":main", shell_exit=False)
    agree(scripted, str(remote.bare), ":topic", shell_exit=True)


def test_a_force_push_to_an_older_commit_is_handed_over_when_memory_differs(pushed: tuple[Remote, Scripted]) -> None:
    remote, scripted = pushed
    older = str(remote.work.git.head.target)
    remote.commit({record_path("use-redis"): record("use-redis")})
    git("push", "-q", "--no-verify", "origin", "main", cwd=remote.work.path)
    git("reset", "-q", "--hard", older, cwd=remote.work.path)
    agree(scripted, "--force", str(remote.bare), "main", shell_exit=False)  # no commit to walk, a record dropped
    remote.work.write("src/app.py", "print(1)\n")
    git("add", "src/app.py", cwd=remote.work.path)
    git("commit", "-q", "--no-verify", "-m", "code", cwd=remote.work.path)
    git("push", "-q", "--no-verify", "--force", "origin", "main", cwd=remote.work.path)
    git("reset", "-q", "--hard", older, cwd=remote.work.path)
    agree(scripted, "--force", str(remote.bare), "main", shell_exit=True)  # memory as the remote holds it


def test_a_remote_commit_missing_here_is_handed_over(pushed: tuple[Remote, Scripted], tmp_path: Path) -> None:
    remote, scripted = pushed
    other = tmp_path / "other"
    git("clone", "-q", str(remote.bare), str(other), cwd=tmp_path)
    (other / "elsewhere.txt").write_text("x\n")
    git("add", "-A", cwd=other)
    git("-c", "user.name=O", "-c", "user.email=o@example.com", "commit", "-q", "-m", "elsewhere", cwd=other)
    git("push", "-q", "origin", "main", cwd=other)
    remote.commit({"src/app.py": "print(1)\n"})
    agree(scripted, "--force", str(remote.bare), "main", shell_exit=False)


def test_odd_ref_lines_are_handed_over(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "work")
    scripted = Scripted(repo.path, tmp_path / "scratch")
    head = str(repo.git.head.target)
    parent_less = f"refs/heads/main {head} refs/heads/main {head}"
    for lines, shell_exit in [
        (f"{parent_less}\n", True),
        ("\n\n", True),
        (f"refs/heads/main  {head} refs/heads/main {head}\n", False),
        (f"refs/heads/main {head} refs/heads/main {head} extra\n", False),
        (f"refs/heads/main {head[:12]} refs/heads/main {head}\n", False),
        (f"refs/heads/main {head} refs/heads/main {'g' * 40}\n", False),
        (f"refs/heads/main {head} refs/heads/main {'1' * 40}\n", False),
    ]:
        for name in ("lines", "rc", "handed"):
            (scripted.scratch / name).unlink(missing_ok=True)
        done = subprocess.run(
            ["sh", str(scripted.scratch / "pre-push"), "origin", "url"],
            cwd=repo.path,
            input=lines,
            capture_output=True,
            text=True,
        )
        handed = scripted.scratch / "handed"
        assert (done.returncode == 0 and not handed.exists()) == shell_exit, lines
        if shell_exit:
            assert python_untouched(repo.path, "origin", lines)
        else:
            assert handed.read_text().strip("\n") == lines.strip("\n")


def test_pre_commit_exits_in_the_shell_only_when_staged_memory_equals_head(repo: Repo, tmp_path: Path) -> None:
    scripted = Scripted(repo.path, tmp_path / "scratch")
    repo.write("src/app.py", "print(1)\n")
    git("add", "-A", cwd=repo.path)
    assert scripted.commit() is True
    assert quick.staged_untouched()
    repo.write(record_path("use-redis"), record("use-redis"))
    git("add", "-A", cwd=repo.path)
    assert not quick.staged_untouched()
    assert scripted.commit() is False
    # `commit PATH` and `commit -a` stage into another index (GIT_INDEX_FILE): the script reads that one
    repo.write("src/app.py", "print(2)\n")
    git("add", "src/app.py", cwd=repo.path)
    assert scripted.commit("src/app.py") is True  # the staged record stays out of this commit
    git("reset", "-q", cwd=repo.path)
    repo.write("src/app.py", "print(3)\n")
    assert scripted.commit("-a") is True  # the record is untracked: -a leaves it out
    memory_file = sorted(p for p in (repo.path / ".memzoi").rglob("*") if p.is_file())[0]
    memory_file.write_text(memory_file.read_text() + "\n")
    assert scripted.commit("-a") is False


def test_pre_commit_on_an_unborn_branch_is_handed_over(tmp_path: Path) -> None:
    path = tmp_path / "fresh"
    pygit2.init_repository(str(path), initial_head="main")
    scripted = Scripted(path, tmp_path / "scratch")
    (path / "a.txt").write_text("a\n")
    git("add", "-A", cwd=path)
    assert scripted.commit() is False


def test_install_updates_an_older_script_of_ours(repo: Repo) -> None:
    hook = repo.path / ".git" / "hooks" / "pre-push"
    hook.write_text(f'#!/bin/sh\n# git-memzoi-hook: pre-push\nexec {memzoi_exe()} hook pre-push "$@"\n')
    result = run_cli("hook", "install", "--pre-push", "--json").json()
    assert [h["action"] for h in result["hooks"]] == ["updated"]
    assert "memzoi_untouched && exit 0" in hook.read_text()


def test_the_installed_hooks_still_refuse_bad_memory_through_git(pushed: tuple[Remote, Scripted]) -> None:
    remote, _ = pushed
    work = remote.work
    for name in ("pre-commit", "pre-push"):
        (work.path / ".git" / "hooks" / name).unlink()
    run_cli("hook", "install", cwd=work.path)
    work.write("src/app.py", "print(1)\n")
    git("add", "-A", cwd=work.path)
    assert git("commit", "-q", "-m", "code", cwd=work.path, check=False).returncode == 0
    assert git("push", "-q", str(remote.bare), "main", cwd=work.path, check=False).returncode == 0
    work.write(record_path("bad"), record("bad").replace("lane: semantic\n", ""))
    git("add", "-A", cwd=work.path)
    done = git("commit", "-q", "-m", "bad", cwd=work.path, check=False)
    assert done.returncode == 1 and "field-missing" in done.stderr
    git("commit", "-q", "--no-verify", "-m", "bad", cwd=work.path)
    done = git("push", str(remote.bare), "main", cwd=work.path, check=False)
    assert done.returncode == 1 and "field-missing" in done.stderr
