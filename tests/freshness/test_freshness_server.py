"""The records a push or a pull request leaves unverified, reported by the server hook (a real bare repository, real
`git push`) and by the CI path (`hook check --annotate github`): named with the command that settles each, exit
unchanged by default, refused under `[freshness] require_review` (BASE's policy)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from support import git, run_cli
from support.hooks import Remote, make_remote
from support.recall import add_record

pytestmark = pytest.mark.slow

SESSION = "export function validateSession(s) {\n  return s.ok;\n}\n"
RECORD = ".memzoi/records/semantic/sessions.md"


def with_code_and_record(tmp_path: Path, config: str = "") -> Remote:
    remote = make_remote(tmp_path)
    remote.work.write("src/auth/session.ts", SESSION)
    remote.work.write("src/auth/util.ts", "export const helper = 1;\n")
    if config:
        with (remote.work.path / ".memzoi" / "config.toml").open("a") as handle:
            handle.write(config)
    add_record(remote.work, "semantic/sessions", "session-rule", type="decision", title="Sessions validated",
               body="Sessions are validated in `validateSession`.", applies_to=["src/auth/**"])  # fmt: skip
    git("add", "-A", cwd=remote.work.path)
    git("commit", "-q", "-m", "code and memory", cwd=remote.work.path)
    remote.accepted()
    return remote


def drop_sessions(remote: Remote) -> str:
    git("rm", "-q", "src/auth/session.ts", cwd=remote.work.path)
    git("commit", "-q", "-m", "drop sessions", cwd=remote.work.path)
    return git("rev-parse", "HEAD", cwd=remote.work.path).stdout.strip()


def test_pre_receive_reports_the_invalidated_record_and_accepts_the_push(tmp_path: Path) -> None:
    remote = with_code_and_record(tmp_path)
    old = git("rev-parse", "HEAD", cwd=remote.work.path).stdout.strip()
    new = drop_sessions(remote)
    remote.deliver(new)
    report = json.loads(
        run_cli("hook", "pre-receive", "--json", input=f"{old} {new} refs/heads/main\n", cwd=remote.bare).stdout
    )
    assert report["ok"] is True
    [item] = report["invalidated"]
    assert item["record_id"] == "session-rule" and item["suggest"] == "tombstone"
    assert item["evidence"] == [
        {"path": "src/auth/session.ts", "change": "identifier-gone", "to": None, "identifier": "validateSession"}
    ]

    pushed = remote.accepted()
    assert "remote: git memzoi: 1 record this range leaves unverified:" in pushed.stderr
    assert "remote:   session-rule: validateSession identifier-gone" in pushed.stderr
    assert "remote:     tombstone: git memzoi propose --action tombstone --target session-rule" in pushed.stderr


def test_a_push_that_only_edits_code_keeping_its_names_reports_nothing(tmp_path: Path) -> None:
    remote = with_code_and_record(tmp_path)
    remote.work.write("src/auth/session.ts", SESSION + "// validateSession stays\n")
    git("commit", "-q", "-am", "edit", cwd=remote.work.path)
    assert "unverified" not in remote.accepted().stderr


def test_require_review_on_the_server_refuses_until_the_push_settles_it(tmp_path: Path) -> None:
    remote = with_code_and_record(tmp_path, "\n[freshness]\nrequire_review = true\n")
    drop_sessions(remote)
    refused = remote.rejected("record-unverified: session-rule is unverified by this range (validateSession")
    assert "push rejected: 1 problem in what refs/heads/main would hold" in refused
    # the author runs the suggested command, approves and applies it, and pushes again
    base = git("rev-parse", "origin/main", cwd=remote.work.path).stdout.strip()
    found = json.loads(run_cli("hook", "check", f"{base}..HEAD", "--json", cwd=remote.work.path, expect=1).stdout)
    words = shlex.split(found["invalidated"][0]["command"])
    pid = json.loads(run_cli(*words[2:], "--json", cwd=remote.work.path).stdout)["id"]
    run_cli("approve", pid, cwd=remote.work.path)
    run_cli("apply", pid, "--commit", cwd=remote.work.path)
    assert "unverified" not in remote.accepted().stderr


def test_a_range_that_turns_require_review_on_is_judged_by_the_base(tmp_path: Path) -> None:
    remote = with_code_and_record(tmp_path)
    with (remote.work.path / ".memzoi" / "config.toml").open("a") as handle:
        handle.write("\n[freshness]\nrequire_review = true\n")
    git("rm", "-q", "src/auth/session.ts", cwd=remote.work.path)
    git("commit", "-q", "-am", "policy and deletion", cwd=remote.work.path)
    assert "session-rule: validateSession identifier-gone" in remote.accepted().stderr


def test_ci_annotates_an_invalidated_record_as_a_warning_by_default(tmp_path: Path) -> None:
    remote = with_code_and_record(tmp_path)
    base = git("rev-parse", "HEAD", cwd=remote.work.path).stdout.strip()
    drop_sessions(remote)
    done = run_cli("hook", "check", "--annotate", "github", f"{base}..HEAD", cwd=remote.work.path)
    [line] = done.stdout.splitlines()
    assert line.startswith("::warning title=git memzoi record-unverified::session-rule is unverified by this range")
    assert "settle it: git memzoi propose --action tombstone --target session-rule" in line
    assert "session-rule: validateSession identifier-gone" in done.stderr


def test_ci_annotates_it_as_an_error_and_fails_under_require_review(tmp_path: Path) -> None:
    remote = with_code_and_record(tmp_path, "\n[freshness]\nrequire_review = true\n")
    base = git("rev-parse", "HEAD", cwd=remote.work.path).stdout.strip()
    drop_sessions(remote)
    done = run_cli("hook", "check", "--annotate", "github", f"{base}..HEAD", cwd=remote.work.path, expect=1)
    [line] = done.stdout.splitlines()
    assert line.startswith(f"::error file={RECORD},line=1,title=git memzoi record-unverified::session-rule is")
    assert "git memzoi propose --action tombstone --target session-rule" in line


@pytest.mark.parametrize("review", [False, True])
def test_a_push_of_more_branches_than_are_judged_is_refused_only_under_require_review(
    tmp_path: Path, review: bool
) -> None:
    """Each branch judged costs two `git diff`s: a push of many (a mirror) judges the first FRESHNESS_BRANCHES; the
    others are let by, or refused under require_review (never let by unjudged)."""
    from git_memzoi.hooks.run import FRESHNESS_BRANCHES

    remote = with_code_and_record(tmp_path, "\n[freshness]\nrequire_review = true\n" if review else "")
    tips = []
    for number in range(FRESHNESS_BRANCHES + 2):
        remote.work.write(f"src/other/f{number}.ts", f"export const n = {number};\n")
        git("add", "-A", cwd=remote.work.path)
        git("commit", "-q", "-m", f"code {number}", cwd=remote.work.path)
        tips.append(git("rev-parse", "HEAD", cwd=remote.work.path).stdout.strip())
    remote.deliver(tips[-1])
    lines = "".join(f"{'0' * 40} {tip} refs/heads/b{number}\n" for number, tip in enumerate(tips))
    report = json.loads(run_cli("hook", "pre-receive", "--json", input=lines, cwd=remote.bare, expect=None).stdout)
    assert report["invalidated"] == []  # code-only branches leave the record as it was
    assert report["ok"] is not review
    if review:
        refused = {p["ref"] for p in report["problems"] if "more than" in p["message"]}
        assert refused == {f"refs/heads/b{n}" for n in range(FRESHNESS_BRANCHES, FRESHNESS_BRANCHES + 2)}
