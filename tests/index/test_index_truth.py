"""The live index answers as a full rebuild does, after every git state a user can reach, read by read.

Each step changes the work tree the way git users do, then the very next read's answers
(`search --json --all`, `context --json`, `precheck --json`, and a dump of index.db) are compared
with the same answers after `rebuild --full` on a copy of MEMZOI_HOME. The steps include the
changes a stat of (size, mtime) cannot see: an in-place edit that keeps the size and puts the
mtime back (as `touch -r`, `cp -p`, `rsync -t` and `tar x` do), and two equal-size records with
equal mtimes swapped by `mv`. Every record has the same size and an old mtime, and scores tie
(the same words in the same places), so a top-N cut by write order shows too.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_memzoi.runtime.workspace import Workspace
from support import Repo, git, make_repo, run_cli
from support.index import dump_index
from support.recall import record_text

pytestmark = pytest.mark.slow

RECORDS = ".memzoi/records"
COUNT = 16
#: Words of one length: replacing one with another keeps a file's size.
WORDS = ("heron", "egret", "crane", "stork")
PAST = 1_600_000_000_000_000_000


def _record(i: int, word: str) -> str:
    kind = "risk" if i % 4 == 0 else "decision"
    return record_text(
        f"bird-{i:02d}",
        title=f"Bird {i:02d} {word}",
        body=f"The {word} waits by module {i % 4} and {WORDS[i % 4]} watches.",
        type=kind,
        applies_to=[f"src/m{i % 4}/**"],
    )


def _age(root: Path) -> None:
    for path in (root / RECORDS).rglob("*.md"):
        os.utime(path, ns=(PAST, PAST))


def _setup(root: Path) -> Repo:
    repo = make_repo(root)
    for i in range(COUNT):
        repo.write(f"{RECORDS}/b/{i:02d}.md", _record(i, WORDS[i % 3]))
    repo.commit("birds")
    git("checkout", "-q", "-b", "other", cwd=root)
    for i in range(0, COUNT, 3):
        repo.write(f"{RECORDS}/b/{i:02d}.md", _record(i, "stork"))
    (root / RECORDS / "b" / "01.md").unlink()
    repo.write(f"{RECORDS}/c/new.md", _record(99, "crane"))
    git("add", "-A", cwd=root)
    git("commit", "-q", "-m", "other birds", cwd=root)
    git("checkout", "-q", "main", cwd=root)
    _age(root)
    return repo


def _files(root: Path) -> list[Path]:
    return sorted((root / RECORDS).rglob("*.md"))


def _step(root: Path, op: str, n: int) -> None:
    files = _files(root)
    pick = files[n % len(files)] if files else None
    if op == "inplace" and pick is not None:
        before = pick.stat()
        text = pick.read_text(encoding="utf-8")
        old = next((w for w in WORDS if w in text.split("\n---\n", 1)[-1]), None)
        if old is not None:
            pick.write_text(text.replace(old, WORDS[(WORDS.index(old) + 1 + n) % len(WORDS)]), encoding="utf-8")
        assert pick.stat().st_size == before.st_size
        os.utime(pick, ns=(before.st_atime_ns, before.st_mtime_ns))  # touch -r: the mtime put back
    elif op == "swap" and len(files) > 1:
        other = files[(n + 1 + n // 7) % len(files)]
        if other != pick and other.stat().st_size == pick.stat().st_size:  # type: ignore[union-attr]
            os.utime(other, ns=(PAST, PAST))
            os.utime(pick, ns=(PAST, PAST))  # type: ignore[arg-type]
            spare = root / "spare.tmp"
            os.rename(pick, spare)  # type: ignore[arg-type]
            os.rename(other, pick)  # type: ignore[arg-type]
            os.rename(spare, other)
    elif op == "checkout":
        branch = git("rev-parse", "--abbrev-ref", "HEAD", cwd=root).stdout.strip()
        git("checkout", "-q", "-f", "main" if branch == "other" else "other", cwd=root)
    elif op == "stash":
        git("stash", "push", "-q", "--include-untracked", cwd=root, check=False)
    elif op == "pop":
        git("stash", "pop", "-q", cwd=root, check=False)
    elif op == "new":
        path = root / RECORDS / "n" / f"n{n % 5}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_record(50 + n % 5, WORDS[n % len(WORDS)]), encoding="utf-8")
    elif op == "delete" and pick is not None:
        pick.unlink()


def _answers(env: dict[str, str] | None = None) -> dict[str, Any]:
    """What a reader sees: search (ties cut at the limit), context, precheck, and the index itself."""
    out: dict[str, Any] = {}
    for word in WORDS:
        hits = run_cli("search", "--json", "--all", "--limit", "3", word, env=env).json()["hits"]
        out[f"search {word}"] = [(h["record_id"], h["title"], h["citation"]["path"], h["snippet"]) for h in hits]
    out["context"] = json.loads(
        run_cli("context", "--json", "--budget", "120", "--task", "heron crane", env=env).stdout
    )
    out["precheck"] = run_cli("precheck", "--json", "--path", "src/m0/a.py", env=env).json()
    if env is not None:
        os.environ["MEMZOI_HOME"], saved = env["MEMZOI_HOME"], os.environ["MEMZOI_HOME"]
        try:
            out["index"] = dump_index(Workspace.open())
        finally:
            os.environ["MEMZOI_HOME"] = saved
    else:
        out["index"] = dump_index(Workspace.open())
    return out


def _full_copy(tmp: Path) -> dict[str, Any]:
    """The answers after `rebuild --full` on a copy of MEMZOI_HOME."""
    copy = tmp / "home-copy"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(os.environ["MEMZOI_HOME"], copy)
    env = {"MEMZOI_HOME": str(copy)}
    run_cli("rebuild", "--full", env=env)
    return _answers(env)


OPS = st.lists(
    st.tuples(
        st.sampled_from(["inplace", "swap", "checkout", "stash", "pop", "new", "delete"]),
        st.integers(min_value=0, max_value=1000),
    ),
    min_size=1,
    max_size=5,
)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=OPS)
def test_every_read_answers_as_a_full_rebuild_does(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch, ops: list[tuple[str, int]]
) -> None:
    tmp = tmp_path_factory.mktemp("truth")
    root = tmp / "project"
    _setup(root)
    monkeypatch.chdir(root)
    monkeypatch.setenv("MEMZOI_HOME", str(tmp / "home"))
    run_cli("rebuild")
    for op, n in ops:
        _step(root, op, n)
        live = _answers()
        assert live == _full_copy(tmp), f"after {op} {n}"


@pytest.mark.parametrize("op", ["inplace", "swap"])
def test_what_a_size_and_mtime_stat_cannot_see_is_in_the_next_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, op: str
) -> None:
    """The two changes that keep every file's size and mtime: the very next read has them."""
    root = tmp_path / "project"
    _setup(root)
    monkeypatch.chdir(root)
    run_cli("rebuild")
    before = _answers()
    _step(root, op, 2)
    live = _answers()
    assert live != before
    assert live == _full_copy(tmp_path)
    assert run_cli("rebuild", "--json").json()["changed"] is False  # the read already brought it in line


def test_tied_scores_rank_alike_in_an_incremental_index_and_a_full_rebuild(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows rewritten by an incremental build get new rowids; equal scores still come in record ID order."""
    root = tmp_path / "project"
    repo = _setup(root)
    monkeypatch.chdir(root)
    run_cli("rebuild")
    first = run_cli("search", "--json", "--all", "--limit", "2", "watches").json()["hits"]
    # rewrite the first two records with the same words in other places: same score, new rowids
    for i in (0, 1):
        path = root / RECORDS / "b" / f"{i:02d}.md"
        path.write_text(path.read_text(encoding="utf-8").replace("The ", "Thé ", 1), encoding="utf-8")
    repo.commit("accents")
    live = run_cli("search", "--json", "--all", "--limit", "2", "watches").json()["hits"]
    assert [h["record_id"] for h in live] == [h["record_id"] for h in first] == ["bird-00", "bird-01"]
    assert _answers() == _full_copy(tmp_path)
