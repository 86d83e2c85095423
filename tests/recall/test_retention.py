"""Retention boundaries for every lane, exactly at and one second before each boundary."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from git_memzoi.profile.models import Record
from git_memzoi.recall.retention import decide
from git_memzoi.runtime import clock

SECOND = timedelta(seconds=1)
T0 = datetime(2026, 3, 1, 12, 0, 0, tzinfo=UTC)
LEASE = 24.0


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def record(lane: str, retention: dict[str, str], status: str = "active", rid: str = "r1") -> Record:
    data: dict[str, Any] = {
        "id": rid,
        "kind": "memory",
        "profile": "memzoi",
        "type": "note",
        "lane": lane,
        "title": "t",
        "timestamp": iso(T0),
        "status": status,
        "scope": "repo",
        "visibility": "repo",
        "content_class": "general_repo_knowledge",
        "confidence": 1.0,
        "retention": retention,
        "origin": {"origin_key": "k", "route": "repository_materialization"},
    }
    return Record.model_validate(data)


def extension(until: datetime, record_id: str = "r1", reason: str = "r", actor: str = "a") -> dict[str, str]:
    """An authorised episodic extension fact of `record_id` until `until`, recorded at T0."""
    return {
        "record_id": record_id,
        "fact": "episodic_extension",
        "until": iso(until),
        "reason": reason,
        "actor": actor,
        "created_at": iso(T0),
    }


def at(moment: datetime, rec: Record, facts: list[dict[str, str]] | None = None, lease: float = LEASE):
    """Decide with the injectable clock moved to `moment`."""
    clock.set_now(moment)
    return decide(rec, clock.now(), facts or [], lease)


def assert_boundary(rec: Record, boundary: datetime, kind: str, facts=None, lease: float = LEASE) -> None:
    before = at(boundary - SECOND, rec, facts, lease)
    exactly = at(boundary, rec, facts, lease)
    assert before.current is True, before
    assert exactly.current is False, exactly
    assert before.boundary == exactly.boundary == iso(boundary)
    assert before.boundary_kind == exactly.boundary_kind == kind
    assert exactly.reason.startswith("query-only since")
    assert before.reason.startswith("current until")


def test_session_lease_from_started_at() -> None:
    rec = record("session", {"started_at": iso(T0)})
    assert_boundary(rec, T0 + timedelta(hours=24), "lease")


def test_session_lease_follows_last_active_and_config_hours() -> None:
    rec = record("session", {"started_at": iso(T0), "last_active_at": iso(T0 + timedelta(hours=30))})
    assert_boundary(rec, T0 + timedelta(hours=30 + 6), "lease", lease=6)


def test_session_seven_day_cap_beats_a_later_lease() -> None:
    rec = record("session", {"started_at": iso(T0), "last_active_at": iso(T0 + timedelta(days=6, hours=20))})
    assert_boundary(rec, T0 + timedelta(days=7), "cap")


def test_session_terminal_boundary() -> None:
    rec = record("session", {"started_at": iso(T0), "ended_at": iso(T0 + timedelta(hours=2))})
    assert_boundary(rec, T0 + timedelta(hours=2), "terminal")


def test_session_explicit_expiry_when_earliest() -> None:
    rec = record("session", {"started_at": iso(T0), "explicit_expires_at": iso(T0 + timedelta(hours=1))})
    assert_boundary(rec, T0 + timedelta(hours=1), "explicit")


def test_episodic_window() -> None:
    rec = record("episodic", {"occurred_at": iso(T0)})
    assert_boundary(rec, T0 + timedelta(days=30), "window")


def test_episodic_extension_by_authorised_fact() -> None:
    rec = record("episodic", {"occurred_at": iso(T0)})
    until = T0 + timedelta(days=45)
    facts = [extension(until, reason="incident review", actor="alice")]
    assert_boundary(rec, until, "extension", facts)
    decision = at(until, rec, facts)
    assert decision.facts and decision.facts[0]["until"] == iso(until)


def test_episodic_extension_capped_at_ninety_days() -> None:
    rec = record("episodic", {"occurred_at": iso(T0)})
    facts = [extension(T0 + timedelta(days=400))]
    assert_boundary(rec, T0 + timedelta(days=90), "extension", facts)
    assert "capped" in at(T0, rec, facts).reason


def test_episodic_ignores_facts_of_other_records_and_shorter_extensions() -> None:
    rec = record("episodic", {"occurred_at": iso(T0)})
    facts = [
        extension(T0 + timedelta(days=80), record_id="other"),
        extension(T0 + timedelta(days=10)),
    ]
    assert_boundary(rec, T0 + timedelta(days=30), "window", facts)
    assert len(at(T0, rec, facts).facts) == 1


def test_episodic_explicit_expiry_before_window() -> None:
    rec = record("episodic", {"occurred_at": iso(T0), "explicit_expires_at": iso(T0 + timedelta(days=3))})
    assert_boundary(rec, T0 + timedelta(days=3), "explicit")


@pytest.mark.parametrize("lane", ["semantic", "procedural"])
def test_durable_lanes_have_no_age_limit(lane: str) -> None:
    rec = record(lane, {})
    far = at(T0 + timedelta(days=365 * 50), rec)
    assert far.current is True and far.boundary is None and far.boundary_kind is None
    assert far.rule.startswith(f"{lane}: no age limit")


@pytest.mark.parametrize("lane", ["semantic", "procedural"])
def test_durable_lanes_explicit_expiry(lane: str) -> None:
    rec = record(lane, {"explicit_expires_at": iso(T0 + timedelta(days=100))})
    assert_boundary(rec, T0 + timedelta(days=100), "explicit")


@pytest.mark.parametrize("status", ["superseded", "expired", "tombstoned", "redacted"])
def test_non_active_status_is_never_current(status: str) -> None:
    rec = record("semantic", {}, status=status)
    decision = at(T0, rec)
    assert decision.current is False and decision.boundary_kind == "status" and decision.status == status
    assert status in decision.reason


def test_fractional_second_timestamps() -> None:
    rec = record("episodic", {"occurred_at": "2026-03-01T12:00:00.500000Z"})
    boundary = datetime(2026, 3, 31, 12, 0, 0, 500000, tzinfo=UTC)
    assert at(boundary - timedelta(microseconds=1), rec).current is True
    assert at(boundary, rec).current is False


def test_decision_records_evaluation_time() -> None:
    rec = record("semantic", {})
    assert at(T0, rec).evaluated_at == iso(T0)
