"""When HEAD moves, the first read judges only the records the move may change; every verdict is the one a
judging pass of every record gives (delete, rename of a file and a folder, a name removed or kept, a scope
emptied, a rebase, a merge, HEAD moved back and to another branch)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

from support import Repo, git, memzoi_exe
from support.freshness import commit
from support.recall import add_record

SESSION = "export function validateSession(s) {\n  return s.ok;\n}\n"


def verdicts(repo: Repo) -> dict[str, dict[str, Any]]:
    done = subprocess.run(
        [memzoi_exe(), "search", "memory", "--json", "--limit", "100"],
        cwd=repo.path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return {hit["record_id"]: hit["freshness"] for hit in json.loads(done.stdout)["hits"]}


def kept_db() -> Path:
    [db] = list(Path(os.environ["MEMZOI_HOME"]).rglob("freshness.db"))
    return db


def incremental_equals_cold(repo: Repo) -> dict[str, dict[str, Any]]:
    """The verdicts after HEAD moved, read with the previous HEAD's verdicts kept, then judged from scratch."""
    kept = verdicts(repo)
    kept_db().unlink()
    cold = verdicts(repo)
    assert kept == cold
    return cold


def memory(repo: Repo, rid: str, body: str, applies_to: list[str] | None = None) -> None:
    add_record(repo, f"semantic/{rid}", rid, type="decision", title=f"Memory {rid}", body=body, applies_to=applies_to)


def base(repo: Repo) -> None:
    repo.write("src/auth/session.ts", SESSION)
    repo.write("src/auth/util.ts", "export const helper = 1;\n")
    repo.write("src/legacy/old.ts", "export const legacyThing = 1;\n")
    repo.write("lib/core.py", "def parse_rows(x):\n    return x\n\ndef keep_me(x):\n    return x\n")
    memory(repo, "file-rule", "Read `src/auth/session.ts` first.")
    memory(repo, "util-rule", "Helpers live in `src/auth/util.ts`.")
    memory(repo, "scope-rule", "Sessions are validated in `validateSession`.", ["src/auth/**"])
    memory(repo, "legacy-rule", "Frozen.", ["src/legacy/**"])
    memory(repo, "name-rule", "Call `parse_rows()` first.")
    memory(repo, "kept-rule", "Call `keep_me` last.")
    memory(repo, "plain-rule", "Keep sessions short.")
    commit(repo, "code and memory")
    verdicts(repo)  # judged once at this HEAD: what the next reads start from


def test_each_change_kind_judged_on_the_move_equals_a_whole_pass(repo: Repo) -> None:
    base(repo)
    git("mv", "src/auth/util.ts", "src/auth/helpers.ts", cwd=repo.path)
    commit(repo, "rename a file")
    assert incremental_equals_cold(repo)["util-rule"]["evidence"][0]["change"] == "renamed"
    repo.write("lib/core.py", "def parse_lines(x):\n    return x\n\ndef keep_me(x):\n    return x + 1\n")
    commit(repo, "remove a name, keep one")
    got = incremental_equals_cold(repo)
    assert got["name-rule"]["state"] == "unverified" and got["kept-rule"]["state"] == "current"
    (repo.path / "packages").mkdir()
    git("mv", "src/auth", "packages/auth", cwd=repo.path)
    commit(repo, "move a folder")
    got = incremental_equals_cold(repo)
    assert got["scope-rule"]["evidence"][0] == {"path": "src/auth", "change": "renamed", "to": "packages/auth",
                                                "identifier": None}  # fmt: skip
    git("rm", "-q", "-r", "src/legacy", cwd=repo.path)
    commit(repo, "empty a scope")
    assert incremental_equals_cold(repo)["legacy-rule"]["evidence"][0]["change"] == "scope-empty"
    git("rm", "-q", "packages/auth/session.ts", cwd=repo.path)
    commit(repo, "delete a file")
    assert incremental_equals_cold(repo)["file-rule"]["evidence"][0]["change"] == "deleted"
    repo.write("packages/auth/session2.ts", SESSION)  # a file like the deleted one: git may pair them now
    commit(repo, "add a file")
    incremental_equals_cold(repo)
    memory(repo, "late-rule", "Read `packages/auth/session2.ts`.")
    commit(repo, "a record added")
    assert incremental_equals_cold(repo)["late-rule"]["state"] == "current"
    git("reset", "-q", "--hard", "HEAD~4", cwd=repo.path)
    incremental_equals_cold(repo)  # HEAD moved back


def test_a_merge_and_a_rebase_between_record_and_change(repo: Repo) -> None:
    base(repo)
    git("checkout", "-q", "-b", "memory", cwd=repo.path)
    memory(repo, "branch-rule", "Use `lib/core.py` for `parse_rows`.")
    commit(repo, "record on a branch")
    verdicts(repo)
    git("checkout", "-q", "main", cwd=repo.path)
    incremental_equals_cold(repo)  # to another branch
    git("rm", "-q", "lib/core.py", cwd=repo.path)
    commit(repo, "delete on main")
    incremental_equals_cold(repo)
    git("merge", "-q", "--no-edit", "memory", cwd=repo.path)
    assert incremental_equals_cold(repo)["branch-rule"]["state"] == "unverified"
    git("checkout", "-q", "memory", cwd=repo.path)
    verdicts(repo)
    git("rebase", "-q", "main~1", cwd=repo.path)
    incremental_equals_cold(repo)
    git("rebase", "-q", "main", cwd=repo.path)
    incremental_equals_cold(repo)


def test_a_move_that_touches_no_citation_keeps_every_verdict(repo: Repo) -> None:
    """The kept verdicts carry over: a row no judging pass would write survives a move that changes nothing
    any record cites (a whole pass would have judged it again)."""
    base(repo)
    with sqlite3.connect(kept_db()) as conn:
        conn.execute("UPDATE verdicts SET state = 'unverified', evidence = '[]' WHERE path LIKE '%kept-rule%'")
    conn.close()
    repo.write("lib/other.py", "x = 1\n")
    repo.write("lib/core.py", "def parse_rows(x):\n    return x\n\ndef keep_me(x):\n    return x\n# reviewed\n")
    commit(repo, "unrelated")
    got = verdicts(repo)
    assert got["kept-rule"]["state"] == "unverified"  # carried over, not judged again
    assert got["name-rule"]["state"] == "current"
    repo.write("lib/core.py", "def parse_rows(x):\n    return x\n\ndef keep_me(y):\n    return y\n")
    commit(repo, "a line naming keep_me changed")
    assert verdicts(repo)["kept-rule"]["state"] == "current"  # judged again: it cites a name on that line


def test_a_read_with_nothing_kept_judges_what_it_shows(repo: Repo) -> None:
    """No verdicts kept (a fresh clone): a read judges the records it shows, not every record, and keeps them."""
    base(repo)
    git("rm", "-q", "src/auth/session.ts", cwd=repo.path)
    commit(repo, "delete")
    kept_db().unlink()
    done = subprocess.run(
        [memzoi_exe(), "search", "parse_rows", "--json"], cwd=repo.path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    shown = {hit["record_id"] for hit in json.loads(done.stdout)["hits"]}
    assert "name-rule" in shown and "file-rule" not in shown
    with sqlite3.connect(kept_db()) as conn:
        judged = {path for (path,) in conn.execute("SELECT path FROM verdicts")}
    conn.close()
    assert any("name-rule" in path for path in judged) and not any("file-rule" in path for path in judged)
    got = verdicts(repo)  # the rest judged as they are shown
    assert got["file-rule"]["state"] == "unverified"
    kept_db().unlink()
    assert verdicts(repo) == got
