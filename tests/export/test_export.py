"""Exports: the OKF bundle and the agent instruction files, from real records through recall."""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conftest import Repo, interop_dir, run_cli
from git_memzoi.errors import UsageError
from git_memzoi.export import instructions, okf
from git_memzoi.export.common import MAX_BYTES, exportable
from git_memzoi.profile.document import read_record
from git_memzoi.profile.tree import SourceFile, validate_tree
from git_memzoi.recall.models import Citation, ExpiryDecision, IndexedRecord
from git_memzoi.runtime import clock
from git_memzoi.runtime.workspace import Workspace

INTEROP_RECORDS = interop_dir() / ".memzoi" / "records"


def record_text(
    record_id: str,
    *,
    type: str = "decision",
    lane: str = "semantic",
    title: str | None = None,
    body: str | None = None,
    status: str = "active",
    visibility: str = "repo",
    applies_to: tuple[str, ...] = (),
    retention: str = "{}",
    description: str | None = None,
    supersedes: str | None = None,
) -> str:
    """A valid canonical record file."""
    title = title or record_id.replace("-", " ").capitalize()
    lines = [
        "---",
        f"id: {record_id}",
        "kind: memory",
        "profile: memzoi",
        f"type: {type}",
        f"lane: {lane}",
        f"title: {json.dumps(title, ensure_ascii=False)}",
    ]
    if description is not None:
        lines.append(f"description: {json.dumps(description, ensure_ascii=False)}")
    lines += [
        "timestamp: 2026-01-01T00:00:00Z",
        f"status: {status}",
        "scope: repo",
        f"visibility: {visibility}",
        "content_class: general_repo_knowledge",
        "confidence: 1.0",
    ]
    if applies_to:
        lines.append("applies_to:")
        lines += [f"  - {p}" for p in applies_to]
    if supersedes:
        lines.append(f"supersedes: {supersedes}")
    lines.append(f"retention: {retention}")
    lines += [
        "origin:",
        f"  origin_key: test:{record_id}",
        "  route: repository_materialization",
        "---",
        f"# {title}",
        "",
        body or f"The {title.lower()} body.",
        "",
    ]
    return "\n".join(lines)


def write_record(repo: Repo, concept_id: str, text: str) -> Path:
    return repo.write(f".memzoi/records/{concept_id}.md", text)


def indexed(text: str, concept_id: str, *, current: bool = True, store: str = "repo") -> IndexedRecord:
    """An IndexedRecord made from a real record file, for the pure renderers."""
    path = f".memzoi/records/{concept_id}.md"
    parsed = read_record(text.encode(), path)
    r = parsed.record
    citation = Citation(record_id=r.id, source=r.source, source_ref=r.source_ref, proposal_id=r.proposal_id, path=path)
    expiry = ExpiryDecision(
        record_id=r.id,
        lane=r.lane,
        status=r.status,
        current=current,
        rule="test",
        boundary=None,
        boundary_kind=None,
        reason="test",
        evaluated_at="2026-01-01T00:00:00Z",
    )
    return IndexedRecord(
        record_id=r.id,
        concept_id=concept_id,
        store=store,
        path=path,  # type: ignore[arg-type]
        type=r.type,
        lane=r.lane,
        status=r.status,
        visibility=r.visibility,
        title=r.title,
        description=r.description,
        body=parsed.doc.body,
        applies_to=list(r.applies_to or []),
        tags=list(r.tags or []),
        citation=citation,
        expiry=expiry,
        document=text,
    )


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def tree_digest(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): sha(p) for p in sorted(folder.rglob("*")) if p.is_file()}


# -- pure renderers ------------------------------------------------------------------------------


def sample_records() -> list[IndexedRecord]:
    return [
        indexed(record_text("zeta-decision", title="Zeta decision", applies_to=("src/**",)), "zeta-decision"),
        indexed(record_text("alpha-decision", title="Alpha decision"), "alpha-decision"),
        indexed(
            record_text(
                "db-risk",
                type="risk",
                title="Migrations lock the users table",
                applies_to=("db/migrations/**", "scripts/migrate.sh"),
            ),
            "risks/db-risk",
        ),
        indexed(record_text("flaky-warning", type="warning", title="Flaky integration tests"), "flaky-warning"),
        indexed(
            record_text(
                "release-steps",
                type="procedure",
                lane="procedural",
                title="Release steps",
                body="## Steps\n\n1. Tag.\n2. Push.\n\n```sh\n# not a heading\n```",
            ),
            "release-steps",
        ),
        indexed(record_text("plain-fact", type="fact", title="The API is versioned"), "plain-fact"),
    ]


def test_instruction_file_groups_by_severity_then_title_and_cites_ids_and_paths() -> None:
    text = instructions.render("agents-md", sample_records()).data.decode()
    assert text.startswith("<!-- Generated by git memzoi (git memzoi export agents-md)")
    assert "Do not edit this file" in text
    order = [text.index(h) for h in ("## Risks (1)", "## Warnings (1)", "## Decisions (2)", "## Procedures (1)")]
    assert order == sorted(order)
    assert text.index("### Alpha decision") < text.index("### Zeta decision")
    assert "Record `db-risk` · applies to `db/migrations/**`, `scripts/migrate.sh`" in text
    assert "Record `alpha-decision` · applies to the whole repository" in text
    # facts are context, not rules: they stay out of instruction files
    assert "plain-fact" not in text and "The API is versioned" not in text
    # a body's own headings sit below the entry heading; a # inside a code fence is left alone
    assert "##### Steps" in text and "# not a heading" in text and "#### not a heading" not in text
    claude = instructions.render("claude-md", sample_records()).data.decode()
    assert claude.startswith("<!-- Generated by git memzoi (git memzoi export claude-md)")


def test_max_bytes_keeps_most_severe_entries_and_lists_the_rest() -> None:
    records = sample_records()
    full = instructions.render("agents-md", records).data
    limit = len(full) - 1
    rendered = instructions.render("agents-md", records, max_bytes=limit)
    assert len(rendered.data) <= limit
    kept = [r.record_id for r in rendered.included]
    everything = [r.record_id for r in instructions.select(records)]
    assert kept == everything[: len(kept)] and kept[0] == "db-risk"
    left = [o.record_id for o in rendered.omitted]
    assert left and kept + left == everything
    text = rendered.data.decode()
    assert f"## Left out ({len(left)})" in text
    for record_id in left:
        assert f"`{record_id}`" in text.split("## Left out")[1]
    with pytest.raises(UsageError, match="max_bytes 100 is too small"):
        instructions.render("agents-md", records, max_bytes=100)


def test_exportable_drops_private_query_only_inactive_and_runtime_records() -> None:
    keep = indexed(record_text("kept"), "kept")
    dropped = [
        indexed(record_text("priv", visibility="private"), "priv"),
        indexed(record_text("old", status="superseded"), "old"),
        indexed(record_text("gone", status="tombstoned"), "gone"),
        indexed(record_text("stale"), "stale", current=False),
        indexed(record_text("mine"), "mine", store="local"),
    ]
    assert exportable([keep, *dropped]) == [keep]
    assert set(okf.build_bundle([keep, *dropped], None)) == {"index.md", "records/kept.md"}


# -- through recall and the CLI ------------------------------------------------------------------


def import_interop(repo: Repo) -> list[Path]:
    copied = []
    for source in sorted(INTEROP_RECORDS.glob("*.md")):
        target = repo.path / ".memzoi" / "records" / source.name
        shutil.copyfile(source, target)
        copied.append(source)
    repo.commit("import published memory")
    return copied


def test_okf_bundle_copies_the_interop_records_byte_for_byte(repo: Repo) -> None:
    everything = import_interop(repo)
    assert len(everything) == 35
    # one published record is superseded: it stays out, the other 34 are carried unchanged
    status = {s: read_record(s.read_bytes(), s.name).record.status for s in everything}
    sources = [s for s in everything if status[s] == "active"]
    assert [s.name for s in everything if status[s] != "active"] == [
        "rebuild-runtime-index-after-applying-proposal-files.md"
    ]
    report = run_cli("export", "okf", "--json").json()
    bundle = Path(report["path"])
    assert bundle == Workspace.open().layout.exports / "okf"
    assert len(report["records"]) == 34 and report["budget"] is None
    for source in sources:
        assert (bundle / "records" / source.name).read_bytes() == source.read_bytes(), source.name
    assert not (bundle / "records" / "rebuild-runtime-index-after-applying-proposal-files.md").exists()
    index = (bundle / "index.md").read_text(encoding="utf-8")
    assert not index.startswith("---")
    for source in sources:
        assert f"(records/{source.name})" in index
    assert sorted(report["files"]) == sorted(["index.md", *[f"records/{s.name}" for s in sources]])
    # the bundle is itself a valid memzoi tree once placed under .memzoi/
    files = [
        SourceFile(f".memzoi/{p.relative_to(bundle).as_posix()}", p.read_bytes)
        for p in sorted(bundle.rglob("*"))
        if p.is_file()
    ]
    assert validate_tree(files).errors == []


def test_instruction_exports_of_the_interop_records(repo: Repo) -> None:
    import_interop(repo)
    agents = run_cli("export", "agents-md", "--json").json()
    text = Path(agents["path"]).read_text(encoding="utf-8")
    assert Path(agents["path"]).name == "AGENTS.memory.md"
    assert agents["budget"] == {"tool": "Codex", "limit": 32768, "unit": "bytes", "past_limit": "silently truncated"}
    assert agents["bytes"] == len(text.encode()) and agents["over_budget"] == (agents["bytes"] > 32768)
    assert "`canonical-repository-records-require-explicit-content-classification`" in text
    assert text.index("## Warnings") < text.index("## Decisions")
    claude = run_cli("export", "claude-md", "--json").json()
    assert Path(claude["path"]).name == "CLAUDE.memory.md"
    assert claude["budget"]["unit"] == "characters" and claude["budget"]["limit"] == 40000


def test_private_query_only_superseded_and_tombstoned_records_never_appear(repo: Repo) -> None:
    def hidden(record_id: str, **kw: object) -> str:
        return record_text(record_id, title=f"Hidden {record_id}", body=f"Marker HIDDEN-{record_id}.", **kw)

    write_record(repo, "keep/active-rule", record_text("active-rule", type="constraint", applies_to=("src/**",)))
    write_record(repo, "keep/successor", record_text("successor", type="warning", supersedes="predecessor"))
    write_record(repo, "hide/predecessor", hidden("predecessor", type="warning", status="superseded"))
    write_record(repo, "hide/removed", hidden("removed", type="risk", status="tombstoned"))
    write_record(repo, "hide/private-rule", hidden("private-rule", type="decision", visibility="private"))
    write_record(
        repo,
        "hide/old-incident",
        hidden("old-incident", type="warning", lane="episodic", retention="{occurred_at: 2026-01-02T00:00:00Z}"),
    )
    write_record(
        repo,
        "hide/expired-rule",
        hidden("expired-rule", type="risk", retention="{explicit_expires_at: 2026-02-01T00:00:00Z}"),
    )
    repo.commit("records")
    run_cli("local", "add", "--type", "decision", "--title", "Hidden local rule", "--body", "Marker HIDDEN-local.")

    clock.set_now(datetime(2026, 1, 10, tzinfo=UTC))  # the incident and expiry are still current
    early = run_cli("export", "agents-md", "--json").json()
    assert {"old-incident", "expired-rule"} <= set(early["records"])

    clock.set_now(datetime(2026, 3, 15, tzinfo=UTC))  # past the 30-day window and the explicit expiry
    outputs = {target: run_cli("export", target, "--json").json() for target in ("okf", "agents-md", "claude-md")}
    for target, report in outputs.items():
        assert set(report["records"]) == {"active-rule", "successor"}, target
    bundle = Path(outputs["okf"]["path"])
    texts = [p.read_text(encoding="utf-8") for p in bundle.rglob("*.md")]
    texts += [Path(outputs[t]["path"]).read_text(encoding="utf-8") for t in ("agents-md", "claude-md")]
    for text in texts:
        assert "HIDDEN-" not in text and "Hidden " not in text
    assert sorted(p.relative_to(bundle).as_posix() for p in bundle.rglob("*.md")) == [
        "index.md",
        "records/keep/active-rule.md",
        "records/keep/successor.md",
    ]


def test_two_runs_give_identical_bytes(repo: Repo, tmp_path: Path) -> None:
    import_interop(repo)
    write_record(
        repo,
        "risks/deploy",
        record_text("deploy-risk", type="risk", title="Déploiement à risque", applies_to=("deploy/**",)),
    )
    repo.commit("risk")
    first, second = tmp_path / "one", tmp_path / "two"
    for out in (first, second):
        for target in ("okf", "agents-md", "claude-md"):
            run_cli("export", target, "--output", str(out))
    assert tree_digest(first) == tree_digest(second)
    assert set(tree_digest(first)) >= {"AGENTS.memory.md", "CLAUDE.memory.md", "okf/index.md"}
    before = tree_digest(first)
    for target in ("okf", "agents-md", "claude-md"):
        run_cli("export", target, "--output", str(first))
    assert tree_digest(first) == before
    # nothing half-written is left beside the exports
    assert sorted(p.name for p in first.iterdir()) == ["AGENTS.memory.md", "CLAUDE.memory.md", "okf"]


def test_reexport_replaces_the_bundle_as_a_whole(repo: Repo) -> None:
    write_record(repo, "a", record_text("a"))
    write_record(repo, "b", record_text("b"))
    repo.commit("two")
    bundle = Path(run_cli("export", "okf", "--json").json()["path"])
    assert (bundle / "records" / "b.md").exists()
    write_record(repo, "b", record_text("b", status="tombstoned"))
    repo.commit("tombstone b")
    run_cli("export", "okf")
    assert not (bundle / "records" / "b.md").exists() and (bundle / "records" / "a.md").exists()
    assert [p.name for p in bundle.parent.iterdir()] == ["okf"]


def big_records(repo: Repo, count: int, size: int) -> None:
    for i in range(count):
        kind = ("risk", "warning", "decision", "procedure")[i % 4]
        body = " ".join(["Keep the release pipeline green before merging anything."] * (size // 57))
        write_record(
            repo, f"big/r{i:03d}", record_text(f"r{i:03d}", type=kind, title=f"Rule {i:03d}", description=body)
        )
    repo.commit("many records")


def test_budget_is_reported_warned_and_enforced_with_max_bytes(repo: Repo) -> None:
    big_records(repo, 48, 1000)
    over = run_cli("export", "agents-md")
    path = Path(over.stdout.strip())
    assert path.name == "AGENTS.memory.md" and path.stat().st_size > 32768
    assert "warning: AGENTS.memory.md is past the Codex budget of 32,768 bytes" in over.stderr
    report = run_cli("export", "agents-md", "--json").json()
    assert report["over_budget"] is True and report["omitted"] == []

    capped = run_cli("export", "agents-md", "--max-bytes", "32768", "--json")
    data = capped.json()
    assert path.stat().st_size <= 32768 and data["bytes"] == path.stat().st_size
    assert data["over_budget"] is False and data["max_bytes"] == 32768
    left = [o["record_id"] for o in data["omitted"]]
    assert left and all(o["reason"] == "over max_bytes 32768" for o in data["omitted"])
    assert all(o["type"] in ("procedure", "decision") for o in data["omitted"])  # risks and warnings kept first
    text = path.read_text(encoding="utf-8")
    assert all(f"`{rid}`" in text.split("## Left out")[1] for rid in left)
    assert f"left out (over max_bytes 32768): {data['omitted'][0]['type']} {left[0]}" in capped.stderr


def test_claude_budget_counts_characters(repo: Repo) -> None:
    write_record(
        repo, "unicode", record_text("unicode-rule", type="constraint", title="Ünïcödé rule", description="Ω" * 500)
    )
    repo.commit("unicode")
    data = run_cli("export", "claude-md", "--json").json()
    text = Path(data["path"]).read_text(encoding="utf-8")
    assert data["characters"] == len(text) and data["bytes"] == len(text.encode()) > data["characters"]
    result = run_cli("export", "claude-md")
    assert f"{data['characters']:,} characters of the 40,000-character Claude Code budget" in result.stderr


def test_bad_output_and_max_bytes_are_usage_errors(repo: Repo, tmp_path: Path) -> None:
    afile = tmp_path / "file.txt"
    afile.write_text("x")
    run_cli("export", "agents-md", "--output", str(afile), expect=2)
    run_cli("export", "agents-md", "--max-bytes", "0", expect=2)
    run_cli("export", "agents-md", "--max-bytes", str(MAX_BYTES + 1), expect=2)
    result = run_cli("export", "agents-md", "--max-bytes", "50", expect=2)
    assert "--max-bytes 50 is too small" in result.stderr
    assert afile.read_text() == "x"


@pytest.mark.parametrize("target", ["okf", "agents-md", "claude-md"])
def test_output_inside_memzoi_is_refused_through_symlinks_and_dotdot(repo: Repo, tmp_path: Path, target: str) -> None:
    (repo.path / "sub").mkdir()
    outside_link = tmp_path / "link"
    outside_link.symlink_to(repo.path / ".memzoi" / "records")
    before = sorted(
        (p.relative_to(repo.path).as_posix(), p.read_bytes()) for p in (repo.path / ".memzoi").rglob("*") if p.is_file()
    )
    for output in (".memzoi", ".memzoi/records/semantic", "sub/../.memzoi/new", str(outside_link)):
        result = run_cli("export", target, "--output", output, expect=2)
        lines = [line for line in result.stderr.splitlines() if line.startswith("git memzoi: ")]
        assert len(lines) == 1 and "--output" in lines[0] and ".memzoi/" in lines[0], result.stderr
        assert "Traceback" not in result.stderr
    after = sorted(
        (p.relative_to(repo.path).as_posix(), p.read_bytes()) for p in (repo.path / ".memzoi").rglob("*") if p.is_file()
    )
    assert after == before
    run_cli("export", target, "--output", ".")  # the work tree root is the documented place
    run_cli("validate")
