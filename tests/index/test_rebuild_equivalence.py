"""The incremental index equals a full rebuild, row for row and problem for problem.

Random sequences of edits (add, edit, touch, delete, rename, duplicate an ID, break a file, commit
and switch branches) run against a real repository of more than 200 record files, so that a
linked worktree new to its index starts from the main worktree's and takes the git-index
shortcut. After every step the incremental index of one MEMZOI_HOME is compared with `rebuild
--full` into another; when the step's paths are known, the incremental side may instead refresh
just those paths (as `apply` does after installing its files).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_memzoi.index.rebuild import rebuild, refresh
from git_memzoi.runtime.workspace import Workspace
from support import Repo
from support.index import build_index, dump_index
from support.recall import record_text

pytestmark = pytest.mark.slow

BASE_FILES = 210
RECORDS = ".memzoi/records"


EDITS = st.lists(
    st.tuples(
        st.sampled_from(["add", "edit", "touch", "delete", "rename", "duplicate", "break", "commit", "branch"]),
        st.integers(min_value=0, max_value=10_000),
    ),
    min_size=1,
    max_size=6,
)


def _records(root: Path) -> list[Path]:
    return sorted((root / RECORDS).rglob("*.md"))


def _apply(repo: Repo, edit: str, n: int, counter: list[int]) -> list[str] | None:
    """Make one edit; the repository paths it wrote (None when git rewrote the work tree)."""
    root = repo.path
    files = _records(root)
    counter[0] += 1
    serial = counter[0]
    pick = files[n % len(files)] if files else None
    picked = pick.relative_to(root).as_posix() if pick is not None else ""
    if edit == "add" or pick is None:
        word = "alpha" if n % 2 else "omega"
        path = f"{RECORDS}/new/r{serial}.md"
        repo.write(path, record_text(f"new-{serial}", title=f"New {word} {serial}", applies_to=[f"src/m{n % 7}/**"]))
        return [path]
    if edit == "edit":
        text = pick.read_text(encoding="utf-8")
        pick.write_text(text.replace("\n---\n", f"\n---\nedited alpha {serial}\n", 1), encoding="utf-8")
    elif edit == "touch":  # the stat moves, the bytes do not
        stat = pick.stat()
        os.utime(pick, ns=(stat.st_atime_ns, stat.st_mtime_ns - 5_000_000_000 - n))
    elif edit == "delete":
        pick.unlink()
    elif edit == "rename":
        dest = root / RECORDS / "moved" / f"m{serial}.md"
        dest.parent.mkdir(parents=True, exist_ok=True)
        pick.rename(dest)
        return [picked, dest.relative_to(root).as_posix()]
    elif edit == "duplicate":
        # a new file that takes an existing record's ID, before or after it in path order
        rid = pick.read_text(encoding="utf-8").split("id: ", 1)[1].split("\n", 1)[0].strip()
        where = "0000" if n % 2 else "zzzz"
        path = f"{RECORDS}/{where}/d{serial}.md"
        repo.write(path, record_text(rid, title=f"Dup omega {serial}"))
        return [path]
    elif edit == "break":
        pick.write_text(pick.read_text(encoding="utf-8").replace("lane: ", "lane: nonsense-", 1), encoding="utf-8")
    elif edit == "commit":
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "--allow-empty", "-m", f"step {serial}")
        return []
    elif edit == "branch":
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "--allow-empty", "-m", f"before switch {serial}")
        name = f"b{serial}"
        _git(root, "checkout", "-q", "-B", name, "HEAD~1")
        return None
    return [picked]


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


@pytest.fixture
def big_repo(repo: Repo) -> Repo:
    for i in range(BASE_FILES):
        word = "alpha" if i % 3 == 0 else "omega" if i % 3 == 1 else "gamma"
        repo.write(
            f"{RECORDS}/area{i % 9}/rec{i:03d}.md",
            record_text(f"rec-{i:03d}", title=f"Record {word} {i}", applies_to=[f"src/m{i % 7}/"]),
        )
    repo.commit("base records")
    repo.write("README.md", "x\n")
    repo.commit("second commit")
    return repo


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(EDITS, min_size=1, max_size=3), linked=st.booleans(), targeted=st.booleans())
def test_incremental_index_equals_full_rebuild(
    big_repo: Repo,
    tmp_path_factory: pytest.TempPathFactory,
    steps: list[list[tuple[str, int]]],
    linked: bool,
    targeted: bool,
) -> None:
    saved_home, saved_cwd = os.environ["MEMZOI_HOME"], os.getcwd()
    base = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=big_repo.path, check=True, capture_output=True, text=True
    ).stdout.strip()
    inc_home = tmp_path_factory.mktemp("incremental")
    counter = [0]
    work = big_repo
    try:
        build_index(inc_home, full=False)
        if linked:
            # a linked worktree new to its index starts from the main worktree's index and takes
            # blob OIDs from git's index stat cache (more than 200 record files)
            path = tmp_path_factory.mktemp("linked") / "wt"
            _git(big_repo.path, "worktree", "add", "-q", "--detach", str(path), "HEAD")
            _settle_checkout(path)
            work = Repo(path, pygit2.Repository(str(path)))
            os.chdir(path)
        for number, batch in enumerate(steps):
            written: list[str] | None = []
            for edit, n in batch:
                paths = _apply(work, edit, n, counter)
                written = None if paths is None or written is None else written + paths
            os.environ["MEMZOI_HOME"] = str(inc_home)
            if targeted and written is not None:
                first = refresh(Workspace.open(), written)
                refreshed = dump_index(Workspace.open())
                report = rebuild(Workspace.open())
                assert dump_index(Workspace.open()) == refreshed, "a rebuild after the refresh changed the index"
            else:
                first = report = rebuild(Workspace.open())
            if linked and number == 0:
                assert first.seeded_from is not None and first.git_index > 0
            incremental = (
                dump_index(Workspace.open()),
                sorted((p.path, p.line, p.code, p.message) for p in report.problems),
            )
            full = build_index(tmp_path_factory.mktemp("full"), full=True)
            assert incremental[1] == full[1], "problems differ"
            assert incremental[0] == full[0], "index rows differ"
    finally:
        os.environ["MEMZOI_HOME"] = saved_home
        os.chdir(saved_cwd)
        if work is not big_repo:
            _git(big_repo.path, "worktree", "remove", "--force", str(work.path))
        _git(big_repo.path, "checkout", "-q", "-f", base)
        _git(big_repo.path, "clean", "-q", "-fdx", ".memzoi")


def _settle_checkout(root: Path) -> None:
    """Make the checkout's files older than git's index of them, as a checkout some time ago is.

    git leaves entries written in the same second as its index out of its stat cache ("racily
    clean"); a fresh checkout is all such entries.
    """
    for path in _records(root):
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns - 10_000_000_000))
    _git(root, "update-index", "-q", "--refresh")


@pytest.mark.parametrize("how", ["rebuild", "refresh"])
def test_a_new_file_taking_an_unchanged_records_id_is_reported_on_its_id_line(
    big_repo: Repo, tmp_path_factory: pytest.TempPathFactory, how: str
) -> None:
    """Incremental and full builds locate the duplicate on the same line (the `id:` line), and hand
    the ID back when its holder goes, whether the index is rebuilt or refreshed for the written paths."""
    home = Path(os.environ["MEMZOI_HOME"])
    rebuild(Workspace.open())

    def step(*paths: str) -> list[tuple[str, int, str, str]]:
        if how == "refresh":
            refresh(Workspace.open(), paths)
        report = rebuild(Workspace.open())
        found = sorted((p.path, p.line, p.code, p.message) for p in report.problems)
        incremental = dump_index(Workspace.open())
        assert (incremental, found) == build_index(tmp_path_factory.mktemp("full"), full=True)
        os.environ["MEMZOI_HOME"] = str(home)
        return found

    first = f"{RECORDS}/0000/first.md"
    big_repo.write(first, record_text("rec-005", title="Takes an existing ID"))
    assert step(first) == [
        (f"{RECORDS}/area5/rec005.md", 2, "id-duplicate", f"record ID 'rec-005' is also used by {first}")
    ]
    last = f"{RECORDS}/zzzz/last.md"
    big_repo.write(last, record_text("rec-005", title="Takes it too"))
    assert [(p, line) for p, line, _, _ in step(last)] == [(f"{RECORDS}/area5/rec005.md", 2), (last, 2)]
    (big_repo.path / first).unlink()
    assert step(first) == [(last, 2, "id-duplicate", f"record ID 'rec-005' is also used by {RECORDS}/area5/rec005.md")]
