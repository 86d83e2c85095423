"""search: hostile query text, filters, path matching, citations, retention and the interop records."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta

import pytest

from git_memzoi.recall.search import search
from git_memzoi.runtime import clock
from git_memzoi.runtime.workspace import Workspace
from support import Repo, interop_dir, run_cli
from support.recall import add_record


@pytest.fixture
def corpus(repo: Repo) -> Repo:
    # fmt: off
    add_record(repo, "semantic/auth", "auth-sessions", type="decision", title="Validate sessions server-side",
               body="Protected routes must validate the session on the server. Never trust client state.",
               applies_to=["src/auth/**"], tags=["auth", "security"], source="issue", source_ref="issue://12",
               proposal_id="prop-1")
    add_record(repo, "semantic/risk", "token-risk", type="risk", title="Token refresh races",
               body="Refreshing tokens in parallel corrupts the session cache.", applies_to=["src/auth/token.ts"],
               source=None, source_ref=None)
    add_record(repo, "procedural/release", "release-steps", type="procedure", lane="procedural",
               title="Release checklist", body="Tag, build, upload the wheel, announce.", applies_to=["scripts"])
    add_record(repo, "semantic/unicode", "unicode-note", type="note", title="Zürich café naïve",
               body="Diacritics must fold: Zürich, café, naïve. Also 東京 for CJK.")
    add_record(repo, "semantic/old", "old-decision", type="decision", status="superseded",
               title="Old session approach", body="Sessions were validated in the client.")
    # fmt: on
    repo.commit("corpus")
    return repo


def ids(*args: str) -> list[str]:
    return [h["record_id"] for h in run_cli("search", "--json", *args).json()["hits"]]


HOSTILE = [
    "session-validation",
    "src/auth/token.ts",
    "v1.2.3",
    '"unbalanced',
    "it's",
    "*",
    "**",
    "a*b*",
    "NOT",
    "not session",
    "AND",
    "and or not",
    "OR OR",
    "session AND",
    "(session",
    "session)",
    "^session",
    "col:session",
    "title:session",
    "NEAR(session token)",
    "-session",
    "+session",
    "session NOT client",
    "'; DROP TABLE records; --",
    "\\",
    "%_",
    "\x00",
    "東京",
    "Zürich",
    "cafe",
    "🙂 session",
    "session\u200b",
    "{}[]<>|&!~`",
    "session*",
    "sess*",
    "''",
    '""',
    "a" * 500,
]


@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_query_text_never_raises(corpus: Repo, query: str) -> None:
    result = run_cli("search", "--json", "--", query)
    assert result.json()["query"] == query
    search(Workspace.open(), query, include_all=True, include_local=True)


@pytest.mark.parametrize(
    "query,expected",
    [
        ("session-validation", "auth-sessions"),
        ("src/auth/token.ts", "token-risk"),
        ("NOT session", "auth-sessions"),
        ('"unbalanced session', "auth-sessions"),
        ("session AND", "auth-sessions"),
        ("zurich", "unicode-note"),
        ("Zürich", "unicode-note"),
        ("CAFÉ", "unicode-note"),
        ("東京", "unicode-note"),
        ("sess*", "auth-sessions"),
        ("xyzzy wheel", "release-steps"),
        ("title:release", "release-steps"),
        ("refresh tokens", "token-risk"),
    ],
)
def test_a_plain_matching_word_always_finds(corpus: Repo, query: str, expected: str) -> None:
    assert expected in ids("--", query)


def test_ranking_prefers_title_and_every_word(corpus: Repo) -> None:
    assert ids("session")[0] == "auth-sessions"
    assert ids("token refresh")[0] == "token-risk"


def test_filters_type_lane_limit(corpus: Repo) -> None:
    assert ids("session", "--type", "risk") == ["token-risk"]
    assert ids("wheel", "--lane", "procedural") == ["release-steps"]
    assert ids("wheel", "--lane", "semantic") == []
    assert len(ids("session", "--limit", "1")) == 1
    assert "is not a memory type" in run_cli("search", "x", "--type", "decisions", expect=2).stderr
    assert "is not a lane" in run_cli("search", "x", "--lane", "durable", expect=2).stderr
    run_cli("search", "x", "--limit", "0", expect=2)


def test_path_filter_uses_applies_to_rules(corpus: Repo) -> None:
    assert set(ids("session", "--path", "src/auth/login.ts")) == {"auth-sessions"}
    assert set(ids("session", "--path", "src/auth/token.ts")) == {"auth-sessions", "token-risk"}
    assert set(ids("session", "--path", "./src/auth/")) == {"auth-sessions"}
    assert ids("session", "--path", "src/authz/x.ts") == []
    assert ids("session", "--path", "src") == []  # a parent folder is not covered by src/auth/**
    assert ids("wheel", "--path", "scripts/release.sh") == ["release-steps"]
    assert ids("wheel", "--path", "scripts2") == []
    run_cli("search", "x", "--path", "../outside", expect=2)


def test_citations_keep_null_and_lineage(corpus: Repo) -> None:
    hits = {h["record_id"]: h for h in run_cli("search", "session", "--json").json()["hits"]}
    assert hits["auth-sessions"]["citation"] == {
        "record_id": "auth-sessions",
        "source": "issue",
        "source_ref": "issue://12",
        "proposal_id": "prop-1",
        "path": ".memzoi/records/semantic/auth.md",
    }
    risk = hits["token-risk"]["citation"]
    assert risk["source"] is None and risk["source_ref"] is None and risk["proposal_id"] is None
    text = run_cli("search", "parallel").stdout
    assert "source: (none)  source_ref: (none)  proposal_id: (none)" in text and "null" not in text
    assert "source: issue  source_ref: issue://12  proposal_id: prop-1" in run_cli("search", "trust").stdout


def test_only_current_active_by_default_all_includes_the_rest(corpus: Repo) -> None:
    assert "old-decision" not in ids("client")
    everything = run_cli("search", "client", "--all", "--json").json()["hits"]
    old = next(h for h in everything if h["record_id"] == "old-decision")
    assert old["current"] is False and old["status"] == "superseded"
    assert "[query-only: superseded]" in run_cli("search", "client", "--all").stdout


def test_episodic_window_hides_then_all_finds(repo: Repo) -> None:
    add_record(
        repo,
        "episodic/outage",
        "outage-notes",
        type="incident",
        lane="episodic",
        retention={"occurred_at": "2026-02-01T00:00:00Z"},
        body="The gateway outage of February.",
    )
    boundary = datetime(2026, 3, 3, tzinfo=UTC)
    clock.set_now(boundary - timedelta(seconds=1))
    assert ids("outage") == ["outage-notes"]
    clock.set_now(boundary)
    assert ids("outage") == []
    assert ids("outage", "--all") == ["outage-notes"]
    clock.set_now(None)
    env = {"MEMZOI_NOW": "2026-03-02T23:59:59Z"}
    assert run_cli("search", "--json", "outage", env=env).json()["hits"]  # the clock MEMZOI_NOW pins
    assert run_cli("search", "--json", "outage", env={"MEMZOI_NOW": "2026-03-03T00:00:00Z"}).json()["hits"] == []


def test_private_records_only_with_local(repo: Repo) -> None:
    add_record(repo, "semantic/private", "private-one", visibility="private", body="Secret llama plan.")
    assert ids("llama") == []
    assert ids("llama", "--include-local") == ["private-one"]


def test_empty_query_lists_by_filters(corpus: Repo) -> None:
    assert ids("--path", "src/auth/token.ts", "...") == ["auth-sessions", "token-risk"]


def test_interop_records_are_all_found_by_search(repo: Repo) -> None:
    shutil.copytree(interop_dir() / ".memzoi" / "records", repo.path / ".memzoi" / "records", dirs_exist_ok=True)
    ws = Workspace.open()
    from git_memzoi.index import queries
    from git_memzoi.index.rebuild import open_index

    conn = open_index(ws)
    try:
        records = queries.records(conn, queries.Filter(shared=False))
    finally:
        conn.close()
    assert len(records) == 35
    for rec in records:
        result = search(ws, rec.title, limit=5, include_all=True)
        assert rec.record_id in [h.record_id for h in result.hits], rec.title
        hit = next(h for h in result.hits if h.record_id == rec.record_id)
        assert hit.citation.source == rec.source
        assert hit.current == (rec.status == "active")


def test_a_word_most_of_a_large_memory_holds_adds_no_filler_to_an_any_word_search(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bm25 weighs a word that more than half the records hold at nothing: in a large memory the
    any-word query leaves it out (it ranked nothing and cost a score a row), unless the other words
    match nothing; a small memory keeps it (COMMON_ROWS, lowered here to make 8 records large)."""
    from git_memzoi.index import queries

    for n in range(6):
        add_record(repo, f"semantic/n{n}", f"note-{n}", type="note", title=f"Note {n} about deployment",
                   body="Every note here mentions deployment.")  # fmt: skip
    add_record(repo, "semantic/rare", "rare-one", type="note", title="Canary rollout", body="Deployment by canary.")
    add_record(repo, "semantic/other", "other-one", type="note", title="Rollback window", body="Keep one hour.")
    repo.commit("notes")
    assert len(ids("deployment canary rollback")) == 8  # small: the common word's rows are the filler
    monkeypatch.setattr(queries, "COMMON_ROWS", 2)
    # "deployment" is in 7 of 8 records: the records that hold only it are no answer to "canary rollback"
    assert sorted(ids("deployment canary rollback")) == ["other-one", "rare-one"]
    # with nothing else matched, the common word is all there is to go on
    assert len(ids("deployment zeppelin")) == 7
    assert len(ids("deployment")) == 7
