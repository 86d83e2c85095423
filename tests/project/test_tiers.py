"""The tests mirror the package, and the fast tier (`scripts/test.sh --fast`) still reaches every part of it.

tests/README.md says where a test file goes; scripts/test.sh holds the marker expression of the fast tier.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from support import ROOT

TESTS = ROOT / "tests"
#: The folders of tests/ that are not packages of git_memzoi/ (tests/README.md says what each holds).
NOT_PACKAGES = {"bench", "clients", "e2e", "project", "support"}
#: The markers of the slow tiers, each left out of the fast tier.
SLOW_TIERS = {"slow", "crash", "bench", "clients"}


def packages() -> set[str]:
    return {p.parent.name for p in (ROOT / "git_memzoi").glob("*/__init__.py")}


def fast_tier() -> str:
    """The marker expression `scripts/test.sh --fast` passes to pytest."""
    found = re.search(r"^fast_tier='([^']+)'$", (ROOT / "scripts" / "test.sh").read_text(), re.MULTILINE)
    assert found, "scripts/test.sh defines no fast_tier='...'"
    return found.group(1)


def test_every_test_file_is_in_the_folder_of_a_package_or_a_named_tier() -> None:
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert folders - packages() - NOT_PACKAGES == set(), "tests/README.md: a folder per package of git_memzoi/"
    assert sorted(p.name for p in TESTS.glob("test_*.py")) == [], "test files go in tests/<package>/"
    assert sorted(p.name for p in (TESTS / "support").glob("test_*.py")) == [], "support/ holds no tests"


def test_tests_import_helpers_from_support_only() -> None:
    """Not from conftest, nor from another test file: those import only by the luck of pytest's sys.path."""
    wrong = re.compile(r"^\s*(from|import) (conftest|test_\w+)\b", re.MULTILINE)
    offenders = [str(p.relative_to(TESTS)) for p in TESTS.rglob("*.py") if wrong.search(p.read_text())]
    assert offenders == []


def test_test_file_names_are_unique_across_folders() -> None:
    names = [p.name for p in TESTS.rglob("test_*.py")]
    assert sorted({n for n in names if names.count(n) > 1}) == []


def test_the_slow_tiers_are_registered_and_the_fast_tier_leaves_each_out() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    registered = {line.split(":")[0] for line in config["markers"]}
    assert registered >= SLOW_TIERS
    assert "--strict-markers" in config["addopts"]
    assert set(re.findall(r"not (\w+)", fast_tier())) == SLOW_TIERS


@pytest.fixture(scope="module")
def fast_files() -> set[Path]:
    """The test files with at least one test in the fast tier, as pytest collects them."""
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-m", fast_tier()]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    ids = [line for line in result.stdout.splitlines() if "::" in line]
    return {ROOT / line.split("::")[0] for line in ids}


@pytest.mark.slow  # a collection of the whole suite in a process of its own
def test_the_fast_tier_tests_every_package(fast_files: set[Path]) -> None:
    reached = {path.relative_to(TESTS).parts[0] for path in fast_files}
    assert packages() - reached == set(), "packages the fast tier does not test"


@pytest.mark.slow
def test_the_fast_tier_leaves_the_slow_tiers_out(fast_files: set[Path]) -> None:
    assert not any(
        path.is_relative_to(TESTS / "bench") or path.is_relative_to(TESTS / "clients") for path in fast_files
    )
    assert TESTS / "lifecycle" / "test_apply.py" in fast_files  # and keeps the everyday ones
