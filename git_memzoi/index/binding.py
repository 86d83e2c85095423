"""Which repository a project folder's runtime state belongs to, and moving it to where its repository now is.

shared.db records the repository ID (`runtime.repoid`) of the repository that made it. The
repository key comes from the path, so two things can go wrong: a repository replaced at the
same path finds another one's state under its key (refused everywhere, see
`shared_db.verify`), and a repository moved elsewhere finds none under its new key. `doctor`
reports both from `inspect`; `doctor --adopt` settles both with `adopt`, like `git worktree
repair`: it sets the other repository's state aside and brings this one's home.
"""

from __future__ import annotations

import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

from git_memzoi.errors import EXIT_NO, MemzoiError
from git_memzoi.index import shared_db
from git_memzoi.layout import JOURNAL, PROJECTS, SHARED_DB
from git_memzoi.runtime import repoid
from git_memzoi.runtime.home import Layout

#: A project folder set aside by `adopt`: `<repository-key>.replaced-<first 16 hex of its memzoi-id>`.
SET_ASIDE = ".replaced-"


class AdoptRefused(MemzoiError, exit_code=EXIT_NO, code="adopt-refused"):
    """`doctor --adopt` cannot move runtime state safely; nothing was moved."""


@dataclass(frozen=True)
class Binding:
    """What `doctor` knows about this key's runtime state and this repository's state elsewhere."""

    repository_id: str | None
    #: The repository this key's shared.db names, when it names another one than this repository.
    foreign: shared_db.Owner | None
    #: Project folders elsewhere under $MEMZOI_HOME whose shared.db names this repository.
    elsewhere: tuple[Path, ...]

    def state(self, current: str) -> str:
        """doctor's `shared_db` check: `current` (ok, missing, ...) unless the binding says more."""
        if self.foreign is not None:
            return (
                f"belongs to another repository (memzoi-id {self.foreign.repository_id}, "
                f"git directory {self.foreign.common_dir or 'unknown'}): run doctor --adopt to set it aside"
            )
        if current == "missing" and self.elsewhere:
            found = ", ".join(str(p) for p in self.elsewhere)
            return f"missing here; this repository's state is at {found}: run doctor --adopt to move it here"
        return current


def inspect(layout: Layout, common_dir: Path) -> Binding:
    """This key's binding and, when its state is not here, where this repository's state is (scans every project)."""
    current = repoid.read(common_dir)
    foreign = None
    if layout.shared_db.exists():
        owner = shared_db.recorded_owner(layout.shared_db)
        if owner is not None and owner.repository_id != current:
            foreign = owner
    elsewhere: tuple[Path, ...] = ()
    if current is not None and (foreign is not None or not layout.shared_db.exists()):
        elsewhere = tuple(_projects_of(layout, current))
    return Binding(current, foreign, elsewhere)


def _projects_of(layout: Layout, repository_id: str) -> list[Path]:
    """Every other project folder whose shared.db names `repository_id`."""
    root = layout.home / PROJECTS
    if not root.is_dir():
        return []
    found = []
    for folder in sorted(root.iterdir()):
        if folder == layout.project or not (folder / SHARED_DB).is_file():
            continue
        owner = shared_db.recorded_owner(folder / SHARED_DB)
        if owner is not None and owner.repository_id == repository_id:
            found.append(folder)
    return found


def adopt(layout: Layout, common_dir: Path) -> list[str]:
    """Set another repository's state aside from this key, and move this repository's own here; one line each.

    Each move is one rename of a whole project folder, so a reader sees the old folder or the
    new one, never a mix. Refused (AdoptRefused, nothing moved) when the state to bring is
    ambiguous, still in use by a copy of this repository, or holds an interrupted apply.
    """
    binding = inspect(layout, common_dir)
    lines: list[str] = []
    source = _source(binding, common_dir)
    if binding.foreign is not None:
        aside = layout.project.with_name(f"{layout.project.name}{SET_ASIDE}{binding.foreign.repository_id[:16]}")
        if aside.exists():
            raise AdoptRefused(f"{aside}: already exists; move it away first")
        os.rename(layout.project, aside)
        lines.append(f"set aside {layout.project} as {aside}: it belongs to memzoi-id {binding.foreign.repository_id}")
    if source is None:
        return lines
    replaced = None
    if layout.project.exists():  # derived state only (index, caches, the lock): shared.db is not here
        replaced = layout.project.with_name(f".{layout.project.name}.adopt-{secrets.token_hex(4)}")
        os.rename(layout.project, replaced)
    try:
        os.rename(source, layout.project)
    except OSError:
        if replaced is not None:
            os.rename(replaced, layout.project)
        raise
    if replaced is not None:
        shutil.rmtree(replaced, ignore_errors=True)
    assert binding.repository_id is not None
    shared_db.rebind(layout.shared_db, shared_db.Owner(binding.repository_id, str(common_dir)))
    lines.append(f"adopted {source} as {layout.project}")
    return lines


def _source(binding: Binding, common_dir: Path) -> Path | None:
    """The one project folder to bring here, after checking that moving it is safe; None when there is none."""
    if not binding.elsewhere:
        return None
    if len(binding.elsewhere) > 1:
        listed = ", ".join(str(p) for p in binding.elsewhere)
        raise AdoptRefused(
            f"more than one project folder names this repository ({listed}): nothing moved",
            hint="keep the one to adopt and move the others out of $MEMZOI_HOME/projects, then run doctor --adopt",
        )
    source = binding.elsewhere[0]
    owner = shared_db.recorded_owner(source / SHARED_DB)
    if owner is not None and owner.common_dir and Path(owner.common_dir) != common_dir:
        try:
            still = repoid.read(Path(owner.common_dir))
        except MemzoiError:
            still = None
        if still == binding.repository_id:
            raise AdoptRefused(
                f"{source}: still used by the repository at {owner.common_dir} (a copy of this one): nothing moved",
                hint="copies of a repository share a memzoi-id; each keeps its own runtime state",
            )
    journal = source / JOURNAL
    if journal.is_dir() and any(journal.iterdir()):
        raise AdoptRefused(
            f"{journal}: an apply interrupted at the old path is not settled: nothing moved",
            hint="settle it where it ran (git memzoi doctor --repair there), or move the journal aside deliberately",
        )
    return source
