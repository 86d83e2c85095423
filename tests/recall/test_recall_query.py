"""The shared query pipeline: stopwords and filler dropped, synonyms from the vocabulary and config.toml, stems."""

from __future__ import annotations

import json
import subprocess

from git_memzoi.recall import query
from support import Repo, memzoi_exe, run_cli
from support.agents import event
from support.recall import add_record


def test_terms_drop_stopwords_and_filler_and_group_synonyms() -> None:
    assert query.terms("how do we add the db migration?") == [
        '("db" OR "database" OR "databases")',
        '("migration" OR "migrations" OR "schema")',
    ]
    assert query.terms("thanks, please just do it") == []
    assert query.terms('auth* "OR" NEAR(xy)') == ['"auth"*', '"near"', '"xy"']


def test_config_groups_extend_the_vocabulary() -> None:
    table = query.synonyms([["pg", "postgres"], ["db", "datastore"]])
    assert table["pg"] == ("pg", "postgres") and "datastore" in table["db"] and "database" in table["db"]


def test_search_and_context_find_records_by_synonym_stem_and_tag(repo: Repo) -> None:
    add_record(
        repo,
        "ops/k8s",
        "k8s-deploys",
        type="decision",
        title="Deploy through Argo CD",
        body="Kubernetes manifests sync from main.",
    )
    add_record(
        repo,
        "ops/pg",
        "pg-version",
        type="fact",
        title="Production runs version 15",
        body="The main store.",
        tags=["postgres"],
    )
    repo.commit("records")
    hits = run_cli("search", "k8s", "--json").json()["hits"]
    assert [h["record_id"] for h in hits] == ["k8s-deploys"]
    stemmed = run_cli("search", "manifest syncing", "--json").json()["hits"]
    assert [h["record_id"] for h in stemmed] == ["k8s-deploys"]
    assert run_cli("search", "pg", "--json").json()["hits"] == []
    repo.write(".memzoi/config.toml", '[recall]\nsynonyms = [["pg", "postgres"]]\n')
    assert [h["record_id"] for h in run_cli("search", "pg", "--json").json()["hits"]] == ["pg-version"]
    pack = run_cli("context", "--task", "which pg version runs in production?", "--json").json()
    assert pack["items"][0]["record_id"] == "pg-version"


def test_identifiers_split_into_words_at_index_and_query_time(repo: Repo) -> None:
    add_record(
        repo,
        "auth/validate",
        "validate-on-server",
        type="decision",
        title="Sessions are checked on the server",
        body="Every request goes through `validateSession` before the handler runs.",
    )
    add_record(
        repo,
        "web/keys",
        "query-keys-factory",
        type="convention",
        title="Cache keys come from one factory",
        body="Build every cache key with the helpers; never write a key array by hand.",
    )
    repo.commit("records")
    # the record's CamelCase identifier is found by its words, and the query's by the record's words
    assert [h["record_id"] for h in run_cli("search", "validate session", "--json").json()["hits"]] == [
        "validate-on-server"
    ]
    found = run_cli("search", "cacheKey helpers", "--json").json()["hits"]
    assert [h["record_id"] for h in found] == ["query-keys-factory"]
    assert query.terms("HTTPServer iOS", query.synonyms(concepts=False)) == [
        '("httpserver" OR ("http" AND "server"))',
        '"ios"',
    ]


def test_concepts_find_a_record_that_shares_no_word_with_the_task_but_rank_below_word_matches(repo: Repo) -> None:
    add_record(
        repo,
        "deps/rule",
        "dependency-review",
        type="constraint",
        title="Every new dependency gets a review",
        body="Open an ADR before adding one.",
    )
    add_record(
        repo,
        "deps/library-note",
        "library-list",
        type="note",
        title="Third-party library list",
        body="The vendored library versions.",
    )
    repo.commit("records")
    pack = run_cli("context", "--task", "may I bring in a third-party library?", "--json").json()
    named = [i["record_id"] for i in pack["items"]] + [i["record_id"] for i in pack["listed"]]
    # "library" is a dependency to the concept vocabulary; the record naming the task's own words ranks first
    assert named[:2] == ["library-list", "dependency-review"]
    assert query.synonyms()["crash"][:1] == ("crash",) and "panic" in query.synonyms()["crash"]
    assert "customer" in query.synonyms()["tenant"] and "customer" not in query.synonyms(concepts=False).get(
        "tenant", ()
    )


def _add_enum_removal(repo: Repo, tags: list[str]) -> None:
    """The best match of the enum tasks below: a note about removing an enum symbol, with `tags`."""
    add_record(
        repo,
        "avro/enum",
        "enum-symbol-removal",
        type="note",
        title="Removing an enum symbol broke a consumer",
        body="The geofence consumer crash-looped on the unknown symbol.",
        tags=tags,
    )


def test_a_record_tagged_as_the_best_match_is_named_though_it_shares_no_word_with_the_task(repo: Repo) -> None:
    tags = ["avro", "compatibility"]
    _add_enum_removal(repo, tags)
    add_record(
        repo,
        "avro/transitive",
        "registry-full-transitive",
        type="constraint",
        title="Registry subjects are FULL_TRANSITIVE",
        body="New fields need defaults; no renames.",
        tags=tags,
    )
    add_record(
        repo,
        "other/tags",
        "unrelated-tagging",
        type="note",
        title="Release tags are signed",
        body="Every release tag is signed by CI.",
        tags=["release"],
    )
    repo.commit("records")
    task = "can I append a value to the enum's symbol list?"
    pack = run_cli("context", "--task", task, "--json").json()
    named = [i["record_id"] for i in pack["items"]] + [i["record_id"] for i in pack["listed"]]
    # the constraint holds none of the task's words: it comes as the best match's neighbour, after it
    assert named == ["enum-symbol-removal", "registry-full-transitive"]
    item = next(i for i in pack["items"] + pack["listed"] if i["record_id"] == "registry-full-transitive")
    assert item["type"] == "constraint"
    # the UserPromptSubmit hook, as Claude Code runs it, names it too
    answer = subprocess.run(
        [memzoi_exe(), "agent", "hook", "claude"],
        input=event("userpromptsubmit", repo.path, prompt=task),
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert answer.returncode == 0, answer.stderr
    context = json.loads(answer.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "(registry-full-transitive)" in context and "unrelated-tagging" not in context


def test_a_tag_most_records_carry_brings_in_no_neighbour(repo: Repo) -> None:
    """Imported records all carry `imported` and the kind of file they came from: such a tag names where records
    came from, not a neighbourhood, and raises none of them beside the best match."""
    provenance = ["imported", "claude-md"]
    _add_enum_removal(repo, provenance)
    for number in range(8):
        add_record(
            repo,
            f"other/n{number}",
            f"unrelated-{number}",
            type="note",
            title=f"Deploy window {number} is on Tuesdays",
            body="Ask the release captain first.",
            tags=provenance,
        )
    repo.commit("records")
    pack = run_cli("context", "--task", "can I append a value to the enum's symbol list?", "--json").json()
    named = [i["record_id"] for i in pack["items"]] + [i["record_id"] for i in pack["listed"]]
    assert named == ["enum-symbol-removal"]
