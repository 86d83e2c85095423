"""What every export shares: which records may leave the repository, budgets, reports and atomic output."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from git_memzoi.errors import Refused, UsageError
from git_memzoi.layout import MEMZOI_DIR, TEMP_PREFIX
from git_memzoi.recall.models import IndexedRecord
from git_memzoi.recall.records import current_records as recall_current
from git_memzoi.runtime.atomic import fsync_dir, refuse_symlinks, write_atomic
from git_memzoi.runtime.private import FILE_MODE, FOLDER_MODE, is_private, private_folder
from git_memzoi.runtime.workspace import Workspace

Target = Literal["okf", "agents-md", "claude-md", "cursor-rules"]
Unit = Literal["bytes", "characters"]

#: The exact file names the instruction exports produce.
FILE_NAMES: dict[str, str] = {
    "agents-md": "AGENTS.memory.md",
    "claude-md": "CLAUDE.memory.md",
}

#: The largest max_bytes: far above any instruction file an agent reads, and an exact integer in any
#: JSON reader (the export report echoes it). The rendered file is only ever compared with it.
MAX_BYTES = 1 << 30

#: The folder an OKF bundle gets inside the destination.
OKF_DIR = "okf"


@dataclass(frozen=True)
class Budget:
    """How much of an instruction file the reading tool takes in, and what it does past that."""

    tool: str
    limit: int
    unit: Unit
    past_limit: str  # what the tool does with the rest

    def as_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "limit": self.limit, "unit": self.unit, "past_limit": self.past_limit}


#: Codex stops reading AGENTS.md at 32 KiB without saying so; Claude Code warns about
#: CLAUDE.md files past 40,000 characters (and reads them at a cost to every prompt).
BUDGETS: dict[str, Budget] = {
    "agents-md": Budget("Codex", 32 * 1024, "bytes", "silently truncated"),
    "claude-md": Budget("Claude Code", 40_000, "characters", "warned about as too large"),
}


def exportable(records: list[IndexedRecord]) -> list[IndexedRecord]:
    """Keep records an export may carry: repository records that are active, current and not private.

    recall.records.current_records already applies these rules; checking again here means a
    private, query-only or inactive record cannot leak even if a caller passes other records.
    """
    return [
        r
        for r in records
        if r.store == "repo"
        and r.concept_id is not None
        and r.visibility != "private"
        and r.status == "active"
        and r.expiry.current
    ]


@dataclass(frozen=True)
class Omitted:
    """A record an export left out, and why."""

    record_id: str
    type: str
    title: str
    reason: str

    def as_json(self) -> dict[str, str]:
        return {"record_id": self.record_id, "type": self.type, "title": self.title, "reason": self.reason}


@dataclass
class ExportReport:
    """What an export wrote, how big it is against its target's budget, and what it left out."""

    target: Target
    path: Path  # the file, or the bundle folder
    files: list[str]  # written paths, relative to `path` for a bundle
    bytes: int
    characters: int
    records: list[str]  # record IDs the export carries, in file order
    budget: Budget | None = None
    max_bytes: int | None = None
    omitted: list[Omitted] = field(default_factory=list)

    @property
    def size(self) -> int:
        """The size in the budget's unit (bytes when there is no budget)."""
        if self.budget is None:
            return self.bytes
        return self.bytes if self.budget.unit == "bytes" else self.characters

    @property
    def over_budget(self) -> bool:
        return self.budget is not None and self.size > self.budget.limit

    def as_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "path": str(self.path),
            "files": self.files,
            "bytes": self.bytes,
            "characters": self.characters,
            "budget": self.budget.as_json() if self.budget else None,
            "over_budget": self.over_budget,
            "max_bytes": self.max_bytes,
            "records": self.records,
            "omitted": [o.as_json() for o in self.omitted],
        }


def destination(default: Path, output: str | os.PathLike[str] | None, name: str, workdir: Path | None = None) -> Path:
    """Where an export named `name` goes: into `output`, else this worktree's runtime exports/.

    `output` may not lie inside the work tree's .memzoi/ (symlinks and `..` resolved): an export
    there would become part of the memory it was made from. An `output` inside the work tree
    `workdir` must have no symlink on the way from its root, `name` included: a clone chooses
    what is there, and an export never writes through a link.
    """
    if output is None:
        private_folder(default)  # this worktree's runtime folder: its owner's alone, as all of MEMZOI_HOME
        return default / name
    folder = Path(output).expanduser()
    if workdir is not None:
        root = Path(os.path.abspath(workdir))
        try:
            rel = Path(os.path.abspath(folder) + os.sep + name).relative_to(root).as_posix()
        except ValueError:
            rel = None
        if rel is not None:
            refuse_symlinks(root, rel, "export writes into the repository only through real folders, never a link")
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{output}: not a folder", field="output")
    resolved = folder.resolve()
    if workdir is not None:
        inside = (Path(workdir) / MEMZOI_DIR).resolve()
        if resolved == inside or inside in resolved.parents:
            raise UsageError(
                f"{output}: inside {MEMZOI_DIR}/ ({resolved}); an export there would become memory itself",
                field="output",
                hint="export to the work tree root (--output .) or anywhere outside .memzoi/",
            )
    return resolved / name


def write_file(path: Path, data: bytes) -> None:
    """Replace one export file atomically: 0644 where the user chose, 0600 in the runtime exports/ folder."""
    write_atomic(path, data, mode=FILE_MODE if is_private(path) else 0o644)


def write_bundle(folder: Path, files: dict[str, bytes]) -> None:
    """Replace the folder `folder` with exactly `files`: build a sibling temp folder, then swap it in.

    A reader sees the old bundle or the new one, never a mix; the only window is the instant
    between moving the old folder aside and renaming the new one into place.
    """
    parent = folder.parent
    parent.mkdir(parents=True, exist_ok=True)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{folder}: exists and is not a folder; move it aside to export there")
    private = is_private(folder)
    file_mode = FILE_MODE if private else 0o644
    staging = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{folder.name}-", dir=parent))
    try:
        for rel in sorted(files):
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            with os.fdopen(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, file_mode), "wb") as handle:
                handle.write(files[rel])
                handle.flush()
                os.fsync(handle.fileno())
        for dirpath, _, _ in os.walk(staging):
            fsync_dir(Path(dirpath))
            if private:
                os.chmod(dirpath, FOLDER_MODE)
        if not private:
            os.chmod(staging, 0o755)
        _swap_in(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    fsync_dir(parent)


def _swap_in(staging: Path, folder: Path) -> None:
    """Rename `staging` to `folder`, moving any previous `folder` aside first (and deleting it after)."""
    for _ in range(10):
        old: Path | None = None
        if folder.exists():
            old = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{folder.name}-old-", dir=folder.parent))
            try:
                os.replace(folder, old / folder.name)
            except FileNotFoundError:
                pass  # another export moved it aside first
        try:
            os.rename(staging, folder)
        except OSError:
            # Another export put its bundle in place between our two renames: try again.
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
            continue
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        return
    raise Refused(f"{folder}: another export keeps replacing it; try again", code="export-busy")


#: Types in the order exports present them: what can hurt first, context last.
TYPE_ORDER: tuple[str, ...] = (
    "risk",
    "warning",
    "failed_attempt",
    "constraint",
    "decision",
    "convention",
    "procedure",
    "runbook",
    "preference",
    "fact",
    "incident",
    "summary",
    "handoff",
    "checkpoint",
    "note",
)

TYPE_HEADINGS: dict[str, str] = {
    "risk": "Risks",
    "warning": "Warnings",
    "failed_attempt": "Failed attempts",
    "constraint": "Constraints",
    "decision": "Decisions",
    "convention": "Conventions",
    "procedure": "Procedures",
    "runbook": "Runbooks",
    "preference": "Preferences",
    "fact": "Facts",
    "incident": "Incidents",
    "summary": "Summaries",
    "handoff": "Handoffs",
    "checkpoint": "Checkpoints",
    "note": "Notes",
}


def type_rank(type_: str) -> int:
    """Lower is more severe; unknown types sort after every known one."""
    try:
        return TYPE_ORDER.index(type_)
    except ValueError:
        return len(TYPE_ORDER)


def heading(type_: str) -> str:
    return TYPE_HEADINGS.get(type_, type_.replace("_", " ").capitalize())


def order_key(record: IndexedRecord) -> tuple[int, str, str, str]:
    """Severity (by type), then title, then record ID: a total, stable order."""
    return (type_rank(record.type), record.type, record.title.casefold(), record.record_id)


def current_records(ws: Workspace) -> list[IndexedRecord]:
    """The records an export may carry, read through recall (never private, query-only or inactive)."""
    return exportable(recall_current(ws, include_private=False))
