"""`git memzoi import` against hostile sources and interrupted runs, as real `git memzoi` processes."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from support import Repo, git


def memzoi(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`git memzoi ARGS` as a user runs it: a real process through git."""
    return subprocess.run(
        ["git", "memzoi", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **(env or {})}
    )


def ok(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    done = memzoi(*args, cwd=cwd)
    assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def planned(repo: Repo, *args: str) -> dict:
    return json.loads(ok("import", "--json", *args, cwd=repo.path).stdout)


def commit_all(repo: Repo, message: str) -> None:
    git("add", "-A", cwd=repo.path)
    git("commit", "-qm", message, cwd=repo.path)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("CLAUDE.md", "# Team\n\n## Style\n\nTabs in Makefiles.\n\n@.memzoi/log.md\n"),
        ("CLAUDE.md", "# Team\n\n## Style\n\nTabs in Makefiles. See @./.memzoi/log.md and @docs/../.memzoi/index.md\n"),
        ("worker/CLAUDE.md", "# Worker\n\n## Style\n\nTabs in Makefiles.\n\n@../.memzoi/log.md\n"),
        ("AGENTS.md", "<!-- Source: .memzoi/log.md -->\n# Team\n\n## Style\n\nTabs in Makefiles.\n"),
        ("AGENTS.md", "<!-- Source: RULES.md -->\n<!-- Source: ./.memzoi/index.md -->\n"),
        ("AGENTS.md", "link:.memzoi/log.md"),
    ],
    ids=["claude-import", "claude-import-dot-and-dotdot", "nested-claude-import", "ruler", "ruler-folder", "link"],
)
def test_import_never_reads_memorys_own_files_through_a_reference(repo: Repo, name: str, text: str) -> None:
    """`@.memzoi/log.md` (or a Ruler marker, or a link) made import read log.md: one more record every run."""
    (repo.path / "RULES.md").write_text("# Rules\n\n## Style\n\nTabs in Makefiles.\n")
    (repo.path / name).parent.mkdir(exist_ok=True)
    if text.startswith("link:"):
        os.symlink(os.path.relpath(repo.path / text[5:], (repo.path / name).parent), repo.path / name)
    else:
        (repo.path / name).write_text(text)
    commit_all(repo, "sources")
    for _ in range(3):  # each apply appends to log.md: a source reading it would change every time
        ok("import", "--apply", "--commit", cwd=repo.path)
    again = planned(repo)
    assert again["changes"] == 0, again
    assert not [s for s in again["sources"] if s["file"].startswith(".memzoi")], again["sources"]
    skipped = [e for e in again["entries"] if e["action"] == "skipped" and "own memory" in (e["reason"] or "")]
    assert skipped, again["entries"]
    records = sorted(p.name for p in (repo.path / ".memzoi/records").rglob("*.md"))
    assert len(records) <= 1, records


def many_sections(repo: Repo, n: int) -> None:
    sections = "".join(f"## Rule {i}\n\nAlways do thing number {i}.\n\n" for i in range(n))
    (repo.path / "AGENTS.md").write_text("# Team\n\n" + sections)
    commit_all(repo, "agents")


def record_count(repo: Repo) -> int:
    return len(list((repo.path / ".memzoi/records").rglob("*.md")))


@pytest.mark.crash
@pytest.mark.parametrize(
    ("killed", "step", "then"),
    [
        (("--apply",), "file-21", ("--apply", "--commit")),
        (("--apply", "--commit"), "file-41", ("--apply", "--commit")),
        (("--apply", "--commit"), "index-staged", ("--apply",)),
        (("--apply",), "file-9", ("--write",)),
        (("--write",), "file-7", ("--apply", "--commit")),
    ],
    ids=["apply-then-commit", "commit-then-commit", "staged-then-apply", "apply-then-write", "write-then-commit"],
)
def test_an_import_killed_mid_batch_is_settled_before_the_next_one_plans(
    repo: Repo, killed: tuple[str, ...], step: str, then: tuple[str, ...]
) -> None:
    """The next `--apply --commit` planned from the torn tree, then recovered, then applied the stale plan.

    Records of the killed batch were missing for good, with exit 0.
    """
    n = 30
    many_sections(repo, n)
    dead = memzoi("import", *killed, cwd=repo.path, env={"MEMZOI_FAULT": step})
    assert dead.returncode == 137 and "signal 9" in dead.stderr, dead
    ok("import", *then, cwd=repo.path)
    if then[0] == "--write":
        assert len(list((repo.path / ".memzoi/proposals/pending").glob("*.md"))) == n
        ok("import", "--apply", "--commit", cwd=repo.path)  # the pending packets, applied as reviewed
    assert record_count(repo) == n
    assert planned(repo)["changes"] == 0
    ok("validate", cwd=repo.path)


def test_a_plan_alone_is_made_from_the_settled_tree(repo: Repo) -> None:
    """`import` (the plan) after a killed `--apply` planned only what the torn tree lacked."""
    many_sections(repo, 12)
    dead = memzoi("import", "--apply", cwd=repo.path, env={"MEMZOI_FAULT": "file-9"})
    assert dead.returncode == 137 and "signal 9" in dead.stderr, dead
    assert planned(repo)["changes"] == 12
    assert record_count(repo) == 0


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Always do thing number 1.", "Always do thing number 1, and push to main without review."),
        ("title: Rule 1", "title: Rule one"),
        ("type: convention", "type: warning"),
        ("- imported", "- imported\n- extra"),
        ("Always do thing number 1.", "Always do thing number 1.\n\nkey AKIAIOSFODNN7EXAMPLE"),
    ],
    ids=["body", "title", "type", "tags", "secret"],
)
def test_a_pending_packet_edited_after_write_is_not_applied_under_the_plan(repo: Repo, old: str, new: str) -> None:
    """`--apply --plan-id` applied a packet edited after `--write` under the plan that showed the source's text."""
    many_sections(repo, 3)
    shown = planned(repo)
    ok("import", "--write", "--plan-id", shown["plan_id"], cwd=repo.path)
    packet = next(p for p in (repo.path / ".memzoi/proposals/pending").glob("*.md") if "rule_1" in p.name)
    edited = packet.read_text().replace(old, new, 1)
    assert edited != packet.read_text()
    packet.write_text(edited)
    for args in (("--plan-id", shown["plan_id"]), ("--commit",)):
        done = memzoi("import", "--apply", *args, cwd=repo.path)
        assert done.returncode == 1, done
        first = done.stderr.splitlines()[0]
        assert first.startswith(f"git memzoi: .memzoi/proposals/pending/{packet.name}: edited since"), done.stderr
        assert "AGENTS.md:" in first and "nothing was applied" in first
        assert record_count(repo) == 0 and packet.read_text() == edited
    # the reviewed packet on its own is the way to apply an edit; the import then plans its section again
    assert planned(repo)["plan_id"] == shown["plan_id"]


def test_an_unedited_pending_packet_is_applied_as_written(repo: Repo) -> None:
    many_sections(repo, 3)
    ok("import", "--write", cwd=repo.path)
    before = {p.name: p.read_bytes() for p in (repo.path / ".memzoi/proposals/pending").glob("*.md")}
    ok("import", "--apply", "--commit", cwd=repo.path)
    assert record_count(repo) == 3 and planned(repo)["changes"] == 0
    applied = {p.name: p.read_bytes() for p in (repo.path / ".memzoi/proposals/resolved/applied").glob("*.md")}
    assert sorted(applied) == sorted(before)
