"""`hook check BASE..TIP` names the records the range leaves unverified, with the proposal that settles each."""

from __future__ import annotations

import json
import shlex
from typing import Any

from support import Repo, git
from support.freshness import commit, memzoi
from support.recall import add_record

SESSION = "export function validateSession(s) {\n  return s.ok;\n}\n"


def base_with_record(repo: Repo, config: str = "") -> str:
    repo.write("src/auth/session.ts", SESSION)
    repo.write("src/auth/util.ts", "export const helper = 1;\n")
    repo.write("docs/readme.txt", "notes\n")
    if config:
        with (repo.path / ".memzoi" / "config.toml").open("a") as handle:
            handle.write(config)
    add_record(repo, "semantic/sessions", "session-rule", type="decision", title="Sessions validated",
               body="Sessions are validated in `validateSession`.", applies_to=["src/auth/**"])  # fmt: skip
    return commit(repo, "code and memory")


def check(repo: Repo, base: str, expect: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(memzoi(repo, "hook", "check", f"{base}..HEAD", "--json", expect=expect).stdout)
    return out


def test_an_unrelated_change_and_a_kept_identifier_invalidate_nothing(repo: Repo) -> None:
    base = base_with_record(repo)
    repo.write("docs/readme.txt", "other notes\n")
    repo.write("src/auth/session.ts", SESSION + "// validateSession stays\n")
    commit(repo, "edits")
    assert check(repo, base)["invalidated"] == []


def test_a_removed_identifier_is_reported_with_a_tombstone_and_no_exit_code(repo: Repo) -> None:
    base = base_with_record(repo)
    repo.write("src/auth/session.ts", SESSION.replace("validateSession", "checkSession"))
    commit(repo, "rename the function")
    report = check(repo, base)
    assert report["ok"] is True
    [item] = report["invalidated"]
    assert item["record_id"] == "session-rule" and item["suggest"] == "tombstone"
    assert item["evidence"] == [
        {"path": "src/auth/session.ts", "change": "identifier-gone", "to": None, "identifier": "validateSession"}
    ]
    assert shlex.split(item["command"])[:6] == ["git", "memzoi", "propose", "--action", "tombstone", "--target"]
    text = memzoi(repo, "hook", "check", f"{base}..HEAD").stderr
    assert "1 record this range leaves unverified" in text and "session-rule" in text


def test_a_moved_folder_suggests_a_supersede_that_settles_it(repo: Repo) -> None:
    base = base_with_record(repo)
    (repo.path / "packages").mkdir()
    git("mv", "src/auth", "packages/auth", cwd=repo.path)
    commit(repo, "move auth")
    [item] = check(repo, base)["invalidated"]
    assert item["suggest"] == "supersede"
    assert item["evidence"] == [{"path": "src/auth", "change": "renamed", "to": "packages/auth", "identifier": None}]
    words = shlex.split(item["command"])
    assert words[words.index("--applies-to") + 1] == "packages/auth"
    proposed = memzoi(repo, *words[2:], "--json", input="Sessions are validated in `validateSession`.\n")
    pid = json.loads(proposed.stdout)["id"]
    memzoi(repo, "approve", pid)
    memzoi(repo, "apply", pid, "--commit")
    assert check(repo, base)["invalidated"] == []


def test_require_review_fails_the_check_until_the_record_is_settled(repo: Repo) -> None:
    base = base_with_record(repo, "\n[freshness]\nrequire_review = true\n")
    git("rm", "-q", "src/auth/session.ts", cwd=repo.path)
    commit(repo, "drop sessions")
    report = check(repo, base, expect=1)
    assert [p["code"] for p in report["problems"]] == ["record-unverified"]
    assert "session-rule" in report["problems"][0]["message"]
    [item] = report["invalidated"]
    words = shlex.split(item["command"])
    pid = json.loads(memzoi(repo, *words[2:], "--json").stdout)["id"]
    memzoi(repo, "approve", pid)
    memzoi(repo, "apply", pid, "--commit")
    report = check(repo, base)
    assert report["invalidated"] == [] and report["ok"] is True


def test_a_path_is_cited_whole_not_inside_a_longer_one() -> None:
    from git_memzoi.freshness.invalidated import _cites_path

    assert _cites_path("  - src/auth/**", "src/auth")
    assert _cites_path("Read `./src/auth/` first.", "src/auth")
    assert _cites_path("source_ref: src/auth#L3", "src/auth")
    assert not _cites_path("  - src/authz/**", "src/auth")
    assert not _cites_path("  - src/auth/token.ts", "src")
    assert not _cites_path("  - lib/src/auth", "src/auth")
