"""Property tests of the import parsers: any text gives items inside the file, or one located error."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_memzoi.errors import FormatError
from git_memzoi.importer import formats, identity, markdown
from git_memzoi.importer.sources import FORMATS, Loaded

LINES = st.sampled_from(
    [
        "# Title",
        "## Section",
        "### Sub",
        "```sh",
        "```",
        "~~~",
        "# comment in a fence",
        "---",
        "globs: src/**/*.ts, lib/*",
        "- item",
        "status: accepted",
        "Status: on hold",
        "Superseded by [2](0002-x.md)",
        "<!-- memzoi:start -->",
        "<!-- memzoi:end -->",
        "text with @docs/x.md",
        "",
        "plain text",
    ]
)
TEXT = st.one_of(st.lists(LINES, max_size=40).map("\n".join), st.text(max_size=400))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXT, fmt=st.sampled_from(FORMATS))
def test_items_stay_inside_the_file_or_fail_with_a_located_error(text: str, fmt: str) -> None:
    src = Loaded("dir/FILE.md", "dir/FILE.md", fmt, text, "0" * 40)
    try:
        found = formats.items(src)
    except FormatError as exc:
        assert exc.path == "dir/FILE.md" and exc.code.startswith("import-")
        assert exc.line is None or 1 <= exc.line <= text.count("\n") + 1
        return
    last_line = text.count("\n") + 1
    for item in found:
        assert 1 <= item.first <= item.last <= last_line, (item.first, item.last, last_line)
        assert item.type and item.lane and item.title is not None


@settings(max_examples=300, deadline=None)
@given(text=TEXT)
def test_headings_in_fences_are_never_headings(text: str) -> None:
    lines = text.split("\n")
    outside = markdown.unfenced(lines)
    for heading in markdown.headings(lines):
        assert outside[heading.line - 1]


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(st.sampled_from(["a", "b", " ", "\n", "\t", "\r", "\x1c", "\x0b", "é", "\u2003", "\x85"]), max_size=60)
)
def test_the_quick_collapse_is_split_and_join_where_it_is_used(text: str) -> None:
    # a plan collapses an item's body the quick way when its source has only spaces and newlines
    src = Loaded("AGENTS.md", "AGENTS.md", "agents-md", text, "0" * 40)
    item = formats.Item("agents-md", src, (), "t", text, 1, 1, "convention", "semantic", ())
    expected = " ".join(text.split())
    assert identity.collapsed(item) == expected
    if identity.plain_spaces(text):
        assert identity.collapsed(item, plain=True) == expected
    else:
        assert any(c in text for c in "\t\r\x1c\x0b") or not text.isascii()
