"""Fixtures of the agents tests: a memory the hooks of every client answer from."""

from __future__ import annotations

import pytest

from support import Repo
from support.agents import add_migrations_risk
from support.recall import add_record


@pytest.fixture
def memory(repo: Repo) -> Repo:
    add_migrations_risk(repo, description="Never edit an applied migration; add a new one.")
    add_record(
        repo,
        "warnings/auth",
        "auth-validates-server-side",
        type="warning",
        title="Auth validates sessions server-side",
        applies_to=["src/auth/**"],
    )
    add_record(
        repo,
        "failed/full-load",
        "full-load-runs-out-of-memory",
        type="failed_attempt",
        title="Loading every order at once ran out of memory",
        applies_to=["notebooks/"],
    )
    add_record(
        repo,
        "risks/force-push",
        "never-force-push-main",
        type="risk",
        title="Never force-push to main",
        body="Force-pushing main rewrites everyone's history.",
    )
    add_record(
        repo,
        "decisions/react-query",
        "use-react-query",
        type="decision",
        title="Use React Query in apps/active",
        applies_to=["apps/active/**"],
    )
    repo.commit("memory")
    return repo
