"""Session checkpoints: lease, seven-day cap and close at their exact boundaries, with an injected clock."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from git_memzoi.profile.document import read_record
from git_memzoi.runtime import clock
from git_memzoi.runtime.workspace import Workspace
from support import Repo, run_cli

T0 = datetime(2026, 7, 6, 9, 0, 0, tzinfo=UTC)
SECOND = timedelta(seconds=1)
LEASE = timedelta(hours=24)  # the built-in retention.session_lease_hours
CAP = timedelta(days=7)


def at(moment: datetime) -> None:
    clock.set_now(moment)


def start(task: str = "Fix the login flow", note: str = "Half way; tests red.", *extra: str) -> str:
    at(T0)
    return str(run_cli("checkpoint", "add", "--task", task, "--note", note, *extra).stdout.strip())


def show(record_id: str) -> dict:  # type: ignore[type-arg]
    return run_cli("checkpoint", "show", record_id, "--json").json()  # type: ignore[no-any-return]


def document(record_id: str) -> str:
    return str(run_cli("local", "show", record_id).stdout)


def test_add_stores_a_session_record(repo: Repo) -> None:
    record_id = start()
    record = read_record(document(record_id).encode(), "x").record
    assert (record.lane, record.type, record.scope, record.visibility, record.kind) == (
        "session",
        "checkpoint",
        "local",
        "private",
        "memory",
    )
    assert record.title == "Fix the login flow"
    assert record.retention.started_at == record.retention.last_active_at == "2026-07-06T09:00:00Z"
    assert record.retention.ended_at is None and record.lineage is None
    assert record.origin.route == "session_checkpoint"
    cp = run_cli("checkpoint", "add", "--task", "T", "--note", "n", "--json").json()
    assert set(cp) == {"record_id", "task", "note", "started_at", "last_active_at", "current", "expiry"}
    assert cp["current"] is True and cp["note"] == "n"
    assert cp["expiry"]["boundary"] == "2026-07-07T09:00:00Z" and cp["expiry"]["boundary_kind"] == "lease"


def test_lease_renews_one_second_before_and_is_refused_exactly_at_the_boundary(repo: Repo) -> None:
    first = start()
    at(T0 + LEASE - SECOND)
    renewed = run_cli("checkpoint", "continue", first, "--json").json()
    assert renewed["last_active_at"] == "2026-07-07T08:59:59Z"
    assert renewed["expiry"]["boundary"] == "2026-07-08T08:59:59Z"

    second = start()
    at(T0 + LEASE)
    refused = run_cli("checkpoint", "continue", second, expect=1)
    assert "cannot be continued" in refused.stderr and "inactivity lease" in refused.stderr
    assert "--successor-of" in refused.stderr
    assert show(second)["current"] is False
    assert show(second)["last_active_at"] == "2026-07-06T09:00:00Z"  # nothing changed


def test_lapsed_lease_is_final_even_if_continued_later(repo: Repo) -> None:
    record_id = start()
    at(T0 + LEASE + timedelta(hours=1))
    run_cli("checkpoint", "continue", record_id, expect=1)
    assert show(record_id)["expiry"]["boundary_kind"] == "lease"


def test_seven_day_cap_one_second_before_and_exactly_at(repo: Repo) -> None:
    record_id = start()
    moment = T0
    while moment + timedelta(hours=20) < T0 + CAP:  # keep the lease alive all week
        moment += timedelta(hours=20)
        at(moment)
        run_cli("checkpoint", "continue", record_id)
    at(T0 + CAP - SECOND)
    cp = run_cli("checkpoint", "continue", record_id, "--json").json()
    assert cp["current"] is True
    assert cp["expiry"]["boundary"] == "2026-07-13T09:00:00Z" and cp["expiry"]["boundary_kind"] == "cap"
    at(T0 + CAP)
    refused = run_cli("checkpoint", "continue", record_id, expect=1)
    assert "7-day cap" in refused.stderr
    assert show(record_id)["current"] is False


def test_close_is_the_terminal_boundary(repo: Repo) -> None:
    record_id = start()
    closed_at = T0 + timedelta(hours=3)
    at(closed_at)
    cp = run_cli("checkpoint", "close", record_id, "--json").json()
    assert cp["current"] is False
    assert cp["expiry"]["boundary"] == "2026-07-06T12:00:00Z" and cp["expiry"]["boundary_kind"] == "terminal"
    refused = run_cli("checkpoint", "continue", record_id, expect=1)
    assert "ended" in refused.stderr
    twice = run_cli("checkpoint", "close", record_id, expect=1)
    assert "already closed at 2026-07-06T12:00:00Z" in twice.stderr
    at(closed_at - SECOND)
    assert show(record_id)["current"] is True  # one second before the terminal boundary
    at(closed_at)
    assert show(record_id)["current"] is False
    assert "ended_at: '2026-07-06T12:00:00Z'" in document(record_id) or "ended_at: 2026-07-06T12:00:00Z" in document(
        record_id
    )


def test_configured_lease(repo: Repo) -> None:
    repo.write(".memzoi/config.toml", "[retention]\nsession_lease_hours = 2\n")
    record_id = start()
    at(T0 + timedelta(hours=2) - SECOND)
    run_cli("checkpoint", "continue", record_id)
    at(T0 + timedelta(hours=4) - 2 * SECOND)
    assert show(record_id)["current"] is True
    at(T0 + timedelta(hours=4) - SECOND)  # 2h after the continue, not after the start
    assert show(record_id)["current"] is False


def test_successor_lineage(repo: Repo) -> None:
    first = start()
    at(T0 + LEASE * 2)
    second = run_cli(
        "checkpoint", "add", "--task", "Fix the login flow", "--note", "Picking up.", "--successor-of", first
    ).stdout.strip()
    record = read_record(document(second).encode(), "x").record
    assert record.lineage is not None
    assert (record.lineage.kind, record.lineage.predecessor_id) == ("session_successor", first)
    missing = run_cli("checkpoint", "add", "--task", "T", "--note", "n", "--successor-of", "ses_nope", expect=1)
    assert "ses_nope" in missing.stderr
    local_id = run_cli("local", "add", "--title", "L", "--body", "b").stdout.strip()
    not_session = run_cli("checkpoint", "add", "--task", "T", "--note", "n", "--successor-of", local_id, expect=1)
    assert "no checkpoint" in not_session.stderr
    events = [json.loads(line) for line in run_cli("events", "--jsonl").stdout.splitlines()]
    succ = [e for e in events if e["action"] == "checkpoint.add" and e["ids"] == [second]]
    assert succ[0]["detail"]["predecessor_id"] == first


def test_list_current_and_all(repo: Repo) -> None:
    old = start("Old task")
    at(T0 + timedelta(days=2))
    new = run_cli("checkpoint", "add", "--task", "New task", "--note", "n").stdout.strip()
    listed = run_cli("checkpoint", "list", "--json").json()["checkpoints"]
    assert [(c["record_id"], c["current"]) for c in listed] == [(old, False), (new, True)]
    current = run_cli("checkpoint", "list", "--current", "--json").json()["checkpoints"]
    assert [c["record_id"] for c in current] == [new]
    text = run_cli("checkpoint", "list").stdout
    assert "query-only" in text and "New task" in text
    # checkpoints are session memory, not local memory
    assert run_cli("local", "list", "--json").json() == {"records": []}


def test_from_file_keeps_raw_notes_out_of_the_work_tree(repo: Repo, tmp_path: Path) -> None:
    marker = "RAW-TRANSCRIPT-MARKER-9917"
    transcript = tmp_path / "transcript.txt"
    transcript.write_text(f"user: hi\nassistant: {marker}\n", encoding="utf-8")
    at(T0)
    record_id = run_cli("checkpoint", "add", "--task", "T", "--from-file", str(transcript)).stdout.strip()
    assert marker in show(record_id)["note"]
    run_cli("checkpoint", "list")
    run_cli("checkpoint", "close", record_id)
    assert [p for p in repo.path.rglob("*") if p.is_file() and marker.encode() in p.read_bytes()] == []


def test_linked_worktrees_share_checkpoints(repo: Repo, tmp_path: Path) -> None:
    linked = repo.add_worktree("agent-b", tmp_path / "agent-b")
    record_id = start()
    at(T0 + timedelta(hours=5))
    run_cli("checkpoint", "continue", record_id, cwd=linked.path)
    seen = run_cli("checkpoint", "list", "--json", cwd=repo.path).json()["checkpoints"]
    assert [(c["record_id"], c["last_active_at"]) for c in seen] == [(record_id, "2026-07-06T14:00:00Z")]
    run_cli("checkpoint", "close", record_id, cwd=repo.path)
    assert run_cli("checkpoint", "list", "--current", "--json", cwd=linked.path).json() == {"checkpoints": []}
    assert Workspace.open(linked.path).layout.shared_db == Workspace.open(repo.path).layout.shared_db


def test_usage_errors(repo: Repo) -> None:
    assert "exactly one of --note" in run_cli("checkpoint", "add", "--task", "T", expect=2).stderr
    assert "note is empty" in run_cli("checkpoint", "add", "--task", "T", "--note", " ", expect=2).stderr
    assert "--task" in run_cli("checkpoint", "add", "--note", "n", expect=2).stderr
    assert "no checkpoint" in run_cli("checkpoint", "continue", "ses_missing", expect=1).stderr
    assert "no checkpoint" in run_cli("checkpoint", "close", "ses_missing", expect=1).stderr


def test_forget_a_checkpoint(repo: Repo) -> None:
    record_id = start()
    result = run_cli("local", "forget", record_id, "--json").json()
    assert result["store"] == "session"
    assert run_cli("checkpoint", "list", "--json").json() == {"checkpoints": []}
    events = [json.loads(line) for line in run_cli("events", "--jsonl").stdout.splitlines()]
    assert [(e["action"], e["ids"]) for e in events][-1] == ("session.forget", [record_id])


def test_a_successor_ends_its_current_predecessor(repo: Repo) -> None:
    first = start()
    assert show(first)["current"] is True
    second = run_cli("checkpoint", "add", "--task", "Fix the login flow", "--note", "On.", "--successor-of", first)
    assert show(first)["current"] is False and show(first)["expiry"]["boundary_kind"] == "terminal"
    assert show(second.stdout.strip())["current"] is True
    listed = run_cli("checkpoint", "list", "--current", "--json").json()["checkpoints"]
    assert [c["record_id"] for c in listed] == [second.stdout.strip()]
