"""Conformance fixtures: every valid file validates; every invalid one reports its code at its line."""

from __future__ import annotations

import tomllib

import pytest

from git_memzoi.profile.document import InvalidDocument, read_packet, read_record
from support import FIXTURES

CONFORMANCE = FIXTURES / "conformance"
CASES = tomllib.loads((CONFORMANCE / "cases.toml").read_text())


def _read(rel: str):  # type: ignore[no-untyped-def]
    raw = (CONFORMANCE / rel).read_bytes()
    reader = read_record if rel.startswith("records/") else read_packet
    return reader(raw, rel)


def test_there_are_enough_cases() -> None:
    assert len(CASES) >= 40
    assert sum(1 for c in CASES.values() if c["expect"] != "ok") >= 30
    on_disk = {p.relative_to(CONFORMANCE).as_posix() for p in CONFORMANCE.rglob("*.md")}
    assert on_disk == set(CASES), "every fixture file has an expectation and every expectation a file"


@pytest.mark.parametrize("rel", sorted(c for c in CASES if CASES[c]["expect"] == "ok"))
def test_valid_fixture(rel: str) -> None:
    _read(rel)


@pytest.mark.parametrize("rel", sorted(c for c in CASES if CASES[c]["expect"] != "ok"))
def test_invalid_fixture(rel: str) -> None:
    case = CASES[rel]
    with pytest.raises(InvalidDocument) as caught:
        _read(rel)
    problems = caught.value.problems
    codes = [p.code for p in problems]
    assert case["expect"] in codes, f"{rel}: expected {case['expect']}, got {[str(p) for p in problems]}"
    first = next(p for p in problems if p.code == case["expect"])
    assert first.path == rel
    if "line" in case:
        assert first.line == case["line"], str(first)
    assert str(first).startswith(f"{rel}:{first.line}: {case['expect']}: ")
    assert "\n" not in str(first) and "Traceback" not in str(first)
