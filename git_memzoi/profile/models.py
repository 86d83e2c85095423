"""Pydantic v2 models of the profile: canonical records, proposal packets, resolved packets, receipts.

Readers require the exact serialized names and values: no aliases, no inferred defaults,
no coercion of strings to numbers. Unknown top-level fields are kept (extra="allow") so
that a parse/render round trip loses nothing; legacy fields are a hard-cutover error.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from git_memzoi.profile import vocab
from git_memzoi.profile.applies import applies_to_problem
from git_memzoi.profile.timefmt import OutOfRange, parse_rfc3339

_SNAKE = re.compile(r"[a-z][a-z0-9_]*")
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,199}")


def _rfc3339(value: str) -> str:
    try:
        parse_rfc3339(value)
    except OutOfRange as exc:
        raise PydanticCustomError("invalid-timestamp", "{why}", {"why": str(exc)}) from None
    except ValueError:
        raise PydanticCustomError(
            "invalid-timestamp", "'{value}' is not an RFC 3339 date-time with a timezone", {"value": value}
        ) from None
    return value


def _non_blank(value: str) -> str:
    if not value.strip():
        raise PydanticCustomError("field-empty", "must not be empty")
    return value


def _snake(value: str) -> str:
    if not _SNAKE.fullmatch(value):
        raise PydanticCustomError("invalid-value", "'{value}' must be lowercase snake_case", {"value": value})
    return value


def _identifier(value: str) -> str:
    if not _ID.fullmatch(value):
        raise PydanticCustomError(
            "invalid-id",
            "'{value}' is not an ID (letters, digits, . _ : -, up to 200, no spaces or /)",
            {"value": value},
        )
    return value


def _confidence(value: Any) -> Any:
    if isinstance(value, str):
        if value.strip().lower() in vocab.CONFIDENCE_LABELS:
            raise PydanticCustomError(
                "confidence-label",
                "confidence label '{value}' is not allowed; use a number from 0.0 to 1.0",
                {"value": value},
            )
        raise PydanticCustomError(
            "invalid-confidence", "confidence must be a number from 0.0 to 1.0, not '{value}'", {"value": value}
        )
    if isinstance(value, bool):
        raise PydanticCustomError("invalid-confidence", "confidence must be a number from 0.0 to 1.0, not a boolean")
    return value


def _status_alias(value: Any) -> Any:
    if isinstance(value, str) and value in vocab.STATUS_ALIASES:
        raise PydanticCustomError(
            "status-alias",
            "status '{value}' is an alias; the current value is '{current}'",
            {"value": value, "current": vocab.STATUS_ALIASES[value]},
        )
    return value


def _applies_to(value: str) -> str:
    problem = applies_to_problem(value)
    if problem is not None:
        code, template = problem
        raise PydanticCustomError(code, template, {"value": value})
    return value


Timestamp = Annotated[str, AfterValidator(_rfc3339)]
Text = Annotated[str, AfterValidator(_non_blank)]
Snake = Annotated[str, AfterValidator(_snake)]
Identifier = Annotated[str, AfterValidator(_identifier)]
Confidence = Annotated[float, BeforeValidator(_confidence), Field(ge=0.0, le=1.0)]
AppliesTo = Annotated[str, AfterValidator(_applies_to)]

# defer_build: a model's validator is built on its first use, so a check of one record file (a
# hand-written record at pre-commit) does not pay for the packet models as well
_STRICT = ConfigDict(strict=True, extra="forbid", frozen=True, defer_build=True)
_OPEN = ConfigDict(strict=True, extra="allow", frozen=True, defer_build=True)


class Retention(BaseModel):
    """Lane-specific retention facts; which keys a lane needs is checked by the owning model."""

    model_config = _STRICT
    occurred_at: Timestamp | None = None
    started_at: Timestamp | None = None
    ended_at: Timestamp | None = None
    last_active_at: Timestamp | None = None
    explicit_expires_at: Timestamp | None = None


_LANE_RETENTION: dict[str, tuple[set[str], set[str]]] = {
    # lane: (required keys, allowed keys)
    "semantic": (set(), {"explicit_expires_at"}),
    "procedural": (set(), {"explicit_expires_at"}),
    "episodic": ({"occurred_at"}, {"occurred_at", "explicit_expires_at"}),
    "session": ({"started_at"}, {"started_at", "ended_at", "last_active_at", "explicit_expires_at"}),
}


def check_lane_retention(lane: str, retention: Retention) -> None:
    """Raise when `retention` does not carry exactly what `lane` requires and allows."""
    required, allowed = _LANE_RETENTION[lane]
    present = {key for key, value in retention.model_dump().items() if value is not None}
    for key in sorted(required - present):
        raise PydanticCustomError(
            "retention-invalid", "{lane} records require retention.{key}", {"lane": lane, "key": key}
        )
    for key in sorted(present - allowed):
        raise PydanticCustomError(
            "retention-invalid", "retention.{key} does not apply to {lane} records", {"lane": lane, "key": key}
        )


class Origin(BaseModel):
    """Content-free source-event identity; exact source replay keys on it."""

    model_config = _STRICT
    origin_key: Text
    route: Snake


class Lineage(BaseModel):
    """A renewal or session-successor relationship, separate from supersedes."""

    model_config = _STRICT
    kind: vocab.LineageKind
    predecessor_id: Identifier


def _reject_legacy(data: Any) -> Any:
    if not isinstance(data, dict):
        return data
    for key, why in vocab.LEGACY_KEYS.items():
        if key in data:
            raise PydanticCustomError(
                "legacy-format",
                "{key!r} marks an older artifact ({why}); upgrade the file by hand to the current profile",
                {"key": key, "why": why},
            )
    profile = data.get("profile")
    if isinstance(profile, str) and profile != "memzoi" and profile.startswith(("memzoi/", "okf/")):
        raise PydanticCustomError(
            "legacy-format",
            "profile '{value}' is an older format; the current profile is the unversioned 'memzoi'; "
            "upgrade the file by hand",
            {"value": profile},
        )
    if "kind" not in data and "profile" not in data:
        raise PydanticCustomError(
            "legacy-format",
            "no kind/profile fields: an older artifact; upgrade it by hand to kind, profile, retention and origin",
        )
    return data


class _Memory(BaseModel):
    """Fields records and packets share."""

    model_config = _OPEN
    id: Identifier
    profile: Literal["memzoi"]
    type: vocab.MemoryType
    lane: vocab.Lane
    title: Text
    timestamp: Timestamp
    content_class: Snake
    retention: Retention
    origin: Origin
    tags: list[Text] | None = None
    applies_to: list[AppliesTo] | None = None
    source: Text | None = None
    source_ref: Text | None = None
    lineage: Lineage | None = None

    @model_validator(mode="before")
    @classmethod
    def _cutover(cls, data: Any) -> Any:
        return _reject_legacy(data)

    @model_validator(mode="after")
    def _lane_retention(self) -> _Memory:
        check_lane_retention(self.lane, self.retention)
        return self

    @property
    def extras(self) -> dict[str, Any]:
        """Unknown top-level fields, kept verbatim."""
        return dict(self.__pydantic_extra__ or {})


class Record(_Memory):
    """A canonical record under .memzoi/records/ (or a runtime record in shared.db)."""

    kind: Literal["memory"]
    description: Text | None = None
    status: Annotated[vocab.RecordStatus, BeforeValidator(_status_alias)]
    scope: vocab.RecordScope
    visibility: vocab.Visibility
    confidence: Confidence
    proposal_id: Identifier | None = None
    supersedes: Identifier | None = None


class PacketScope(BaseModel):
    """A packet's scope: its kind, optional scope ID and the repository paths it covers."""

    model_config = _STRICT
    kind: vocab.PacketScopeKind
    id: Text | None = None
    paths: list[AppliesTo] = Field(default_factory=list)


class ProposalBlock(BaseModel):
    """The nested `proposal:` object of a packet."""

    model_config = ConfigDict(strict=True, extra="allow", frozen=True, defer_build=True)
    action: vocab.Action
    proposed_by: Text
    proposed_at: Timestamp
    reason: Text | None = None
    target: Identifier | None = None
    #: A memzoi extra (docs/contract.md): the target's git blob OID when it was proposed against.
    target_blob: Annotated[str, Field(pattern=r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")] | None = None
    confidence: vocab.ProposalConfidenceLabel | Annotated[float, Field(ge=0.0, le=1.0)] | None = None

    @model_validator(mode="before")
    @classmethod
    def _known_action(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("action") == "update":
            raise PydanticCustomError(
                "proposal-action", "action 'update' is not supported; propose a supersede instead"
            )
        return data


class Resolution(BaseModel):
    """How a resolved packet was decided."""

    model_config = _STRICT
    outcome: vocab.Outcome
    reviewer: Text
    resolved_at: Timestamp
    reason: Text | None = None
    affected_record_ids: list[Identifier] = Field(default_factory=list)


class EvidenceSource(BaseModel):
    """One entry of a packet's `sources:` list: where the evidence lives."""

    model_config = ConfigDict(strict=True, extra="allow", frozen=True, defer_build=True)
    path: Text | None = None
    ref: Text | None = None
    url: Text | None = None


class Packet(_Memory):
    """A proposal packet: pending (status proposed) or resolved (applied / rejected, with resolution)."""

    kind: Literal["proposal"]
    description: Text
    status: vocab.PacketStatus
    proposal: ProposalBlock
    sensitivity: vocab.Sensitivity = "unknown"
    scope: PacketScope | None = None
    supersedes: list[Identifier] = Field(default_factory=list)
    sources: list[EvidenceSource] | None = None
    created_by: Text | None = None
    visibility: vocab.Visibility | None = None
    confidence: Confidence | None = None
    resolution: Resolution | None = None
    receipt: ReceiptBlock | None = None

    @model_validator(mode="after")
    def _action_rules(self) -> Packet:
        action = self.proposal.action
        self._target_rules()
        if action in ("supersede", "tombstone") and self.proposal.reason is None:
            raise PydanticCustomError(
                "proposal-reason", "a {action} proposal needs proposal.reason", {"action": action}
            )
        self._resolution_rules()
        if self.receipt is not None and (self.status != "rejected" or action != "create"):
            raise PydanticCustomError("receipt-invalid", "a hash-only receipt is a rejected, create-shaped packet")
        return self

    def _target_rules(self) -> None:
        """A create names no target; a supersede exactly one, in supersedes; a tombstone one, in proposal.target."""
        action, block = self.proposal.action, self.proposal
        if action == "create":
            if block.target is not None or self.supersedes:
                raise PydanticCustomError("proposal-target", "a create proposal cannot name a target")
            if block.target_blob is not None:
                raise PydanticCustomError(
                    "proposal-target", "a create proposal has no target, so no proposal.target_blob"
                )
        elif action == "supersede":
            if len(self.supersedes) != 1:
                raise PydanticCustomError(
                    "proposal-target",
                    "a supersede proposal needs exactly one supersedes target, found {n}",
                    {"n": len(self.supersedes)},
                )
            if block.target is not None:
                raise PydanticCustomError("proposal-target", "a supersede proposal cannot set proposal.target")
        elif action == "tombstone":
            if block.target is None:
                raise PydanticCustomError("proposal-target", "a tombstone proposal needs proposal.target")
            if self.supersedes:
                raise PydanticCustomError("proposal-target", "a tombstone proposal cannot list supersedes")

    def _resolution_rules(self) -> None:
        """A pending packet has no resolution; a resolved one has one whose outcome is its status."""
        if self.status == "proposed" and self.resolution is not None:
            raise PydanticCustomError("resolution-invalid", "a pending packet (status: proposed) has no resolution")
        if self.status != "proposed":
            if self.resolution is None:
                raise PydanticCustomError(
                    "resolution-invalid",
                    "a resolved packet (status: {status}) needs a resolution",
                    {"status": self.status},
                )
            if self.resolution.outcome != self.status:
                raise PydanticCustomError(
                    "resolution",
                    "resolution.outcome '{outcome}' does not match status '{status}'",
                    {"outcome": self.resolution.outcome, "status": self.status},
                )

    @property
    def target_id(self) -> str | None:
        """The record a supersede or tombstone acts on."""
        if self.proposal.action == "supersede":
            return self.supersedes[0]
        return self.proposal.target

    @property
    def repo_safe(self) -> bool:
        return self.sensitivity == vocab.REPO_SAFE

    @property
    def sensitivity_declared(self) -> bool:
        return "sensitivity" in self.model_fields_set


class ReceiptBlock(BaseModel):
    """Hash-only identities of a rejected non-repo-safe packet: no alias, no content."""

    model_config = _STRICT
    proposal_id_sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    file_id_sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    content_sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
