"""Secrets in any field are refused wherever a packet or record is written, and validate agrees with the hooks."""

from __future__ import annotations

import pytest

from git_memzoi.index import shared_db
from git_memzoi.runtime.workspace import Workspace
from support import Repo, git, run_cli
from support.lifecycle import PROPOSED_AT, at, packet, refused, write_packet

TOKEN = "ghp_" + "a1B2c3D4e5" * 4  # looks like a GitHub token
URL = "https://deploy:hunter2secret@git.example.com/repo.git"  # a password in a URL
BASE = (
    "propose",
    "--type",
    "decision",
    "--title",
    "Protected routes validate sessions",
    "--body",
    "Validate sessions server-side.",
)


@pytest.fixture
def ready(repo: Repo) -> Repo:
    shared_db.connect(Workspace.open(repo.path).layout.shared_db).close()
    at(PROPOSED_AT)
    return repo


@pytest.mark.parametrize(
    "option, value, field",
    [
        ("--source", f"doc {TOKEN}", "source"),
        ("--source-ref", URL, "source_ref"),
        ("--origin-key", f"issue:{TOKEN}", "origin"),
        ("--applies-to", f"src/{TOKEN}/**", "scope"),
        ("--proposed-by", URL, "proposal"),
        ("--reason", f"found {TOKEN}", "proposal"),
    ],
)
def test_propose_scans_every_field(ready: Repo, option: str, value: str, field: str) -> None:
    refused(ready, *BASE, option, value, "--packet", needles=(f": {field}: line ", "looks like"))
    assert run_cli("proposals", "--json").json()["proposals"] == []


def _edited_pending(repo: Repo) -> tuple[str, str]:
    """A clean pending packet file that a reviewer then edits to carry a token; its path and ID."""
    data = packet()
    rel = write_packet(repo, data)
    text = (repo.path / rel).read_text()
    (repo.path / rel).write_text(text.replace("src/auth/session.ts", f"src/auth/session.ts?token={TOKEN}"))
    return rel, data["id"]


def test_apply_scans_a_reviewer_edited_packet(ready: Repo) -> None:
    rel, _pid = _edited_pending(ready)
    refused(ready, "apply", rel, "--commit", needles=("secret", "GitHub token"))
    assert not list((ready.path / ".memzoi" / "records").rglob("*.md"))
    assert git("log", "--oneline", cwd=ready.path).stdout.count("\n") == 1


def test_reject_scans_the_resolved_packet_it_would_write(ready: Repo) -> None:
    rel, _pid = _edited_pending(ready)
    refused(ready, "reject", rel, "--reason", "not needed", needles=("secret", "GitHub token"))
    assert (ready.path / rel).exists()


def test_local_promote_scans_every_field(ready: Repo) -> None:
    rid = run_cli(
        "local",
        "add",
        "--title",
        "Deploy key",
        "--body",
        "Use the deploy remote.",
        "--source",
        "doc",
        "--source-ref",
        URL,
    ).stdout.strip()
    refused(
        ready,
        "local",
        "promote",
        rid,
        "--sensitivity",
        "repo-safe",
        "--packet",
        needles=("source_ref", "password in a URL"),
    )
    assert run_cli("proposals", "--json").json()["proposals"] == []


def test_validate_refuses_what_pre_receive_refuses(repo: Repo, tmp_path) -> None:
    from support.recall import record_text

    rel = ".memzoi/records/semantic/decisions/clone-it.md"
    repo.write(rel, record_text("clone-it", title="Clone it", source="doc", source_ref=URL))
    result = run_cli("validate", expect=1)
    assert f"{rel}:" in result.stdout and "secret: looks like a password in a URL" in result.stdout
    repo.commit("add a record with a password in a URL")
    result = run_cli("validate", "--rev", "HEAD", expect=1)
    assert "secret" in result.stdout

    remote = tmp_path / "remote.git"
    git("init", "--bare", "-q", str(remote), cwd=tmp_path)
    run_cli("hook", "install", cwd=remote)
    push = git("push", str(remote), "HEAD:refs/heads/main", cwd=repo.path, check=False)
    assert push.returncode != 0 and "password in a URL" in push.stderr


@pytest.mark.parametrize(
    "url",
    ["https://x-access-token:...@github.com/o/r", "https://u:<token>@h.example", "https://u:${GH_TOKEN}@h.example"],
)
def test_a_placeholder_password_in_a_url_is_not_a_secret(repo: Repo, url: str) -> None:
    """An instruction file's example URL whose password is a slot (cline's AGENTS.md names
    `https://x-access-token:...@github.com/...`) is imported, not refused; a real one still is."""
    repo.write("AGENTS.md", f"# Testing\n\nCI rewrites remotes to `{url}`; that is expected.\n")
    repo.commit("rules")
    run_cli("import", cwd=repo.path)
    repo.write("AGENTS.md", "# Testing\n\nCI rewrites remotes to `https://x-access-token:hunter2@github.com/o/r`.\n")
    repo.commit("rules")
    result = run_cli("import", cwd=repo.path, expect=1)
    assert "looks like a password in a URL" in result.stdout + result.stderr
