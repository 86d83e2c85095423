"""`export agents-md|claude-md --into FILE` on memory imported from a real repository (fixtures/import/real/amux)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from support import Repo, memzoi_exe
from support.paths import FIXTURES

AMUX = FIXTURES / "import" / "real" / "amux" / "files"


def memzoi(repo: Repo, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([memzoi_exe(), *args], cwd=repo.path, capture_output=True, text=True, check=True, timeout=300)


def test_sync_back_carries_rule_text_within_the_codex_budget_and_says_what_it_left_out(repo: Repo) -> None:
    shutil.copytree(AMUX, repo.path, symlinks=True, dirs_exist_ok=True)
    repo.write("AGENTS.md", "# Agents\n\nRead CLAUDE.md first.\n")
    repo.commit("amux's instruction files")
    memzoi(repo, "import", "--apply", "--commit")
    done = memzoi(repo, "export", "agents-md", "--into", "AGENTS.md")
    data = (repo.path / "AGENTS.md").read_bytes()
    assert len(data) <= 32 * 1024  # the whole file, hand-written text included
    left_out = [line for line in done.stderr.splitlines() if line.startswith("left out (over the 32,768-byte Codex")]
    assert left_out, done.stderr  # 41 records of 180 KB of ADRs do not fit: each one left out is named
    text = data.decode("utf-8")
    assert text.startswith("# Agents\n\nRead CLAUDE.md first.\n\n<!-- memzoi:start -->\n")
    # the rule itself, not its first paragraph: a line deep in the section's body
    assert "All business logic must be implemented in the appropriate manager layer" in text
    assert "## Left out (" in text
    # export -> import -> export is a fixed point
    repo.commit("synced")
    plan = memzoi(repo, "import", "--json")
    assert '"action": "create"' not in plan.stdout and '"action": "supersede"' not in plan.stdout
    memzoi(repo, "export", "agents-md", "--into", "AGENTS.md")
    assert (repo.path / "AGENTS.md").read_bytes() == data


def _nested_rules(repo: Repo) -> None:
    """About 60 KB of imported rules from a nested file: more than either client's budget."""
    rule = "Always keep widget {} in its own module. "
    sections = "".join(f"## Rule {n}\n\n" + rule.format(n) * 24 + "\n\n" for n in range(60))
    repo.write("pkg/AGENTS.md", "# Package\n\n" + sections)
    repo.commit("a package's rules")
    memzoi(repo, "import", "--apply", "--commit")


@pytest.mark.parametrize(("real", "link"), [("AGENTS.md", "CLAUDE.md"), ("CLAUDE.md", "AGENTS.md")])
def test_a_claude_md_codex_also_reads_keeps_the_codex_budget(repo: Repo, real: str, link: str) -> None:
    # CLAUDE.md -> AGENTS.md (or the other way): Codex reads the file as AGENTS.md and cuts it at 32 KiB
    _nested_rules(repo)
    repo.write(real, "# Agents\n\nHand-written.\n")
    os.symlink(real, repo.path / link)
    repo.commit("one file for both clients")
    done = memzoi(repo, "export", "claude-md", "--into", "CLAUDE.md")
    data = (repo.path / real).read_bytes()
    assert 30 * 1024 < len(data) <= 32 * 1024
    assert "left out (over the 32,768-byte Codex budget with " in done.stderr, done.stderr
    report = json.loads(memzoi(repo, "export", "claude-md", "--into", "CLAUDE.md", "--json").stdout)
    assert report["budget"]["tool"] == "Codex" and not report["over_budget"]
    assert (repo.path / real).read_bytes() == data


def test_a_claude_md_codex_does_not_read_keeps_the_claude_code_budget(repo: Repo) -> None:
    _nested_rules(repo)
    repo.write("CLAUDE.md", "# Claude\n\nHand-written.\n")
    repo.write("AGENTS.md", "# Agents\n\nA file of its own.\n")
    repo.commit("a file per client")
    memzoi(repo, "export", "claude-md", "--into", "CLAUDE.md")
    assert 38_000 < len((repo.path / "CLAUDE.md").read_bytes()) <= 40_000


def test_a_claude_md_that_imports_agents_md_leaves_out_what_the_import_brings_in(repo: Repo) -> None:
    # Claude Code reads CLAUDE.md's `@AGENTS.md` as part of CLAUDE.md: its rules need no second copy in the block
    repo.write("AGENTS.md", "# Agents\n\n## Testing\n\nRun the tests with tox, never with bare pytest.\n")
    repo.write("docs/more.md", "## Style\n\nWrap prose at 100 columns in every Markdown page.\n")
    repo.write("CLAUDE.md", "# Claude\n\nSee @AGENTS.md and @docs/more.md.\n")
    repo.write("pkg/AGENTS.md", "# Package\n\n## Builds\n\nBuild the package with make dist only.\n")
    repo.commit("instruction files")
    memzoi(repo, "import", "--apply", "--commit")
    report = json.loads(memzoi(repo, "export", "claude-md", "--into", "CLAUDE.md", "--json").stdout)
    text = (repo.path / "CLAUDE.md").read_text()
    assert "make dist" in text and report["records"] == ["pkg-builds"]
    assert "tox" not in text.partition("<!-- memzoi:start -->")[2] and "100 columns" not in text.partition("@docs")[2]
    # Codex reads no `@path`: AGENTS.md's own export of CLAUDE.md's rules stays whole
    memzoi(repo, "export", "agents-md", "--into", "AGENTS.md")
    assert "100 columns" in (repo.path / "AGENTS.md").read_text()
