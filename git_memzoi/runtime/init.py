"""Create the .memzoi/ tree: index.md, log.md, records/, proposals/pending/, and union merges for log.md."""

from __future__ import annotations

from pathlib import Path

from git_memzoi.layout import GITATTRIBUTES, INDEX_FILE, LOG, LOG_FILE, MEMZOI_DIR, PENDING, RECORDS
from git_memzoi.runtime.atomic import write_atomic

INDEX_MD = """# Memory index

This folder holds the project's reviewed memory for coding agents, managed by `git memzoi`.

- `records/`: canonical records, one Markdown file per durable concept.
- `proposals/pending/`: review packets for memory changes, waiting to be applied or rejected.
- `proposals/resolved/`: packets that were applied or rejected, with their resolution.
- `log.md`: append-only receipts of applied and rejected proposals.

Change memory with `git memzoi propose` and `git memzoi apply`; do not edit records in place.
"""

LOG_MD = """# Memory log

Append-only receipts of proposals applied and rejected in this repository.

"""

UNION_LINE = f"{LOG} merge=union"


def ensure_union_merge(workdir: Path) -> bool:
    """Make sure .gitattributes marks .memzoi/log.md merge=union; True when it was changed."""
    path = workdir / GITATTRIBUTES
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if any(line.split() == UNION_LINE.split() for line in text.splitlines()):
        return False
    if text and not text.endswith("\n"):
        text += "\n"
    write_atomic(path, (text + UNION_LINE + "\n").encode("utf-8"))
    return True


def init_tree(workdir: Path) -> list[str]:
    """Create whatever is missing; return the repository paths it created. Idempotent."""
    created: list[str] = []
    for folder in (RECORDS, PENDING):
        keep = workdir / folder / ".gitkeep"
        if not keep.exists():
            keep.parent.mkdir(parents=True, exist_ok=True)
            keep.touch()
            created.append(f"{folder}/.gitkeep")
    for name, text in ((INDEX_FILE, INDEX_MD), (LOG_FILE, LOG_MD)):
        path = workdir / MEMZOI_DIR / name
        if not path.exists():
            write_atomic(path, text.encode("utf-8"))
            created.append(f"{MEMZOI_DIR}/{name}")
    if ensure_union_merge(workdir):
        created.append(GITATTRIBUTES)
    return created
