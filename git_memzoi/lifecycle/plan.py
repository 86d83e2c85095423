"""What a lifecycle step will change, as data: every file's before and after bytes and the shared.db change."""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass, field
from typing import Literal

from git_memzoi.index.inbox_store import DbChange

Operation = Literal["propose", "approve", "apply", "reject"]


@dataclass(frozen=True)
class FileChange:
    """One work-tree file: its bytes before (None: absent) and after (None: removed)."""

    path: str  # repository-relative, e.g. `.memzoi/records/semantic/decisions/x.md`
    before: bytes | None
    after: bytes | None

    @property
    def kind(self) -> str:
        if self.before is None:
            return "create"
        return "delete" if self.after is None else "modify"


@dataclass(frozen=True, kw_only=True)
class RecordChange:
    """A record the step creates or whose status it changes (for reports)."""

    record_id: str
    path: str
    status: str  # active (created), superseded, tombstoned
    created: bool


@dataclass(frozen=True, kw_only=True)
class Plan:
    """A complete lifecycle step: install writes the files, then commits the database change.

    Built with keyword arguments only: eleven fields read wrongly by position would still type-check.
    """

    operation: Operation
    proposal_id: str  # the ID reports may show (a receipt ID for hash-only rejections)
    action: str | None
    outcome: str  # proposed | validated | approved | applied | rejected | replay
    files: tuple[FileChange, ...]
    db: DbChange
    new_dirs: tuple[str, ...] = ()  # folders the install creates (removed again on roll back)
    records: tuple[RecordChange, ...] = ()
    resolved_path: str | None = None
    log_line: str | None = None
    messages: tuple[str, ...] = field(default_factory=tuple)

    @property
    def paths(self) -> list[str]:
        return [change.path for change in self.files]


def new_dirs_for(paths: list[str], existing_dirs: Container[str]) -> tuple[str, ...]:
    """Parent folders of `paths` that do not exist yet, shallowest first."""
    out: list[str] = []
    for path in paths:
        parts = path.split("/")[:-1]
        for end in range(1, len(parts) + 1):
            folder = "/".join(parts[:end])
            if folder not in existing_dirs and folder not in out:
                out.append(folder)
    return tuple(out)
