"""The profile's closed vocabularies, spelled exactly as files must spell them."""

from __future__ import annotations

from typing import Literal, get_args

Lane = Literal["session", "semantic", "episodic", "procedural"]
RecordStatus = Literal["active", "superseded", "expired", "tombstoned", "redacted"]
PacketStatus = Literal["proposed", "applied", "rejected"]
Visibility = Literal["public", "private", "repo", "team", "org"]
Sensitivity = Literal[
    "repo-safe",
    "local-only",
    "sensitive",
    "secret",
    "raw-transcript",
    "private-personal-data",
    "temporary-state",
    "unknown",
]
Action = Literal["create", "supersede", "tombstone"]
RecordScope = Literal["repo", "local"]
PacketScopeKind = Literal["project", "repo", "local"]
LineageKind = Literal["renewal", "session_successor"]
Outcome = Literal["applied", "rejected"]
ProposalConfidenceLabel = Literal["low", "medium", "high"]

#: Current lowercase memory types. Types shape the content; lanes govern retention.
MemoryType = Literal[
    "fact",
    "decision",
    "constraint",
    "preference",
    "convention",
    "warning",
    "risk",
    "failed_attempt",
    "procedure",
    "runbook",
    "incident",
    "summary",
    "handoff",
    "checkpoint",
    "note",
]

LANES: tuple[str, ...] = get_args(Lane)
VISIBILITIES: tuple[str, ...] = get_args(Visibility)
SENSITIVITIES: tuple[str, ...] = get_args(Sensitivity)
ACTIONS: tuple[str, ...] = get_args(Action)
MEMORY_TYPES: tuple[str, ...] = get_args(MemoryType)

#: Aliases older tools wrote; each is rejected with the current spelling as the hint.
STATUS_ALIASES = {"current": "active", "live": "active", "deleted": "tombstoned", "archived": "expired"}
CONFIDENCE_LABELS = {"low", "medium", "high", "very_high", "certain", "none"}

#: Keys only older artifacts carry. The profile's cutover rejects them outright.
LEGACY_KEYS = {
    "okf_version": "per-file OKF version declarations are not part of the profile",
    "okf": "per-file OKF version declarations are not part of the profile",
    "memzoi_version": "per-file profile versions are not part of the profile",
    "profile_version": "per-file profile versions are not part of the profile",
    "schema_version": "per-file schema versions are not part of the profile",
    "memory_type": "the current field is `type`",
    "memory_lane": "the current field is `lane`",
}

REPO_SAFE: str = "repo-safe"
