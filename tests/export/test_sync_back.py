"""`export agents-md|claude-md --into FILE` on memory imported from a real repository (fixtures/import/real/amux)."""

from __future__ import annotations

import shutil
import subprocess

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
