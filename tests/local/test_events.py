"""The audit log: every shared.db write appends an event; `events` streams them row by row."""

from __future__ import annotations

import json
import subprocess
import tracemalloc
from pathlib import Path

from git_memzoi.index import runtime_store, shared_db
from git_memzoi.local import events as events_mod
from git_memzoi.runtime.workspace import Workspace
from support import Repo, memzoi_exe, run_cli


def jsonl() -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in run_cli("events", "--jsonl").stdout.splitlines()]


def bulk_events(count: int, detail_size: int = 100) -> None:
    conn = shared_db.connect(Workspace.open().layout.shared_db)
    with shared_db.transaction(conn):
        for i in range(count):
            shared_db.append_event(conn, "test.bulk", [f"id-{i}"], {"pad": "x" * detail_size})
    conn.close()


def test_no_shared_db_means_no_events(repo: Repo) -> None:
    assert run_cli("events", "--jsonl").stdout == ""
    assert run_cli("events", "--json").json() == {"events": []}
    assert not Workspace.open().layout.shared_db.exists()  # reading never creates it


def test_each_write_appends_one_event_naming_who_what_and_ids(repo: Repo) -> None:
    first = run_cli("local", "add", "--type", "fact", "--title", "A", "--body", "secret-ish body").stdout.strip()
    second = run_cli("local", "add", "--title", "B", "--body", "b").stdout.strip()
    run_cli("local", "forget", second)
    events = jsonl()
    assert [(e["seq"], e["action"], e["ids"], e["actor"]) for e in events] == [
        (1, "local.add", [first], "tester"),
        (2, "local.add", [second], "tester"),
        (3, "local.forget", [second], "tester"),
    ]
    assert events[0]["detail"] == {"store": "local", "lane": "semantic", "type": "fact"}
    assert all(e["at"].endswith("Z") for e in events)
    assert "secret-ish" not in run_cli("events", "--jsonl").stdout  # events carry IDs and shape, not content


def test_since_limit_json_and_table(repo: Repo) -> None:
    ids = [run_cli("local", "add", "--title", f"T{i}", "--body", "b").stdout.strip() for i in range(5)]
    assert [e["seq"] for e in jsonl()] == [1, 2, 3, 4, 5]
    since = [json.loads(line) for line in run_cli("events", "--jsonl", "--since", "2").stdout.splitlines()]
    assert [e["seq"] for e in since] == [3, 4, 5]
    limited = [
        json.loads(line) for line in run_cli("events", "--jsonl", "--since", "1", "--limit", "2").stdout.splitlines()
    ]
    assert [e["ids"] for e in limited] == [[ids[1]], [ids[2]]]
    doc = run_cli("events", "--json", "--limit", "3").json()
    assert [e["seq"] for e in doc["events"]] == [1, 2, 3]
    table = run_cli("events").stdout.splitlines()
    assert table[0].split() == ["SEQ", "AT", "ACTOR", "ACTION", "IDS"]
    assert len(table) == 6 and table[1].split()[0] == "1" and table[1].split()[-1] == ids[0]
    assert run_cli("events", "--json", "--since", "99").json() == {"events": []}


def test_bad_options_are_usage_errors(repo: Repo) -> None:
    assert "--limit" in run_cli("events", "--limit", "0", expect=2).stderr
    assert "--since" in run_cli("events", "--since", "-1", expect=2).stderr
    assert "exclusive" in run_cli("events", "--json", "--jsonl", expect=2).stderr


def test_stream_reads_row_by_row(repo: Repo) -> None:
    count, pad = 20_000, 200
    bulk_events(count, pad)
    ws = Workspace.open()
    tracemalloc.start()
    seen = 0
    for event in events_mod.stream(ws):
        seen += 1
        assert event.seq == seen
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert seen == count
    # 20k events of > 200 bytes each are > 4 MB; streaming keeps far less than that alive at once
    assert peak < (count * pad) // 8, peak


def test_iter_events_is_lazy(repo: Repo) -> None:
    bulk_events(10)
    conn = shared_db.connect(Workspace.open().layout.shared_db, readonly=True)
    it = runtime_store.iter_events(conn, since=3, limit=4)
    assert iter(it) is it  # a generator over the cursor, not a list
    assert [e.seq for e in it] == [4, 5, 6, 7]


def test_real_pipe_closed_early_is_quiet(repo: Repo, tmp_path: Path) -> None:
    bulk_events(30_000, 100)
    proc = subprocess.Popen(
        [memzoi_exe(), "events", "--jsonl"], cwd=repo.path, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    line = proc.stdout.readline()
    assert json.loads(line)["seq"] == 1
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err and "internal error" not in err


def test_actor_is_git_identity_when_memzoi_actor_is_unset(repo: Repo, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("MEMZOI_ACTOR")
    monkeypatch.delenv("USER", raising=False)
    monkeypatch.delenv("LOGNAME", raising=False)
    run_cli("local", "add", "--title", "From git's global identity", "--body", "b")
    subprocess.run(["git", "config", "user.name", "Repo Person"], cwd=repo.path, check=True)
    subprocess.run(["git", "config", "user.email", "repo@example.com"], cwd=repo.path, check=True)
    local_id = run_cli("local", "add", "--title", "From the repository's identity", "--body", "b").stdout.strip()
    proposal = run_cli("propose", "--type", "decision", "--title", "Actor check", "--body", "b", "--json").json()
    monkeypatch.setenv("MEMZOI_ACTOR", "robot-7")
    run_cli("local", "forget", local_id)
    actors = [(e["action"], e["actor"]) for e in jsonl()]
    assert actors[0] == ("local.add", "Test Author <author@example.com>")
    assert actors[1] == ("local.add", "Repo Person <repo@example.com>")
    assert len(actors) > 3 and all(a == "Repo Person <repo@example.com>" for _, a in actors[2:-1]), (proposal, actors)
    assert actors[-1] == ("local.forget", "robot-7")
    assert all(a != "unknown" for _, a in actors)
