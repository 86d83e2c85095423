"""`export agents-md|claude-md --into FILE` against a hostile clone, as real `git memzoi` processes.

A clone chooses what its tree holds: a committed `docs -> ~/somewhere` must not make `--into
docs/CLAUDE.md` read or write outside the repository, and the file's own bytes (line endings,
a FIFO in its place) are the person's.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from support import Repo, git


def memzoi(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`git memzoi ARGS` as a user runs it: a real process through git."""
    return subprocess.run(["git", "memzoi", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


def ok(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = memzoi(*args, cwd=cwd)
    assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def one_record(repo: Repo) -> None:
    title = ("--title", "Tabs in Makefiles", "--body", "Use tabs.")
    ok("propose", "--type", "convention", *title, "--packet", cwd=repo.path)
    ok("approve", "--all", cwd=repo.path)
    ok("apply", "--all", "--commit", cwd=repo.path)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the repository holding a file the person wrote."""
    folder = tmp_path / "outside"
    (folder / "sub").mkdir(parents=True)
    (folder / "CLAUDE.md").write_text("# mine\n\nprivate notes\n")
    (folder / "sub" / "AGENTS.md").write_text("# also mine\n")
    return folder


@pytest.mark.parametrize("target", ["claude-md", "agents-md"])
@pytest.mark.parametrize(
    "into",
    [
        "docs/CLAUDE.md",  # reads the outside file and rewrites it
        "docs/NEW.md",  # creates a file outside
        "docs/sub/AGENTS.md",  # a link two folders up
        "docs/sub/new/deeper.md",  # folders to be made below the link
        "docs/../CLAUDE.md",  # `..` taken by the kernel from where the link leads
        "docs/./CLAUDE.md",
    ],
)
def test_into_never_goes_through_a_committed_folder_link(repo: Repo, outside: Path, target: str, into: str) -> None:
    """`--into docs/CLAUDE.md` with a committed `docs -> outside` read the outside file and rewrote it."""
    one_record(repo)
    os.symlink(os.path.relpath(outside, repo.path), repo.path / "docs")
    git("add", "docs", cwd=repo.path)
    git("commit", "-qm", "docs link", cwd=repo.path)
    before, parent = snapshot(outside), snapshot(outside.parent / "outside")
    done = memzoi("export", target, "--into", into, cwd=repo.path)
    assert done.returncode == 1, done
    assert done.stderr.startswith("git memzoi: ") and done.stderr.count("\n") == 1, done.stderr
    assert "symlink" in done.stderr and "Tabs" not in done.stderr, done.stderr
    assert snapshot(outside) == before == parent
    assert not (outside.parent / "CLAUDE.md").exists()
    assert not (repo.path / "CLAUDE.md").exists()


@pytest.mark.parametrize("shape", ["absolute", "dotdot", "dotdot-in", "file-link-out"])
def test_into_outside_the_work_tree_is_refused(repo: Repo, outside: Path, shape: str) -> None:
    into = {
        "absolute": str(outside / "CLAUDE.md"),
        "dotdot": os.path.relpath(outside / "CLAUDE.md", repo.path),
        "dotdot-in": "sub/../../outside/CLAUDE.md",
        "file-link-out": "CLAUDE.md",
    }[shape]
    (repo.path / "sub").mkdir()
    if shape == "file-link-out":
        os.symlink(outside / "CLAUDE.md", repo.path / "CLAUDE.md")
    before = snapshot(outside)
    done = memzoi("export", "claude-md", "--into", into, cwd=repo.path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done
    assert "outside the work tree" in done.stderr or "leaves the work tree" in done.stderr, done
    assert snapshot(outside) == before


def test_into_still_writes_real_folders_and_an_in_tree_file_link(repo: Repo) -> None:
    """What the checks leave alone: a real nested folder made on the way, and CLAUDE.md -> AGENTS.md."""
    one_record(repo)
    ok("export", "claude-md", "--into", "worker/deep/CLAUDE.md", cwd=repo.path)
    assert b"Tabs in Makefiles" in (repo.path / "worker/deep/CLAUDE.md").read_bytes()
    (repo.path / "AGENTS.md").write_text("# Team\n")
    os.symlink("AGENTS.md", repo.path / "CLAUDE.md")
    ok("export", "claude-md", "--into", "CLAUDE.md", cwd=repo.path)
    assert (repo.path / "CLAUDE.md").is_symlink()
    assert (repo.path / "AGENTS.md").read_text().startswith("# Team\n\n<!-- memzoi:start -->")


@pytest.mark.parametrize("into", ["AGENTS.md", "worker/CLAUDE.md"])
def test_into_a_fifo_is_refused_without_waiting(repo: Repo, into: str) -> None:
    """`--into` a FIFO waited for ever for a writer; a file that is not a regular one is refused at once."""
    path = repo.path / into
    path.parent.mkdir(exist_ok=True)
    os.mkfifo(path)
    done = memzoi("export", "agents-md", "--into", into, cwd=repo.path, timeout=30)
    assert done.returncode == 1 and f"{into} is not a regular file" in done.stderr, done
    assert done.stderr.count("\n") == 1 and path.is_fifo()


@pytest.mark.parametrize(
    ("hand", "block_eol"),
    [
        (b"# Team\n\nrun make\r\nmore\n\nend\n", b"\n"),  # one CRLF line in an LF file
        (b"# Team\r\n\r\nrun make\nmore\r\n\r\nend\r\n", b"\r\n"),  # one LF line in a CRLF file
        (b"# Team\n\nno newline at the end", b"\n"),
    ],
    ids=["lf-with-one-crlf", "crlf-with-one-lf", "no-final-newline"],
)
def test_into_keeps_each_hand_written_lines_own_ending(repo: Repo, hand: bytes, block_eol: bytes) -> None:
    """A file with one CRLF line came back with every hand-written LF line turned CRLF."""
    one_record(repo)
    tail = b"\n## After\r\n\r\nkept as written\n"
    (repo.path / "AGENTS.md").write_bytes(hand)
    ok("export", "agents-md", "--into", "AGENTS.md", cwd=repo.path)
    after = (repo.path / "AGENTS.md").read_bytes()
    assert after.startswith(hand.rstrip(b"\r\n")), after
    block = after[after.index(b"<!-- memzoi:start -->") :]
    if block_eol == b"\r\n":
        assert block.count(b"\n") == block.count(b"\r\n"), block
    else:
        assert b"\r" not in block, block
    # a block in the middle: the lines after it keep their endings too
    (repo.path / "AGENTS.md").write_bytes(after + tail)
    ok("export", "agents-md", "--into", "AGENTS.md", cwd=repo.path)
    assert (repo.path / "AGENTS.md").read_bytes() == after + tail


def test_cursor_rules_look_at_nothing_through_a_folder_link(repo: Repo, tmp_path: Path) -> None:
    """Whether an imported Cursor rule is "still there" was looked up through a folder a clone made a link.

    What the export writes must not depend on what lies outside the repository.
    """
    rules = repo.path / ".cursor/rules/team"
    rules.mkdir(parents=True)
    (rules / "style.mdc").write_text("---\ndescription: style\nglobs: src/**\nalwaysApply: false\n---\n\nTabs.\n")
    git("add", "-A", cwd=repo.path)
    git("commit", "-qm", "rule", cwd=repo.path)
    ok("import", "--apply", "--commit", cwd=repo.path)
    written: list[list[str]] = []
    for holds in (True, False):
        outside = tmp_path / f"outside-{holds}"
        outside.mkdir()
        if holds:
            (outside / "style.mdc").write_text("anything\n")
        if rules.is_symlink():
            rules.unlink()
        else:
            for path in rules.iterdir():
                path.unlink()
            rules.rmdir()
        os.symlink(outside, rules)
        ok("export", "cursor-rules", cwd=repo.path)
        written.append(sorted(p.name for p in (repo.path / ".cursor/rules/memzoi").iterdir()))
    assert written[0] == written[1] and len(written[1]) == 1, written
