"""Hostile values in memory files: unconvertible scalars, crafted IDs, long fractions, literal bracket paths."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_memzoi.profile import retention as retention_rules
from git_memzoi.profile import timefmt
from git_memzoi.profile.document import InvalidDocument, read_packet, read_record
from support import FIXTURES, Repo, git, run_cli
from support.hooks import make_remote, record_path
from support.mcp import run_async, server_params, session

pytestmark = pytest.mark.slow

RECORD = (FIXTURES / "conformance/records/valid/profile-example.md").read_text()
PACKET = (FIXTURES / "conformance/packets/valid/profile-example.md").read_text()

#: Each value, placed as `source_ref: <value>` (line 18 of the example), used to crash every reader.
BAD_SCALARS = {
    "hex-without-digits": "0x_",
    "bool-tag": "!!bool maybe",
    "int-tag": "!!int abc",
    "huge-int": "9" * 4301,
}
OVERFLOW = "9999-12-31T23:59:59-23:59"


def with_source_ref(value: str, rid: str = "use-react-query-in-apps-active") -> str:
    return RECORD.replace("source_ref: issue://123", f"source_ref: {value}").replace(
        "use-react-query-in-apps-active", rid
    )


def bad_records() -> dict[str, tuple[str, int, str]]:
    """name -> (file text, line, code) for every crashing value of the family."""
    out = {name: (with_source_ref(value, f"bad-{name}"), 18, "yaml-value") for name, value in BAD_SCALARS.items()}
    out["utc-overflow"] = (
        RECORD.replace("timestamp: 2026-07-05T00:00:00Z", f"timestamp: {OVERFLOW}").replace(
            "use-react-query-in-apps-active", "bad-overflow"
        ),
        9,
        "invalid-timestamp",
    )
    return out


def _clean(exc: InvalidDocument, line: int | None = None, code: str | None = None) -> None:
    assert exc.problems
    for problem in exc.problems:
        assert "\n" not in str(problem) and problem.line >= 1 and " " not in problem.code
    if line is not None:
        assert (exc.problems[0].line, exc.problems[0].code) == (line, code), exc.problems


@pytest.mark.parametrize("name", sorted(bad_records()))
def test_each_unconvertible_value_is_a_located_problem(name: str) -> None:
    text, line, code = bad_records()[name]
    with pytest.raises(InvalidDocument) as caught:
        read_record(text.encode(), "r.md")
    _clean(caught.value, line, code)
    assert str(caught.value.problems[0]).startswith(f"r.md:{line}: {code}: ")


# The whole family: any YAML scalar (tagged or plain) in any field reads as a value or a located problem.
_TAGS = st.sampled_from(
    [
        "",
        "!!int ",
        "!!float ",
        "!!bool ",
        "!!null ",
        "!!str ",
        "!!timestamp ",
        "!!binary ",
        "!!set ",
        "!!seq ",
        "!!map ",
        "!!omap ",
        "!!pairs ",
        "!!merge ",
        "!!value ",
        "!foo ",
    ]
)
_NUMBERISH = st.one_of(
    st.from_regex(r"[-+]?(0x|0o|0b|0)?[0-9a-fA-F_]{0,12}(\.[0-9_]*)?([eE][-+]?[0-9]{1,4})?", fullmatch=True),
    st.from_regex(r"[-+]?[0-9][0-9_]*(:[0-5]?[0-9]){1,3}(\.[0-9_]*)?", fullmatch=True),
    st.integers(4290, 4400).map(lambda n: "1" * n),
    st.sampled_from(
        [
            "y",
            "Yes",
            "off",
            "~",
            "null",
            ".inf",
            "-.Inf",
            ".NaN",
            "0x_",
            "0b",
            "0o",
            "_",
            "1e",
            "maybe",
            "1_000",
            "0x_1",
            "-0b_",
            "190:20:30",
            "0:0",
            "+",
            "-",
            ".",
        ]
    ),
    st.text(st.sampled_from(list("0123456789+-._:xobeEaf ")), min_size=1, max_size=12),
)
_FIELDS = st.sampled_from(
    [
        ("source_ref: issue://123", "source_ref: {}"),
        ("confidence: 1.0", "confidence: {}"),
        ("  - apps/active/**", "  - {}"),
        ("scope: repo", "scope: {}"),
        ("timestamp: 2026-07-05T00:00:00Z", "timestamp: {}"),
        ("  explicit_expires_at: 2027-01-01T00:00:00Z", "  explicit_expires_at: {}"),
        ("source: human", "source: human\nx_extra: {}"),
    ]
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_TAGS, _NUMBERISH, _FIELDS)
def test_any_scalar_in_any_field_is_a_value_or_a_located_problem(tag: str, value: str, field: tuple[str, str]) -> None:
    old, new = field
    text = RECORD.replace(old, new.format(tag + value))
    try:
        read_record(text.encode(), "r.md")
    except InvalidDocument as exc:
        _clean(exc)
    packet = PACKET.replace("tags:", f"x_extra: {tag}{value}\ntags:", 1)
    try:
        read_packet(packet.encode(), "p.md")
    except InvalidDocument as exc:
        _clean(exc)


_OFFSETS = st.one_of(
    st.sampled_from(["Z", "z"]),
    st.tuples(st.sampled_from("+-"), st.integers(0, 23), st.integers(0, 59)).map(
        lambda t: f"{t[0]}{t[1]:02d}:{t[2]:02d}"
    ),
)


def _timestamp(year: int, month: int, day: int, hour: int, second: int, fraction: str, offset: str) -> str:
    return f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:00:{second:02d}{'.' + fraction if fraction else ''}{offset}"


#: RFC 3339-shaped text from the whole range of each part: years 0 to 9999, leap second 60, any fraction
_TIMESTAMPS = st.builds(
    _timestamp,
    st.integers(0, 9999),
    st.integers(1, 12),
    st.integers(1, 31),
    st.integers(0, 23),
    st.integers(0, 60),
    st.text(st.sampled_from("0123456789"), max_size=30),
    _OFFSETS,
)


@settings(max_examples=400, deadline=None)
@given(_TIMESTAMPS, st.sampled_from(["semantic", "episodic", "session"]))
def test_any_well_formed_timestamp_parses_or_is_refused_and_retention_never_overflows(value: str, lane: str) -> None:
    try:
        moment = timefmt.parse_rfc3339(value)
    except ValueError:
        assert not timefmt.is_rfc3339(value)
        return
    assert timefmt.is_rfc3339(value)
    assert timefmt.parse_rfc3339(timefmt.format_rfc3339(moment)) == moment
    key = {"semantic": "explicit_expires_at", "episodic": "occurred_at", "session": "started_at"}[lane]
    found = retention_rules.boundary("r", lane, "active", {key: value}, [], 8.0)
    assert found.at is not None and found.at >= moment
    retention_rules.reason(found, datetime.now(UTC))


def test_fraction_digits_are_unbounded_kept_verbatim_and_ordered() -> None:
    ten = "2026-07-05T00:00:00.1234567890Z"
    text = RECORD.replace("timestamp: 2026-07-05T00:00:00Z", f"timestamp: {ten}")
    assert read_record(text.encode(), "r.md").record.timestamp == ten
    later = timefmt.parse_rfc3339("2026-07-05T00:00:00.1234571Z")
    assert timefmt.parse_rfc3339(ten) < later
    assert timefmt.parse_rfc3339("2026-07-04T19:00:00.12345678901234567890-05:00") == timefmt.parse_rfc3339(ten)


def test_trailing_newline_is_no_part_of_a_timestamp_or_id() -> None:
    assert not timefmt.is_rfc3339("2026-07-05T00:00:00Z\n")
    text = RECORD.replace("id: use-react-query-in-apps-active", 'id: "use-react-query\\n"')
    with pytest.raises(InvalidDocument) as caught:
        read_record(text.encode(), "r.md")
    assert caught.value.problems[0].code == "invalid-id"
    text = RECORD.replace("route: repository_materialization", 'route: "repository_materialization\\n"')
    with pytest.raises(InvalidDocument) as caught:
        read_record(text.encode(), "r.md")
    assert caught.value.problems[0].code == "invalid-value"


# --- end to end: the bad file is named, the rest stay served -------------------------------------------------


@pytest.fixture
def poisoned(repo: Repo) -> Repo:
    repo.write(".memzoi/records/apps/active/data-fetching.md", RECORD)
    for name, (text, _, _) in bad_records().items():
        repo.write(f".memzoi/records/bad/{name}.md", text)
    repo.commit("memory with poisoned files")
    return repo


def _located(output: str) -> None:
    for name, (_, line, code) in bad_records().items():
        assert f".memzoi/records/bad/{name}.md:{line}: {code}: " in output, output


def test_every_reader_names_the_bad_files_and_serves_the_rest(poisoned: Repo, tmp_path: Path) -> None:
    _located(run_cli("validate", expect=1).stdout)
    rebuilt = run_cli("rebuild")
    _located(rebuilt.stderr + rebuilt.stdout)
    hits = run_cli("search", "React", "--json").json()["hits"]
    assert [h["record_id"] for h in hits] == ["use-react-query-in-apps-active"]
    assert "React Query" in run_cli("context", "--task", "React Query").stdout
    assert run_cli("precheck", "--path", "apps/active/page.tsx", "--json").code == 0
    assert run_cli("handoff", "--task", "React").code == 0
    run_cli("export", "okf", "--output", str(tmp_path / "out"))
    assert sorted(p.name for p in (tmp_path / "out").rglob("*.md")) == ["data-fetching.md", "index.md"]


def test_mcp_server_starts_and_answers_next_to_bad_files(poisoned: Repo, tmp_path: Path) -> None:
    seen: dict[str, Any] = {}

    async def main() -> None:
        async with session(server_params(poisoned.path), tmp_path / "server.err") as client:
            seen["search"] = await client.call_tool("search_memory", {"query": "React"})

    run_async(main)
    hits = seen["search"].structured_content["hits"]
    assert [h["record_id"] for h in hits] == ["use-react-query-in-apps-active"]
    assert "Traceback" not in (tmp_path / "server.err").read_text()


@pytest.mark.parametrize("name", sorted(bad_records()))
def test_pre_receive_rejects_a_bad_value_with_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    remote = make_remote(tmp_path)
    assert git("push", "origin", "main", cwd=remote.work.path, check=False).returncode == 0
    text, line, code = bad_records()[name]
    path = record_path(f"bad-{name}")
    remote.work.write(path, text)
    remote.work.commit("bad value", paths=[path])
    pushed = git("push", "origin", "main", cwd=remote.work.path, check=False)
    assert pushed.returncode != 0
    assert f"{path}:{line}: {code}: " in pushed.stderr, pushed.stderr
    assert "Traceback" not in pushed.stderr and "internal error" not in pushed.stderr


def test_propose_expires_at_past_the_utc_range_is_a_usage_error(repo: Repo) -> None:
    result = run_cli("propose", "--type", "fact", "--title", "T", "--body", "B", "--expires-at", OVERFLOW, expect=2)
    assert f"--expires-at: '{OVERFLOW}' falls outside" in result.stderr


def test_retention_near_the_end_of_time_saturates(repo: Repo) -> None:
    pid = run_cli(
        "propose",
        "--type",
        "incident",
        "--lane",
        "episodic",
        "--title",
        "Last incident",
        "--body",
        "It happened at the end of time.",
        "--occurred-at",
        "9999-12-31T23:00:00Z",
    ).stdout.strip()
    run_cli("approve", pid)
    run_cli("apply", pid)
    hits = run_cli("search", "end of time", "--json").json()["hits"]
    assert len(hits) == 1
    assert timefmt.plus(timefmt.LATEST - timedelta(days=1), timedelta(days=30)) == timefmt.LATEST


# --- IDs are matched in full ---------------------------------------------------------------------------------


def test_record_file_name_with_a_trailing_newline_is_refused(repo: Repo) -> None:
    repo.write(".memzoi/records/nl\n.md", RECORD)
    out = run_cli("validate", expect=1).stdout
    assert "concept-id" in out and "'nl\\n'" in out


def test_apply_refuses_a_concept_id_with_a_trailing_newline(repo: Repo) -> None:
    pid = run_cli("propose", "--type", "fact", "--title", "Newline", "--body", "A body.").stdout.strip()
    run_cli("approve", pid)
    result = run_cli("apply", pid, "--concept-id", "project/newline\n", expect=2)
    assert "--concept-id" in result.stderr
    assert not list((repo.path / ".memzoi/records").rglob("*newline*"))


# --- literal bracket paths ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "entry", ["app/[id]/page.tsx", "app/[...slug]/**", "src/{a}/x.ts", "app/(group)/", "app/@modal/[[...rest]]"]
)
def test_brackets_are_ordinary_characters(entry: str) -> None:
    text = RECORD.replace("  - apps/active/**", f"  - {json.dumps(entry)}")
    assert read_record(text.encode(), "r.md").record.applies_to == [entry]


def test_bracket_path_from_propose_to_precheck(repo: Repo) -> None:
    pid = run_cli(
        "propose",
        "--type",
        "risk",
        "--title",
        "Dynamic route loads users",
        "--body",
        "The [id] page loads every user.",
        "--applies-to",
        "app/[id]/page.tsx",
    ).stdout.strip()
    run_cli("approve", pid)
    run_cli("apply", pid)
    warned = run_cli("precheck", "--path", "app/[id]/page.tsx", "--json").json()["warnings"]
    assert [w["title"] for w in warned] == ["Dynamic route loads users"]
    assert run_cli("precheck", "--path", "app/x/page.tsx", "--json").json()["warnings"] == []
