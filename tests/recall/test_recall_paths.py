"""applies_to matching: exact paths, path prefixes, trailing /** scopes; no general globs."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memzoi.errors import UsageError
from git_memzoi.profile.applies import applies_to_base
from git_memzoi.recall.paths import ancestors, normalise


@pytest.mark.parametrize(
    "entry,path,expected",
    [
        ("src/auth/**", "src/auth", True),
        ("src/auth/**", "src/auth/session.ts", True),
        ("src/auth/**", "src/auth/deep/x.ts", True),
        ("src/auth/**", "src/authz/x.ts", False),
        ("src/auth/**", "src", False),
        ("src/auth", "src/auth/session.ts", True),
        ("src/auth", "src/auth", True),
        ("src/auth", "src/authz", False),
        ("src/auth/session.ts", "src/auth/session.ts", True),
        ("src/auth/session.ts", "src/auth/session.tsx", False),
        ("src/auth/session.ts", "src/auth", False),
        ("src/*.ts", "src/a.ts", False),  # no general globs: a star is just a character
        ("db/migrations/", "db/migrations/0042.sql", True),  # a folder prefix written with its slash
        ("db/migrations/", "db/migrations", True),
        ("db/migrations/", "db/migrationsx/a", False),
    ],
)
def test_covers(entry: str, path: str, expected: bool) -> None:
    """An entry covers a path when its base is one of the path's ancestors (how the index looks it up)."""
    assert (applies_to_base(entry) in ancestors(path)) is expected


def test_ancestors() -> None:
    assert ancestors("a/b/c") == ["a/b/c", "a/b", "a"]


def test_normalise(tmp_path: Path) -> None:
    assert normalise("./src//auth/") == "src/auth"
    assert normalise("src/auth/**") == "src/auth"
    assert normalise(str(tmp_path / "src" / "a.ts"), tmp_path) == "src/a.ts"
    for bad in ("", ".", "/", "../x", "a/../b"):
        with pytest.raises(UsageError):
            normalise(bad, tmp_path)
    with pytest.raises(UsageError, match="outside"):
        normalise("/elsewhere/x", tmp_path)
