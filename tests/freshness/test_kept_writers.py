"""`hook check` judges a record from the commit that last wrote its file; those commits are kept per tip, so a
record written long before the change costs no walk back to it, and the report is the one git's walk gives."""

from __future__ import annotations

from pathlib import Path

from support import Repo, git
from support.freshness import commit, ids, invalidated
from support.recall import add_record


def _edits(repo: Repo, count: int, tag: str) -> str:
    """`count` commits editing a file no record cites, a side branch merged among them; returns the last."""
    for i in range(count):
        if i == count // 2:
            git("checkout", "-q", "-b", f"side-{tag}", cwd=repo.path)
            repo.write(f"side/{tag}.txt", "side\n")
            commit(repo, f"side {tag}")
            git("checkout", "-q", "main", cwd=repo.path)
            repo.write("lib/other.py", f"# main {tag} {i}\n")
            commit(repo, f"main {tag}")
            git("merge", "-q", "--no-edit", f"side-{tag}", cwd=repo.path)
        repo.write("lib/other.py", f"# {tag} {i}\n")
        commit(repo, f"edit {tag} {i}")
    return git("rev-parse", "HEAD", cwd=repo.path).stdout.strip()


def _kept_writers(home: Path) -> list[Path]:
    return sorted(home.rglob("*.writers"))


def test_records_written_long_before_each_change_report_as_a_walk_does(repo: Repo, tmp_path: Path) -> None:
    for name in ("a", "b", "c", "d"):
        repo.write(f"lib/{name}.py", f"def step_{name}(x):\n    return x\n")
        add_record(repo, f"semantic/{name}", f"{name}-rule", type="decision", body=f"Read `lib/{name}.py` first.")
    repo.write("lib/other.py", "# other\n")
    start = commit(repo, "code and records")
    kept = tmp_path / "kept"
    ranges: list[tuple[str, str]] = []
    base = _edits(repo, 12, "one")
    git("rm", "-q", "lib/a.py", cwd=repo.path)
    ranges.append((base, commit(repo, "delete a.py")))  # a record written 14 commits before
    base = _edits(repo, 12, "two")
    add_record(repo, "semantic/c2", "c2-rule", type="decision", body="Read `lib/c.py` first, then `lib/other.py`.")
    commit(repo, "a record citing c.py")
    git("rm", "-q", "lib/b.py", "lib/c.py", cwd=repo.path)
    ranges.append((base, commit(repo, "delete b.py and c.py")))  # two written long before, one just before
    base = _edits(repo, 3, "three")
    git("rm", "-q", "lib/d.py", cwd=repo.path)
    commit(repo, "delete d.py")
    add_record(repo, "semantic/d2", "d2-rule", type="decision", body="Read `lib/d.py` first.")
    ranges.append((base, commit(repo, "a record citing d.py after it went")))  # judged from after the change
    ranges.append((start, ranges[-1][1]))
    everything = {"a-rule", "b-rule", "c-rule", "c2-rule", "d-rule"}
    want = [{"a-rule"}, {"b-rule", "c-rule", "c2-rule"}, {"d-rule"}, everything]
    for number, ((old, new), expected) in enumerate(zip(ranges, want, strict=True)):
        spec = f"{old}..{new}"
        found = invalidated(repo, spec, kept)
        assert ids(found) == expected, spec
        assert found == invalidated(repo, spec, tmp_path / f"cold-{number}"), spec  # nothing kept: git's walk
        assert _kept_writers(kept), "the writers found are kept"
    for old, new in ranges:  # again, every tip's writers taken from a kept commit on either side of it
        assert invalidated(repo, f"{old}..{new}", kept) == invalidated(repo, f"{old}..{new}", tmp_path / "cold-x")


def _story(repo: Repo) -> tuple[str, str, str]:
    """A record citing `lib/new.py` before it exists, the file added, then deleted: (written, added, deleted)."""
    repo.write("lib/other.py", "# other\n")
    add_record(repo, "semantic/early", "early-rule", type="decision", body="Read `lib/new.py` first.")
    written = commit(repo, "a record citing a file not yet written")
    repo.write("lib/new.py", "def fresh(x):\n    return x\n")
    added = commit(repo, "the file it cites")
    git("rm", "-q", "lib/new.py", cwd=repo.path)
    return written, added, commit(repo, "the file deleted")


def test_kept_writers_are_what_answers_and_are_checked(repo: Repo, tmp_path: Path) -> None:
    """A kept writer holding the record's blob is taken as the record's commit; one that does not is asked of git."""
    from git_memzoi.freshness.writers import Writers

    written, added, deleted = _story(repo)
    path = ".memzoi/records/semantic/early.md"
    home = tmp_path / "home"
    assert invalidated(repo, f"{added}..{deleted}", home) == []  # written before the file existed: nothing broke
    [folder] = home.rglob("cite-trees")
    for kept in _kept_writers(home):
        kept.unlink()
    memo = Writers(folder)
    memo.keep(added, {path: added})  # holds the record's blob, but is not the commit that wrote it
    assert ids(invalidated(repo, f"{added}..{deleted}", home)) == {"early-rule"}  # so the kept writer answered
    tree = git("rev-parse", f"{written}^{{tree}}", cwd=repo.path).stdout.strip()
    for kept in _kept_writers(home):
        kept.unlink()
    Writers(folder).keep(added, {path: tree})  # not a commit holding the record: asked of git again
    assert invalidated(repo, f"{added}..{deleted}", home) == []
    for kept in _kept_writers(home):
        kept.write_text("not json\n")  # damaged: a miss
    assert invalidated(repo, f"{added}..{deleted}", home) == []
    assert invalidated(repo, f"{added}..{deleted}", home) == []  # kept again, from git's walk
