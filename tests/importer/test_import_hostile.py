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
        (("--apply", "--commit"), "file-17", ("--apply", "--commit")),
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


#: Sources whose items can never become valid packets, beside one that can; (file, text, the refused line).
NEVER_VALID = {
    "secret-in-h1": ("AGENTS.md", "# Team AKIAIOSFODNN7EXAMPLE\n\nintro text\n\n## Style\n\nTabs.\n", "AGENTS.md:1"),
    "secret-in-h2": ("CLAUDE.md", "# Team\n\n## Keys AKIAIOSFODNN7EXAMPLE\n\nkeep them\n", "CLAUDE.md:3"),
    "cursor-glob-out": (
        ".cursor/rules/etc.mdc",
        "---\ndescription: etc files\nglobs: ../../etc/**\nalwaysApply: false\n---\n\nDo things in etc.\n",
        ".cursor/rules/etc.mdc:3",
    ),
    "copilot-glob-out": (
        ".github/instructions/up.instructions.md",
        "---\napplyTo: 'src/../../up/**'\n---\n\nUp there.\n",
        ".github/instructions/up.instructions.md:2",
    ),
    "control-in-title": ("GEMINI.md", "# Gem\n\n## Use \x1b[31m red\n\nAlways red.\n", "GEMINI.md:3"),
}


@pytest.mark.parametrize("case", sorted(NEVER_VALID))
def test_an_item_that_can_never_validate_is_refused_by_name_and_the_rest_is_written(repo: Repo, case: str) -> None:
    """The plan exited 0 for such an item, then --write/--apply refused the whole batch naming a packet file."""
    path, text, line = NEVER_VALID[case]
    (repo.path / path).parent.mkdir(parents=True, exist_ok=True)
    (repo.path / path).write_text(text)
    (repo.path / "docs").mkdir()
    (repo.path / "docs/AGENTS.md").write_text("# Docs\n\n## Links\n\nRelative links only.\n")
    commit_all(repo, "sources")
    shown = memzoi("import", "--json", cwd=repo.path)
    assert shown.returncode == 1, shown
    result = json.loads(shown.stdout)
    refused = [e for e in result["entries"] if e["action"] == "refused"]
    assert len(refused) == 1 and refused[0]["where"].startswith(path + ":"), result["entries"]
    assert f" at {line}: " in refused[0]["reason"] and refused[0]["proposal_id"] is None, refused
    assert refused[0]["concept_id"] is None and result["changes"] >= 1
    said = [x for x in shown.stderr.splitlines() if x.startswith("git memzoi: ")]
    assert said == [f"git memzoi: {refused[0]['where']}: refused: {refused[0]['reason']}"], shown.stderr
    assert "AKIAIOSFODNN7EXAMPLE" not in refused[0]["reason"]
    written = memzoi("import", "--write", "--plan-id", result["plan_id"], cwd=repo.path)
    assert written.returncode == 1 and f"wrote {result['changes']} packet(s)" in written.stderr, written
    assert "git memzoi: .memzoi/" not in written.stderr, written.stderr
    applied = memzoi("import", "--apply", "--commit", cwd=repo.path)
    assert applied.returncode == 1 and "refused:" in applied.stderr, applied
    assert record_count(repo) == result["changes"]
    ok("validate", cwd=repo.path)
    again = memzoi("import", "--json", cwd=repo.path)
    assert again.returncode == 1 and json.loads(again.stdout)["changes"] == 0


def test_a_secret_inside_a_left_out_managed_block_refuses_nothing(repo: Repo) -> None:
    """The generated block is not imported, so it is not scanned as a source: a section around it is planned."""
    block = "<!-- memzoi:start -->\naws key AKIAIOSFODNN7EXAMPLE here\n<!-- memzoi:end -->\n"
    (repo.path / "AGENTS.md").write_text("# Team\n\n## Build\n\nRun make.\n\n" + block + "\nThen run tests.\n")
    commit_all(repo, "sources")
    result = planned(repo)
    assert [e["action"] for e in result["entries"]] == ["create"], result
    ok("import", "--apply", "--commit", cwd=repo.path)
    body = next((repo.path / ".memzoi/records").rglob("*.md")).read_text()
    assert "Then run tests." in body and "AKIA" not in body


@pytest.mark.parametrize("how", ["git-rm", "rm", "folder", "with-a-kept-file"])
def test_prune_can_name_a_deleted_source_to_tombstone_what_came_from_it(repo: Repo, how: str) -> None:
    """`import --prune FILE` of a deleted file was "not a file git tracks": its records could not be retired by name."""
    (repo.path / "docs").mkdir()
    (repo.path / "docs/AGENTS.md").write_text("# Docs\n\n## Links\n\nRelative links only.\n\n## Images\n\nSVG only.\n")
    (repo.path / "AGENTS.md").write_text("# Team\n\n## Style\n\nTabs in Makefiles.\n")
    commit_all(repo, "sources")
    ok("import", "--apply", "--commit", cwd=repo.path)
    assert record_count(repo) == 3
    if how == "rm":
        (repo.path / "docs/AGENTS.md").unlink()  # deleted in the work tree, still in git's index
    else:
        git("rm", "-rq", "docs", cwd=repo.path)
        git("commit", "-qm", "docs gone", cwd=repo.path)
    named = {"folder": ("docs",), "with-a-kept-file": ("docs/AGENTS.md", "AGENTS.md")}.get(how, ("docs/AGENTS.md",))
    result = json.loads(ok("import", "--prune", "--json", *named, cwd=repo.path).stdout)
    assert sorted(e["action"] for e in result["entries"]) == (
        ["tombstone", "tombstone", "unchanged"] if how == "with-a-kept-file" else ["tombstone", "tombstone"]
    ), result["entries"]
    assert all(e["where"].startswith("docs/AGENTS.md:") for e in result["entries"] if e["action"] == "tombstone")
    ok("import", "--prune", "--apply", "--commit", *named, cwd=repo.path)
    ok("validate", cwd=repo.path)
    statuses = [
        p.read_text().split("\nstatus: ", 1)[1].split("\n", 1)[0] for p in (repo.path / ".memzoi/records").rglob("*.md")
    ]
    assert sorted(statuses).count("active") == 1, statuses


def test_prune_of_a_name_nothing_came_from_is_still_an_error(repo: Repo) -> None:
    (repo.path / "AGENTS.md").write_text("# Team\n\n## Style\n\nTabs in Makefiles.\n")
    commit_all(repo, "sources")
    ok("import", "--apply", "--commit", cwd=repo.path)
    done = memzoi("import", "--prune", "AGENT.md", cwd=repo.path)
    assert done.returncode == 2 and "AGENT.md" in done.stderr, done


def test_a_secret_in_a_heading_refuses_only_the_item_whose_title_it_is(repo: Repo) -> None:
    """An H1 with no text under it gives no item: the H2 sections below it are planned (their titles are their own)."""
    (repo.path / "AGENTS.md").write_text("# Team AKIAIOSFODNN7EXAMPLE\n\n## Style\n\nTabs.\n\n## Build\n\nmake\n")
    commit_all(repo, "sources")
    result = planned(repo)
    assert sorted(e["action"] for e in result["entries"]) == ["create", "create"], result["entries"]
