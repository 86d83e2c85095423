"""What a build reports, and its refusals: shared by the steps that decide what changed and the one that writes it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from git_memzoi.errors import FormatError

if TYPE_CHECKING:  # the read path leaves pydantic (behind profile.document) unloaded
    from git_memzoi.profile.document import Problem


@dataclass
class RebuildReport:
    """What a rebuild did: how many files it parsed, took from the cache, reused or removed."""

    index_path: str
    records: int = 0  # repository records in the index
    runtime: int = 0  # runtime (local/session) records mirrored from shared.db
    parsed: int = 0  # files (or runtime documents) parsed from text
    cached: int = 0  # taken from the content-addressed parse cache
    reused: int = 0  # unchanged rows kept from the previous (or a sibling's) index
    removed: int = 0  # rows dropped
    problems: list[Problem] = field(default_factory=list)
    duration: float = 0.0  # seconds
    changed: bool = False  # a new index.db was installed
    full: bool = False
    seeded_from: str | None = None
    git_index: int = 0  # of the reused, files whose blob OID git's index stat cache named (not read)

    def as_json(self) -> dict[str, Any]:
        """The `rebuild --json` document."""
        return {
            "index_db": self.index_path,
            "records": self.records,
            "runtime_records": self.runtime,
            "parsed": self.parsed,
            "cached": self.cached,
            "reused": self.reused,
            "removed": self.removed,
            "changed": self.changed,
            "full": self.full,
            "seeded_from": self.seeded_from,
            "duration_s": round(self.duration, 4),
            "problems": [p.as_json() for p in self.problems],
        }


class InvalidRecords(FormatError):
    """`rebuild --strict` found record files that do not validate; nothing was installed."""

    def __init__(self, problems: list[Problem]) -> None:
        first = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(
            "invalid-records",
            f"{first}{more}",
            path=first.path,
            line=first.line,
            hint="fix the files (git memzoi validate lists every problem), or rebuild without --strict",
        )
        self.problems = problems

    def __str__(self) -> str:
        return self.message


class OutOfScope(Exception):
    """A change set limited to a scope of paths touches rows outside it (a duplicate record ID)."""
