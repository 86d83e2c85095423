"""Property test: the control-character searches find what their character classes find, in long texts too."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from git_memzoi.profile import oneline

#: the class a multi-line text may not hold, as the profile states it
_TEXT_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
#: the class a one-line text may not hold
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")

pieces = st.sampled_from(["a", " ", "\n", "\t", "é", "\u2028", "中", "\x00", "\x1b", "\x7f", "\x85", "\x9f", "\x0b"])
texts = st.builds(
    lambda head, filler, tail, size: head + filler * size + tail,
    st.text(pieces, max_size=5),
    st.sampled_from(["x", "é", "中", "line\n"]),
    st.text(pieces, max_size=5),
    st.sampled_from([0, 10, 600, 2000]),
)


@settings(max_examples=300, deadline=None)
@given(texts)
def test_first_text_control_is_the_first_match_of_its_class(text: str) -> None:
    found = _TEXT_CONTROL.search(text)
    assert oneline.first_text_control(text) == ((found.start(), found.group(0)) if found else None)


@settings(max_examples=300, deadline=None)
@given(texts)
def test_first_control_is_the_first_match_of_its_class(text: str) -> None:
    found = _CONTROL.search(text)
    assert oneline.first_control(text) == (found.group(0) if found else None)


def test_a_long_one_line_text_with_one_control_character_at_its_end_is_refused() -> None:
    for filler in ("x", "é", "中"):
        assert oneline.first_control(filler * 5000 + "\x1b") == "\x1b"
        assert oneline.first_control(filler * 5000 + "\t") == "\t"
        assert oneline.first_control(filler * 5000 + "\u2028") == "\u2028"
        assert oneline.first_control(filler * 5000) is None


def test_a_long_text_with_one_control_character_at_its_end_is_refused() -> None:
    for filler in ("x", "é", "中"):
        text = filler * 5000 + "\x1b"
        assert oneline.first_text_control(text) == (5000, "\x1b")
        assert oneline.first_text_control(filler * 5000 + "\t\n") is None
