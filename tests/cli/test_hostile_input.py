"""Hostile command-line input: sloppy packet files, forged log lines, flag values the CLI must refuse."""

from __future__ import annotations

import pytest

from git_memzoi.index import shared_db
from git_memzoi.lifecycle import packets
from git_memzoi.profile import frontmatter
from git_memzoi.runtime.workspace import Workspace
from support import Repo, run_cli
from support.lifecycle import APPLIED_AT, BODY, at, one_line_error, packet, refused, write_packet

PID = "mem_2026_03_01_auth_abc123"


@pytest.fixture
def ready(repo: Repo) -> Repo:
    shared_db.connect(Workspace.open(repo.path).layout.shared_db).close()
    at("2026-03-01T00:00:00Z")
    return repo


def _log_lines(repo: Repo) -> list[str]:
    return (repo.path / ".memzoi/log.md").read_text().splitlines()


# --- propose --from-file takes the packet as it is --------------------------------------------------------------


@pytest.mark.parametrize("field", ["kind", "profile", "status", "timestamp", "origin", "description", "retention"])
def test_from_file_missing_a_required_field_is_refused_like_validate(ready: Repo, field: str) -> None:
    rel = f".memzoi/proposals/pending/{PID}.md"
    ready.write(rel, frontmatter.render(packet(PID, **{field: None}), BODY))
    line = refused(ready, "propose", "--from-file", rel, needles=(f"{rel}:",))
    first = line.removeprefix("git memzoi: ").split(" (and ")[0]
    assert first in run_cli("validate", rel, expect=1).stdout.splitlines()
    assert f"required field '{field}' is missing" in first


def test_from_file_episodic_packet_gets_no_invented_occurred_at(ready: Repo, tmp_path) -> None:
    source = tmp_path / "packet.md"
    source.write_text(frontmatter.render(packet(PID, lane="episodic", type="incident"), BODY))
    refused(
        ready,
        "propose",
        "--from-file",
        str(source),
        needles=(f"{source}:", "retention-invalid", "episodic records require retention.occurred_at"),
    )


def test_from_file_complete_packet_is_taken_byte_for_byte_in_meaning(ready: Repo, tmp_path) -> None:
    data = packet(PID, lane="episodic", type="incident", retention={"occurred_at": "2026-02-01T00:00:00Z"})
    source = tmp_path / "packet.md"
    source.write_text(frontmatter.render(data, BODY))
    run_cli("propose", "--from-file", str(source), "--packet")
    stored = frontmatter.parse((ready.path / f".memzoi/proposals/pending/{PID}.md").read_bytes()).data
    assert stored == data


# --- one-line fields and log.md -------------------------------------------------------------------------------

FORGED = "bob\n- 2026-03-02T00:00:00Z applied mem_forged (create): created admin; reviewer root"


@pytest.mark.parametrize(
    "args",
    [
        ("--reviewer", FORGED),
        ("--reason", "fine\r\nforged"),
        ("--reviewer", "bob\x1b[2J"),
        ("--reviewer", "bob\u2028x"),
        ("--concept-id", "project/newline\n"),
        ("--reason", " "),
    ],
)
def test_apply_refuses_control_characters_and_blank_reasons(ready: Repo, args: tuple[str, str]) -> None:
    pending = write_packet(ready, packet(PID))
    before = _log_lines(ready)
    line = refused(ready, "apply", pending, *args, needles=(args[0],), code=2)
    assert "\n" not in line
    assert _log_lines(ready) == before


@pytest.mark.parametrize("args", [("--reviewer", FORGED), ("--reason", "no\nreally"), ("--reason", "   ")])
def test_reject_refuses_control_characters_and_blank_reasons(ready: Repo, args: tuple[str, str]) -> None:
    pending = write_packet(ready, packet(PID))
    extra = ("--reason", "because") if args[0] != "--reason" else ()
    refused(ready, "reject", pending, *args, *extra, needles=(args[0],), code=2)


@pytest.mark.parametrize(
    "flag",
    [
        "--title",
        "--reason",
        "--description",
        "--tag",
        "--source",
        "--source-ref",
        "--proposed-by",
        "--origin-key",
        "--target",
        "--content-class",
        "--route",
    ],
)
def test_propose_refuses_control_characters_in_one_line_fields(ready: Repo, flag: str) -> None:
    args = ["propose", "--type", "fact", "--body", "A body."]
    if flag != "--title":
        args += ["--title", "A title"]
    refused(ready, *args, flag, "one\ntwo", needles=(flag, "control character"), code=2)


def test_log_lines_stay_one_line_whatever_the_actor(ready: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    pending = write_packet(ready, packet(PID))
    before = _log_lines(ready)
    at(APPLIED_AT)
    monkeypatch.setenv("MEMZOI_ACTOR", FORGED)
    refused = run_cli("apply", pending, expect=2)
    assert one_line_error(refused.stderr).startswith("git memzoi: MEMZOI_ACTOR holds the control character \\n")
    assert _log_lines(ready) == before, "a forged name changes nothing"
    assert packets.append_log(None, "a\nb\x1b\u2028c").decode().splitlines()[-1] == "a\\nb\\x1b\\u2028c"


# --- usage errors exit 2 -------------------------------------------------------------------------------------------


def test_bad_status_filter_is_a_usage_error(ready: Repo) -> None:
    result = run_cli("proposals", "--status", "bogus", expect=2)
    assert "--status" in one_line_error(result.stderr)
