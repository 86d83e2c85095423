"""`hook check BASE..TIP` finds the records a range may invalidate in a kept index of what each records tree cites:
kept, made from another tree's index, made whole, or read without keeping, it reports the same records."""

from __future__ import annotations

import itertools
import stat
from pathlib import Path

from support import Repo, git
from support.freshness import commit, ids, invalidated
from support.recall import add_record

SESSION = "export function validateSession(s) {\n  return s.ok;\n}\n"


def history(repo: Repo) -> list[str]:
    """Commits of each change kind, records written between them; returns the commits in order."""
    repo.write("src/auth/session.ts", SESSION)
    repo.write("src/auth/util.ts", "export const helper = 1;\n")
    repo.write("src/legacy/old.ts", "export const legacyThing = 1;\n")
    repo.write("lib/core.py", "def parse_rows(x):\n    return x\n\ndef keep_me(x):\n    return x\n")
    repo.write("docs/my notes.md", "notes\n")
    add_record(repo, "semantic/file", "file-rule", type="decision", body="Read `src/auth/session.ts` first.")
    add_record(repo, "semantic/util", "util-rule", type="decision", body="Helpers live in `./src/auth/util.ts`.")
    add_record(repo, "semantic/scope", "scope-rule", type="decision", applies_to=["src/auth/**"],
               body="Sessions are validated in `validateSession`.")  # fmt: skip
    add_record(repo, "semantic/legacy", "legacy-rule", type="decision", applies_to=["src/legacy/**"], body="Frozen.")
    add_record(repo, "semantic/name", "name-rule", type="decision", body="Call `parse_rows()` first.")
    add_record(repo, "semantic/kept", "kept-rule", type="decision", body="Call `keep_me` last.")
    add_record(repo, "semantic/space", "space-rule", type="decision", applies_to=["docs/my notes.md"], body="Notes.")
    add_record(repo, "semantic/plain", "plain-rule", type="decision", body="Keep sessions short.")
    commits = [commit(repo, "code and records")]
    git("mv", "src/auth/util.ts", "src/auth/helpers.ts", cwd=repo.path)
    commits.append(commit(repo, "rename a file"))
    (repo.path / "packages").mkdir()
    git("mv", "src/auth", "packages/auth", cwd=repo.path)
    add_record(repo, "semantic/late", "late-rule", type="decision", body="Read `packages/auth/session.ts`.")
    commits.append(commit(repo, "move a folder, a record added"))
    repo.write("lib/core.py", "def parse_lines(x):\n    return x\n\ndef keep_me(x):\n    return x + 1\n")
    add_record(repo, "semantic/more", "more-rule", type="decision", body="Call `keep_me` twice.")
    commits.append(commit(repo, "remove a name, keep one; a record added"))
    git("rm", "-q", "-r", "src/legacy", "docs/my notes.md", cwd=repo.path)
    commits.append(commit(repo, "empty a scope, delete a file with a space"))
    return commits


def test_kept_built_from_another_tree_and_cold_indexes_report_the_same(repo: Repo, tmp_path: Path) -> None:
    commits = history(repo)
    kept = tmp_path / "kept-home"
    for number, (base, tip) in enumerate(itertools.combinations(commits, 2)):
        spec = f"{base}..{tip}"
        cold = invalidated(repo, spec, tmp_path / f"cold-{number}")
        assert invalidated(repo, spec, kept) == cold, spec
        assert invalidated(repo, spec, kept) == cold, spec  # the tree's own kept index this time
    whole = ids(invalidated(repo, f"{commits[0]}..{commits[-1]}", kept))
    assert whole == {"file-rule", "util-rule", "scope-rule", "legacy-rule", "name-rule", "space-rule"}
    [folder] = kept.rglob("cite-trees")
    assert any(p.suffix == ".cite" for p in folder.iterdir())
    for path in folder.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path  # runtime state is its owner's alone


def test_a_merge_and_a_rebase_between_record_and_change(repo: Repo, tmp_path: Path) -> None:
    repo.write("lib/extra.py", "def extra_step(x):\n    return x\n")
    repo.write("lib/other.py", "def other_step(x):\n    return x\n")
    start = commit(repo, "code")
    git("checkout", "-q", "-b", "memory", cwd=repo.path)
    add_record(repo, "semantic/extra", "extra-rule", type="decision", body="Use `lib/extra.py` for `extra_step`.")
    commit(repo, "record on a branch")
    git("checkout", "-q", "main", cwd=repo.path)
    git("rm", "-q", "lib/extra.py", cwd=repo.path)
    deleted = commit(repo, "delete on main")
    git("merge", "-q", "--no-edit", "memory", cwd=repo.path)
    merged = commit_or_head(repo)
    git("checkout", "-q", "-b", "rebased", "memory", cwd=repo.path)
    add_record(repo, "semantic/other", "other-rule", type="decision", body="Use `other_step`.")
    commit(repo, "another record")
    git("rebase", "-q", "main", cwd=repo.path)
    rebased = commit_or_head(repo)
    git("checkout", "-q", "main", cwd=repo.path)
    kept = tmp_path / "kept"
    for base, tip in ((start, merged), (deleted, merged), (start, rebased), (merged, rebased), (start, deleted)):
        spec = f"{base}..{tip}"
        assert invalidated(repo, spec, kept) == invalidated(repo, spec, tmp_path / f"cold-{base[:7]}{tip[:7]}"), spec
    assert ids(invalidated(repo, f"{start}..{merged}", kept)) == {"extra-rule"}


def commit_or_head(repo: Repo) -> str:
    return git("rev-parse", "HEAD", cwd=repo.path).stdout.strip()


def test_a_damaged_or_altered_kept_index_is_made_again(repo: Repo, tmp_path: Path) -> None:
    commits = history(repo)
    spec = f"{commits[0]}..{commits[1]}"
    home = tmp_path / "home"
    want = invalidated(repo, spec, home)
    assert ids(want) == {"util-rule"}
    [db] = [p for p in home.rglob("*.db") if p.parent.name == "cite-trees"]
    data = bytearray(db.read_bytes())
    data[-100] ^= 0xFF
    db.write_bytes(bytes(data))  # a flipped bit: its checksum no longer holds
    assert invalidated(repo, spec, home) == want
    db.unlink()
    db.mkdir()  # not a file
    assert invalidated(repo, spec, home) == want
    db.rmdir()
    [header] = [p for p in home.rglob("*.cite")]
    header.write_text(header.read_text().replace("memzoi-citations", "other-format"))
    assert invalidated(repo, spec, home) == want


def test_an_index_that_cannot_be_kept_still_answers(repo: Repo, tmp_path: Path) -> None:
    import shutil

    commits = history(repo)
    spec = f"{commits[0]}..{commits[-1]}"
    home = tmp_path / "home"
    want = invalidated(repo, spec, home)
    [folder] = home.rglob("cite-trees")
    shutil.rmtree(folder)
    folder.write_text("not a folder\n")  # nothing can be kept there: answered from the words read
    assert invalidated(repo, spec, home) == want
    assert folder.read_text() == "not a folder\n"


def test_the_kept_index_answers_the_lookup(repo: Repo, tmp_path: Path) -> None:
    """What is kept is what answers (no grep of the records): an index kept empty for the tree finds no record."""
    from git_memzoi.freshness.citations import fingerprint
    from git_memzoi.index.citation_store import CitationStore

    commits = history(repo)
    spec = f"{commits[0]}..{commits[1]}"
    home = tmp_path / "home"
    assert ids(invalidated(repo, spec, home)) == {"util-rule"}
    [folder] = home.rglob("cite-trees")
    tree = git("rev-parse", f"{commits[1]}:.memzoi/records", cwd=repo.path).stdout.strip()
    assert CitationStore(folder, fingerprint()).save(tree, [])
    assert invalidated(repo, spec, home) == []


def test_words_cover_what_a_record_cites() -> None:
    from git_memzoi.freshness.citations import words
    from git_memzoi.freshness.evidence import extract
    from git_memzoi.profile.frontmatter import parse

    text = (
        "---\nid: a\ntitle: 'See `other/thing.py`'\napplies_to:\n  - ./src/auth/**\n  - 'lib/'\n"
        "source_ref: src/api/routes.py#L12\n---\n# A\n\nCall `parse_rows()` in `./pkg/x.py:12`.\n"
        "```\n`fenced_name`\n```\n"
    )
    doc = parse(text.encode())
    evidence = extract(doc.data["applies_to"], doc.data["source_ref"], doc.body)
    found = words(text.encode())
    assert {*evidence.scopes, *evidence.paths, *evidence.identifiers} <= found
    assert "other/thing.py" not in found  # another field's words are not kept
    aliased = "---\nid: a\nbase: &b [src]\napplies_to: *b\n---\nBody.\n"
    assert words(aliased.encode()) == {""}  # read by every lookup


def test_a_kept_index_of_a_tree_the_repository_no_longer_holds_is_passed_over(repo: Repo, tmp_path: Path) -> None:
    from git_memzoi.freshness.citations import fingerprint
    from git_memzoi.index.citation_store import CitationStore

    commits = history(repo)
    home = tmp_path / "home"
    want = invalidated(repo, f"{commits[0]}..{commits[1]}", tmp_path / "cold")
    assert invalidated(repo, f"{commits[0]}..{commits[1]}", home) == want
    [folder] = home.rglob("cite-trees")
    for kept in folder.iterdir():
        kept.unlink()
    assert CitationStore(folder, fingerprint()).save("1" * 40, [])  # the most recently used, and pruned from git
    assert invalidated(repo, f"{commits[0]}..{commits[1]}", home) == want
