"""Create the .memzoi/ tree: index.md, log.md, records/, proposals/pending/, and union merges for log.md.

Every path is written with `write_inside`: a symlink committed where one of these files or
folders belongs (a clone's `.memzoi` or `.gitattributes` pointing out of the work tree) is
refused, and nothing behind it is read or written.
"""

from __future__ import annotations

import os
from pathlib import Path

from git_memzoi.layout import GITATTRIBUTES, INDEX_FILE, LOG, LOG_FILE, MEMZOI_DIR, PENDING, RECORDS
from git_memzoi.runtime.atomic import read_inside, refuse_symlinks, write_inside

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
#: What a refused symlink's message adds.
REAL_FILES = "init writes only real files and folders inside the work tree, never through a link"


def ensure_union_merge(workdir: Path) -> bool:
    """Make sure .gitattributes marks .memzoi/log.md merge=union; True when it was changed."""
    data = read_inside(workdir, GITATTRIBUTES, REAL_FILES)
    text = data.decode("utf-8", errors="surrogateescape") if data is not None else ""
    if any(line.split() == UNION_LINE.split() for line in text.splitlines()):
        return False
    if text and not text.endswith("\n"):
        text += "\n"
    write_inside(
        workdir, GITATTRIBUTES, (text + UNION_LINE + "\n").encode("utf-8", errors="surrogateescape"), REAL_FILES
    )
    return True


#: Each file `init` writes but .gitattributes, with the text it starts with.
INIT_FILES = (
    (f"{RECORDS}/.gitkeep", ""),
    (f"{PENDING}/.gitkeep", ""),
    (f"{MEMZOI_DIR}/{INDEX_FILE}", INDEX_MD),
    (f"{MEMZOI_DIR}/{LOG_FILE}", LOG_MD),
)
#: Every path `init` may write (what the first `--commit` takes along when git does not track it yet).
INIT_PATHS = (*(rel for rel, _ in INIT_FILES), GITATTRIBUTES)


def init_tree(workdir: Path) -> list[str]:
    """Create whatever is missing; return the repository paths it created. Idempotent."""
    created: list[str] = []
    for rel, text in INIT_FILES:
        if not os.path.lexists(refuse_symlinks(workdir, rel, REAL_FILES)):
            write_inside(workdir, rel, text.encode("utf-8"), REAL_FILES)
            created.append(rel)
    if ensure_union_merge(workdir):
        created.append(GITATTRIBUTES)
    return created
