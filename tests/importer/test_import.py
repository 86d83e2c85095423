"""`git memzoi import`: plan, write, apply and re-import the memory files a repository already has."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from support import FIXTURES, Repo, git, make_repo, run_cli
from support.importer import BASIC, copy_fixture, entries, memzoi_files, pending, plan


@pytest.fixture
def basic(repo: Repo) -> Repo:
    copy_fixture(BASIC, repo)
    return repo


def by_where(result: dict, prefix: str) -> list[dict]:
    return [e for e in result["entries"] if e["where"].startswith(prefix)]


# --- the plan ------------------------------------------------------------------------------------------------


def test_plan_writes_nothing_and_lists_every_item(basic: Repo) -> None:
    before = memzoi_files(basic)
    out = run_cli("import")
    assert memzoi_files(basic) == before
    assert "create      AGENTS.md:5-14  procedural/procedures/setup  procedure/procedural" in out.stdout
    result = plan()
    titles = {e["title"] for e in entries(result, "create")}
    assert {"Setup", "Testing", "Code style", "Security", "Release", "worker: Testing", "worker: Queues"} <= titles
    # `# comment` lines inside shell fences are not headings
    assert not any("install" in e["title"].lower() or "not a heading" in e["title"] for e in result["entries"])
    assert result["changes"] == len(entries(result, "create")) == 17
    assert len(result["plan_id"]) == 16 and plan()["plan_id"] == result["plan_id"]


def test_fields_scope_and_types(basic: Repo) -> None:
    result = plan()
    setup = by_where(result, "AGENTS.md:5-")[0]
    assert (setup["type"], setup["lane"], setup["applies_to"]) == ("procedure", "procedural", [])
    security = next(e for e in entries(result) if e["title"] == "Security")
    assert (security["type"], security["lane"]) == ("warning", "semantic")
    style = next(e for e in entries(result) if e["title"] == "Code style")
    assert style["type"] == "convention"
    nested = next(e for e in entries(result) if e["title"] == "worker: Queues")
    assert nested["applies_to"] == ["worker/**"]
    react = by_where(result, ".cursor/rules/react.mdc")[0]  # globs as a list
    assert react["applies_to"] == ["apps/web/src/**", "packages/ui/**"]
    assert react["warnings"] == ["glob 'apps/web/src/**/*.tsx' is broadened to apps/web/src/**"]
    sql = by_where(result, ".cursor/rules/sql.mdc")[0]  # globs as a comma string
    assert sql["applies_to"] == ["db/migrations/**", "db/seeds/**"]
    api = by_where(result, ".github/instructions/api.instructions.md")[0]  # comma-separated applyTo
    assert api["applies_to"] == ["services/api/**"] and len(api["warnings"]) == 2
    always = by_where(result, ".cursor/rules/always.mdc")[0]
    assert always["applies_to"] == [] and always["action"] == "create"


def test_adr_statuses(basic: Repo) -> None:
    result = plan()
    status = {e["where"].split(":")[0]: (e["action"], e["reason"]) for e in entries(result) if "adr" in e["where"]}
    assert status["doc/adr/0001-record-architecture-decisions.md"][0] == "create"
    assert status["doc/adr/0002-use-postgres.md"] == (
        "skipped",
        "ADR status: superseded by doc/adr/0003-use-postgres-16.md",
    )
    assert status["doc/adr/0004-event-bus.md"] == ("skipped", "ADR status: on hold")
    decisions = {e["where"].split(":")[0]: e for e in entries(result) if e["where"].startswith("docs/decisions")}
    assert decisions["docs/decisions/0001-use-madr.md"]["action"] == "create"  # MADR front matter
    assert decisions["docs/decisions/0002-feature-flags.md"]["reason"] == "ADR status: proposed"
    # an unknown status is reported and skipped; `status: accepted` inside a fence is not the status
    assert decisions["docs/decisions/0003-mono-logging.md"]["reason"] == "ADR status: experimental"
    assert decisions["docs/decisions/0004-logging-fence.md"]["action"] == "create"
    assert all(e["type"] == "decision" for e in decisions.values())
    on_hold = plan("--adr-status", "on hold")
    assert by_where(on_hold, "doc/adr/0004-event-bus.md")[0]["action"] == "create"


def test_symlinks_and_personal_files(basic: Repo) -> None:
    result = plan()
    assert by_where(result, "CLAUDE.md")[0]["action"] == "duplicate"
    assert by_where(result, ".claude/CLAUDE.md")[0]["action"] == "duplicate"  # a chain of two links
    assert by_where(result, "CLAUDE.local.md")[0]["action"] == "skipped"
    assert not [e for e in entries(result, "create") if e["where"].startswith(("CLAUDE", ".claude"))]


def test_same_text_twice_in_one_folder_is_one_record_and_in_two_folders_one_each(basic: Repo) -> None:
    text = (basic.path / "worker/AGENTS.md").read_text()
    basic.write("worker/CLAUDE.md", text)
    basic.write("x-copy/AGENTS.md", text)
    basic.commit("copies")
    result = plan()
    copies = by_where(result, "worker/CLAUDE.md")
    assert [e["action"] for e in copies] == ["duplicate", "duplicate"]
    assert copies[0]["reason"].startswith("same text as worker/AGENTS.md")
    sibling = by_where(result, "x-copy/AGENTS.md")
    assert [(e["action"], e["applies_to"]) for e in sibling] == [("create", ["x-copy/**"])] * 2


# --- write, apply, re-import -----------------------------------------------------------------------------------


def test_apply_then_validate_search_context_and_reimport_plans_nothing(basic: Repo) -> None:
    first = plan()
    run_cli("import", "--apply", "--commit", "--plan-id", first["plan_id"])
    assert pending(basic) == []
    assert len(list((basic.path / ".memzoi/records").rglob("*.md"))) == 17
    run_cli("validate")
    hits = run_cli("search", "zod", "--json").json()
    assert [h["record_id"] for h in hits["hits"]] == ["api"]
    pack = run_cli("context", "--task", "add an API handler", "--path", "services/api/users.ts", "--json").json()
    assert "API handlers validate input with zod" in pack["text"]
    log = (basic.path / ".memzoi/log.md").read_text().splitlines()
    receipt = log[-1]
    assert f"imported plan {first['plan_id']}: 17 create; sources: " in receipt
    blob = git("rev-parse", "HEAD~1:AGENTS.md", cwd=basic.path).stdout.strip()
    assert f"AGENTS.md@{blob}" in receipt
    again = plan()
    assert again["changes"] == 0 and len(entries(again, "unchanged")) == 17
    assert git("status", "--porcelain", cwd=basic.path).stdout == ""


def test_write_then_apply_each_packet(basic: Repo) -> None:
    result = run_cli("import", "--write", "--json").json()
    assert len(result["written"]) == 17 and len(pending(basic)) == 17
    again = run_cli("import", "--write", "--json").json()  # the same packets are kept, not doubled
    assert again["written"] == [] and len(again["kept"]) == 17
    for path in pending(basic):
        run_cli("apply", str(path))
    run_cli("validate")
    assert plan()["changes"] == 0


def test_edit_one_section_plans_one_supersede_then_prune_one_tombstone(basic: Repo) -> None:
    run_cli("import", "--apply", "--commit")
    text = (basic.path / "AGENTS.md").read_text()
    basic.write("AGENTS.md", text.replace("Never log request bodies", "Never log request or response bodies"))
    worker = (basic.path / "worker/AGENTS.md").read_text()
    basic.write("worker/AGENTS.md", worker[: worker.index("## Testing")])
    basic.commit("edit")
    result = plan()
    assert [(e["action"], e["target"]) for e in entries(result) if e["action"] in ("supersede", "tombstone")] == [
        ("supersede", "security")
    ]
    gone = [e for e in entries(result, "skipped") if e["target"] == "worker-testing"]
    assert gone and "--prune" in gone[0]["reason"]
    pruned = plan("--prune")
    assert [e["target"] for e in entries(pruned, "tombstone")] == ["worker-testing"]
    assert pruned["changes"] == 2
    run_cli("import", "--prune", "--apply", "--commit")
    run_cli("validate")
    security = (basic.path / ".memzoi/records/semantic/warnings/security.md").read_text()
    assert "status: superseded" in security
    assert "status: tombstoned" in (basic.path / ".memzoi/records/procedural/procedures/worker-testing.md").read_text()
    assert plan("--prune")["changes"] == 0
    # a record tombstoned on purpose does not come back when its section returns
    basic.write("worker/AGENTS.md", worker)
    basic.commit("restore")
    back = plan()
    assert back["changes"] == 0
    assert any("tombstoned on purpose" in (e["reason"] or "") for e in entries(back, "skipped"))


def test_plan_id_refuses_a_changed_plan(basic: Repo) -> None:
    shown = plan()["plan_id"]
    basic.write("AGENTS.md", (basic.path / "AGENTS.md").read_text() + "\n## Docs\n\nDocs live in docs/.\n")
    basic.commit("more")
    out = run_cli("import", "--write", "--plan-id", shown, expect=1)
    assert "the plan changed since it was shown" in out.stderr
    assert pending(basic) == []


def test_named_source_and_rev_from_a_bare_clone(basic: Repo, tmp_path: Path) -> None:
    only = plan("worker/AGENTS.md")
    assert {e["where"].split(":")[0] for e in only["entries"]} == {"worker/AGENTS.md"}
    bare = tmp_path / "bare.git"
    git("clone", "--bare", "-q", str(basic.path), str(bare), cwd=tmp_path)
    from_rev = run_cli("import", "--json", "--rev", "main", cwd=bare).json()
    assert from_rev["changes"] == 17
    out = run_cli("import", "--rev", "main", "--write", cwd=bare, expect=2)
    assert "--rev only plans" in out.stderr


# --- generated content ------------------------------------------------------------------------------------------


def test_generated_content_is_not_memory(repo: Repo) -> None:
    repo.write(
        "AGENTS.md",
        "# Rules\n\n## Mine\n\nHand-written rule.\n\n<!-- memzoi:start -->\n## Generated\n\nFrom memzoi.\n"
        "<!-- memzoi:end -->\n",
    )
    repo.write(
        "CLAUDE.md",
        "<!-- Generated by git memzoi (git memzoi export claude-md) from .memzoi/records/. -->\n\n# Project memory\n",
    )
    repo.write(".ruler/instructions.md", "## Ruler rule\n\nKeep functions small.\n")
    repo.write("GEMINI.md", "<!-- Source: .ruler/instructions.md -->\n\n## Ruler rule\n\nKeep functions small.\n")
    repo.commit("generated")
    result = plan()
    assert [e["title"] for e in entries(result, "create")] == ["Mine", "Ruler rule"]
    assert by_where(result, ".ruler/instructions.md")[0]["action"] == "create"
    generated = entries(result, "generated")
    assert {e["where"].split(":")[0] for e in generated} == {"CLAUDE.md", "GEMINI.md"}


def test_unbalanced_marker_is_an_error_naming_the_line(repo: Repo) -> None:
    repo.write("AGENTS.md", "# Rules\n\n## One\n\ntext\n\n<!-- memzoi:start -->\n## Two\n")
    repo.commit("broken")
    out = run_cli("import", expect=1)
    assert "AGENTS.md:7: import-marker:" in out.stderr and "never closed" in out.stderr


# --- bad input ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "setup, message",
    [
        (
            lambda r: r.write("AGENTS.md", "## Keys\n\naws key AKIAIOSFODNN7EXAMPLE here\n"),
            "AGENTS.md:1-3: refused: secret at AGENTS.md:3:",
        ),
        (
            lambda r: r.write("AGENTS.md", "# Rules\n\n## Use \x1b[31m red\n\nAlways use pnpm.\n"),
            "refused: control-character at AGENTS.md:3: title: holds the control character \\x1b",
        ),
        (
            lambda r: r.write("AGENTS.md", "## Bell\n\nfirst line\nthe body rings \x07 here\n"),
            "refused: control-character at AGENTS.md:4: the body: holds the control character \\x07",
        ),
        (lambda r: r.write("AGENTS.md", b"## R\n\n" + b"x" * (1024 * 1024 + 1)), "AGENTS.md: import-too-large:"),
        (lambda r: r.write("AGENTS.md", "## R\n\ncaf\xe9\n".encode("latin-1")), "AGENTS.md:3: import-encoding:"),
        (
            lambda r: r.write(".cursor/rules/x.mdc", "---\nglobs: a/**\nthis is not a pair\n---\nbody\n"),
            ".cursor/rules/x.mdc:3: import-front-matter:",
        ),
        (lambda r: r.write(".cursor/rules/x.mdc", "---\nglobs: a/**\nbody\n"), "import-front-matter:"),
        (lambda r: os.symlink("../../outside.md", r.path / "AGENTS.md"), "AGENTS.md: import-symlink:"),
        (
            lambda r: (os.symlink("CLAUDE.md", r.path / "AGENTS.md"), os.symlink("AGENTS.md", r.path / "CLAUDE.md")),
            "import-symlink: symlinks loop",
        ),
    ],
    ids=[
        "secret",
        "control-title",
        "control-body",
        "too-large",
        "encoding",
        "front-matter",
        "front-matter-open",
        "symlink-out",
        "symlink-loop",
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(repo: Repo, setup, message: str) -> None:
    setup(repo)
    repo.commit("bad")
    before = memzoi_files(repo)
    for args in ((), ("--write",), ("--apply",)):
        out = run_cli("import", *args, expect=1)
        assert message in out.stderr, out.stderr
        assert len(out.stderr.strip().splitlines()) <= 2 and "Traceback" not in out.stderr
    assert memzoi_files(repo) == before


def test_a_folder_made_a_symlink_in_the_work_tree_is_never_read_through(repo: Repo, tmp_path: Path) -> None:
    """A tracked docs/AGENTS.md whose folder a clone replaced by a link out of the repository: refused, unread."""
    repo.write("docs/AGENTS.md", "## Inside\n\nThe tracked rule.\n")
    repo.commit("nested rules")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "AGENTS.md").write_text("## Outside\n\nText from outside the repository.\n")
    shutil.rmtree(repo.path / "docs")
    os.symlink(outside, repo.path / "docs")
    before = memzoi_files(repo)
    for args in ((), ("--json",), ("--write",), ("--apply",)):
        out = run_cli("import", *args, expect=1)
        assert "git memzoi: docs/AGENTS.md: import-symlink: docs is a symlink" in out.stderr, out.stderr
        assert "Outside" not in out.stdout + out.stderr
    assert memzoi_files(repo) == before


@pytest.mark.parametrize(
    "text, where, reason",
    [
        (
            "## Keys\n\naws key AKIAIOSFODNN7EXAMPLE here\n",
            "AGENTS.md:1-3",
            "secret at AGENTS.md:3: looks like an AWS access key",
        ),
        (
            "# Rules\n\n## Use \x1b[31m red\n\nAlways use pnpm.\n",
            "AGENTS.md:3-5",
            "control-character at AGENTS.md:3: title: holds the control character \\x1b",
        ),
        (
            "## Bell\n\nfirst line\nthe body rings \x07 here\n",
            "AGENTS.md:1-4",
            "control-character at AGENTS.md:4: the body: holds the control character \\x07",
        ),
    ],
    ids=["secret", "control-title", "control-body"],
)
def test_an_item_that_cannot_be_written_is_refused_by_name_and_the_rest_planned(
    repo: Repo, text: str, where: str, reason: str
) -> None:
    repo.write("AGENTS.md", text)
    repo.write("docs/AGENTS.md", "## Build\n\nRun make in docs.\n")
    repo.commit("sources")
    result = plan(expect=1)  # the rest is planned; the exit says an item was refused
    refused = entries(result, "refused")
    assert [e["where"] for e in refused] == [where] and reason in refused[0]["reason"], refused
    assert [e["where"] for e in entries(result, "create")] == ["docs/AGENTS.md:1-3"]
    out = run_cli("import", "--apply", expect=1)
    assert "refused" in out.stdout and "applied plan" in out.stderr
    assert plan(expect=1)["changes"] == 0  # the refused item is refused again, never planned


def test_a_secret_refuses_only_an_item_that_would_be_written(repo: Repo) -> None:
    # one scan of every source: a finding in an item that is only reported (a proposed ADR) refuses nothing
    repo.write("doc/adr/0001-keys.md", "# 1. Keys\n\nStatus: proposed\n\naws key AKIAIOSFODNN7EXAMPLE here\n")
    # a finding outside every item of a written source (a managed block is no item's text) refuses nothing
    block = "<!-- memzoi:start -->\naws key AKIAIOSFODNN7EXAMPLE here\n<!-- memzoi:end -->\n"
    repo.write("AGENTS.md", "## Build\n\nRun make.\n\n" + block)
    repo.commit("sources")
    result = plan()
    assert by_where(result, "doc/adr/0001-keys.md")[0]["action"] == "skipped"
    assert [e["where"] for e in entries(result, "create")] == ["AGENTS.md:1-3"]
    out = run_cli("import", "--adr-status", "proposed", expect=1)
    assert "doc/adr/0001-keys.md:1-5: refused: secret at doc/adr/0001-keys.md:5:" in out.stderr, out.stderr


def test_usage_errors(repo: Repo) -> None:
    assert "exclude each other" in run_cli("import", "--write", "--apply", expect=2).stderr
    assert "--commit goes with --apply" in run_cli("import", "--commit", expect=2).stderr
    assert "not a file git tracks" in run_cli("import", "nothing.md", expect=2).stderr


def test_import_through_real_git(basic: Repo) -> None:
    """The installed command, through git's own dispatch."""
    out = git("memzoi", "import", "--apply", "--commit", cwd=basic.path)
    assert "applied plan" in out.stderr
    assert "0 change(s)" in git("memzoi", "import", cwd=basic.path).stdout


def test_make_repo_without_memzoi_plans_all_creates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = make_repo(tmp_path / "fresh", init_memzoi=False)
    copy_fixture(BASIC, fresh)
    monkeypatch.chdir(fresh.path)
    assert plan()["changes"] == 17


# --- public files ---------------------------------------------------------------------------------------------


PUBLIC = FIXTURES / "import" / "public"


def test_public_agents_md_and_madr_decisions(repo: Repo) -> None:
    """openai/codex's AGENTS.md and adr/madr's decisions (fixtures/import/public/NOTICE.md names their licences)."""
    copy_fixture(PUBLIC / "codex", repo)
    copy_fixture(PUBLIC / "madr", repo)
    result = plan()
    agents = by_where(result, "AGENTS.md:")
    assert [e["title"] for e in agents] == [
        "Rust/codex-rs",
        "TUI style conventions",
        "TUI code conventions",
        "Tests",
        "App-server API Development Best Practices",
    ]
    assert {e["action"] for e in agents} == {"create"}
    assert next(e for e in agents if e["title"] == "Tests")["type"] == "procedure"
    madr = {e["where"].split(":")[0].rsplit("/", 1)[-1]: e for e in entries(result) if "decisions" in e["where"]}
    assert madr["0003-provide-own-madr-tools.md"]["reason"] == "ADR status: on hold"
    # no status, and `status: accepted` inside the fenced example of 0013 is not its status
    assert madr["0013-use-yaml-front-matter-for-meta-data.md"]["reason"] == "ADR status: unknown"
    assert "adr-template.md" not in madr and "index.md" not in madr
    assert len(madr) == 19 and all(e["action"] == "skipped" for e in madr.values())
    asked = plan("--adr-status", "unknown")
    imported = [e for e in entries(asked, "create") if "decisions" in e["where"]]
    assert len(imported) == 18 and {e["type"] for e in imported} == {"decision"}
    run_cli("import", "--apply", "--commit", "--adr-status", "unknown")
    run_cli("validate")
    assert plan("--adr-status", "unknown")["changes"] == 0
    hits = run_cli("search", "snapshot insta", "--json").json()["hits"]
    assert hits and hits[0]["title"] == "Tests"


def test_a_big_section_splits_once_more(repo: Repo) -> None:
    parts = "".join(f"### Part {n}\n\n" + ("Keep the payload small. " * 40) + "\n\n" for n in range(12))
    repo.write("AGENTS.md", f"# Big\n\n## Guide\n\nIntro.\n\n{parts}## Small\n\nShort.\n")
    repo.commit("big")
    titles = [e["title"] for e in entries(plan(), "create")]
    assert titles == ["Guide", *(f"Guide: Part {n}" for n in range(12)), "Small"]


# --- sync back ------------------------------------------------------------------------------------------------


def test_export_into_and_cursor_rules_round_trip_is_a_fixed_point(basic: Repo) -> None:
    run_cli("import", "--apply", "--commit")
    hand = (basic.path / "AGENTS.md").read_text()
    run_cli("export", "agents-md", "--into", "AGENTS.md")
    run_cli("export", "claude-md", "--into", "worker/CLAUDE.md")
    run_cli("export", "cursor-rules")
    agents = (basic.path / "AGENTS.md").read_text()
    assert agents.startswith(hand.rstrip("\n") + "\n\n<!-- memzoi:start -->\n")  # hand-written text untouched
    assert agents.endswith("<!-- memzoi:end -->\n")
    block = agents[len(hand) :]
    assert "worker-queues" in block and "`security`" not in block  # AGENTS.md's own records stay out of its block
    rules = sorted(p.name for p in (basic.path / ".cursor/rules/memzoi").glob("*.mdc"))
    assert "api.mdc" in rules and "react-components.mdc" not in rules  # still a Cursor rule of its own
    api = (basic.path / ".cursor/rules/memzoi/api.mdc").read_text()
    assert api.startswith("---\ndescription: ") and "globs: services/api/**/*.ts,services/api/**/*.json\n" in api
    assert "alwaysApply: false\n" in api
    basic.commit("synced")
    result = plan()
    assert result["changes"] == 0
    assert {e["where"].split(":")[0] for e in entries(result, "generated")} >= {
        f".cursor/rules/memzoi/{r}" for r in rules
    }
    before = {p: p.read_bytes() for p in [basic.path / "AGENTS.md", basic.path / "worker/CLAUDE.md"]}
    before.update({p: p.read_bytes() for p in (basic.path / ".cursor/rules/memzoi").glob("*.mdc")})
    run_cli("export", "agents-md", "--into", "AGENTS.md")
    run_cli("export", "claude-md", "--into", "worker/CLAUDE.md")
    run_cli("export", "cursor-rules")
    after = {p: p.read_bytes() for p in before}
    assert after == before
    assert git("status", "--porcelain", cwd=basic.path).stdout == ""


def test_cursor_rules_never_write_through_a_link_or_into_memory(basic: Repo, tmp_path: Path) -> None:
    run_cli("import", "--apply", "--commit")
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.rmtree(basic.path / ".cursor")
    os.symlink(outside, basic.path / ".cursor")  # a clone chooses what .cursor is
    out = run_cli("export", "cursor-rules", expect=1)
    assert out.stderr.splitlines()[0] == (
        "git memzoi: .cursor is a symlink; export writes into the repository only through real folders, never a link"
    )
    assert list(outside.iterdir()) == []
    os.unlink(basic.path / ".cursor")
    before = memzoi_files(basic)
    out = run_cli("export", "cursor-rules", "--output", ".memzoi/records", expect=2)
    assert "inside .memzoi/" in out.stderr and "Traceback" not in out.stderr
    assert memzoi_files(basic) == before
    elsewhere = tmp_path / "elsewhere"
    run_cli("export", "cursor-rules", "--output", str(elsewhere))
    assert list((elsewhere / ".cursor/rules/memzoi").glob("*.mdc"))


def test_export_into_keeps_text_around_an_existing_block(repo: Repo) -> None:
    repo.write("CLAUDE.md", "# Mine\n\n<!-- memzoi:start -->\nold\n<!-- memzoi:end -->\n\n## Footer\n\nKeep me.\n")
    repo.commit("claude")
    run_cli("export", "claude-md", "--into", "CLAUDE.md")
    text = (repo.path / "CLAUDE.md").read_text()
    assert text.startswith("# Mine\n\n<!-- memzoi:start -->\n<!-- Generated by git memzoi")
    assert text.endswith("<!-- memzoi:end -->\n\n## Footer\n\nKeep me.\n") and "\nold\n" not in text
    repo.write("CLAUDE.md", "# Mine\n\n<!-- memzoi:start -->\nold\n")
    out = run_cli("export", "claude-md", "--into", "CLAUDE.md", expect=1)
    assert "CLAUDE.md:3: import-marker:" in out.stderr


def test_other_formats(repo: Repo) -> None:
    repo.write(".claude/rules/frontend.md", "---\npaths:\n  - apps/web/**\n---\n# Frontend\n\nUse the design tokens.\n")
    repo.write(".windsurf/rules/style.md", "---\ntrigger: glob\nglobs: lib/*.rb\n---\nTwo-space indents in Ruby.\n")
    repo.write(".clinerules/deploy.md", "---\npaths: infra/**\n---\n# Deploy\n\nDeploy with terraform only.\n")
    repo.write(".cursorrules", "Prefer small pull requests.\n")
    repo.write("GEMINI.md", "## Gemini\n\nAnswer briefly.\n")
    repo.write("svc/AGENTS.override.md", "## Override\n\nThis service pins Node 18.\n")
    repo.commit("formats")
    result = plan()
    got = {e["where"].split(":")[0]: (e["title"], e["applies_to"]) for e in entries(result, "create")}
    assert got == {
        ".claude/rules/frontend.md": ("Frontend", ["apps/web/**"]),
        ".windsurf/rules/style.md": ("style", ["lib/**"]),
        ".clinerules/deploy.md": ("Deploy", ["infra/**"]),
        ".cursorrules": (".cursorrules", []),
        "GEMINI.md": ("Gemini", []),
        "svc/AGENTS.override.md": ("svc: Override", ["svc/**"]),
    }
    deploy = by_where(result, ".clinerules/deploy.md")[0]
    assert (deploy["type"], deploy["lane"]) == ("procedure", "procedural")
    assert by_where(plan("--type", "preference"), "GEMINI.md")[0]["type"] == "preference"


def test_a_tracked_file_missing_from_the_work_tree_is_left_out(basic: Repo) -> None:
    (basic.path / "worker/AGENTS.md").unlink()
    assert not by_where(plan(), "worker/AGENTS.md")
    assert "missing from the work tree" in run_cli("import", "worker/AGENTS.md", expect=2).stderr


def test_claude_md_imports_are_followed_with_the_importing_files_scope(repo: Repo) -> None:
    repo.write("app/CLAUDE.md", "## App\n\nSee @docs/style.md and `@not/this.md`; mail me at a@b.\n")
    repo.write("app/docs/style.md", "## Style\n\nTabs, not spaces.\n")
    repo.write("docs/outside.md", "## Outside\n\nNot imported.\n")
    repo.write("CLAUDE.md", "## Root\n\nAlso @~/personal.md and @../escape.md.\n")
    repo.commit("imports")
    created = {e["title"]: e["applies_to"] for e in entries(plan(), "create")}
    assert created == {"app: App": ["app/**"], "app: Style": ["app/**"], "Root": []}


def test_superseded_by_link_becomes_a_supersede_of_the_old_adrs_record(repo: Repo) -> None:
    old = "# 2. Use PostgreSQL\n\n## Status\n\nAccepted\n\n## Decision\n\nUse PostgreSQL.\n"
    repo.write("doc/adr/0002-use-postgres.md", old)
    repo.commit("adr 2")
    run_cli("import", "--apply", "--commit")
    repo.write(
        "doc/adr/0002-use-postgres.md",
        old.replace("Accepted", "Superseded by [3. Use PostgreSQL 16](0003-use-postgres-16.md)"),
    )
    repo.write("doc/adr/0003-use-postgres-16.md", "# 3. Use PostgreSQL 16\n\n## Status\n\nAccepted\n\nUse 16.\n")
    repo.commit("adr 3")
    result = plan("--prune")
    assert [(e["action"], e["target"]) for e in entries(result) if e["action"] in ("supersede", "tombstone")] == [
        ("supersede", "2-use-postgresql")
    ]
    assert (
        by_where(result, "doc/adr/0003")[0]["reason"]
        == "doc/adr/0003-use-postgres-16.md supersedes doc/adr/0002-use-postgres.md"
    )
    run_cli("import", "--prune", "--apply", "--commit")
    run_cli("validate")
    new = (repo.path / ".memzoi/records/semantic/decisions/3-use-postgresql-16.md").read_text()
    assert "supersedes: 2-use-postgresql" in new
    assert plan("--prune")["changes"] == 0
