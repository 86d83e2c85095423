"""The write paths read record facts from index.db, and stay true when the index is behind the files.

Each test builds the index first (a search, as an agent's session would), then changes record
files behind its back (new files, an in-place edit, a duplicated ID) and runs a lifecycle step.
"""

from __future__ import annotations

import os
import time

import pytest

from git_memzoi.index import shared_db
from git_memzoi.profile import frontmatter
from git_memzoi.runtime.workspace import Workspace
from support import Repo, run_cli
from support.lifecycle import add_record, packet, record, refused, tombstone_packet, write_packet

PID = "mem_2026_03_01_auth_abc123"
NEW_ID = "protected-routes-must-validate-sessions-server-side"


@pytest.fixture
def indexed(repo: Repo) -> Repo:
    """A repository with a few records, shared.db and a built index."""
    for n in range(3):
        add_record(repo, f"semantic/decisions/rule-{n}", f"rule-{n}")
    shared_db.connect(Workspace.open(repo.path).layout.shared_db).close()
    run_cli("rebuild")
    return repo


def _settle() -> None:
    """Let folder timestamps age past the racy window, so the index's folder signatures are trusted."""
    time.sleep(2.2)


def test_ambiguous_target_is_refused_naming_both_files(indexed: Repo) -> None:
    rel = ".memzoi/records/semantic/decisions/rule-1.md"
    twin = ".memzoi/records/semantic/risks/rule-1-again.md"
    indexed.write(twin, (indexed.path / rel).read_text())
    indexed.commit("duplicate rule-1", paths=[twin])
    write_packet(indexed, tombstone_packet("rule-1", pid=PID))
    line = refused(indexed, "apply", PID, needles=("'rule-1' is ambiguous", rel, twin))
    assert "2 files" in line


def test_ambiguous_target_is_refused_at_propose(indexed: Repo) -> None:
    rel = ".memzoi/records/semantic/decisions/rule-2.md"
    twin = ".memzoi/records/procedural/procedures/rule-2.md"
    indexed.write(twin, (indexed.path / rel).read_text())
    indexed.commit("duplicate rule-2", paths=[twin])
    refused(
        indexed,
        "propose",
        "--action",
        "supersede",
        "--target",
        "rule-2",
        "--reason",
        "r",
        "--type",
        "decision",
        "--title",
        "A new rule 2",
        "--body",
        "Replaces rule 2.",
        needles=(rel, twin, "ambiguous"),
    )


def test_an_invalid_duplicate_still_makes_the_target_ambiguous(indexed: Repo) -> None:
    twin = ".memzoi/records/semantic/decisions/broken.md"
    indexed.write(twin, frontmatter.render(record("rule-0", confidence="very"), "# Broken\n\nBody.\n"))
    indexed.commit("a broken copy", paths=[twin])
    write_packet(indexed, tombstone_packet("rule-0", pid=PID))
    refused(indexed, "apply", PID, needles=("ambiguous", twin))


def test_record_id_written_just_now_is_seen(indexed: Repo) -> None:
    _settle()
    add_record(indexed, f"semantic/facts/{NEW_ID}", NEW_ID)
    write_packet(indexed, packet(PID))
    refused(indexed, "apply", PID, needles=("is already used by", f"semantic/facts/{NEW_ID}.md"))


def test_origin_written_just_now_is_an_exact_replay(indexed: Repo) -> None:
    _settle()
    origin = {"origin_key": "issue:77:decision", "route": "repository_proposal"}
    add_record(indexed, "semantic/decisions/sub/replayed", "replayed", origin=origin)
    write_packet(indexed, packet(PID, origin=origin))
    result = run_cli("apply", PID, "--json").json()
    assert result["outcome"] == "replay" and "replayed" in result["message"]


def test_origin_needing_quotes_is_found(indexed: Repo) -> None:
    origin = {"origin_key": "note: 'quoted' \\ key", "route": "repository_proposal"}
    add_record(indexed, "semantic/decisions/quoted", "quoted", origin=origin)
    write_packet(indexed, packet(PID, origin=origin))
    assert run_cli("apply", PID, "--json").json()["outcome"] == "replay"


def test_target_whose_id_was_edited_in_place_is_not_acted_on(indexed: Repo) -> None:
    _settle()
    rel = ".memzoi/records/semantic/decisions/rule-1.md"
    path = indexed.path / rel
    stat = path.stat()
    with open(path, "r+", encoding="utf-8") as handle:  # in place: the folder's signature does not move
        text = handle.read().replace("id: rule-1", "id: rule-9")
        handle.seek(0)
        handle.write(text)
        handle.truncate()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    indexed.commit("rename the ID", paths=[rel])
    write_packet(indexed, tombstone_packet("rule-1", pid=PID))
    refused(indexed, "apply", PID, needles=("'rule-1' does not exist",))


def test_target_added_just_before_proposing_is_found(indexed: Repo) -> None:
    add_record(indexed, "semantic/decisions/fresh", "fresh-rule")
    result = run_cli("propose", "--action", "tombstone", "--target", "fresh-rule", "--reason", "gone", "--json")
    assert result.json()["state"] == "validated"
