"""Re-confirming: a supersede with no title and no body re-asserts its target, and its evidence is taken as of the
commit that applies it (real git, `git memzoi` run as a process)."""

from __future__ import annotations

import json
from typing import Any

from support import Repo, git
from support.freshness import commit, memzoi
from support.recall import add_record

SESSION = "export function validateSession(s) {\n  return s.ok;\n}\n"
BODY = "Sessions are validated in `validateSession` (`src/auth/session.ts`).\n"


def hits(repo: Repo) -> dict[str, dict[str, Any]]:
    found = json.loads(memzoi(repo, "search", "sessions validated", "--all", "--json").stdout)["hits"]
    return {hit["record_id"]: hit for hit in found}


def base_with_record(repo: Repo) -> str:
    repo.write("src/auth/session.ts", SESSION)
    with (repo.path / ".memzoi" / "config.toml").open("a") as handle:
        handle.write("\n[freshness]\nrequire_review = true\n")
    add_record(repo, "semantic/sessions", "session-rule", type="decision", title="Sessions validated",
               description="Where sessions are validated.", body=BODY, applies_to=["src/auth/**"],
               source="path", source_ref="src/auth/session.ts")  # fmt: skip
    return commit(repo, "code and memory")


def test_a_reconfirmed_record_reads_current_again_and_settles_the_range(repo: Repo) -> None:
    base = base_with_record(repo)
    repo.write("src/auth/session.ts", SESSION.replace("validateSession", "checkSession"))
    commit(repo, "rename the function")
    assert hits(repo)["session-rule"]["freshness"]["state"] == "unverified"
    refused = json.loads(memzoi(repo, "hook", "check", f"{base}..HEAD", "--json", expect=1).stdout)
    assert [p["code"] for p in refused["problems"]] == ["record-unverified"]

    # the reviewer read the code: the claim still holds (say, `validateSession` is the exported alias)
    proposed = memzoi(repo, "propose", "--action", "supersede", "--target", "session-rule",
                      "--reason", "re-confirmed: still holds after the rename", "--json")  # fmt: skip
    pid = json.loads(proposed.stdout)["id"]
    packet = memzoi(repo, "proposals", "show", pid, "--json").stdout
    assert "validateSession" in packet and "Sessions validated" in packet
    memzoi(repo, "approve", pid)
    memzoi(repo, "apply", pid, "--commit")
    head = git("rev-parse", "HEAD", cwd=repo.path).stdout.strip()

    found = hits(repo)
    [new_id] = [rid for rid, hit in found.items() if rid != "session-rule"]
    assert found["session-rule"]["status"] == "superseded"
    new = found[new_id]
    assert new["title"] == "Sessions validated" and new["status"] == "active"
    assert new["freshness"] == {"state": "current", "since": head, "evidence": []}
    shown = json.loads(memzoi(repo, "show", new_id, "--json").stdout)
    old = json.loads(memzoi(repo, "show", "session-rule", "--json").stdout)
    assert shown["body"].strip() == old["body"].strip() and "`validateSession`" in shown["body"]
    assert shown["description"] == old["description"] and shown["applies_to"] == ["src/auth/**"]
    assert "source_ref: src/auth/session.ts\n" in shown["document"]
    assert "supersedes: session-rule\n" in shown["document"]

    settled = json.loads(memzoi(repo, "hook", "check", f"{base}..HEAD", "--json").stdout)
    assert settled["ok"] is True and settled["invalidated"] == [] and settled["problems"] == []
    memzoi(repo, "validate")


def test_a_reconfirmed_record_goes_stale_again_when_the_code_moves_on(repo: Repo) -> None:
    base_with_record(repo)
    repo.write("src/auth/session.ts", SESSION + "export const other = 1;\n")
    commit(repo, "an edit that keeps the name")
    pid = json.loads(memzoi(repo, "propose", "--action", "supersede", "--target", "session-rule",
                            "--reason", "re-confirmed", "--json").stdout)["id"]  # fmt: skip
    memzoi(repo, "approve", pid)
    memzoi(repo, "apply", pid, "--commit")
    after = commit_rename(repo)
    [new_id] = [rid for rid in hits(repo) if rid != "session-rule"]
    fresh = hits(repo)[new_id]["freshness"]
    assert fresh["state"] == "unverified" and fresh["since"] != after
    assert [c["change"] for c in fresh["evidence"]] == ["identifier-gone"]


def commit_rename(repo: Repo) -> str:
    repo.write("src/auth/session.ts", SESSION.replace("validateSession", "checkSession"))
    return commit(repo, "rename the function")


def test_a_supersede_with_a_body_but_no_title_still_needs_a_title(repo: Repo) -> None:
    base_with_record(repo)
    done = memzoi(repo, "propose", "--action", "supersede", "--target", "session-rule", "--reason", "r",
                  "--body", "new text", expect=2)  # fmt: skip
    assert "--title is required" in done.stderr
