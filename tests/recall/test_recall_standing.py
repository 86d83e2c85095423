"""Standing rules from index.db's `standing` table: the same rules, order and retention as reading every row.

The reference below is the computation the table replaced (every current, shareable row of a standing
type that has no `applies_to` or an entry covering the whole repository, sorted by `standing.rank`),
compared on random corpora through random edit sequences, each refreshed incrementally.
"""

from __future__ import annotations

import json
import random
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from git_memzoi.index import index_db, queries
from git_memzoi.index.index_db import RecordRow
from git_memzoi.index.queries import Filter
from git_memzoi.index.rebuild import open_index, rebuild
from git_memzoi.recall import standing
from git_memzoi.recall.context import _pack, build_context, candidates
from git_memzoi.runtime.workspace import Workspace
from support import Repo
from support.recall import add_record

TYPES = (*standing.STANDING_TYPES, "note", "failed_attempt")
#: What a record file may say (an entry covering the whole repository is refused in a file: see the last test).
APPLIES: tuple[list[str] | None, ...] = (None, None, [], ["src/**"], ["docs"], ["src/**", "docs/a.md"])
STAMPS = (
    "2026-01-01T00:00:00Z",
    "2026-01-02T00:00:00Z",
    "2026-01-01T00:00:00.5Z",
    "2026-01-01T00:00:00.25Z",
    "2026-01-01T01:00:00+01:00",
)
#: Retention boundaries the corpus uses, and instants at, just before and after each of them.
EXPIRES = ("2026-03-01T00:00:00Z", "2026-06-01T12:00:00Z")
INSTANTS = sorted(
    {datetime(2026, 2, 1, tzinfo=UTC).timestamp()}
    | {datetime.fromisoformat(e).timestamp() + d for e in EXPIRES for d in (-0.001, 0.0, 0.001)}
)


def old_standing_rules(conn: sqlite3.Connection, at: float) -> list[str]:
    """The computation before the `standing` table: every row read, checked and ranked per call."""
    whole = sorted(standing.WHOLE_REPOSITORY)
    flt = Filter(now=at, types=standing.STANDING_TYPES)
    params: dict[str, Any] = {}
    marks = ", ".join(f":w{i}" for i in range(len(whole)))
    params |= {f"w{i}": entry for i, entry in enumerate(whole)}
    sql = (
        f"SELECT {', '.join(f'r.{c}' for c in RecordRow._fields)} FROM records r WHERE {flt.where(params)} AND "
        f"(r.applies_json = '[]' OR r.rowid IN (SELECT record FROM applies WHERE entry IN ({marks})))"
    )
    rows = [RecordRow._make(values) for values in conn.execute(sql, params)]

    def is_standing(row: RecordRow) -> bool:
        entries = json.loads(row.applies_json)
        return not entries or any(str(e).strip() in standing.WHOLE_REPOSITORY for e in entries)

    def rank(row: RecordRow) -> tuple[int, float, str, str]:
        inverted = "".join(chr(0x10FFFF - ord(c)) for c in row.timestamp)
        return ({"risk": 0, "warning": 0}.get(row.type, 1), -float(row.confidence), inverted, row.record_id)

    return [row.record_id for row in sorted((r for r in rows if is_standing(r)), key=rank)]


def new_standing_rules(conn: sqlite3.Connection, at: float) -> list[str]:
    return [rule.record_id for rule in standing.standing_rules(conn, at)]


def random_record(repo: Repo, rng: random.Random, n: int) -> None:
    fields: dict[str, Any] = {
        "type": rng.choice(TYPES),
        "title": f"Rule {rng.randint(0, 5)}",
        "confidence": rng.choice((0.5, 0.8, 1.0)),
        "visibility": rng.choice(("repo", "repo", "repo", "private")),
        "status": rng.choice(("active", "active", "active", "tombstoned")),
    }
    applies = rng.choice(APPLIES)
    if applies is not None:
        fields["applies_to"] = applies
    if rng.random() < 0.3:
        fields["retention"] = {"explicit_expires_at": rng.choice(EXPIRES)}
    if fields["type"] == "procedure":
        fields["lane"] = "procedural"
    rel = add_record(repo, f"r{n}", f"rule-{rng.randint(0, 40):02d}-{n}", **fields)
    path = repo.path / rel
    stamp = rng.choice(STAMPS)
    path.write_text(path.read_text().replace("timestamp: '2026-01-01T00:00:00Z'", f"timestamp: '{stamp}'"))


def compare(ws: Workspace) -> list[str]:
    conn = open_index(ws)
    try:
        found = []
        for at in INSTANTS:
            old, new = old_standing_rules(conn, at), new_standing_rules(conn, at)
            assert new == old, at
            found.append(new)
        return found[0]
    finally:
        conn.close()


@pytest.mark.parametrize("seed", range(4))
def test_standing_table_gives_what_reading_every_row_gave(repo: Repo, seed: int) -> None:
    rng = random.Random(seed)
    for n in range(40):
        random_record(repo, rng, n)
    repo.commit("records")
    ws = Workspace.open()
    assert not rebuild(ws).problems
    assert compare(ws)  # the corpus has standing rules to order
    alive = list(range(40))
    for step in range(8):
        for n in rng.sample(alive, 4):  # edit in place: type, scope, rank or retention may change
            random_record(repo, rng, n)
        gone = rng.choice(alive)
        alive.remove(gone)
        (repo.path / f".memzoi/records/r{gone}.md").unlink()
        added = 100 + step
        random_record(repo, rng, added)
        alive.append(added)
        report = rebuild(ws)
        assert not report.problems and not report.full
        compare(ws)


def test_a_standing_rule_leaves_at_its_retention_boundary_with_no_change_to_the_index(repo: Repo) -> None:
    add_record(repo, "a", "expiring", type="convention", retention={"explicit_expires_at": "2026-03-01T00:00:00Z"})
    add_record(repo, "b", "lasting", type="constraint", applies_to=[])
    add_record(repo, "c", "scoped", type="risk", applies_to=["src/**"])
    repo.commit("records")
    conn = open_index(Workspace.open())
    boundary = datetime(2026, 3, 1, tzinfo=UTC).timestamp()
    try:
        assert new_standing_rules(conn, boundary - 0.001) == ["expiring", "lasting"]
        assert new_standing_rules(conn, boundary) == ["lasting"]  # current strictly before its boundary
        rules = standing.standing_rules(conn, boundary - 1)
        text, in_full = standing.render(conn, rules, 10_000)
        assert in_full == ["expiring", "lasting"] and "Body of expiring." in text
        text, in_full = standing.render(conn, rules, 45)
        assert in_full == [] and text == "- Expiring (expiring)\n- Lasting (lasting)\n"
        assert queries.by_rowid(conn, [rules[0].rowid])[0].record_id == "expiring"
    finally:
        conn.close()


def whole(row: RecordRow) -> bool:
    """The reference's test: `is_standing`, with an entry exactly covering everything (the old query's SQL)."""
    entries = json.loads(row.applies_json)
    return standing.is_standing(row) and (not entries or any(e in standing.WHOLE_REPOSITORY for e in entries))


def test_the_standing_table_takes_what_is_standing_says_for_any_applies_to(tmp_path: Path) -> None:
    conn = index_db.create(tmp_path / "index.db")
    cases = [[], ["**"], ["./**"], ["."], ["./"], ["/**"], [" ** "], ["src/**"], ["src/**", "**"], [3], ["**/x"]]
    columns = ", ".join(index_db.RECORD_COLUMNS)
    for n, entries in enumerate(cases):
        for kind in ("risk", "decision", "note"):
            values = {c: "" for c in index_db.RECORD_COLUMNS} | {
                "path": f"p{n}-{kind}",
                "store": "repo",
                "record_id": f"r{n}-{kind}",
                "type": kind,
                "confidence": 1.0,
                "boundary": None,
                "body_start": 0,
                "applies_json": json.dumps(entries),
            }
            conn.execute(
                f"INSERT INTO records ({columns}) VALUES ({', '.join('?' * len(values))})", list(values.values())
            )
    index_db.finish(conn)
    rows = [RecordRow._make(v) for v in conn.execute(f"SELECT rowid, {columns} FROM records")]
    expected = {r.rowid for r in rows if whole(r)}
    assert {rowid for (rowid,) in conn.execute("SELECT record FROM standing")} == expected
    conn.execute("UPDATE records SET type = 'note' WHERE record_id = 'r0-risk'")
    conn.execute("UPDATE records SET applies_json = '[]' WHERE record_id = 'r7-decision'")
    conn.execute("DELETE FROM records WHERE record_id = 'r1-risk'")
    conn.execute("UPDATE records SET boundary = 5.0, status = 'superseded' WHERE record_id = 'r0-decision'")
    assert conn.execute("SELECT boundary, status FROM standing WHERE record_id = 'r0-decision'").fetchall() == [
        (5.0, "superseded")
    ]
    rows = [RecordRow._make(v) for v in conn.execute(f"SELECT rowid, {columns} FROM records")]
    expected = {r.rowid for r in rows if whole(r)}
    assert {rowid for (rowid,) in conn.execute("SELECT record FROM standing")} == expected
    conn.close()


@pytest.mark.parametrize("budget", [12, 40, 150, 400])
def test_a_pack_reads_only_the_rules_it_can_name_and_is_the_same_pack(repo: Repo, budget: int) -> None:
    for n in range(200):
        add_record(repo, f"s{n}", f"rule-{n:03d}", type="convention", title=f"Rule {n}", body=f"Rule {n} holds.")
    add_record(repo, "hit", "release-note", type="decision", title="Release rule", body="Release on Fridays.")
    repo.commit("records")
    ws = Workspace.open()
    pack = build_context(ws, "release", budget=budget)
    norm, ordered, rules = candidates(ws, "release")
    assert len(rules) == 201
    assert pack == _pack("release", norm, budget, ordered, rules)
