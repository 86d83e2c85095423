"""Freshness at read time: each change kind, through real git and `git memzoi` run as a process."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

from git_memzoi.freshness.evidence import extract
from support import Repo, git, memzoi_exe
from support.agents import client_event
from support.freshness import commit, memzoi
from support.recall import add_record


class _AnySha(str):
    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and len(other) == 40

    __hash__ = str.__hash__


ANY_SHA = _AnySha()
SESSION = "export function validateSession(s) {\n  return s.ok;\n}\n"


def fresh(repo: Repo, query: str = "sessions") -> dict[str, dict[str, Any]]:
    hits = json.loads(memzoi(repo, "search", query, "--json").stdout)["hits"]
    return {hit["record_id"]: hit["freshness"] for hit in hits}


def code_and_record(repo: Repo, body: str, applies_to: list[str] | None = None) -> str:
    """src/auth/{session,util}.ts and one record citing them; returns the commit that wrote the record."""
    repo.write("src/auth/session.ts", SESSION)
    repo.write("src/auth/util.ts", "export const helper = 1;\n")
    repo.write("src/legacy/old.ts", "export const legacyThing = 1;\n")
    commit(repo, "code")
    add_record(repo, "semantic/sessions", "session-rule", type="decision", title="Sessions validated", body=body,
               applies_to=applies_to)  # fmt: skip
    add_record(repo, "semantic/plain", "plain-rule", type="decision", title="Sessions stay short",
               body="Keep sessions short.")  # fmt: skip
    return commit(repo, "records")


CITES = "Sessions are validated in `validateSession` in `src/auth/session.ts`."


def test_evidence_is_derived_from_applies_to_source_ref_and_backticks() -> None:
    ev = extract(
        ["src/auth/**", "**"], "src/api/routes.py#L12", "Call `validateSession()` from `./src/x.ts`, not `true`."
    )
    assert ev.scopes == ("src/auth",)
    assert ev.paths == ("src/api/routes.py", "src/x.ts")
    assert ev.identifiers == ("validateSession",)
    assert extract([], "issue://12", "Keep sessions short.").empty


def test_a_record_without_citations_is_current_with_no_commit(repo: Repo) -> None:
    code_and_record(repo, CITES)
    assert fresh(repo)["plain-rule"] == {"state": "current", "since": None, "evidence": []}


def test_an_edit_that_keeps_the_identifier_stays_current(repo: Repo) -> None:
    since = code_and_record(repo, CITES)
    repo.write("src/auth/session.ts", SESSION.replace("s.ok", "s.ok && s.fresh") + "// more\n")
    commit(repo, "edit")
    assert fresh(repo)["session-rule"] == {"state": "current", "since": since, "evidence": []}


def test_a_deleted_file_makes_the_record_unverified(repo: Repo) -> None:
    since = code_and_record(repo, CITES)
    git("rm", "-q", "src/auth/session.ts", cwd=repo.path)
    commit(repo, "delete")
    got = fresh(repo)["session-rule"]
    assert got["state"] == "unverified" and got["since"] == since
    kinds = {(e["path"], e["change"], e["to"], e["identifier"]) for e in got["evidence"]}
    assert ("src/auth/session.ts", "deleted", None, None) in kinds
    assert ("src/auth/session.ts", "identifier-gone", None, "validateSession") in kinds


def test_a_renamed_file_names_where_it_went(repo: Repo) -> None:
    code_and_record(repo, CITES)
    git("mv", "src/auth/session.ts", "src/auth/sessions.ts", cwd=repo.path)
    commit(repo, "rename")
    got = fresh(repo)["session-rule"]
    assert got["state"] == "unverified"
    assert got["evidence"] == [
        {"path": "src/auth/session.ts", "change": "renamed", "to": "src/auth/sessions.ts", "identifier": None}
    ]


def test_a_moved_folder_renames_the_scope(repo: Repo) -> None:
    code_and_record(repo, "Sessions are validated in `validateSession`.", applies_to=["src/auth/**"])
    (repo.path / "packages").mkdir()
    git("mv", "src/auth", "packages/auth", cwd=repo.path)
    commit(repo, "move")
    got = fresh(repo)["session-rule"]
    assert got["state"] == "unverified"
    assert got["evidence"] == [{"path": "src/auth", "change": "renamed", "to": "packages/auth", "identifier": None}]


def test_a_removed_identifier_makes_the_record_unverified(repo: Repo) -> None:
    code_and_record(repo, "Sessions are validated in `validateSession`.", applies_to=["src/auth/**"])
    repo.write("src/auth/session.ts", SESSION.replace("validateSession", "checkSession"))
    commit(repo, "rename the function")
    got = fresh(repo)["session-rule"]
    assert got["state"] == "unverified"
    assert got["evidence"] == [
        {"path": "src/auth/session.ts", "change": "identifier-gone", "to": None, "identifier": "validateSession"}
    ]


def test_an_identifier_outside_the_scope_does_not_count(repo: Repo) -> None:
    code_and_record(repo, "Legacy code calls `legacyThing`.", applies_to=["src/auth/**"])
    # `legacyThing` lives in src/legacy, outside the record's scope: never evidence, so its removal changes nothing
    repo.write("src/legacy/old.ts", "export const other = 1;\n")
    commit(repo, "edit legacy")
    assert fresh(repo, "legacy")["session-rule"]["state"] == "current"


def test_an_emptied_scope_is_reported(repo: Repo) -> None:
    code_and_record(repo, "Old code stays frozen.", applies_to=["src/legacy/**"])
    git("rm", "-q", "-r", "src/legacy", cwd=repo.path)
    commit(repo, "drop legacy")
    got = fresh(repo, "frozen")["session-rule"]
    assert got["state"] == "unverified"
    assert got["evidence"] == [{"path": "src/legacy", "change": "scope-empty", "to": None, "identifier": None}]


def test_a_merge_between_record_and_change(repo: Repo) -> None:
    repo.write("src/auth/session.ts", SESSION)
    commit(repo, "code")
    git("checkout", "-q", "-b", "memory", cwd=repo.path)
    add_record(repo, "semantic/sessions", "session-rule", type="decision", title="Sessions validated", body=CITES)
    since = commit(repo, "record on a branch")
    git("checkout", "-q", "main", cwd=repo.path)
    git("rm", "-q", "src/auth/session.ts", cwd=repo.path)
    commit(repo, "delete on main")
    git("merge", "-q", "--no-edit", "memory", cwd=repo.path)
    got = fresh(repo)["session-rule"]
    assert got["state"] == "unverified" and got["since"] == since
    assert {"path": "src/auth/session.ts", "change": "deleted", "to": None, "identifier": None} in got["evidence"]


def test_an_uncommitted_record_is_current_until_committed(repo: Repo) -> None:
    code_and_record(repo, CITES)
    git("rm", "-q", "src/auth/session.ts", cwd=repo.path)
    commit(repo, "delete")
    assert fresh(repo)["session-rule"]["state"] == "unverified"
    add_record(repo, "semantic/sessions", "session-rule", type="decision", title="Sessions validated",
               body="Sessions are validated by the gateway now.")  # fmt: skip
    assert fresh(repo)["session-rule"] == {"state": "current", "since": None, "evidence": []}


def test_text_ranking_and_the_other_reads(repo: Repo) -> None:
    code_and_record(repo, CITES, applies_to=["src/auth/**"])
    git("rm", "-q", "src/auth/session.ts", cwd=repo.path)
    commit(repo, "delete")
    text = memzoi(repo, "search", "sessions").stdout
    assert "[unverified: src/auth/session.ts deleted" in text
    # equal relevance (no query words): the current record comes first
    listed = json.loads(memzoi(repo, "search", "", "--path", "src/auth/util.ts", "--json").stdout)["hits"]
    assert [h["record_id"] for h in listed] == ["session-rule"]
    pack = json.loads(memzoi(repo, "context", "--task", "validate sessions", "--path", "src/auth", "--json").stdout)
    item = {i["record_id"]: i for i in pack["items"]}["session-rule"]
    assert item["freshness"]["state"] == "unverified"
    assert "(unverified: src/auth/session.ts deleted" in pack["text"]


def test_precheck_and_the_agent_hook_say_unverified(repo: Repo) -> None:
    repo.write("src/auth/session.ts", SESSION)
    commit(repo, "code")
    add_record(repo, "risks/sessions", "session-risk", type="risk", title="Session checks are load-bearing",
               body="Never skip `validateSession`.", applies_to=["src/auth/**"])  # fmt: skip
    commit(repo, "risk")
    repo.write("src/auth/session.ts", "export const nothing = 1;\n")
    commit(repo, "drop the function")
    result = json.loads(memzoi(repo, "precheck", "--path", "src/auth/session.ts", "--json").stdout)
    warning = result["warnings"][0]
    assert warning["freshness"]["state"] == "unverified"
    assert warning["freshness"]["evidence"][0]["identifier"] == "validateSession"
    target = str(repo.path / "src/auth/session.ts")
    event = client_event("claude", "pretooluse-edit", repo.path, tool_input={"file_path": target})
    out = json.loads(memzoi(repo, "agent", "hook", "claude", input=event).stdout)
    said = json.dumps(out)
    assert "session-risk" in said and "unverified: validateSession identifier-gone" in said


def test_the_verdicts_are_kept_per_commit(repo: Repo, tmp_path: Path) -> None:
    code_and_record(repo, CITES)
    git("rm", "-q", "src/auth/session.ts", cwd=repo.path)
    commit(repo, "delete")
    assert fresh(repo)["session-rule"]["state"] == "unverified"
    # the second read answers from freshness.db: with git gone from PATH it still says unverified
    done = subprocess.run(
        [memzoi_exe(), "search", "sessions", "--json"],
        cwd=repo.path, capture_output=True, text=True, env={"PATH": "/nonexistent", **_keep_env()},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert {h["record_id"]: h["freshness"]["state"] for h in json.loads(done.stdout)["hits"]}["session-rule"] == (
        "unverified"
    )


def _keep_env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "PATH"}


def test_the_mcp_tools_carry_the_same_object(repo: Repo) -> None:
    from git_memzoi.mcp.tools import MemoryTools
    from git_memzoi.runtime.workspace import Workspace

    code_and_record(repo, CITES, applies_to=["src/auth/**"])
    git("rm", "-q", "src/auth/session.ts", cwd=repo.path)
    commit(repo, "delete")
    tools = MemoryTools(Workspace.open(repo.path))
    found = tools.search_memory("sessions")
    hit = {h["record_id"]: h for h in found.model.model_dump(mode="json")["hits"]}["session-rule"]
    assert hit["freshness"] == fresh(repo)["session-rule"] and hit["freshness"]["state"] == "unverified"
    assert "session-rule`, decision, semantic, repo, unverified]" in found.text
    warning_text = tools.precheck_path("src/auth/util.ts").text
    assert "unverified" not in warning_text  # a decision is no warning: precheck lists none


def test_a_damaged_freshness_db_is_judged_again(repo: Repo) -> None:
    code_and_record(repo, CITES)
    git("rm", "-q", "src/auth/session.ts", cwd=repo.path)
    commit(repo, "delete")
    assert fresh(repo)["session-rule"]["state"] == "unverified"
    [kept] = list(Path(os.environ["MEMZOI_HOME"]).rglob("freshness.db"))
    with sqlite3.connect(kept) as conn:
        conn.execute("UPDATE verdicts SET evidence = '{not json'")
    assert fresh(repo)["session-rule"] == {"state": "unverified", "since": ANY_SHA, "evidence": []}
    kept.write_bytes(b"not a database" * 100)  # the whole file: judged again
    assert fresh(repo)["session-rule"]["evidence"][0]["change"] == "deleted"


def test_maintenance_lists_the_unverified_records_and_writes_nothing(repo: Repo) -> None:
    code_and_record(repo, CITES)
    assert json.loads(memzoi(repo, "maintenance", "--json").stdout) == {"items": []}
    git("mv", "src/auth/session.ts", "src/auth/sessions.ts", cwd=repo.path)
    commit(repo, "rename")
    before = git("status", "--porcelain", cwd=repo.path).stdout
    found = json.loads(memzoi(repo, "maintenance", "--json").stdout)["items"]
    assert found == [
        {
            "kind": "unverified",
            "records": ["session-rule"],
            "reason": f"src/auth/session.ts renamed to src/auth/sessions.ts since {found[0]['reason'][-12:]}",
        }
    ]
    assert "unverified: session-rule: src/auth/session.ts renamed" in memzoi(repo, "maintenance").stdout
    assert git("status", "--porcelain", cwd=repo.path).stdout == before
