"""What the import tests share: the fixture trees copied into a repository, the plan as JSON, the files written."""

from __future__ import annotations

import os
from pathlib import Path

from support.paths import FIXTURES
from support.repos import Repo
from support.running import run_cli

BASIC = FIXTURES / "import" / "basic"


def copy_fixture(source: Path, repo: Repo) -> None:
    """Copy a fixture tree into the repository, make the symlinks its symlinks.txt lists, and commit."""
    for path in sorted(source.rglob("*")):
        rel = path.relative_to(source).as_posix()
        if path.is_dir() or rel == "symlinks.txt":
            continue
        repo.write(rel, path.read_bytes())
    manifest = source / "symlinks.txt"
    if manifest.exists():
        for line in manifest.read_text().splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            link, target = (part.strip() for part in line.split("->"))
            (repo.path / link).parent.mkdir(parents=True, exist_ok=True)
            os.symlink(target, repo.path / link)
    repo.commit("memory files")


def plan(*args: str, expect: int = 0) -> dict:
    return run_cli("import", "--json", *args, expect=expect).json()


def entries(result: dict, action: str | None = None) -> list[dict]:
    return [e for e in result["entries"] if action is None or e["action"] == action]


def memzoi_files(repo: Repo) -> list[str]:
    return sorted(p.relative_to(repo.path).as_posix() for p in (repo.path / ".memzoi").rglob("*"))


def pending(repo: Repo) -> list[Path]:
    return sorted((repo.path / ".memzoi/proposals/pending").glob("*.md"))
