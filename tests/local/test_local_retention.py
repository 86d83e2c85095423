"""`retention extend`: authorised episodic extensions past 30 days, never past 90, with clear refusals."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime
from typing import Any

import pytest

from git_memzoi.runtime import clock
from git_memzoi.runtime.workspace import Workspace
from support import CliResult, Repo, run_cli
from support.recall import record_text

OCCURRED = "2026-07-01T00:00:00Z"
T0 = datetime(2026, 7, 10, tzinfo=UTC)

EPISODIC = record_text(
    "migration-notes-2026-07",
    type="incident",
    lane="episodic",
    title="Database migration notes",
    retention={"occurred_at": OCCURRED},
    body="The July migration needed a manual vacuum.",
)
SEMANTIC = record_text("use-postgres")


@pytest.fixture
def records(repo: Repo) -> Repo:
    repo.write(".memzoi/records/episodic/incidents/migration-notes.md", EPISODIC)
    repo.write(".memzoi/records/semantic/decisions/use-postgres.md", SEMANTIC)
    repo.commit("records")
    clock.set_now(T0)
    return repo


def extend(record_id: str, until: str, reason: str, *more: str, **options: Any) -> CliResult:
    """`git memzoi retention extend RECORD_ID --until UNTIL --reason REASON MORE...`, in-process."""
    return run_cli("retention", "extend", record_id, "--until", until, "--reason", reason, *more, **options)


def extended_runtime_record() -> str:
    """A runtime episodic record (`local add`) that occurred at OCCURRED, extended at T0 to 2026-09-01; its ID."""
    clock.set_now(T0)
    fields = ("--title", "Flaky CI", "--body", "CI flaked.", "--occurred-at", OCCURRED)
    record_id = run_cli("local", "add", "--lane", "episodic", *fields).stdout.strip()
    extend(record_id, "2026-09-01T00:00:00Z", "watching it")
    return record_id


def facts() -> list[tuple[str, str, str, str]]:
    conn = sqlite3.connect(Workspace.open().layout.shared_db)
    return conn.execute("SELECT record_id, fact, until, actor FROM retention_facts ORDER BY seq").fetchall()


def test_extend_canonical_episodic_record(records: Repo) -> None:
    result = extend("migration-notes-2026-07", "2026-08-20T00:00:00Z", "still migrating", "--json").json()
    assert result["until"] == "2026-08-20T00:00:00Z"
    assert result["previous_window_end"] == "2026-07-31T00:00:00Z"
    assert result["limit"] == "2026-09-29T00:00:00Z"
    assert result["path"] == ".memzoi/records/episodic/incidents/migration-notes.md"
    assert facts() == [("migration-notes-2026-07", "episodic_extension", "2026-08-20T00:00:00Z", "tester")]
    events = [json.loads(line) for line in run_cli("events", "--jsonl").stdout.splitlines()]
    assert [(e["action"], e["ids"]) for e in events] == [("retention.extend", ["migration-notes-2026-07"])]
    # the canonical file is not rewritten
    assert (records.path / ".memzoi/records/episodic/incidents/migration-notes.md").read_text() == EPISODIC


def test_extend_exactly_to_ninety_days_and_not_one_second_more(records: Repo) -> None:
    over = extend("migration-notes-2026-07", "2026-09-29T00:00:01Z", "r", expect=1)
    assert "more than 90 days" in over.stderr and "2026-09-29T00:00:00Z" in over.stderr
    assert facts() == []
    extend("migration-notes-2026-07", "2026-09-29T00:00:00Z", "r")
    assert len(facts()) == 1


def test_extension_must_be_after_the_current_window(records: Repo) -> None:
    same = extend("migration-notes-2026-07", "2026-07-31T00:00:00Z", "r", expect=1)
    assert "not after the current window" in same.stderr and "2026-07-31T00:00:00Z" in same.stderr
    extend("migration-notes-2026-07", "2026-08-15T00:00:00Z", "r")
    shorter = extend("migration-notes-2026-07", "2026-08-10T00:00:00Z", "r", expect=1)
    assert "2026-08-15T00:00:00Z" in shorter.stderr
    extend("migration-notes-2026-07", "2026-08-15T00:00:01Z", "r")
    assert len(facts()) == 2


def test_extension_in_the_past_is_refused(records: Repo) -> None:
    clock.set_now(datetime(2026, 8, 25, tzinfo=UTC))
    result = extend("migration-notes-2026-07", "2026-08-20T00:00:00Z", "r", expect=1)
    assert "already in the past" in result.stderr
    extend("migration-notes-2026-07", "2026-09-01T00:00:00Z", "r")


@pytest.mark.parametrize(
    "record_id, until, reason, code, message",
    [
        ("use-postgres", "2026-08-20T00:00:00Z", "r", 1, "only episodic records"),
        ("no-such-record", "2026-08-20T00:00:00Z", "r", 1, "no record 'no-such-record'"),
        ("migration-notes-2026-07", "2026-08-20", "r", 2, "RFC 3339"),
        ("migration-notes-2026-07", "next month", "r", 2, "RFC 3339"),
        ("migration-notes-2026-07", "2026-08-20T00:00:00Z", "  ", 2, "--reason is empty"),
    ],
)
def test_refusals_are_clear_and_change_nothing(
    records: Repo, record_id: str, until: str, reason: str, code: int, message: str
) -> None:
    result = extend(record_id, until, reason, expect=code)
    assert message in result.stderr
    db = Workspace.open().layout.shared_db
    if db.exists():
        assert facts() == []
        assert sqlite3.connect(db).execute("SELECT count(*) FROM events").fetchone()[0] == 0


def test_extend_runtime_episodic_record_and_forget_drops_its_facts(repo: Repo) -> None:
    record_id = extended_runtime_record()
    assert [f[0] for f in facts()] == [record_id]
    semantic = run_cli("local", "add", "--title", "S", "--body", "s").stdout.strip()
    assert "only episodic" in extend(semantic, "2026-09-01T00:00:00Z", "r", expect=1).stderr
    run_cli("local", "forget", record_id)
    assert facts() == []


def test_extension_from_a_linked_worktree_is_seen_by_the_main_one(records: Repo, tmp_path) -> None:  # type: ignore[no-untyped-def]
    linked = records.add_worktree("other", tmp_path / "other")
    extend("migration-notes-2026-07", "2026-08-20T00:00:00Z", "r", cwd=linked.path)
    again = extend("migration-notes-2026-07", "2026-08-19T00:00:00Z", "r", cwd=records.path, expect=1)
    assert "2026-08-20T00:00:00Z" in again.stderr


def test_expiry_shows_the_extension(records: Repo) -> None:
    before = run_cli("expiry", "migration-notes-2026-07", "--json").json()
    assert before["boundary"] == "2026-07-31T00:00:00Z" and before["boundary_kind"] == "window"
    extend("migration-notes-2026-07", "2026-08-20T00:00:00Z", "still migrating")
    clock.set_now(datetime(2026, 8, 5, tzinfo=UTC))  # past the ordinary window, inside the extension
    after = run_cli("expiry", "migration-notes-2026-07", "--json").json()
    assert after["current"] is True
    assert after["boundary"] == "2026-08-20T00:00:00Z" and after["boundary_kind"] == "extension"
    assert [(f["until"], f["reason"], f["actor"]) for f in after["facts"]] == [
        ("2026-08-20T00:00:00Z", "still migrating", "tester")
    ]
    text = run_cli("expiry", "migration-notes-2026-07").stdout
    assert "2026-08-20T00:00:00Z" in text and "extended" in text
    clock.set_now(datetime(2026, 8, 20, tzinfo=UTC))
    assert run_cli("expiry", "migration-notes-2026-07", "--json").json()["current"] is False


def test_expiry_of_an_extended_runtime_record(repo: Repo) -> None:
    record_id = extended_runtime_record()
    clock.set_now(datetime(2026, 8, 10, tzinfo=UTC))
    decision = run_cli("expiry", record_id, "--json").json()
    assert (decision["current"], decision["boundary_kind"], decision["boundary"]) == (
        True,
        "extension",
        "2026-09-01T00:00:00Z",
    )
    hits = run_cli("local", "search", "flaked", "--json").json()["hits"]
    assert [h["record_id"] for h in hits] == [record_id] and hits[0]["current"] is True
