"""context packs, precheck, handoff and `expiry`: ranking, budgets, duplicates, inbox and checkpoint."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from git_memzoi.index import runtime_store, shared_db
from git_memzoi.recall.context import build_context
from git_memzoi.runtime import clock
from git_memzoi.runtime.workspace import Workspace
from support import Repo, memzoi_exe, run_cli
from support.recall import add_record, add_runtime_record, record_text


@pytest.fixture
def corpus(repo: Repo) -> Repo:
    # fmt: off
    add_record(repo, "auth/decision", "auth-decision", type="decision", title="Sessions are validated server-side",
               body="Validate every session on the server for the auth middleware.", applies_to=["src/auth/**"])
    add_record(repo, "auth/risk", "auth-risk", type="risk", title="Token cache corruption",
               body="Parallel token refresh in the auth middleware corrupts the cache.",
               applies_to=["src/auth/token.ts"], source="pr", source_ref="pr://7")
    add_record(repo, "auth/failed", "auth-failed", type="failed_attempt", title="Client-side auth guard",
               body="We tried guarding routes in the client auth middleware; it leaked data.",
               applies_to=["src/auth/**"])
    add_record(repo, "auth/warning", "auth-warning", type="warning", title="Do not log tokens",
               body="Never log auth tokens from the middleware.", applies_to=["src"], source=None)
    add_record(repo, "auth/note", "auth-note", type="note", title="Auth middleware history",
               body="The auth middleware was rewritten in 2025.")
    add_record(repo, "auth/dup", "auth-dup", type="note", title="Auth middleware history (copy)",
               body="The auth middleware was rewritten in 2025.")
    add_record(repo, "ops/deploy", "deploy-risk", type="risk", title="Force pushes break deploys",
               body="Never force-push to main: the deploy pipeline reads main directly.")
    add_record(repo, "ops/git", "git-note", type="warning", title="Git hooks are installed",
               body="Git hooks run on every commit.")
    add_record(repo, "ops/expired", "old-risk", type="risk", title="Old force push risk",
               body="Force push used to be fine.", status="tombstoned")
    # fmt: on
    repo.commit("corpus")
    return repo


def test_context_is_path_bound_relevance_first_and_deduplicated(corpus: Repo) -> None:
    pack = run_cli("context", "--task", "change the auth middleware", "--path", "src/auth/token.ts", "--json").json()
    order = [item["record_id"] for item in pack["items"]]
    # the four records whose scope covers the path and whose text matches lead; the unscoped notes follow
    assert set(order[:4]) == {"auth-risk", "auth-warning", "auth-failed", "auth-decision"}
    assert set(order) == {"auth-risk", "auth-warning", "auth-failed", "auth-decision", "auth-dup"} or set(order) == {
        "auth-risk",
        "auth-warning",
        "auth-failed",
        "auth-decision",
        "auth-note",
    }
    dup = [o for o in pack["omitted"] if o["reason"].startswith("duplicate of ")]
    assert len(dup) == 1 and {dup[0]["record_id"], dup[0]["reason"][13:]} == {"auth-note", "auth-dup"}
    risk = next(item for item in pack["items"] if item["record_id"] == "auth-risk")
    assert "applies to src/auth/token.ts (src/auth/token.ts)" in risk["why"]
    assert risk["citation"] == {
        "record_id": "auth-risk",
        "source": "pr",
        "source_ref": "pr://7",
        "proposal_id": None,
        "path": ".memzoi/records/auth/risk.md",
    }
    assert "source: null" in pack["text"]
    assert pack["used"] <= pack["budget"] == 800
    assert pack["text"].startswith("# Context for: change the auth middleware")


def test_type_is_a_boost_not_a_wall(repo: Repo) -> None:
    add_record(
        repo,
        "ops/checklist",
        "release-checklist",
        type="note",
        title="Release checklist for tagging",
        body="The release checklist: tag the release commit, then run the tagging checklist again.",
    )
    add_record(
        repo,
        "ops/aside",
        "aside-risk",
        type="risk",
        title="Disk space on runners",
        body="Runners fill their disks; a release build failed while tagging once.",
    )
    repo.commit("records")
    pack = build_context(Workspace.open(), "release checklist tagging")
    assert [i.record_id for i in pack.items][:2] == ["release-checklist", "aside-risk"]


def test_context_counts_every_word_and_ends_with_the_standing_rules(repo: Repo) -> None:
    add_record(
        repo, "ops/pnpm", "use-pnpm", type="convention", title="Use pnpm", body="Install packages with pnpm, never npm."
    )
    add_record(repo, "ops/push", "no-force", type="risk", title="Never force-push main", body="Deploys read main.")
    for n in range(6):
        add_record(
            repo,
            f"auth/r{n}",
            f"auth-{n}",
            type="decision",
            title=f"Auth middleware rule {n}",
            body=" ".join(["The auth middleware checks sessions."] * 8),
            applies_to=["src/auth/**"],
        )
    repo.commit("records")
    pack = build_context(Workspace.open(), "auth middleware", budget=120)
    assert len(pack.text.split()) <= pack.used <= 120
    assert "## Omitted" not in pack.text and pack.omitted and "left out" in pack.text
    tail = pack.text.split("## Standing rules also in force")[1]
    assert "(use-pnpm)" in tail and "(no-force)" in tail


def test_context_fits_a_word_budget_and_lists_what_was_left_out(corpus: Repo) -> None:
    pack = build_context(Workspace.open(), "auth middleware", paths=["src/auth/token.ts"], budget=60)
    assert pack.used <= 60
    assert len(pack.text.split()) <= 60
    # the best record's full text does not fit 60 words: it and the next ones are named in a line each, best first
    assert (pack.items or pack.listed) and pack.omitted
    assert all(f"({item.record_id})" in pack.text for item in pack.listed)
    assert any(o.reason.startswith("over budget") for o in pack.omitted)
    assert all(item.words > 0 for item in pack.items)
    run_cli("context", "--task", "x", "--budget", "0", expect=2)


def test_context_folder_path_takes_scopes_inside_it(corpus: Repo) -> None:
    pack = build_context(Workspace.open(), "zzz", paths=["src"])
    assert {i.record_id for i in pack.items} >= {"auth-risk", "auth-failed", "auth-decision", "auth-warning"}
    inside = next(i for i in pack.items if i.record_id == "auth-risk")
    assert "inside src" in inside.why


def test_context_never_takes_query_only_or_private_without_local(corpus: Repo) -> None:
    add_record(
        corpus,
        "ops/private",
        "private-risk",
        type="risk",
        title="Private force push note",
        body="Force push secrets.",
        visibility="private",
    )
    pack = build_context(Workspace.open(), "force push")
    got = {i.record_id for i in pack.items} | {o.record_id for o in pack.omitted}
    assert "deploy-risk" in got and "old-risk" not in got and "private-risk" not in got
    local = build_context(Workspace.open(), "force push", include_local=True)
    assert "private-risk" in {i.record_id for i in local.items}


def test_precheck_path_most_severe_first_with_next_steps(corpus: Repo) -> None:
    result = run_cli("precheck", "--path", "src/auth/token.ts", "--json").json()
    assert [w["record_id"] for w in result["warnings"]] == ["auth-risk", "auth-warning", "auth-failed"]
    assert [w["severity"] for w in result["warnings"]] == [1, 2, 3]
    first = result["warnings"][0]
    assert first["matched"] == "src/auth/token.ts" and "auth-risk" in first["next_step"]
    assert result["warnings"][1]["citation"]["source"] is None
    text = run_cli("precheck", "--path", "src/auth/token.ts").stdout
    assert text.index("auth-risk") < text.index("auth-warning") < text.index("auth-failed")
    assert "next: " in text


def test_precheck_exit_code_is_the_documented_no(corpus: Repo) -> None:
    run_cli("precheck", "--path", "src/auth/token.ts", "--exit-code", expect=1)
    run_cli("precheck", "--path", "docs/readme.md", "--exit-code", expect=0)
    run_cli("precheck", "--path", "docs/readme.md", expect=0)
    run_cli("precheck", expect=2)
    run_cli("precheck", "--path", "a", "--command", "b", expect=2)


def test_precheck_command_and_action_match_by_words(corpus: Repo) -> None:
    result = run_cli("precheck", "--command", "git push --force origin main", "--json").json()
    assert [w["record_id"] for w in result["warnings"]] == ["deploy-risk"]
    assert result["warnings"][0]["matched"].startswith("words: ")
    # the words it holds, each once, in the command's order (counted by the index, not per hit)
    matched = result["warnings"][0]["matched"].removeprefix("words: ").split(", ")
    assert len(matched) >= 2 and len(set(matched)) == len(matched)
    assert matched == sorted(matched, key="git push --force origin main".index)
    assert "running `git push --force origin main`" in result["warnings"][0]["next_step"]
    action = run_cli("precheck", "--action", "force push to main", "--json").json()
    assert [w["record_id"] for w in action["warnings"]] == ["deploy-risk"]
    assert run_cli("precheck", "--command", "ls -la", "--json").json()["warnings"] == []


def test_handoff_inbox_and_checkpoint(corpus: Repo) -> None:
    empty = run_cli("handoff", "--task", "auth middleware", "--json").json()
    assert empty["inbox"] == [] and empty["checkpoint"] is None
    assert not Workspace.open().layout.shared_db.exists()
    packet = record_text("x").replace("kind: memory", "kind: proposal")  # shape checked leniently
    corpus.write(
        ".memzoi/proposals/pending/mem_file_only.md",
        packet.replace("id: x", "id: mem_file_only").replace("title: X", "title: Packet only") + "",
    )
    conn = shared_db.connect(Workspace.open().layout.shared_db)
    stamp = "2026-01-01T00:00:00Z"
    inbox_packet = "---\nid: mem_db\nkind: proposal\ntitle: From the inbox\nproposal:\n  action: create\n---\nBody\n"
    conn.executemany(
        "INSERT INTO proposals (id, state, packet, body_digest, file_id, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            ("mem_db", "validated", inbox_packet, "d", None, stamp, stamp),
            ("mem_done", "applied", inbox_packet, "d2", None, stamp, stamp),
        ],
    )
    started = datetime(2026, 5, 1, 9, tzinfo=UTC)
    clock.set_now(started)
    for rid, when in (("ses-old", "2026-05-01T07:00:00Z"), ("ses-new", "2026-05-01T08:00:00Z")):
        add_runtime_record(
            conn,
            rid,
            "session",
            "checkpoint.add",
            title=f"Task {rid}",
            type="checkpoint",
            lane="session",
            visibility="private",
            scope="local",
            retention={"started_at": when, "last_active_at": when},
            body=f"Next: finish {rid}.",
        )
    conn.close()
    result = run_cli("handoff", "--task", "auth middleware", "--json").json()
    assert [(i["proposal_id"], i["state"], i["file"]) for i in result["inbox"]] == [
        ("mem_db", "validated", None),
        ("mem_file_only", "proposed", ".memzoi/proposals/pending/mem_file_only.md"),
    ]
    assert result["inbox"][0]["action"] == "create" and result["inbox"][0]["title"] == "From the inbox"
    checkpoint = result["checkpoint"]
    assert checkpoint["record_id"] == "ses-new" and checkpoint["current"] is True
    assert "Next: finish ses-new." in checkpoint["note"]
    assert result["pack"]["items"]
    text = run_cli("handoff", "--task", "auth middleware").stdout
    assert "## Open inbox" in text and "mem_db [validated] create: From the inbox" in text
    assert "## Session checkpoint" in text and "Task ses-new" in text
    clock.set_now(started + timedelta(days=2))  # both leases lapsed: no current checkpoint
    assert run_cli("handoff", "--task", "x", "--json").json()["checkpoint"] is None


def add_outage(repo: Repo, **fields: Any) -> None:
    """An episodic incident record `outage` that occurred on 2026-02-01 (its 30-day window ends on 2026-03-03)."""
    retention = {"occurred_at": "2026-02-01T00:00:00Z"}
    add_record(repo, "episodic/outage", "outage", type="incident", lane="episodic", retention=retention, **fields)


def test_expiry_explains_at_and_before_the_boundary(repo: Repo) -> None:
    add_outage(repo)
    before = run_cli("expiry", "outage", "--json", env={"MEMZOI_NOW": "2026-03-02T23:59:59Z"}).json()
    at = run_cli("expiry", "outage", "--json", env={"MEMZOI_NOW": "2026-03-03T00:00:00Z"}).json()
    assert before["current"] is True and at["current"] is False
    assert before["boundary"] == at["boundary"] == "2026-03-03T00:00:00Z"
    assert at["boundary_kind"] == "window" and at["rule"].startswith("episodic: 30-day window")
    text = run_cli("expiry", "outage", env={"MEMZOI_NOW": "2026-03-03T00:00:00Z"}).stdout
    assert text.startswith("outage: query-only") and "boundary: 2026-03-03T00:00:00Z (window)" in text
    assert "no record 'missing'" in run_cli("expiry", "missing", expect=1).stderr


def test_expiry_sees_authorised_extension_facts(repo: Repo) -> None:
    add_outage(repo, body="Gateway outage.")
    conn = shared_db.connect(Workspace.open().layout.shared_db)
    new = runtime_store.NewFact(
        record_id="outage", fact="episodic_extension", until="2026-04-15T00:00:00Z", reason="postmortem", actor="alice"
    )
    runtime_store.add_fact(conn, new, action="retention.extend")
    conn.close()
    env = {"MEMZOI_NOW": "2026-04-14T23:59:59Z"}
    decision = run_cli("expiry", "outage", "--json", env=env).json()
    assert decision["current"] is True and decision["boundary_kind"] == "extension"
    assert decision["facts"][0]["actor"] == "alice"
    assert run_cli("search", "--json", "outage", env=env).json()["hits"]
    later = {"MEMZOI_NOW": "2026-04-15T00:00:00Z"}
    assert run_cli("search", "--json", "outage", env=later).json()["hits"] == []


def test_context_names_in_a_line_each_what_does_not_fit_in_full(repo: Repo) -> None:
    for n in range(10):
        add_record(
            repo,
            f"decisions/ledger-{n}",
            f"ledger-rule-{n}",
            type="decision",
            title=f"Ledger rule {n}",
            body=f"The ledger reconciliation rule {n}: " + "keep every entry balanced. " * 25,
            applies_to=[f"services/ledger/part{n}/**"],
        )
    repo.commit("ledger rules")
    result = run_cli("context", "--task", "ledger reconciliation", "--budget", "400", "--json")
    pack = json.loads(result.stdout)
    assert pack["used"] <= 400 and len(pack["text"].split()) <= 400
    assert pack["items"] and pack["listed"]
    for item in pack["listed"]:
        assert f"- Decision: {item['title']} ({item['record_id']}) · {item['scope']}\n" in pack["text"]
    # best first: every record named in a line ranks after every record given in full
    ids = [i["record_id"] for i in pack["items"]] + [i["record_id"] for i in pack["listed"]]
    assert len(ids) == len(set(ids)) and len(ids) > len(pack["items"])


def test_precheck_command_weighs_rare_words_above_words_many_records_share(repo: Repo) -> None:
    for n in range(8):
        add_record(repo, f"notes/svc-{n}", f"service-note-{n}", type="note", title=f"Service {n} deploy notes")
    add_record(repo, "warnings/a", "a-service-deploys", type="warning", title="Every service deploy waits for CI")
    add_record(repo, "warnings/b", "b-payments-deploys", type="warning", title="Payments deploy needs a freeze check")
    repo.commit("records")
    result = run_cli("precheck", "--command", "./deploy.sh payments service", "--json").json()
    # both hold two of the command's words; "payments" is held by one record, "service" by nine
    assert [w["record_id"] for w in result["warnings"]] == ["b-payments-deploys", "a-service-deploys"]


def test_precheck_command_leaves_out_warnings_sharing_only_common_words_beyond_its_best_few(repo: Repo) -> None:
    add_record(
        repo,
        "warnings/replay",
        "replay-into-shadow",
        type="warning",
        title="bazel run of the replay tool writes to the shadow sink first",
    )
    for n in range(6):  # each holds two of the command's words, each word held by most of the memory
        add_record(repo, f"warnings/w{n}", f"weak-{n}", type="warning", title=f"Topic {n} in prod keeps its retention")
    repo.commit("records")
    command = "bazel run //tools/replay -- --topic pings --sink prod"
    done = subprocess.run(
        [memzoi_exe(), "precheck", "--command", command, "--json"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    found = [w["record_id"] for w in json.loads(done.stdout)["warnings"]]
    # the record holding the program, its verb and rare words first; of the six weak ones only the best two follow
    assert found[0] == "replay-into-shadow" and len(found) == 3 and set(found[1:]) < {f"weak-{n}" for n in range(6)}
