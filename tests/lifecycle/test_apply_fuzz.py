"""Generated packets: apply either succeeds or refuses with one line and no change; it never crashes."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_memzoi.index import shared_db
from git_memzoi.runtime.workspace import Workspace
from support import run_cli
from support.lifecycle import add_record, one_line_error, packet, snapshot, write_packet

FIELDS = [
    "id",
    "kind",
    "profile",
    "retention",
    "origin",
    "type",
    "lane",
    "title",
    "description",
    "status",
    "scope",
    "tags",
    "timestamp",
    "sources",
    "supersedes",
    "sensitivity",
    "content_class",
    "visibility",
    "confidence",
    "applies_to",
    "source",
    "source_ref",
    "proposal.action",
    "proposal.target",
    "proposal.reason",
    "proposal.proposed_at",
    "proposal.proposed_by",
    "proposal.confidence",
]
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=True),
    st.sampled_from(
        [
            "",
            " ",
            "create",
            "supersede",
            "tombstone",
            "update",
            "session-rule",
            "repo-safe",
            "secret",
            "semantic",
            "episodic",
            "../x",
            "src/**",
            "2026-02-01T00:00:00Z",
            "yesterday",
            "proposed",
            "applied",
            "medium",
            "active",
            "x" * 300,
            "a/b",
            "ünïcode",
        ]
    ),
    st.lists(st.sampled_from(["session-rule", "other", "src/**", "", 3]), max_size=3),
    st.dictionaries(
        st.sampled_from(["kind", "paths", "id", "origin_key", "route", "occurred_at"]),
        st.sampled_from(["project", "repo", "local", "x", "issue:1", "a_b"]),
        max_size=3,
    ),
)
_counter = itertools.count()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.lists(st.tuples(st.sampled_from(FIELDS), VALUES), min_size=1, max_size=3))
def test_generated_packets_never_crash_apply(repo, changes) -> None:
    root = repo.path
    if not (root / ".memzoi/records/semantic/decisions/session-rule.md").exists():  # once per test run
        add_record(repo, "semantic/decisions/session-rule", "session-rule")
        shared_db.connect(Workspace.open(root).layout.shared_db).close()
    name = f"mem_2026_03_01_fuzz_{next(_counter):06x}"
    data = packet(name)
    for field, value in changes:
        if field.startswith("proposal."):
            data["proposal"] = dict(data["proposal"])
            data["proposal"][field.split(".", 1)[1]] = value
        else:
            data[field] = value
    write_packet(repo, data, name=name)
    before = snapshot(root)
    result = run_cli("apply", name, expect=None)
    assert result.code in (0, 1), (changes, result.stderr)
    if result.code == 1:
        one_line_error(result.stderr)
        assert snapshot(root) == before
    else:
        run_cli("validate")
    (root / f".memzoi/proposals/pending/{name}.md").unlink(missing_ok=True)
