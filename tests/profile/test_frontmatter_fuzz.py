"""Property tests: generated malformed frontmatter gets clear errors, never a crash; round trips keep extras."""

from __future__ import annotations

import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_memzoi.errors import FormatError
from git_memzoi.profile import frontmatter
from git_memzoi.profile.document import InvalidDocument, read_packet, read_record
from support import FIXTURES

RECORD = (FIXTURES / "conformance/records/valid/profile-example.md").read_text()
PACKET = (FIXTURES / "conformance/packets/valid/profile-example.md").read_text()

yaml_chars = st.sampled_from(
    list(":-[]{}&*!|>'\"%@`#,?\t\n ") + list(string.ascii_letters[:8]) + ["\u00e9", "\x00", "\r"]
)


def _check_clean(exc: InvalidDocument) -> None:
    assert exc.problems
    for problem in exc.problems:
        text = str(problem)
        assert "\n" not in text
        assert problem.line >= 1
        assert problem.code and " " not in problem.code


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(yaml_chars, max_size=200))
def test_random_frontmatter_only_clear_errors(noise: str) -> None:
    raw = f"---\n{noise}\n---\nbody\n".encode("utf-8", "surrogatepass")
    for reader in (read_record, read_packet):
        try:
            reader(raw, "x.md")
        except InvalidDocument as exc:
            _check_clean(exc)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, len(RECORD) - 1), st.integers(0, 40), st.text(yaml_chars, max_size=20))
def test_mutated_records_only_clear_errors(at: int, cut: int, insert: str) -> None:
    mutated = RECORD[:at] + insert + RECORD[at + cut :]
    try:
        read_record(mutated.encode(), "r.md")
    except InvalidDocument as exc:
        _check_clean(exc)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_only_clear_errors(data: bytes) -> None:
    try:
        read_packet(b"---\n" + data + b"\n---\nbody\n", "p.md")
    except InvalidDocument as exc:
        _check_clean(exc)


#: what a frontmatter string may hold: no control, line or paragraph separator, or format character
#: (bidirectional controls are format characters); test_extras_with_a_control_are_refused has those
_PRINTABLE = st.characters(blacklist_categories=("Cc", "Cs", "Cf", "Zl", "Zp"))


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(
        st.from_regex(r"x_[a-z]{1,8}", fullmatch=True),
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(-5, 5),
            st.text(_PRINTABLE, max_size=20),
            st.lists(st.text(_PRINTABLE, max_size=5), max_size=3),
        ),
        max_size=4,
    )
)
def test_unknown_extras_survive_round_trip(extras: dict) -> None:  # type: ignore[type-arg]
    doc = frontmatter.parse(RECORD.encode())
    data = dict(doc.data) | extras
    rendered = frontmatter.render(data, doc.body)
    again = read_record(rendered.encode(), "r.md")
    assert again.record.extras == extras
    assert again.doc.data == data
    assert frontmatter.render(again.doc.data, again.doc.body) == rendered


@settings(max_examples=100, deadline=None)
@given(
    st.text(max_size=8), st.sampled_from(["\x1b", "\x07", "\r", "\n", "\x9b", "\u2028", "\u202e"]), st.text(max_size=8)
)
def test_extras_with_a_control_are_refused(before: str, control: str, after: str) -> None:
    doc = frontmatter.parse(RECORD.encode())
    rendered = frontmatter.render(dict(doc.data) | {"x_note": before + control + after}, doc.body)
    try:
        read_record(rendered.encode(), "r.md")
    except InvalidDocument as exc:
        assert any(p.code == "control-character" and "x_note:" in p.message for p in exc.problems)
    else:
        raise AssertionError("a control character in an extra field was accepted")


def test_billion_laughs_is_refused_quickly() -> None:
    raw = (FIXTURES / "conformance/records/invalid/billion-laughs.md").read_bytes()
    try:
        read_record(raw, "b.md")
    except InvalidDocument as exc:
        assert exc.problems[0].code == "yaml-alias"
    else:
        raise AssertionError("billion laughs accepted")


def test_size_limits() -> None:
    big = "---\n" + "a: " + "x" * (frontmatter.MAX_FRONTMATTER_BYTES + 10) + "\n---\nbody\n"
    try:
        frontmatter.parse(big.encode())
    except FormatError as exc:
        assert exc.code == "frontmatter-too-large"
    huge = RECORD + "x" * frontmatter.MAX_FILE_BYTES
    try:
        frontmatter.parse(huge.encode())
    except FormatError as exc:
        assert exc.code == "file-too-large"


def test_status_line_rewrite_changes_one_line() -> None:
    out = frontmatter.set_top_level_scalar(RECORD, "status", "superseded")
    diff = [(a, b) for a, b in zip(RECORD.splitlines(), out.splitlines(), strict=True) if a != b]
    assert diff == [("status: active", "status: superseded")]
    assert read_record(out.encode(), "r.md").record.status == "superseded"
