"""`git memzoi maintenance [--json] [--write]`: unverified records, near-duplicates and likely contradictions,
listed, then proposed as pending packets that validate, nothing applied (real git, `git memzoi` as a process)."""

from __future__ import annotations

import json
from typing import Any

from git_memzoi.freshness.claims import Memory, contradictions, duplicates, instructions
from support import Repo, git
from support.freshness import commit, memzoi
from support.recall import add_record, tree_snapshot

SECTION = (
    "Run the whole test suite with `make test` before pushing; the integration tests need a local "
    "database, which `make db` starts, and they read its address from the environment."
)


def record(repo: Repo, rid: str, body: str, **fields: Any) -> None:
    add_record(repo, f"semantic/{rid}", rid, type="decision", body=body, **fields)


def memory_with_findings(repo: Repo) -> None:
    repo.write("src/auth/session.ts", "export function validateSession() {}\n")
    repo.write("src/legacy/old.ts", "export const legacyThing = 1;\n")
    repo.write("web/app.ts", "app\n")
    repo.write("api/app.ts", "app\n")
    record(repo, "tests-from-claude", SECTION, source="path", source_ref="CLAUDE.md")
    record(repo, "tests-from-agents", SECTION.replace("whole ", ""), source="path", source_ref="AGENTS.md")
    record(repo, "installs-pnpm", "Always use `pnpm` to install dependencies.")
    record(repo, "installs-npm", "- Use `npm` for installs; the lockfile is package-lock.json.")
    record(repo, "web-yarn", "Use `yarn` here.", applies_to=["web/**"])
    record(repo, "formatter", "Always run `black` on Python files.")
    record(repo, "formatter-not", "Never run `black`: the project formats with ruff.")
    record(repo, "session-rule", "Sessions are validated in `validateSession`.", applies_to=["src/auth/**"])
    record(repo, "legacy-rule", "`legacyThing` is kept for old clients.", applies_to=["src/legacy/**"])
    record(repo, "unrelated", "Release notes are written by hand.")
    commit(repo, "code and memory")
    (repo.path / "packages").mkdir()
    git("mv", "src/auth", "packages/auth", cwd=repo.path)
    git("rm", "-q", "-r", "src/legacy", cwd=repo.path)
    commit(repo, "move auth, drop legacy")


def test_maintenance_lists_each_kind_with_its_reason(repo: Repo) -> None:
    memory_with_findings(repo)
    items = json.loads(memzoi(repo, "maintenance", "--json").stdout)["items"]
    kinds = [(i["kind"], i["records"]) for i in items]
    assert kinds == [
        ("unverified", ["legacy-rule"]),
        ("unverified", ["session-rule"]),
        ("duplicate", ["tests-from-claude", "tests-from-agents"]),
        ("contradiction", ["formatter-not", "formatter"]),
        ("contradiction", ["web-yarn", "installs-npm", "installs-pnpm"]),  # the newest first (same time: by ID)
    ]
    reasons = {i["records"][0]: i["reason"] for i in items}
    assert reasons["legacy-rule"].startswith("src/legacy scope-empty; `legacyThing`")
    assert "of their words agree" in reasons["tests-from-claude"]
    assert reasons["formatter-not"] == "never run `black` (formatter-not) / run `black` (formatter)"
    assert reasons["web-yarn"] == (
        "package manager: use `npm` (installs-npm) / use `pnpm` (installs-pnpm) / use `yarn` (web-yarn)"
    )
    text = memzoi(repo, "maintenance").stdout
    assert "contradiction: formatter-not, formatter: never run `black`" in text


def test_write_proposes_packets_that_validate_applies_nothing_and_is_idempotent(repo: Repo) -> None:
    memory_with_findings(repo)
    records = tree_snapshot(repo.path / ".memzoi" / "records")
    first = json.loads(memzoi(repo, "maintenance", "--write", "--json").stdout)
    written = {w["record_id"]: w for w in first["written"]}
    assert {rid: w["action"] for rid, w in written.items()} == {
        "legacy-rule": "tombstone",
        "session-rule": "supersede",
        "tests-from-agents": "tombstone",
        "formatter": "tombstone",
        "installs-npm": "tombstone",
        "installs-pnpm": "tombstone",
    }
    pending = sorted(p.name for p in (repo.path / ".memzoi" / "proposals" / "pending").glob("*.md"))
    assert pending == sorted(w["file"].rsplit("/", 1)[1] for w in written.values())
    supersede = (repo.path / written["session-rule"]["file"]).read_text()
    assert "- packages/auth/**" in supersede and "`validateSession`" in supersede
    assert "near-duplicate of tests-from-claude" in (repo.path / written["tests-from-agents"]["file"]).read_text()
    memzoi(repo, "validate")
    assert tree_snapshot(repo.path / ".memzoi" / "records") == records  # nothing applied
    states = {p["state"] for p in json.loads(memzoi(repo, "proposals", "--json").stdout)["proposals"]}
    assert states <= {"validated", "pending", "proposed"}

    again = json.loads(memzoi(repo, "maintenance", "--write", "--json").stdout)
    assert {w["action"] for w in again["written"]} == {"skipped"}
    assert sorted(p.name for p in (repo.path / ".memzoi" / "proposals" / "pending").glob("*.md")) == pending


def test_a_written_tombstone_applies_and_leaves_the_item_settled(repo: Repo) -> None:
    memory_with_findings(repo)
    written = json.loads(memzoi(repo, "maintenance", "--write", "--json").stdout)["written"]
    [legacy] = [w for w in written if w["record_id"] == "legacy-rule"]
    memzoi(repo, "apply", legacy["file"], "--commit")
    items = json.loads(memzoi(repo, "maintenance", "--json").stdout)["items"]
    assert ["legacy-rule"] not in [i["records"] for i in items]


def test_the_rules_stay_narrow() -> None:
    def group(*bodies: tuple[str, tuple[str, ...]]) -> list[tuple[str, ...]]:
        memories = [Memory(f"r{n}", body, scopes, f"2026-01-0{n + 1}") for n, (body, scopes) in enumerate(bodies)]
        return [g.records for g in duplicates(memories) + contradictions(memories)]

    # different scopes that cannot govern one file: no contradiction
    assert group(("Use `npm` here.", ("web/**",)), ("Use `pnpm` here.", ("api/**",))) == []
    # one folder inside the other: they can
    assert group(("Use `npm` here.", ("web/**",)), ("Use `pnpm` here.", ("web/admin/**",))) == [("r1", "r0")]
    # the same tool twice, a tool mentioned not instructed, a positive and a negative of different things
    assert group(("Use `pnpm`.", ()), ("Always use pnpm.", ()), ("npm is slow.", ()), ("Never use yarn.", ())) == []
    # "use X instead of Y" says nothing for Y; "avoid" forbids
    assert instructions("Avoid `moment`; use `dayjs`.") == {("use", True, "moment"), ("use", False, "dayjs")}
    assert instructions("```\nnever use npm\n```\nUse pnpm.") == {("use", False, "pnpm")}
    # short records: only the same words count; a long one with a few words changed does
    assert group(("Use the cache.", ()), ("Clear the cache.", ())) == []
    assert group(("Run make test.", ()), ("Run make test!", ())) == [("r1", "r0")]
    assert group((SECTION, ()), (SECTION + " Ask in chat when it fails.", ())) == [("r1", "r0")]
    assert group((SECTION, ()), ("Deploys go through the staging cluster first, then production.", ())) == []


def test_duplicates_at_ten_thousand_records_compare_candidates_only() -> None:
    import random

    rng = random.Random(7)
    vocabulary = [f"word{n:05d}" for n in range(20_000)] + ["module", "table", "owner", "reviews", "migrations"]
    bodies = [Memory(f"r{n}", " ".join(rng.sample(vocabulary, 14)), (), "t") for n in range(10_000)]
    bodies.append(Memory("copy", bodies[42].body, (), "t"))
    import git_memzoi.freshness.claims as claims

    calls = 0
    similar = claims._similar

    def counted(a: frozenset[str], b: frozenset[str]) -> float | None:
        nonlocal calls
        calls += 1
        return similar(a, b)

    claims._similar = counted
    try:
        found = duplicates(bodies)
    finally:
        claims._similar = similar
    assert [g.records for g in found] == [("copy", "r42")] or [g.records for g in found] == [("r42", "copy")]
    assert calls < 500_000  # all pairs would be 50 million


def test_status_counts_what_maintenance_lists_and_names_the_command(repo: Repo) -> None:
    repo.write("src/auth/session.ts", "export function validateSession() {}\n")
    record(repo, "session-rule", "Sessions are validated in `validateSession`.", applies_to=["src/auth/**"])
    record(repo, "plain", "Keep sessions short.")
    commit(repo, "code and memory")
    clean = json.loads(memzoi(repo, "status", "--json").stdout)
    assert clean["maintenance"] == {"unverified": 0, "duplicates": 0, "contradictions": 0, "uncheckable": 1}
    assert not any("git memzoi maintenance" in fix for fix in clean["fixes"])

    memory_with_findings(repo)
    report = json.loads(memzoi(repo, "status", "--json").stdout)
    # plain and unrelated cite nothing (the others a source_ref path or a backticked name)
    assert report["maintenance"] == {"unverified": 2, "duplicates": 1, "contradictions": 2, "uncheckable": 2}
    assert "records need review (unverified, duplicates, contradictions): git memzoi maintenance" in report["fixes"]
    text = memzoi(repo, "status").stdout
    assert (
        "maintenance: 2 unverified, 1 duplicate group(s), 2 likely contradiction(s);"
        " 2 current record(s) cite no path or name and cannot be checked"
    ) in text
