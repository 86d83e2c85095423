"""The fixture the MCP tests share: a repository with records to recall."""

from __future__ import annotations

import shutil

import pytest

from support import Repo, interop_dir
from support.export import record_text, write_record
from support.mcp import DEPLOY_RISK, MIGRATION_RISK


@pytest.fixture
def memory_repo(repo: Repo) -> Repo:
    """The interop records plus risk and warning records with applies_to, committed."""
    for source in sorted((interop_dir() / ".memzoi" / "records").glob("*.md")):
        shutil.copyfile(source, repo.path / ".memzoi" / "records" / source.name)
    write_record(
        repo,
        "risks/migrations",
        record_text(
            MIGRATION_RISK,
            type="risk",
            title="Migrations lock the users table",
            body="Database migrations under db/migrations take a lock on the users table; run them off-peak.",
            applies_to=("db/migrations/**",),
        ),
    )
    write_record(
        repo,
        "risks/deploy",
        record_text(
            DEPLOY_RISK,
            type="risk",
            title="Deploying on Friday breaks the weekend on-call",
            body="Running make deploy on a Friday has broken production twice; deploy Monday to Thursday.",
            applies_to=("Makefile", "deploy/**"),
        ),
    )
    write_record(
        repo,
        "warnings/flaky",
        record_text(
            "flaky-e2e-warning",
            type="warning",
            title="End-to-end tests are flaky under load",
            body="The e2e suite times out when run in parallel; run it with one worker.",
            applies_to=("tests/e2e/**",),
        ),
    )
    repo.commit("memory")
    return repo
