"""Local memory: add, list, show, forget; validation; shared by linked worktrees; never in the work tree."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from git_memzoi.profile.document import read_record
from git_memzoi.runtime.workspace import Workspace
from support import Repo, run_cli


def shared_db(cwd: Path | None = None) -> Path:
    return Workspace.open(cwd).layout.shared_db


def add(*args: str, cwd: Path | None = None) -> str:
    return str(run_cli("local", "add", *args, cwd=cwd).stdout.strip())


def test_add_stores_a_valid_private_record_in_shared_db(repo: Repo) -> None:
    record_id = add(
        "--type",
        "fact",
        "--title",
        "Builds use uv",
        "--body",
        "Run uv sync first.",
        "--applies-to",
        "src/**",
        "--tag",
        "build",
        "--confidence",
        "0.7",
    )
    conn = sqlite3.connect(shared_db())
    store, document, status = conn.execute(
        "SELECT store, document, status FROM runtime_records WHERE id = ?", (record_id,)
    ).fetchone()
    assert (store, status) == ("local", "active")
    record = read_record(document.encode(), "x").record
    assert record.id == record_id
    assert (record.kind, record.profile, record.visibility, record.scope, record.lane, record.type) == (
        "memory",
        "memzoi",
        "private",
        "local",
        "semantic",
        "fact",
    )
    assert record.confidence == 0.7
    assert record.applies_to == ["src/**"] and record.tags == ["build"]
    assert record.origin.origin_key == f"local:{record_id}" and record.origin.route == "local_memory"
    assert record.retention.model_dump(exclude_none=True) == {}
    # missing evidence stays null, it is never invented
    assert "source: null" in document and "source_ref: null" in document
    assert record.source is None and record.source_ref is None


def test_add_defaults_and_json(repo: Repo) -> None:
    data = run_cli(
        "local", "add", "--title", "T", "--body", "B", "--source", "agent", "--source-ref", "pr://45", "--json"
    ).json()
    assert data["type"] == "note" and data["lane"] == "semantic" and data["confidence"] == 1.0
    assert (data["source"], data["source_ref"]) == ("agent", "pr://45")
    assert data["path"] == f"shared.db:local/{data['id']}"
    assert data["worktree_key"] == Workspace.open().repo.worktree_key


def test_episodic_local_record_carries_occurred_at(repo: Repo) -> None:
    data = run_cli(
        "local",
        "add",
        "--lane",
        "episodic",
        "--type",
        "incident",
        "--title",
        "Outage",
        "--body",
        "The deploy broke.",
        "--occurred-at",
        "2026-07-01T10:00:00+02:00",
        "--json",
    ).json()
    assert data["retention"] == {"occurred_at": "2026-07-01T08:00:00Z"}


def test_body_file_and_stdin(repo: Repo, tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_text("From a file.\n", encoding="utf-8")
    first = run_cli("local", "add", "--title", "F", "--body-file", str(note), "--json").json()
    second = run_cli("local", "add", "--title", "S", "--body-file", "-", "--json", input="From stdin.\n").json()
    assert "From a file." in first["body"] and "From stdin." in second["body"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--title", "T"], "exactly one of --body"),
        (["--title", "T", "--body", "B", "--body-file", "x"], "exactly one of --body"),
        (["--title", "T", "--body", "   "], "body is empty"),
        (["--title", "T", "--body-file", "missing.md"], "--body-file missing.md: no such file"),
        (["--title", "T", "--body", "B", "--applies-to", "/etc"], "applies_to"),
        (["--title", "T", "--body", "B", "--applies-to", "src/*.py"], "glob"),
        (["--title", "T", "--body", "B", "--occurred-at", "2026-07-01T00:00:00Z"], "episodic"),
        (["--title", "T", "--body", "B", "--lane", "episodic", "--occurred-at", "yesterday"], "RFC 3339"),
        (["--title", "T", "--body", "B", "--expires-at", "2026-07-01"], "RFC 3339"),
        (["--title", "  ", "--body", "B"], "title"),
        (["--title", "T", "--body", "B", "--confidence", "1.5"], "confidence"),
        (["--title", "T", "--body", "B", "--confidence", "nan"], "'--confidence': 'nan' is not a number"),
        (["--title", "T", "--body", "B", "--type", "Decision"], "type"),
        (["--title", "T", "--body", "B", "--lane", "session"], "lane"),
    ],
)
def test_bad_input_is_a_usage_error_and_changes_nothing(repo: Repo, args: list[str], message: str) -> None:
    result = run_cli("local", "add", *args, expect=2)
    assert any(message in line for line in result.stderr.splitlines())  # named on one line
    db = shared_db()
    if db.exists():
        assert sqlite3.connect(db).execute("SELECT count(*) FROM runtime_records").fetchone()[0] == 0
        assert sqlite3.connect(db).execute("SELECT count(*) FROM events").fetchone()[0] == 0


def test_list_and_show(repo: Repo) -> None:
    assert run_cli("local", "list", "--json").json() == {"records": []}
    first = add("--type", "fact", "--title", "First", "--body", "one")
    second = add("--type", "decision", "--title", "Second", "--body", "two", "--lane", "procedural")
    listed = run_cli("local", "list", "--json").json()["records"]
    assert [r["id"] for r in listed] == [first, second]
    assert [r["id"] for r in run_cli("local", "list", "--type", "decision", "--json").json()["records"]] == [second]
    assert [r["id"] for r in run_cli("local", "list", "--lane", "semantic", "--json").json()["records"]] == [first]
    text = run_cli("local", "list").stdout
    assert first in text and "Second" in text
    shown = run_cli("local", "show", first).stdout
    assert shown.startswith("---\n") and f"id: {first}" in shown and "one" in shown
    missing = run_cli("local", "show", "loc_nope", expect=1)
    assert "loc_nope" in missing.stderr


def test_forget_deletes_the_row_and_audits_without_content(repo: Repo) -> None:
    record_id = add("--title", "Private thought", "--body", "UNIQUE-forget-body-7431")
    keep = add("--title", "Keep", "--body", "kept")
    result = run_cli("local", "forget", record_id, "--json").json()
    assert result == {"id": record_id, "store": "local", "forgotten": True}
    ids = [r["id"] for r in run_cli("local", "list", "--json").json()["records"]]
    assert ids == [keep]
    conn = sqlite3.connect(shared_db())
    assert conn.execute("SELECT count(*) FROM runtime_records WHERE id = ?", (record_id,)).fetchone()[0] == 0
    events = [json.loads(line) for line in run_cli("events", "--jsonl").stdout.splitlines()]
    forget = [e for e in events if e["action"] == "local.forget"]
    assert len(forget) == 1 and forget[0]["ids"] == [record_id]
    dump = "\n".join(conn.iterdump())
    assert "UNIQUE-forget-body-7431" not in dump and "Private thought" not in dump
    again = run_cli("local", "forget", record_id, expect=1)
    assert "no runtime record" in again.stderr


def test_linked_worktrees_share_local_memory(repo: Repo, tmp_path: Path) -> None:
    linked = repo.add_worktree("feature", tmp_path / "feature")
    assert Workspace.open(linked.path).layout.worktree_key != Workspace.open(repo.path).layout.worktree_key
    assert shared_db(linked.path) == shared_db(repo.path)
    in_main = add("--title", "Learned in main", "--body", "main knowledge", cwd=repo.path)
    in_linked = add("--title", "Learned in linked", "--body", "linked knowledge", cwd=linked.path)
    for where in (repo.path, linked.path):
        ids = [r["id"] for r in run_cli("local", "list", "--json", cwd=where).json()["records"]]
        assert ids == [in_main, in_linked]
    run_cli("local", "forget", in_main, cwd=linked.path)
    assert [r["id"] for r in run_cli("local", "list", "--json", cwd=repo.path).json()["records"]] == [in_linked]


def test_local_memory_is_never_written_to_the_work_tree(repo: Repo) -> None:
    marker = "ZQX-private-marker-5521"
    record_id = add("--title", f"Title {marker}", "--body", f"Body {marker}")
    run_cli("local", "list")
    run_cli("local", "show", record_id)
    run_cli("local", "add", "--title", "Other", "--body", "other", "--json")
    found = [p for p in repo.path.rglob("*") if p.is_file() and marker.encode() in p.read_bytes()]
    assert found == []


def test_unreadable_shared_db_fails_closed(repo: Repo) -> None:
    db = shared_db()
    db.parent.mkdir(parents=True, exist_ok=True)
    db.write_bytes(b"this is not a database" * 100)
    for args in (("local", "list"), ("local", "add", "--title", "T", "--body", "B"), ("events",)):
        result = run_cli(*args, expect=3)
        assert "shared.db" in result.stderr
    assert db.read_bytes() == b"this is not a database" * 100


def test_corrupt_runtime_row_is_reported_not_crashed(repo: Repo) -> None:
    record_id = add("--title", "T", "--body", "B")
    conn = sqlite3.connect(shared_db())
    conn.execute("UPDATE runtime_records SET document = 'not a record' WHERE id = ?", (record_id,))
    conn.commit()
    result = run_cli("local", "list", expect=3)
    assert record_id in result.stderr
    run_cli("local", "forget", record_id)
    assert run_cli("local", "list", "--json").json() == {"records": []}
