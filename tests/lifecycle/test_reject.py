"""reject: repo-safe packets keep their evidence; anything else becomes a hash-only receipt."""

from __future__ import annotations

import sqlite3

import pytest

from git_memzoi.index import shared_db
from git_memzoi.profile import frontmatter
from git_memzoi.profile.tree import SourceFile, validate_tree
from git_memzoi.runtime.workspace import Workspace
from support import run_cli
from support.lifecycle import (
    APPLIED_AT,
    BODY,
    at,
    db_state,
    one_line_error,
    packet,
    snapshot,
    states,
    write_packet,
)

PID = "mem_2026_03_01_auth_abc123"
SECRET_WORDS = ("zanzibar", "quokka", "marmalade", "AKIAIOSFODNN7EXAMPLE")
SECRET_BODY = (
    "# Zanzibar quokka credentials\n\nThe marmalade deploy uses AKIAIOSFODNN7EXAMPLE for the zanzibar bucket.\n"
)


def _front(path) -> dict:
    return frontmatter.parse(path.read_bytes(), str(path)).data


def test_repo_safe_packet_moves_to_resolved_rejected(repo) -> None:
    pending = write_packet(repo, packet(PID))
    at(APPLIED_AT)
    result = run_cli(
        "reject", pending, "--reason", "duplicate of an existing decision", "--reviewer", "bob", "--json"
    ).json()
    resolved = f".memzoi/proposals/resolved/rejected/{PID}.md"
    assert result["outcome"] == "rejected" and result["resolved_path"] == resolved and not result["hash_only"]
    assert not (repo.path / pending).exists()
    data = _front(repo.path / resolved)
    assert data["status"] == "rejected"
    assert data["sources"] == [{"path": "src/auth/session.ts"}]  # reviewed evidence kept
    assert data["proposal"]["reason"] == "Learned during auth middleware migration."
    assert data["resolution"] == {
        "outcome": "rejected",
        "reviewer": "bob",
        "resolved_at": APPLIED_AT,
        "reason": "duplicate of an existing decision",
        "affected_record_ids": [],
    }
    assert not list((repo.path / ".memzoi/records").rglob("*.md"))
    assert f"rejected {PID}: duplicate of an existing decision" in (repo.path / ".memzoi/log.md").read_text()
    assert states(repo.path) == {PID: "rejected"}
    run_cli("validate")
    again = run_cli("reject", PID, "--reason", "again")
    assert "nothing to do" in again.stderr
    refused = run_cli("apply", PID, expect=1)
    assert "rejected" in one_line_error(refused.stderr)


def test_inbox_proposal_reject(repo) -> None:
    pid = run_cli("propose", "--type", "fact", "--title", "Use yarn", "--body", "The repo uses yarn.", "--json").json()[
        "id"
    ]
    run_cli("reject", pid, "--reason", "we use pnpm")
    assert states(repo.path) == {pid: "rejected"}
    assert _front(repo.path / f".memzoi/proposals/resolved/rejected/{pid}.md")["resolution"]["reason"] == "we use pnpm"
    shown = run_cli("proposals", "show", pid, "--json").json()
    assert shown["state"] == "rejected" and shown["reason"] == "we use pnpm"


def test_reject_of_an_applied_proposal_is_refused(repo) -> None:
    write_packet(repo, packet(PID))
    run_cli("apply", PID)
    before = snapshot(repo.path)
    line = one_line_error(run_cli("reject", PID, "--reason", "too late", expect=1).stderr)
    assert "already applied" in line
    assert snapshot(repo.path) == before


@pytest.mark.parametrize("args", [("reject", "x"), ("reject", "x", "--reason", "  ")])
def test_reject_needs_a_reason(repo, args) -> None:
    write_packet(repo, packet(PID))
    before = snapshot(repo.path)
    result = run_cli(*args, expect=2)
    assert "reason" in result.stderr
    assert snapshot(repo.path) == before


def _all_text(repo) -> str:
    parts = [p.read_text(errors="replace") for p in (repo.path / ".memzoi").rglob("*") if p.is_file()]
    return "\n".join(parts)


def _assert_nothing_of_the_original(repo, *aliases: str) -> None:
    text = _all_text(repo)
    for needle in (*aliases, *SECRET_WORDS):
        assert needle.lower() not in text.lower(), needle


def test_non_repo_safe_packet_becomes_a_hash_only_receipt(repo) -> None:
    file_id = "mem_2026_03_01_file_alias_ffffff"
    data = packet(
        PID,
        sensitivity="secret",
        title="Zanzibar quokka credentials",
        description="Marmalade deploy credentials for zanzibar.",
        tags=["quokka"],
        origin={"origin_key": "zanzibar:quokka", "route": "repository_proposal"},
    )
    pending = write_packet(repo, data, SECRET_BODY, name=file_id)
    at(APPLIED_AT)
    result = run_cli("reject", pending, "--reason", "holds zanzibar credentials", "--json")
    payload = result.json()
    assert payload["hash_only"] and payload["proposal_id"] is None
    for needle in (PID, file_id, *SECRET_WORDS):
        assert needle.lower() not in (result.stdout + result.stderr).lower()
    assert not (repo.path / pending).exists()
    receipts = list((repo.path / ".memzoi/proposals/resolved/rejected").iterdir())
    assert [p.name for p in receipts] == [payload["resolved_path"].rsplit("/", 1)[-1]]
    _assert_nothing_of_the_original(repo, PID, file_id)
    front = _front(receipts[0])
    assert front["status"] == "rejected" and front["proposal"]["action"] == "create"
    assert set(front["receipt"]) == {"proposal_id_sha256", "file_id_sha256", "content_sha256"}
    rel = receipts[0].relative_to(repo.path).as_posix()
    report = validate_tree([SourceFile(rel, receipts[0].read_bytes)], mode="committed")
    assert report.errors == []
    ws = Workspace.open(repo.path)
    db = db_state(ws)
    assert all(PID not in str(row) and file_id not in str(row) for row in db["rejections"])
    assert len(db["rejections"]) == 2
    assert [row[0] for row in db["proposals"]] == [front["id"]]


def test_a_second_reject_of_the_same_receipt_is_deterministic(repo) -> None:
    write_packet(repo, packet(PID, sensitivity="sensitive"), SECRET_BODY)
    first = run_cli("reject", PID, "--reason", "private", "--json").json()["resolved_path"]
    # the same packet proposed again in another clone gets the same receipt identity
    write_packet(repo, packet(PID, sensitivity="sensitive"), SECRET_BODY)
    second = run_cli("reject", f".memzoi/proposals/pending/{PID}.md", "--reason", "private")
    assert "nothing to do" in second.stderr and first in second.stderr


@pytest.mark.parametrize("alias_kind", ["proposal_id", "file_id"])
def test_rejection_replays_by_either_alias_without_echoing_it(repo, alias_kind, monkeypatch, tmp_path) -> None:
    file_id = "mem_2026_03_01_file_alias_ffffff"
    write_packet(repo, packet(PID, sensitivity="private-personal-data"), SECRET_BODY, name=file_id)
    run_cli("reject", file_id, "--reason", "personal data")
    alias = PID if alias_kind == "proposal_id" else file_id
    for home in ("same", "fresh"):
        if home == "fresh":  # no shared.db rows: the receipts in the tree answer the hashed lookup
            monkeypatch.setenv("MEMZOI_HOME", str(tmp_path / "fresh-home"))
            shared_db.connect(Workspace.open(repo.path).layout.shared_db).close()
        before = snapshot(repo.path)
        shown = run_cli("proposals", "show", alias, "--json")
        assert shown.json()["hash_only"] and shown.json()["state"] == "rejected"
        again = run_cli("reject", alias, "--reason", "again")
        applied = run_cli("apply", alias, expect=1)
        pathy = run_cli("apply", f".memzoi/proposals/pending/{alias}.md", expect=1)
        assert "receipt_" in applied.stderr and "nothing to do" in again.stderr
        for result in (shown, again, applied, pathy):
            assert alias not in result.stdout + result.stderr
        assert snapshot(repo.path) == before


def test_new_packet_reusing_a_rejected_alias_is_refused(repo) -> None:
    write_packet(repo, packet(PID, sensitivity="secret"), SECRET_BODY)
    run_cli("reject", PID, "--reason", "secret")
    write_packet(repo, packet(PID, title="Something harmless"), "# Something harmless\n\nHarmless.\n")
    before = snapshot(repo.path)
    result = run_cli("apply", PID, expect=1)
    line = one_line_error(result.stderr)
    assert "rejected as not repo-safe" in line and PID in line  # the packet path names it; the receipt does not
    assert snapshot(repo.path) == before


def test_non_repo_safe_inbox_proposal_reject_scrubs_the_row(repo) -> None:
    pid = run_cli(
        "propose",
        "--type",
        "fact",
        "--title",
        "Zanzibar quokka credentials",
        "--body",
        SECRET_BODY,
        "--sensitivity",
        "secret",
        "--json",
    ).json()["id"]
    assert states(repo.path) == {pid: "pending"}
    result = run_cli("reject", pid, "--reason", "secret", "--json").json()
    assert result["hash_only"]
    ws = Workspace.open(repo.path)
    conn = sqlite3.connect(ws.layout.shared_db)
    try:
        texts = " ".join(str(r) for r in conn.execute("SELECT id, packet FROM proposals"))
    finally:
        conn.close()
    assert pid not in texts and "zanzibar" not in texts.lower()
    _assert_nothing_of_the_original(repo, pid)
    shown = run_cli("proposals", "show", pid)
    assert "hash-only receipt" in shown.stdout and pid not in shown.stdout + shown.stderr


def test_a_packet_that_does_not_validate_is_rejected_as_a_receipt(repo) -> None:
    repo.write(f".memzoi/proposals/pending/{PID}.md", "---\nid: [unclosed\ntitle: zanzibar\n---\n# zanzibar\n")
    result = run_cli("reject", PID, "--reason", "broken", "--json").json()
    assert result["hash_only"]
    _assert_nothing_of_the_original(repo, PID)
    run_cli("validate")


def test_body_of_rejected_packet_stays_in_repo_safe_resolution(repo) -> None:
    write_packet(repo, packet(PID))
    run_cli("reject", PID, "--reason", "no")
    text = (repo.path / f".memzoi/proposals/resolved/rejected/{PID}.md").read_text()
    assert BODY.strip() in text
