"""proposals / proposals show / approve: the inbox and the pending packet files together."""

from __future__ import annotations

from git_memzoi.runtime.workspace import Workspace
from support import run_cli
from support.lifecycle import PROPOSED_AT, at, one_line_error, packet, snapshot, states, write_packet


def _propose(title: str, *extra: str) -> str:
    return str(
        run_cli("propose", "--type", "fact", "--title", title, "--body", f"Body of {title}.", *extra, "--json").json()[
            "id"
        ]
    )


def test_list_shows_inbox_and_packet_files_once(repo) -> None:
    at(PROPOSED_AT)
    inbox_only = _propose("Inbox only")
    with_file = _propose("With file", "--packet")
    write_packet(repo, packet("mem_2026_03_01_file_only_abc123"))
    repo.write(".memzoi/proposals/pending/broken.md", "---\nid: [\n---\nbody\n")
    listed = run_cli("proposals", "--json").json()["proposals"]
    by_id = {p["id"]: p for p in listed}
    assert set(by_id) == {inbox_only, with_file, "mem_2026_03_01_file_only_abc123", "broken"}
    assert by_id[inbox_only]["source"] == "inbox" and by_id[inbox_only]["file"] is None
    assert by_id[with_file]["source"] == "inbox+file"
    assert by_id["mem_2026_03_01_file_only_abc123"]["state"] == "proposed"
    assert by_id["broken"]["problem"] and "yaml" in by_id["broken"]["problem"]
    text = run_cli("proposals").stdout
    assert len(text.strip().splitlines()) == 4


def test_status_filter(repo) -> None:
    first = _propose("First")
    second = _propose("Second")
    run_cli("approve", second)
    third = _propose("Third")
    run_cli("reject", third, "--reason", "no")

    def ids(status: str) -> set[str]:
        return {p["id"] for p in run_cli("proposals", "--status", status, "--json").json()["proposals"]}

    assert ids("validated") == {first}
    assert ids("approved") == {second}
    assert ids("rejected") == {third}
    assert ids("open") == {first, second}
    assert ids("all") == {first, second, third}
    result = run_cli("proposals", "--status", "bogus", expect=2)
    assert "--status" in one_line_error(result.stderr)


def test_show_by_id_path_and_file_id(repo) -> None:
    pid = _propose("Shown", "--packet")
    rel = f".memzoi/proposals/pending/{pid}.md"
    for target in (pid, rel):
        data = run_cli("proposals", "show", target, "--json").json()
        assert data["id"] == pid and data["state"] == "validated" and data["file"] == rel
    text = run_cli("proposals", "show", pid).stdout
    assert f"id:           {pid}" in text and "kind: proposal" in text
    missing = run_cli("proposals", "show", "mem_nope", expect=1)
    assert "mem_nope" in one_line_error(missing.stderr)


def test_approve_transitions(repo) -> None:
    pid = _propose("Approve me")
    run_cli("approve", pid)
    assert states(repo.path)[pid] == "approved"
    before = snapshot(repo.path)
    again = run_cli("approve", pid)
    assert "already approved" in again.stderr
    assert snapshot(repo.path) == before
    run_cli("apply", pid)
    line = one_line_error(run_cli("approve", pid, expect=1).stderr)
    assert "already applied" in line
    assert "mem_missing" in one_line_error(run_cli("approve", "mem_missing", expect=1).stderr)


def test_handoff_lists_the_open_inbox_as_proposals_list_does(repo) -> None:
    """One listing: the inbox's open proposals, then packet files no proposal stands for."""
    from git_memzoi.recall.handoff import open_inbox

    at(PROPOSED_AT)
    inbox_only = _propose("Open item")
    with_file = _propose("With file", "--packet")
    approved = _propose("Approved")
    run_cli("approve", approved)
    rejected = _propose("Rejected")
    run_cli("reject", rejected, "--reason", "no")
    write_packet(repo, packet("mem_2026_03_01_file_only_abc123"))
    write_packet(repo, packet(rejected), name="renamed")  # the rejected proposal stands for it
    repo.write(".memzoi/proposals/pending/broken.md", "---\nid: [\n---\nbody\n")
    listed = [(p["id"], p["state"], p["file"]) for p in run_cli("proposals", "--json").json()["proposals"]]
    # proposals made at one instant come by ID, then packet files by name
    by_id = sorted(
        [
            (inbox_only, "validated", None),
            (with_file, "validated", f".memzoi/proposals/pending/{with_file}.md"),
            (approved, "approved", None),
        ]
    )
    assert listed == [
        *by_id,
        ("broken", "proposed", ".memzoi/proposals/pending/broken.md"),
        ("mem_2026_03_01_file_only_abc123", "proposed", ".memzoi/proposals/pending/mem_2026_03_01_file_only_abc123.md"),
    ]
    items = open_inbox(Workspace.open(repo.path))
    assert [(i.proposal_id, i.state, i.file) for i, _ in items] == listed
    titles = {i.proposal_id: (i.action, i.title) for i, _ in items}
    assert titles[inbox_only] == ("create", "Open item") and titles["broken"] == ("unknown", "(unreadable packet)")


def test_every_inbox_write_has_an_event(repo) -> None:
    import sqlite3

    pid = _propose("Evented")
    run_cli("approve", pid)
    run_cli("apply", pid)
    conn = sqlite3.connect(Workspace.open(repo.path).layout.shared_db)
    try:
        actions = [row[0] for row in conn.execute("SELECT action FROM events ORDER BY seq")]
    finally:
        conn.close()
    assert actions == ["propose", "approve", "apply"]
