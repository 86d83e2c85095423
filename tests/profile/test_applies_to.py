"""applies_to entries in records, and a folder prefix with a trailing slash from propose to precheck."""

from __future__ import annotations

import pytest

from git_memzoi.profile.document import InvalidDocument, read_record
from support import FIXTURES, run_cli

RECORD = (FIXTURES / "conformance/records/valid/profile-example.md").read_text()


@pytest.mark.parametrize(
    "entry, ok",
    [
        ("db/migrations/", True),
        ("db/migrations/**", True),
        ("db//migrations", False),
        ("/abs/path", False),
        ("db/../etc", False),
        ("db/*.sql", False),
        ("db/**/x", False),
        ("/", False),
    ],
)
def test_record_applies_to_entries(entry: str, ok: bool) -> None:
    text = RECORD.replace("  - apps/active/**", f"  - {entry!r}")
    if ok:
        assert read_record(text.encode(), "r.md").record.applies_to == [entry]
    else:
        with pytest.raises(InvalidDocument):
            read_record(text.encode(), "r.md")


def test_trailing_slash_prefix_works_end_to_end(repo) -> None:
    run_cli(
        "propose",
        "--type",
        "risk",
        "--title",
        "Migrations lock tables",
        "--body",
        "Running migrations on orders locks the table for minutes.",
        "--applies-to",
        "db/migrations/",
        "--packet",
    )
    packet = next((repo.path / ".memzoi/proposals/pending").glob("*.md"))
    run_cli("apply", str(packet))
    warnings = run_cli("precheck", "--path", "db/migrations/0042_orders.sql", "--json").json()["warnings"]
    assert [w["title"] for w in warnings] == ["Migrations lock tables"]
    hits = run_cli("search", "migrations", "--path", "db/migrations/0042_orders.sql", "--json").json()["hits"]
    assert len(hits) == 1
    assert run_cli("precheck", "--path", "db/migrationsx/a.sql", "--json").json()["warnings"] == []
