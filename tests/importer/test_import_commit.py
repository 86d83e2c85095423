"""What `import --apply --commit` commits, on a real repository's instruction files: the records, the receipt, and
init's files with the first commit; a resolved packet only where the server rules need one."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from support import FIXTURES, Repo, git, make_repo, run_cli

REAL = FIXTURES / "import" / "real"


def real_repo(root: Path, name: str) -> Repo:
    """A repository holding one fixture repository's instruction files (symlinks kept), committed, without .memzoi/."""
    repo = make_repo(root, init_memzoi=False)
    shutil.copytree(REAL / name / "files", repo.path, symlinks=True, dirs_exist_ok=True)
    git("add", "-A", cwd=repo.path)
    git("commit", "-qm", f"{name}'s instruction files", cwd=repo.path)
    return repo


def committed(repo: Repo, rev: str = "HEAD") -> list[str]:
    """The paths the commit `rev` added, changed or removed."""
    out = git("show", "--name-only", "--format=", "--no-renames", rev, cwd=repo.path).stdout
    return sorted(line for line in out.splitlines() if line)


@pytest.fixture
def gemini(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repo:
    repo = real_repo(tmp_path / "gemini-cli", "gemini-cli")
    monkeypatch.chdir(repo.path)
    return repo


def test_first_import_commit_holds_the_records_the_receipt_and_inits_files(gemini: Repo) -> None:
    git("memzoi", "init", cwd=gemini.path)
    done = run_cli("import", "--apply", "--commit", "--json").json()
    records = sorted(r["path"] for r in done["records"])
    assert len(records) == done["changes"] == 35
    init_files = [
        ".gitattributes",
        ".memzoi/index.md",
        ".memzoi/log.md",
        ".memzoi/proposals/pending/.gitkeep",
        ".memzoi/records/.gitkeep",
    ]
    # no second copy of each record under proposals/resolved/: one file per record, the receipt and init's files
    assert committed(gemini) == sorted([*records, *init_files])
    assert git("status", "--porcelain", "--untracked-files=all", cwd=gemini.path).stdout == ""
    run_cli("validate")
    receipt = (gemini.path / ".memzoi/log.md").read_text().splitlines()[-1]
    assert f"imported plan {done['plan_id']}: 35 create; sources: GEMINI.md@" in receipt
    # the packet stays in the proposal's inbox row, as applied
    record = (gemini.path / records[0]).read_text()
    pid = next(line.split(": ", 1)[1] for line in record.splitlines() if line.startswith("proposal_id: "))
    shown = run_cli("proposals", "show", pid, "--json").json()
    assert shown["state"] == "applied" and "source: import" in shown["packet"]
    assert run_cli("import", "--json").json()["changes"] == 0


def test_a_supersede_keeps_its_resolved_packet_and_the_creates_of_that_commit_do_not(gemini: Repo) -> None:
    git("memzoi", "init", cwd=gemini.path)
    run_cli("import", "--apply", "--commit")
    root = gemini.path / "packages/sdk/GEMINI.md"
    root.write_text(root.read_text() + "\n## Releases\n\nPublish the SDK only from a tagged commit.\n")
    a2a = gemini.path / "packages/a2a-server/GEMINI.md"
    a2a.write_text(a2a.read_text() + "\nInstall with `npm ci`, never `npm install`.\n")
    gemini.commit("edit two instruction files")
    done = run_cli("import", "--apply", "--commit", "--json").json()
    actions = sorted(e["action"] for e in done["entries"] if e["action"] in ("create", "supersede"))
    assert actions == ["create", "supersede"]
    files = committed(gemini)
    resolved = [p for p in files if p.startswith(".memzoi/proposals/resolved/applied/")]
    superseded = next(e for e in done["entries"] if e["action"] == "supersede")
    assert resolved == [f".memzoi/proposals/resolved/applied/{superseded['proposal_id']}.md"]
    records = sorted(r["path"] for r in done["records"])
    assert len(records) == 3  # the new record, the replacement, and the superseded one's status line
    assert files == sorted([*records, *resolved, ".memzoi/log.md"])
    run_cli("validate")


def test_require_proposals_keeps_every_resolved_packet(gemini: Repo) -> None:
    git("memzoi", "init", cwd=gemini.path)
    git("config", "memzoi.hooks.requireProposals", "true", cwd=gemini.path)
    done = run_cli("import", "--apply", "--commit", "--json").json()
    resolved = [p for p in committed(gemini) if p.startswith(".memzoi/proposals/resolved/applied/")]
    assert len(resolved) == len(done["records"]) == 35
