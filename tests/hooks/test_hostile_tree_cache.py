"""A kept tree that is not what it claims never changes a gate's verdict, and never hangs or crashes one.

Each test damages `$MEMZOI_HOME/projects/<key>/hook-trees/` as accidents do (a file swapped,
emptied, truncated, grown, turned into a FIFO or a folder, locked, written by a gate killed
halfway, written by two gates at once, pruned while read, on a read-only filesystem) and runs the
installed `git-memzoi hook check` (the CI gate: the checks of pre-receive and pre-push) as its
own process. Its verdict must be the one a run with no kept tree at all gives, with no traceback
and no exit code but 0 and 1; a gate that hangs fails by its timeout.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from git_memzoi.gitrepo import open_repo
from git_memzoi.hooks.treecache import STALE_SECONDS, TreeCache
from git_memzoi.hooks.treeimage import TreeImage
from git_memzoi.hooks.verdicts import VERDICTS_FILE
from git_memzoi.runtime.home import Layout
from support import Repo, git, make_repo, memzoi_exe
from support.hooks import Remote, record, record_path

pytestmark = pytest.mark.slow

#: Longer than any of these gates takes on a tree of 30 records: a gate still running then hangs.
TIMEOUT = 120
#: (exit code, each problem's code and path): what a gate decided.
Verdict = tuple[int, list[tuple[str, str]]]


def gate(cwd: Path, spec: str, home: Path | None = None) -> Verdict:
    """`git-memzoi hook check SPEC --json` as its own process (in MEMZOI_HOME `home` if given): its verdict."""
    env = os.environ | ({"MEMZOI_HOME": str(home)} if home is not None else {})
    command = [memzoi_exe(), "hook", "check", spec, "--json"]
    proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    return _verdict(proc.returncode, proc.stdout, proc.stderr)


def _verdict(code: int, out: str, err: str) -> Verdict:
    assert code in (0, 1), f"exit {code}: {err[-2000:]}"
    assert "Traceback" not in err and err.strip() == "", err[-2000:]
    found = json.loads(out)
    return code, sorted((p["code"], p["path"]) for p in found["problems"])


@dataclass
class Kept:
    """A repository whose HEAD~1 .memzoi/ tree is kept whole, and each range's verdict with nothing kept."""

    repo: Repo
    folder: Path
    #: HEAD~1's .memzoi/ tree, the one a check of HEAD~1..HEAD starts from
    tree: str
    expected: dict[str, Verdict]

    def db(self) -> Path:
        return self.folder / f"{self.tree}.db"

    def file(self) -> Path:
        return self.folder / f"{self.tree}.tree"

    def check(self, spec: str = "HEAD~1..HEAD") -> None:
        """Run the gate on `spec` twice (the first may keep trees the second reads): each time as with nothing kept."""
        for _ in range(2):
            assert gate(self.repo.path, spec) == self.expected[spec]


SPECS = ("HEAD~2..HEAD~1", "HEAD~1..HEAD", "HEAD~3..HEAD")


@pytest.fixture
def kept(repo: Repo, tmp_path: Path) -> Kept:
    """30 records, then one more, then one reusing an ID (an error); HEAD~1's tree kept by a gate."""
    for n in range(30):
        repo.write(record_path(f"rec-{n:03d}"), record(f"rec-{n:03d}"))
    repo.commit("memory")
    repo.write(record_path("use-redis"), record("use-redis"))
    repo.commit("redis")
    repo.write(".memzoi/records/project/use-redis-again.md", record("rec-007"))
    repo.commit("an ID twice")
    expected = {spec: gate(repo.path, spec, tmp_path / f"nothing-kept-{n}") for n, spec in enumerate(SPECS)}
    assert expected["HEAD~1..HEAD"][0] == 1 and expected["HEAD~2..HEAD~1"] == (0, [])
    folder = Layout.for_repo(open_repo(repo.path)).hook_trees
    assert gate(repo.path, "HEAD~2..HEAD~1") == expected["HEAD~2..HEAD~1"]
    tree = git("rev-parse", "HEAD~1:.memzoi", cwd=repo.path).stdout.strip()
    found = Kept(repo, folder, tree, expected)
    assert found.db().is_file() and TreeCache(folder).load(tree) is not None  # kept whole, and sound
    return found


def _replace(path: Path, make: Callable[[Path], object]) -> None:
    path.unlink()
    make(path)


def _sparse(path: Path, size: int) -> None:
    with path.open("r+b") as handle:
        handle.truncate(size)


def _forged(kept: Kept, sql: str) -> None:
    """Change the kept database by `sql` and write its header's checksum anew (as only a forger would)."""
    conn = sqlite3.connect(kept.db())
    conn.executescript(sql)
    conn.close()
    data = kept.db().read_bytes()
    _header(kept, 3, f"{zlib.crc32(data):08x}-{len(data)}")


def _other_trees(kept: Kept, tmp_path: Path, *suffixes: str) -> None:
    """Put the files (of `suffixes`) of HEAD~2's tree, kept in another home, where HEAD~1's belong."""
    other = tmp_path / "other-home"
    gate(kept.repo.path, "HEAD~3..HEAD~2", other)
    for suffix in suffixes:
        (path,) = other.rglob(f"*{suffix}")
        shutil.copyfile(path, kept.folder / f"{kept.tree}{suffix}")


def _other_trees_db(kept: Kept, tmp_path: Path) -> None:
    _other_trees(kept, tmp_path, ".db")


def _header(kept: Kept, field: int, value: object) -> None:
    head, _, body = kept.file().read_bytes().partition(b"\n")
    header = json.loads(head)
    header[field] = value
    kept.file().write_bytes(json.dumps(header).encode() + b"\n" + body)


def _symlink_to_fifo(path: Path, fifo: Path) -> None:
    os.mkfifo(fifo)
    path.symlink_to(fifo)


DAMAGE: dict[str, Callable[[Kept, Path], object]] = {
    "db-fifo": lambda k, _: _replace(k.db(), os.mkfifo),
    "tree-fifo": lambda k, _: _replace(k.file(), os.mkfifo),
    "db-symlink-to-fifo": lambda k, t: _replace(k.db(), lambda p: _symlink_to_fifo(p, t / "fifo")),
    "tree-symlink-to-dev-zero": lambda k, _: _replace(k.file(), lambda p: p.symlink_to("/dev/zero")),
    "db-symlink-to-dev-zero": lambda k, _: _replace(k.db(), lambda p: p.symlink_to("/dev/zero")),
    "db-symlink-dangling": lambda k, t: _replace(k.db(), lambda p: p.symlink_to(t / "nowhere")),
    "db-symlink-loop": lambda k, _: _replace(k.db(), lambda p: p.symlink_to(p)),
    "db-folder": lambda k, _: _replace(k.db(), Path.mkdir),
    "tree-folder": lambda k, _: _replace(k.file(), Path.mkdir),
    "db-empty": lambda k, _: k.db().write_bytes(b""),
    "tree-empty": lambda k, _: k.file().write_bytes(b""),
    "db-truncated": lambda k, _: _sparse(k.db(), k.db().stat().st_size // 2),
    "db-huge": lambda k, _: _sparse(k.db(), 1 << 40),  # a TiB, sparse: reading it would take many minutes
    "tree-huge": lambda k, _: _sparse(k.file(), 1 << 40),
    "db-not-sqlite": lambda k, _: k.db().write_bytes(random.Random(1).randbytes(k.db().stat().st_size)),
    "db-journal-and-wal-beside": lambda k, _: [
        (k.folder / f"{k.tree}.db{s}").write_bytes(b"\x01" * 4096) for s in ("-journal", "-wal", "-shm")
    ],
    "db-extra-table": lambda k, _: sqlite3.connect(k.db()).executescript("CREATE TABLE extra(x);"),
    "db-of-another-tree": _other_trees_db,
    "tree-of-another-tree": lambda k, t: _other_trees(k, t, ".tree"),
    "tree-and-db-of-another-tree": lambda k, t: _other_trees(k, t, ".tree", ".db"),
    "tree-of-another-version": lambda k, _: _header(k, 1, "0.0.1:0123456789abcdef"),
    "tree-naming-no-checksum": lambda k, _: _header(k, 3, None),
    "tree-truncated": lambda k, _: _sparse(k.file(), k.file().stat().st_size // 2),
    "tree-symlink-loop": lambda k, _: _replace(k.file(), lambda p: p.symlink_to(p)),
    "tree-nested-json": lambda k, _: k.file().write_bytes(b"[" * 100_000 + b"\n"),
    "forged-db-missing-column": lambda k, _: _forged(
        k, "DROP TABLE cross; CREATE TABLE cross(path TEXT PRIMARY KEY) WITHOUT ROWID;"
    ),
    "forged-db-extra-table": lambda k, _: _forged(k, "CREATE TABLE extra(x);"),
    "forged-db-missing-index": lambda k, _: _forged(k, "DROP INDEX files_by_id;"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_kept_tree_changes_no_verdict_and_never_hangs_or_crashes_a_gate(
    kept: Kept, tmp_path: Path, damage: str
) -> None:
    DAMAGE[damage](kept, tmp_path)
    kept.check()
    kept.check("HEAD~3..HEAD")


def test_a_kept_database_that_is_a_symlink_to_its_own_bytes_is_read(kept: Kept, tmp_path: Path) -> None:
    """A symlink is followed: the bytes behind it are checked like any file's."""
    moved = tmp_path / "elsewhere.db"
    shutil.move(kept.db(), moved)
    kept.db().symlink_to(moved)
    assert TreeCache(kept.folder).load(kept.tree) is not None
    kept.check()


def test_a_kept_database_locked_by_a_writer_with_changes_not_committed_changes_no_verdict(kept: Kept) -> None:
    """Another SQLite process holds the write lock and has made `rec-007` another ID, spilled to the file."""
    conn = sqlite3.connect(kept.db(), isolation_level=None)
    try:
        conn.execute("PRAGMA cache_size = 1")  # its changed pages go to the file before it commits
        conn.execute("BEGIN EXCLUSIVE")
        conn.execute("UPDATE files SET ident = 'rec-x', facts = replace(facts, 'rec-007', 'rec-x')")
        kept.check()
    finally:
        conn.execute("ROLLBACK")
        conn.close()
    kept.check()


def test_a_summary_copied_after_its_file_was_replaced_is_not_kept(kept: Kept, tmp_path: Path) -> None:
    """A gate read HEAD~1's summary; its file was then replaced by another tree's: what it keeps is not that copy.

    A new summary is the database it started from with the changed rows replaced; a copy of
    whatever file is now at that path would keep another tree's rows under this tree's name.
    """
    cache = TreeCache(kept.folder)
    start = cache.start(kept.tree)
    assert start is not None
    _other_trees_db(kept, tmp_path)  # the file at the path is now another tree's, its rows other
    head = git("rev-parse", "HEAD:.memzoi", cwd=kept.repo.path).stdout.strip()
    start.state.entry(record_path("rec-007"))
    if cache.save(head, start.state):  # kept only if what it copied is what it read
        image = TreeImage(kept.folder / f"{head}.db", json.loads((kept.folder / f"{head}.tree").read_text())[3])
        assert image.file(record_path("use-redis")) is not None  # HEAD~1's rows, not HEAD~2's
    kept.check()


def test_two_gates_at_once_in_a_loop_while_kept_trees_are_pruned(kept: Kept, tmp_path: Path) -> None:
    """Two gates write and read the same kept trees at once; with KEEP passed, each also prunes what the other reads."""
    repo = kept.repo
    for n in range(18):  # more trees than KEEP: every later gate prunes
        repo.write(record_path(f"later-{n:02d}"), record(f"later-{n:02d}"))
        repo.commit(f"later {n}")
    specs = [f"HEAD~{n + 1}..HEAD~{n}" for n in range(20)] + ["HEAD~20..HEAD"]
    expected = {spec: gate(repo.path, spec, tmp_path / f"nothing-kept-{n}") for n, spec in enumerate(specs)}
    assert expected["HEAD~18..HEAD~17"][0] == 1  # the commit reusing an ID
    rng = random.Random(7)
    for round_ in range(12):
        if round_ % 4 == 0:
            shutil.rmtree(kept.folder, ignore_errors=True)
        pair = [rng.choice(specs), rng.choice(specs)]
        command = [memzoi_exe(), "hook", "check"]
        procs = [
            subprocess.Popen([*command, spec, "--json"], cwd=repo.path, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            for spec in pair
        ]
        for spec, proc in zip(pair, procs, strict=True):
            out, err = proc.communicate(timeout=TIMEOUT)
            assert _verdict(proc.returncode, out.decode(), err.decode()) == expected[spec], spec
    for spec in specs[::4]:
        assert gate(repo.path, spec) == expected[spec]


def test_a_gate_killed_at_any_moment_leaves_nothing_that_changes_a_verdict(kept: Kept) -> None:
    """SIGKILL `hook install` or a gate at random moments; then every verdict is as with nothing kept."""
    rng = random.Random(11)
    commands = [["hook", "install", "--json"], ["hook", "check", "HEAD~3..HEAD", "--json"]]
    started = time.monotonic()
    gate(kept.repo.path, "HEAD~3..HEAD")
    took = time.monotonic() - started
    for round_ in range(16):
        if round_ % 3 == 0:
            shutil.rmtree(kept.folder, ignore_errors=True)
        proc = subprocess.Popen(
            [memzoi_exe(), *rng.choice(commands)], cwd=kept.repo.path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        time.sleep(rng.uniform(0, took))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=TIMEOUT)
    for spec in SPECS:
        assert gate(kept.repo.path, spec) == kept.expected[spec]


def test_what_a_killed_write_left_is_pruned_once_stale(kept: Kept) -> None:
    """A write killed before its rename leaves a temporary file (or a database without its header): the next
    write prunes it once it is an hour old."""
    # a temporary file, and a database renamed into place whose header never followed
    left = [kept.folder / ".tmp-killed.db", kept.folder / ".tmp-killed.tree", kept.folder / f"{'e' * 40}.db"]
    fresh = kept.folder / ".tmp-writing.db"
    for path in [*left, fresh]:
        path.write_bytes(kept.db().read_bytes()[:5000])
    then = time.time() - STALE_SECONDS - 60
    for path in left:
        os.utime(path, (then, then))
    assert ".tmp-killed" not in TreeCache(kept.folder).recent()
    kept.check()  # keeps HEAD's tree: a write, which prunes
    assert not any(path.exists() for path in left)
    assert fresh.exists()  # another gate may be writing it now


def _read_only(cmd: str, root: Path) -> subprocess.CompletedProcess[str]:
    """Run shell `cmd` with `root` mounted read-only (a mount namespace of its own)."""
    script = f'mount --bind "{root}" "{root}" && mount -o remount,ro,bind "{root}" && {cmd}'
    return subprocess.run(
        ["unshare", "--map-root-user", "--mount", "sh", "-c", script], capture_output=True, text=True, timeout=TIMEOUT
    )


def test_a_read_only_memzoi_home_is_read_and_changes_no_verdict(kept: Kept) -> None:
    home = Path(os.environ["MEMZOI_HOME"])
    probe = _read_only(f'touch "{kept.folder}/x"', home)
    if "Read-only file system" not in probe.stderr:
        pytest.skip(f"no read-only mount here: {probe.stderr.strip()[-200:]}")
    before = sorted(p.name for p in kept.folder.iterdir())
    for spec in SPECS:
        proc = _read_only(f"cd {kept.repo.path} && {memzoi_exe()} hook check {spec} --json", home)
        assert _verdict(proc.returncode, proc.stdout, proc.stderr) == kept.expected[spec]
    installed = _read_only(f"cd {kept.repo.path} && {memzoi_exe()} hook install", home)
    assert installed.returncode == 0 and "Traceback" not in installed.stderr, installed.stderr
    assert sorted(p.name for p in kept.folder.iterdir()) == before
    # the kept tree is used although it cannot be marked as used
    code = "import sys, pathlib, git_memzoi.hooks.treecache as c; "
    code += "print(c.TreeCache(pathlib.Path(sys.argv[1])).start(sys.argv[2]))"
    used = _read_only(f"{sys.executable} -c '{code}' {kept.folder} {kept.tree}", home)
    assert used.stdout.startswith("Start("), used.stdout + used.stderr


def test_a_kept_trees_folder_that_cannot_be_written_changes_no_verdict(kept: Kept) -> None:
    """hook-trees is a file (as root, permissions would not stop a write): nothing is kept, every gate decides."""
    shutil.rmtree(kept.folder)
    kept.folder.write_text("not a folder\n")
    kept.check()
    kept.check("HEAD~3..HEAD")
    proc = subprocess.run([memzoi_exe(), "hook", "install"], cwd=kept.repo.path, capture_output=True, text=True)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert "validated" in proc.stderr and "but not kept" in proc.stderr and "and kept" not in proc.stderr
    proc = subprocess.run(
        [memzoi_exe(), "hook", "install", "--json"], cwd=kept.repo.path, capture_output=True, text=True
    )
    assert json.loads(proc.stdout)["kept_tree"] is False and json.loads(proc.stdout)["kept_tree_files"] > 0


def test_pre_commit_never_waits_on_a_kept_store_file_that_is_a_fifo(kept: Kept) -> None:
    """The fast path's tree IDs and verdicts, FIFOs: each commit is still decided, and at once."""
    repo = kept.repo
    git("rm", "-q", ".memzoi/records/project/use-redis-again.md", cwd=repo.path)
    git("commit", "-q", "--no-verify", "-m", "one ID once", cwd=repo.path)
    installed = subprocess.run([memzoi_exe(), "hook", "install"], cwd=repo.path, capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr
    stores = [*kept.folder.glob("*.ids"), kept.folder / VERDICTS_FILE]
    assert len(stores) == 2
    for path in stores:
        path.unlink(missing_ok=True)
        os.mkfifo(path)
    repo.write(record_path("use-kafka"), record("use-kafka"))
    git("add", "-A", cwd=repo.path)
    # a later commit of the user's, not an amend: git hands pre-commit HEAD's own author date only for --amend
    # (the suite's fixed dates would make every commit look like one; hooks/amend.py)
    later = {**os.environ, "GIT_AUTHOR_DATE": "2026-01-02T00:00:00Z"}
    done = subprocess.run(
        ["git", "commit", "-q", "-m", "kafka"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=later,
    )
    assert done.returncode == 0, done.stderr
    repo.write(".memzoi/records/project/kafka-again.md", record("use-kafka"))
    git("add", "-A", cwd=repo.path)
    refused = subprocess.run(
        ["git", "commit", "-q", "-m", "again"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        env=later,
    )
    assert refused.returncode != 0 and "id-duplicate" in refused.stderr, refused.stderr


def test_a_server_whose_kept_trees_are_fifos_still_decides_each_push(remote: Remote) -> None:
    """pre-receive on a server whose every kept tree file is a FIFO: a good push lands, a bad one is refused."""
    folder = Layout.for_repo(open_repo(remote.bare)).hook_trees
    remote.commit({record_path("use-redis"): record("use-redis")}, "redis")
    remote.accepted()
    kept = sorted(folder.iterdir())
    assert any(path.suffix == ".db" for path in kept)
    for path in kept:
        path.unlink()
        os.mkfifo(path)
    remote.commit({record_path("use-kafka"): record("use-kafka")}, "kafka")
    push = ["git", "push", "origin", "main"]
    done = subprocess.run(push, cwd=remote.work.path, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    remote.commit({".memzoi/records/project/kafka-again.md": record("use-kafka")}, "kafka again")
    refused = subprocess.run(push, cwd=remote.work.path, capture_output=True, text=True, timeout=TIMEOUT)
    assert refused.returncode != 0 and "id-duplicate" in refused.stderr, refused.stderr


def test_kept_trees_of_another_repository_change_no_verdict(kept: Kept, tmp_path: Path) -> None:
    """Another repository's kept trees (a CI cache restored for the wrong project) in place of this one's."""
    other = make_repo(tmp_path / "other")
    for n in range(30):
        other.write(record_path(f"rec-{n:03d}"), record(f"rec-{n:03d}", f"Other {n}"))
    other.commit("other memory")
    other.write(record_path("use-redis"), record("use-redis", "Other redis"))
    other.commit("other redis")
    home = tmp_path / "other-home"
    assert gate(other.path, "HEAD~1..HEAD", home) == (0, [])
    shutil.rmtree(kept.folder)
    (theirs,) = home.rglob("hook-trees")
    shutil.copytree(theirs, kept.folder)
    assert sorted(p.stem for p in kept.folder.glob("*.tree")) != [kept.tree]
    for spec in SPECS:
        assert gate(kept.repo.path, spec) == kept.expected[spec]


def test_keeping_verdicts_never_waits_on_a_store_that_is_a_fifo(tmp_path: Path) -> None:
    """apply and reject keep the verdicts of what they write (add_verdicts): a FIFO in its place is skipped at once."""
    os.mkfifo(tmp_path / VERDICTS_FILE)
    script = (
        "import sys; from pathlib import Path; from git_memzoi.hooks.verdicts import add_verdicts; "
        "add_verdicts(Path(sys.argv[1]), [('.memzoi/records/project/a.md', 'a' * 40, ('record', 'alpha', None))])"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / VERDICTS_FILE).is_fifo()
