"""apply in every git state and layout: stopped operations, a HEAD that moves, separate git dirs, sparse checkouts."""

from __future__ import annotations

import errno
import os
import resource
import signal
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest

from git_memzoi.index import shared_db
from git_memzoi.layout import INDEX_TEMP_PREFIX
from git_memzoi.runtime.workspace import Workspace
from support import Repo, git, memzoi_exe, run_cli
from support.lifecycle import APPLIED_AT, at, kill_at, one_line_error, packet, snapshot, write_packet

PID = "mem_2026_03_01_auth_abc123"
RECORD = ".memzoi/records/semantic/decisions/protected-routes-must-validate-sessions-server-side.md"
RESOLVED = f".memzoi/proposals/resolved/applied/{PID}.md"


def _staged(root: Path) -> list[str]:
    return sorted(git("diff", "--cached", "--no-renames", "--name-only", cwd=root).stdout.split())


def _head(root: Path) -> str:
    return git("rev-parse", "HEAD", cwd=root).stdout.strip()


def _commit_file(root: Path, rel: str, text: str, message: str) -> None:
    (root / rel).write_text(text)
    git("add", rel, cwd=root)
    git("commit", "-q", "-m", message, cwd=root)


@pytest.fixture
def ready(repo: Repo) -> Repo:
    """A committed pending packet, and an unrelated change staged that an apply commit must leave alone."""
    shared_db.connect(Workspace.open(repo.path).layout.shared_db).close()
    pending = write_packet(repo, packet(PID))
    repo.commit("add packet", paths=[pending])
    repo.write("README.md", "# staged, not part of the apply\n")
    git("add", "README.md", cwd=repo.path)
    at(APPLIED_AT)
    return repo


def _hook(root: Path, name: str, script: str) -> None:
    path = root / ".git" / "hooks" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


# git stopped in the middle of an operation ---------


def _stopped_rebase(root: Path) -> None:
    """A rebase of `side` onto main, stopped on a conflict."""
    git("stash", "-q", cwd=root)
    _commit_file(root, "conflict.txt", "base\n", "base")
    git("checkout", "-q", "-b", "side", cwd=root)
    _commit_file(root, "conflict.txt", "side\n", "side")
    git("checkout", "-q", "main", cwd=root)
    _commit_file(root, "conflict.txt", "main\n", "main")
    git("checkout", "-q", "side", cwd=root)
    assert git("rebase", "main", cwd=root, check=False).returncode != 0
    assert (root / ".git" / "rebase-merge").is_dir() or (root / ".git" / "rebase-apply").is_dir()


def _stopped_bisect(root: Path) -> None:
    """A bisect that checked out a commit in the middle of the history."""
    first = _head(root)
    for n in range(3):
        _commit_file(root, f"step{n}.txt", f"{n}\n", f"step {n}")
    git("bisect", "start", "HEAD", first, cwd=root)
    assert (root / ".git" / "BISECT_LOG").is_file()


def _stopped_cherry_pick_sequence(root: Path) -> None:
    """`git cherry-pick A B` stopped on a conflict at A: CHERRY_PICK_HEAD and sequencer/."""
    git("stash", "-q", cwd=root)
    _commit_file(root, "conflict.txt", "base\n", "base")
    git("checkout", "-q", "-b", "side", cwd=root)
    _commit_file(root, "conflict.txt", "side\n", "side 1")
    _commit_file(root, "other.txt", "side\n", "side 2")
    git("checkout", "-q", "main", cwd=root)
    _commit_file(root, "conflict.txt", "main\n", "main")
    assert git("cherry-pick", "side~1", "side", cwd=root, check=False).returncode != 0
    assert (root / ".git" / "sequencer").is_dir()


@pytest.mark.parametrize(
    ("stop", "what"),
    [
        (_stopped_rebase, "a rebase is in progress"),
        (_stopped_bisect, "a bisect is in progress"),
        (_stopped_cherry_pick_sequence, "a cherry-pick is in progress"),
    ],
)
def test_apply_commit_is_refused_while_git_is_stopped_in_an_operation(ready: Repo, stop, what: str) -> None:
    stop(ready.path)
    head = _head(ready.path)
    before = snapshot(ready.path)
    staged = _staged(ready.path)
    result = run_cli("apply", PID, "--commit", expect=1)
    line = one_line_error(result.stderr)
    assert f"cannot commit: {what}" in line, line
    assert snapshot(ready.path) == before and _head(ready.path) == head and _staged(ready.path) == staged
    # nothing was applied: once git is back on the branch, the proposal still applies and commits
    assert "nothing to do" not in result.stderr
    for abort in (["rebase", "--abort"], ["bisect", "reset"], ["cherry-pick", "--abort"]):
        git(*abort, cwd=ready.path, check=False)
    sha = run_cli("apply", PID, "--commit", "--json").json()["commit"]
    assert sha == _head(ready.path)


def test_a_linked_worktree_is_not_blocked_by_a_rebase_in_the_main_one(ready: Repo, tmp_path: Path) -> None:
    linked = ready.add_worktree("linked", tmp_path / "linked")
    _stopped_rebase(ready.path)
    sha = run_cli("apply", PID, "--commit", "--json", cwd=linked.path).json()["commit"]
    assert git("rev-parse", "HEAD", cwd=linked.path).stdout.strip() == sha


# HEAD moving during the commit ---------


def test_head_moved_by_another_commit_leaves_the_index_as_it_was(ready: Repo) -> None:
    # the commit-msg hook runs between the staging and the move of HEAD; it makes an unrelated commit
    _hook(
        ready.path,
        "commit-msg",
        'unset GIT_INDEX_FILE\nc=$(git commit-tree "$(git rev-parse HEAD^{tree})" -p HEAD -m racing)\n'
        'git update-ref HEAD "$c"\n',
    )
    result = run_cli("apply", PID, "--commit", expect=1)
    line = one_line_error(result.stderr)
    assert "no commit was made" in line and "moved" in line and "not staged" in line, line
    head = pygit2.Repository(str(ready.path)).head.peel(pygit2.Commit)
    assert head.message == "racing\n"
    assert _staged(ready.path) == ["README.md"]  # the apply's files do not ride along in the next commit
    assert (ready.path / RECORD).is_file() and (ready.path / RESOLVED).is_file()  # the apply itself stands
    assert "nothing to do" in run_cli("apply", PID, "--commit").stderr
    (ready.path / ".git" / "hooks" / "commit-msg").unlink()
    git("commit", "-q", "-m", "next", cwd=ready.path)
    assert git("show", "--name-only", "--format=", "HEAD", cwd=ready.path).stdout.split() == ["README.md"]


def test_a_git_commit_in_the_window_cannot_take_the_staged_files(ready: Repo) -> None:
    # a plain `git commit` while the step holds index.lock: git refuses it, as it refuses any second writer
    _hook(
        ready.path,
        "commit-msg",
        'unset GIT_INDEX_FILE\ngit commit -q --no-verify -m racing 2>"$(git rev-parse --git-dir)/racing.txt"; true\n',
    )
    sha = run_cli("apply", PID, "--commit", "--json").json()["commit"]
    assert "index.lock" in (ready.path / ".git" / "racing.txt").read_text()
    head = pygit2.Repository(str(ready.path)).head.peel(pygit2.Commit)
    assert str(head.id) == sha and head.message.startswith("memzoi: apply")
    assert RECORD in git("show", "--name-only", "--format=", "HEAD", cwd=ready.path).stdout.split()
    assert _staged(ready.path) == ["README.md"]  # what the user had staged stays staged, out of the commit


@pytest.mark.crash
def test_head_moved_before_an_interrupted_commit_is_finished(ready: Repo) -> None:
    before_index = _staged(ready.path)
    kill_at("db-committed", ["apply", PID, "--reviewer", "alice", "--commit"], ready.path)
    tree = git("rev-parse", "HEAD^{tree}", cwd=ready.path).stdout.strip()
    racing = git("commit-tree", tree, "-p", "HEAD", "-m", "racing", cwd=ready.path).stdout.strip()
    git("update-ref", "HEAD", racing, cwd=ready.path)
    repaired = run_cli("doctor", "--repair")
    assert "moved since the interrupted commit" in repaired.stdout + repaired.stderr
    assert _head(ready.path) == racing
    assert _staged(ready.path) == before_index
    assert (ready.path / RECORD).is_file()


# index.lock ---------


def test_a_held_index_lock_is_a_clear_refusal_that_changes_nothing(ready: Repo) -> None:
    lock = ready.path / ".git" / "index.lock"
    lock.write_bytes(b"")
    before = snapshot(ready.path)
    line = one_line_error(run_cli("apply", PID, "--commit", expect=1).stderr)
    assert str(lock) in line and "another git process seems to be running" in line, line
    assert snapshot(ready.path) == before and lock.read_bytes() == b""


def test_staging_leaves_stat_data_git_accepts(ready: Repo) -> None:
    run_cli("apply", PID, "--commit")
    # plumbing that does not refresh the index: an entry without stat data would show as modified
    assert git("diff-files", "--name-only", cwd=ready.path).stdout.split() == []
    assert not list((ready.path / ".git").glob("*.lock"))


# layouts ---------


def _separate(tmp_path: Path) -> tuple[Path, Path]:
    from git_memzoi.runtime.init import init_tree

    gitdir, work = tmp_path / "store.git", tmp_path / "work"
    git("init", "-q", "-b", "main", "--separate-git-dir", str(gitdir), str(work), cwd=tmp_path)
    (work / "README.md").write_text("# project\n")
    init_tree(work)
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "initial", cwd=work)
    return gitdir, work


def _lifecycle(cwd: Path, env: dict[str, str] | None = None) -> None:
    """propose, approve, apply --commit a create, then tombstone it the same way; validate."""

    def memzoi(*args: str, expect: int = 0) -> str:
        result = run_cli(*args, cwd=cwd, env=env, expect=expect)
        assert "Traceback" not in result.stderr
        return result.stdout

    created = run_cli(
        "propose",
        "--type",
        "decision",
        "--title",
        "Use Redis",
        "--body",
        "Sessions live in Redis.",
        "--json",
        cwd=cwd,
        env=env,
    ).json()["id"]
    memzoi("approve", created)
    memzoi("apply", created, "--commit")
    gone = run_cli(
        "propose", "--action", "tombstone", "--target", "use-redis", "--reason", "moved", "--json", cwd=cwd, env=env
    ).json()["id"]
    memzoi("approve", gone)
    memzoi("apply", gone, "--commit")
    memzoi("validate")


def test_separate_git_dir_layout(tmp_path: Path) -> None:
    _, work = _separate(tmp_path)
    assert (work / ".git").is_file()
    _lifecycle(work)
    shown = git("show", "HEAD:.memzoi/records/semantic/decisions/use-redis.md", cwd=work).stdout
    assert "\nstatus: tombstoned\n" in shown
    assert git("status", "--porcelain", cwd=work).stdout == ""
    assert not (tmp_path / ".memzoi").exists()  # nothing written beside the git directory


def test_git_dir_and_git_work_tree_variables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gitdir, work = _separate(tmp_path)
    (work / ".git").unlink()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setenv("GIT_DIR", str(gitdir))
    monkeypatch.setenv("GIT_WORK_TREE", str(work))
    _lifecycle(elsewhere)
    assert git("status", "--porcelain", cwd=elsewhere).stdout == ""
    assert "use-redis" in git("log", "-1", "--name-only", "--format=", cwd=elsewhere).stdout


# sparse checkouts ---------

HIDDEN = ".memzoi/records/semantic/decisions/use-redis.md"


@pytest.fixture
def sparse(ready: Repo) -> Repo:
    """A sparse checkout that leaves .memzoi/records/semantic/decisions/ (record use-redis) out."""
    from support.lifecycle import add_record

    git("stash", "-q", cwd=ready.path)
    add_record(ready, "semantic/decisions/use-redis", "use-redis")
    add_record(ready, "semantic/risks/kept", "kept")
    git("sparse-checkout", "set", "--no-cone", "/*", "!/.memzoi/records/semantic/decisions/", cwd=ready.path)
    assert not (ready.path / HIDDEN).exists() and (ready.path / ".memzoi/records/semantic/risks/kept.md").is_file()
    return ready


def _unchanged(root: Path, head: str) -> None:
    assert _head(root) == head
    assert git("status", "--porcelain", cwd=root).stdout == ""
    assert not (root / HIDDEN).exists()


def test_create_at_the_path_of_a_left_out_record_is_refused(sparse: Repo) -> None:
    head = _head(sparse.path)
    result = run_cli("apply", PID, "--concept-id", "semantic/decisions/use-redis", "--commit", expect=1)
    line = one_line_error(result.stderr)
    assert "already exists" in line and HIDDEN in line and "sparse checkout" in line, line
    _unchanged(sparse.path, head)


def test_create_with_the_record_id_of_a_left_out_record_is_refused(sparse: Repo) -> None:
    head = _head(sparse.path)
    result = run_cli("apply", PID, "--concept-id", "semantic/risks/use-redis", "--commit", expect=1)
    line = one_line_error(result.stderr)
    assert "record ID 'use-redis'" in line and HIDDEN in line and "sparse checkout" in line, line
    _unchanged(sparse.path, head)


def test_tombstone_of_a_left_out_record_says_it_is_not_checked_out(sparse: Repo) -> None:
    result = run_cli("propose", "--action", "tombstone", "--target", "use-redis", "--reason", "gone", expect=1)
    line = one_line_error(result.stderr)
    assert "'use-redis'" in line and HIDDEN in line and "not checked out" in line, line
    assert "sparse-checkout add .memzoi/records/semantic/decisions" in result.stderr
    from support.lifecycle import tombstone_packet

    pending = write_packet(sparse, tombstone_packet("use-redis"))
    git("add", pending, cwd=sparse.path)
    git("commit", "-q", "-m", "tombstone packet", cwd=sparse.path)
    head = _head(sparse.path)
    line = one_line_error(run_cli("apply", pending, "--commit", expect=1).stderr)
    assert "not checked out" in line and HIDDEN in line, line
    _unchanged(sparse.path, head)


def test_a_create_in_a_sparse_checkout_still_applies(sparse: Repo) -> None:
    sha = run_cli("apply", PID, "--commit", "--json").json()["commit"]
    assert sha == _head(sparse.path)
    assert HIDDEN in git("ls-tree", "-r", "--name-only", "HEAD", cwd=sparse.path).stdout  # still in git
    assert git("status", "--porcelain", cwd=sparse.path).stdout == ""


# the file-size limit ---------


def _file_size_limit(limit: int) -> Callable[[], None]:
    def limited() -> None:
        # ignored, SIGXFSZ would kill the process; so a write past the limit fails with EFBIG instead
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limited


def test_file_size_limit_is_exit_3_and_drops_the_derived_caches(repo: Repo) -> None:
    from support.lifecycle import add_record

    for k in range(120):
        add_record(repo, f"semantic/decisions/rule-{k}", f"rule-{k}", commit=False, description=f"Rule {k}. " * 40)
    layout = Workspace.open(repo.path).layout
    # measured by coverage (scripts/test.sh), the process would also write coverage's data file under the limit
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE")}
    limited = subprocess.run(
        [memzoi_exe(), "rebuild", "--full"],
        cwd=repo.path,
        env=env,
        preexec_fn=_file_size_limit(48 * 1024),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert limited.returncode == 3, limited.stderr
    line = one_line_error(limited.stderr)
    assert "ulimit -f" in line or "File too large" in line, line
    assert "free some space" in limited.stderr
    left = [p for p in (layout.parse_cache, Path(f"{layout.parse_cache}-wal")) if p.exists()]
    left += [layout.worktree / n for n in os.listdir(layout.worktree) if n.startswith(INDEX_TEMP_PREFIX)]
    assert left == []
    # with the limit gone, everything works again from the files
    run_cli("rebuild", "--full")
    assert "rule-7" in run_cli("search", "Rule 7", "--json").stdout


def test_sqlite_write_errors_under_a_file_size_limit_are_no_space() -> None:
    import sqlite3

    from git_memzoi.errors import NoSpace, from_environment

    error = sqlite3.OperationalError("disk I/O error")
    error.sqlite_errorname = "SQLITE_IOERR_WRITE"  # type: ignore[attr-defined]
    found = from_environment(error)
    assert isinstance(found, NoSpace) and found.exit_code == 3
    efbig = from_environment(OSError(errno.EFBIG, "File too large", "/x/index.db"))
    edquot = from_environment(OSError(errno.EDQUOT, "Disk quota exceeded", "/x/index.db"))
    assert isinstance(efbig, NoSpace) and isinstance(edquot, NoSpace)
