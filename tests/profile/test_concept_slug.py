"""concept_id.slug: the ASCII fast path gives what NFKD folding gives, and non-ASCII text still folds."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from git_memzoi.profile.concept_id import slug


def _fullwidth(text: str) -> str:
    """ASCII letters as their fullwidth forms (U+FF21...), which NFKD folds back."""
    return "".join(chr(ord(c) + 0xFEE0) if c.isalpha() else c for c in text)


def _folded(text: str, max_length: int = 80) -> str:
    """The slug as it is defined: NFKD, ASCII only, lowercase words joined by hyphens within max_length."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    out = ""
    for word in "".join(c if c.isalnum() else " " for c in ascii_text.lower()).split():
        candidate = f"{out}-{word}" if out else word
        if len(candidate) > max_length:
            break
        out = candidate
    return out if out and out not in ("index", "log") else f"memory-{out}" if out else "memory"


@pytest.mark.parametrize(
    "text",
    [
        "pkg00: Rule 0-12",
        "Café au lait — crème brûlée",
        _fullwidth("Fullwidth ABC"),
        "ﬁle ligature",
        "index",
        "Log",
        "!!!",
        "",
        "Straße",
        "a" * 90 + " tail",
        "Build, test & release: `make test`",
    ],
)
def test_slug_matches_nfkd_folding(text: str) -> None:
    assert slug(text) == _folded(text)
    assert slug(text, max_length=40) == _folded(text, 40)


def test_slug_folds_accents_and_fullwidth_letters() -> None:
    assert slug("Café crème") == "cafe-creme"
    assert slug(_fullwidth("Full Width")) == "full-width"


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(max_codepoint=0x7F), max_size=120), st.sampled_from([10, 40, 80]))
def test_an_ascii_slug_is_its_runs_of_letters_and_digits(text: str, max_length: int) -> None:
    # every ASCII character, punctuation, controls and each kind of space among them
    assert slug(text, max_length=max_length) == _folded(text, max_length)
