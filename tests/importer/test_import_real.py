"""`git memzoi import` on real repositories' instruction files (fixtures/import/real/<repo>/files, NOTICE.md there).

Each test copies a public repository's files into a test repository (some placed or edited as the test
says, to give the shape the row is about) and runs `git memzoi import` as a subprocess.
"""

from __future__ import annotations

import os
from pathlib import Path

from support import FIXTURES, Repo, run_cli
from support.importer import entries, memzoi_files, pending, plan

REAL = FIXTURES / "import" / "real"
SECRET = "DATABASE_URL=postgres://user:password@db:5432/mydb"


def real(repo_name: str, path: str) -> str:
    return (REAL / repo_name / "files" / path).read_text(encoding="utf-8")


def copy_real(repo: Repo, repo_name: str, *paths: str, into: dict[str, str] | None = None) -> None:
    """Write `paths` of a fixture repository at their own paths, and `into` (target: fixture path) elsewhere."""
    for path in paths:
        repo.write(path, real(repo_name, path))
    for target, path in (into or {}).items():
        repo.write(target, real(repo_name, path))


def where(result: dict, prefix: str) -> list[dict]:
    return [e for e in result["entries"] if e["where"].startswith(prefix)]


def titled(result: dict, title: str) -> dict:
    return next(e for e in result["entries"] if e["title"] == title)


def test_a_secret_placeholder_refuses_its_item_by_name_and_the_rest_is_planned_and_written(repo: Repo) -> None:
    text = real("sentry-javascript", "CLAUDE.md")
    text += f"\n## Environment\n\nBad:\n\n```\n{SECRET}\n```\n\nGood: read it from the environment.\n"
    repo.write("CLAUDE.md", text)
    copy_real(repo, "sentry-javascript", ".cursor/rules/sdk_development.mdc")
    repo.commit("instruction files")
    line = text.split("\n").index(SECRET) + 1
    result = plan(expect=1)  # the rest is planned; the exit says an item was refused
    refused = entries(result, "refused")
    assert [e["title"] for e in refused] == ["Environment"], refused
    assert f"at CLAUDE.md:{line}" in refused[0]["reason"] and "password in a URL" in refused[0]["reason"]
    creates = entries(result, "create")
    assert len(creates) >= 10 and not any(e["title"] == "Environment" for e in creates)
    shown = run_cli("import", expect=1)
    assert f"refused     CLAUDE.md:{refused[0]['where'].split(':')[1]}" in shown.stdout
    run_cli("import", "--write", expect=1)
    assert len(pending(repo)) == len(creates)
    assert not any("mydb" in p.read_text() for p in pending(repo))


def test_exclude_on_the_command_line_and_in_the_config(repo: Repo) -> None:
    copy_real(
        repo,
        "sentry-javascript",
        "CLAUDE.md",
        ".cursor/rules/sdk_development.mdc",
        ".cursor/rules/fetch-docs/scopes.mdc",
        ".cursor/rules/fetch-docs/attributes.mdc",
    )
    repo.commit("instruction files")
    result = plan("--exclude", ".cursor/rules/fetch-docs/**", "--exclude", "CLAUDE.md")
    skipped = {e["where"]: e["reason"] for e in entries(result, "skipped")}
    assert skipped[".cursor/rules/fetch-docs/scopes.mdc"] == "excluded by .cursor/rules/fetch-docs/**"
    assert skipped["CLAUDE.md"] == "excluded by CLAUDE.md"
    assert [e["where"].split(":")[0] for e in entries(result, "create")] == [".cursor/rules/sdk_development.mdc"]
    repo.write(".memzoi/config.toml", '[import]\nexclude = ["fetch-docs"]\n')
    result = plan()
    assert {e["where"] for e in entries(result, "skipped") if e["reason"] == "excluded by fetch-docs"} == {
        ".cursor/rules/fetch-docs/scopes.mdc",
        ".cursor/rules/fetch-docs/attributes.mdc",
    }
    repo.write(".memzoi/config.toml", "[import]\nexclude = [1]\n")
    out = run_cli("import", expect=2)
    assert "import.exclude: item 0" in out.stderr


def test_text_before_the_first_heading_is_an_item(repo: Repo) -> None:
    text = real("gemini-cli", "GEMINI.md")
    repo.write(".github/copilot-instructions.md", text.split("\n", 2)[2])  # its H1 taken off: a preamble
    repo.write("GEMINI.md", text)
    repo.commit("instruction files")
    result = plan()
    preamble = where(result, ".github/copilot-instructions.md:1-")
    assert [e["action"] for e in preamble] == ["create"] and preamble[0]["title"] == "copilot-instructions.md"
    lead = where(result, "GEMINI.md:1-")  # under an H1, the span holds the heading
    assert lead[0]["title"] == "Gemini CLI Project Context"


def test_nested_cursor_rules_govern_their_package_and_an_unread_file_gets_a_line(repo: Repo) -> None:
    copy_real(
        repo,
        "sentry-javascript",
        into={
            "packages/node/.cursor/rules/sdk_development.mdc": ".cursor/rules/sdk_development.mdc",
            "packages/node/.cursor/rules/notes.txt": ".cursor/rules/fetch-docs/scopes.mdc",
            ".github/instructions/quarantine.md": "CLAUDE.md",
        },
    )
    repo.commit("instruction files")
    result = plan()
    nested = where(result, "packages/node/.cursor/rules/sdk_development.mdc")
    assert [(e["action"], e["applies_to"]) for e in nested] == [("create", ["packages/node/**"])]
    unread = {e["where"]: e["reason"] for e in entries(result, "skipped")}
    assert "not a .mdc file" in unread["packages/node/.cursor/rules/notes.txt"]
    assert "not a .instructions.md file" in unread[".github/instructions/quarantine.md"]


def test_identical_sections_in_sibling_folders_keep_every_folders_scope(repo: Repo) -> None:
    text = real("workers-sdk", "packages/workers-utils/AGENTS.md")
    for package in ("alpha", "beta", "gamma"):
        repo.write(f"packages/{package}/AGENTS.md", text)
    repo.commit("instruction files")
    result = plan()
    scopes = {tuple(e["applies_to"]) for e in entries(result, "create")}
    assert {("packages/alpha/**",), ("packages/beta/**",), ("packages/gamma/**",)} <= scopes
    assert not entries(result, "duplicate")


def test_github_agents_md_governs_github(repo: Repo) -> None:
    copy_real(repo, "workers-sdk", into={".github/AGENTS.md": "packages/wrangler/AGENTS.md"})
    repo.commit("instruction files")
    result = plan()
    assert {tuple(e["applies_to"]) for e in entries(result, "create")} == {(".github/**",)}


def test_a_symlinked_root_agents_md_is_the_whole_repositorys(repo: Repo) -> None:
    copy_real(repo, "workers-sdk", into={".agents/AGENTS.md": "AGENTS.md"})
    os.symlink(".agents/AGENTS.md", repo.path / "AGENTS.md")
    os.symlink("AGENTS.md", repo.path / "CLAUDE.md")
    repo.commit("instruction files")
    result = plan()
    creates = entries(result, "create")
    assert creates and all(e["applies_to"] == [] for e in creates)
    assert all(e["where"].startswith("AGENTS.md:") for e in creates)
    dupes = {e["where"]: e["reason"] for e in entries(result, "duplicate")}
    assert dupes == {
        ".agents/AGENTS.md": "same file as AGENTS.md (imported once)",
        "CLAUDE.md": "same file as AGENTS.md (imported once)",
    }


def _front(text: str, front: str) -> str:
    """`text` (a rule file) with its front matter replaced by `front`."""
    body = text.split("---\n", 2)[2]
    return f"---\n{front}---\n{body}"


def test_brace_globs_exact_paths_and_a_second_front_matter(repo: Repo) -> None:
    xmldoc = real("aspire", ".github/instructions/xmldoc.instructions.md")
    repo.write(
        ".github/instructions/xmldoc.instructions.md", _front(xmldoc, 'applyTo: "src/**/*.{cs,props}, eng/*.{cs}"\n')
    )
    quarantine = real("aspire", ".github/instructions/quarantine.instructions.md")
    repo.write(
        ".github/instructions/quarantine.instructions.md",
        _front(quarantine, "applyTo: [tools/QuarantineTools/Program.cs]\n"),
    )
    sdk = real("sentry-javascript", ".cursor/rules/sdk_development.mdc")
    repo.write(".cursor/rules/sdk.mdc", "---\nalwaysApply: true\n---\n\n" + sdk)  # a tool put its block first
    repo.commit("instruction files")
    result = plan()
    xml = where(result, ".github/instructions/xmldoc.instructions.md")[0]
    assert xml["applies_to"] == ["src/**", "eng/**"], xml
    exact = where(result, ".github/instructions/quarantine.instructions.md")[0]
    assert exact["applies_to"] == ["tools/QuarantineTools/Program.cs"] and exact["warnings"] == []
    double = where(result, ".cursor/rules/sdk.mdc")[0]
    assert double["title"] == "SDK Development Rules"
    run_cli("import", "--write")
    packet = pending(repo)[0].parent / f"{double['proposal_id']}.md"
    text = packet.read_text()
    assert "Guidelines for working on the Sentry" not in text.split("---", 2)[2].split("# SDK Development Rules")[0]


def test_sections_about_the_instruction_files_are_skipped_with_a_plan_line(repo: Repo) -> None:
    copy_real(repo, "workers-sdk", "AGENTS.md", "CLAUDE.md", "packages/wrangler/AGENTS.md")
    repo.write("docs/AGENTS.md", real("aspire", "AGENTS.md"))
    repo.commit("instruction files")
    result = plan()
    skipped = {e["title"]: e["reason"] for e in entries(result, "skipped")}
    assert "Package-Specific Guidance" in skipped and "about the instruction files" in skipped["CLAUDE.md"]
    assert "docs: Trust These Instructions" in skipped and "docs: Available Skills" in skipped
    assert "packages/wrangler: Wrangler — Agent Guide" in skipped  # "See root AGENTS.md for …": a pointer
    kept = {e["title"] for e in entries(result, "create")}
    assert {"Start Here", "packages/wrangler: Conventions (Wrangler-Specific)", "docs: Repository Overview"} <= kept


def test_more_kinds_of_sections_about_the_instruction_files_are_skipped(repo: Repo) -> None:
    wrangler = real("workers-sdk", "packages/wrangler/AGENTS.md")
    extra = (
        "\n## Applicability\n\nEverything under `packages/wrangler`, tests included.\n"
        "\n## Hierarchy\n\n1. The root guide\n2. This package's guide\n3. A folder's guide\n"
        "\n## Document history\n\n- 2025-01: first version\n- 2025-03: testing added\n"
        "\n## Local precedence\n\nRules here take precedence over the root ones for files in this package.\n"
        "\n## Package guides\n\n"
        + "".join(
            f"- See `packages/{p}/AGENTS.md` for the {p} package's own rules.\n" for p in ("a", "b", "c", "d") * 12
        )
    )
    repo.write("packages/wrangler/AGENTS.md", wrangler + extra)
    repo.write(
        ".cursor/rules/cursor_rules.mdc",
        "---\ndescription: Guidelines for creating and maintaining Cursor "
        "rules to ensure consistency\nalwaysApply: true\n---\n\n- Keep each rule under 500 lines.\n",
    )
    copy_real(repo, "sentry-javascript", ".cursor/rules/sdk_development.mdc")
    repo.commit("instruction files")
    skipped = {e["title"]: e["reason"] for e in entries(plan(), "skipped")}
    for title in ("Applicability", "Hierarchy", "Document history", "Local precedence", "Package guides"):
        assert "about the instruction files" in skipped[f"packages/wrangler: {title}"], title
    assert "a rule about rule files" in next(r for t, r in skipped.items() if "Cursor" in t or "cursor" in t)
    kept = {e["title"] for e in entries(plan(), "create")}
    assert "packages/wrangler: Conventions (Wrangler-Specific)" in kept
    assert any("SDK" in title for title in kept)  # a rule about the code, not about rules


def test_generic_titles_carry_their_files_name(repo: Repo) -> None:
    copy_real(repo, "workers-sdk", into={"AGENTS.md": "packages/wrangler/AGENTS.md"})
    repo.commit("instruction files")
    titles = {e["title"] for e in entries(plan(), "create")}
    assert "Overview (AGENTS.md)" in titles and "Build" in titles


def test_a_second_import_plans_nothing_and_repeats_no_warning(repo: Repo) -> None:
    for path in ("xmldoc", "quarantine", "hosting-readme"):
        copy_real(repo, "aspire", f".github/instructions/{path}.instructions.md")
    repo.commit("instruction files")
    first = plan()
    assert any(e["warnings"] for e in first["entries"])
    run_cli("import", "--write")
    again = run_cli("import")
    assert "\ncreate " not in "\n" + again.stdout and "pending " in again.stdout
    assert "already pending as" in again.stdout
    run_cli("import", "--apply")
    second = plan()
    assert second["changes"] == 0 and not any(e["warnings"] for e in second["entries"])
    assert "warning" not in run_cli("import").stdout


def test_memzoi_files_untouched_by_a_plan(repo: Repo) -> None:
    copy_real(repo, "gemini-cli", "GEMINI.md")
    repo.commit("instruction files")
    before = memzoi_files(repo)
    plan("--exclude", "nothing/**")
    assert memzoi_files(repo) == before and Path(repo.path / "GEMINI.md").is_file()


def test_the_plan_puts_near_duplicates_and_likely_contradictions_first(repo: Repo) -> None:
    copy_real(repo, "sentry-javascript", "CLAUDE.md", ".cursor/rules/sdk_development.mdc")
    agents = real("workers-sdk", "AGENTS.md") + "\n## Branches\n\nNever push to `main`. Open PRs from `feature/*`.\n"
    repo.write("AGENTS.md", agents)
    repo.write(
        "GEMINI.md", real("gemini-cli", "GEMINI.md") + "\n## Branches\n\nNever push to `develop`; PRs from `rebuild`.\n"
    )
    repo.commit("instruction files")
    result = plan()
    first = result["review_first"]
    near = [g for g in first if g["kind"] == "near-duplicate"]
    assert [".cursor/rules/sdk_development.mdc:1-209", "CLAUDE.md:39-56"] in [g["entries"] for g in near]
    conflicts = {tuple(sorted(g["entries"])): g["why"] for g in first if g["kind"] == "contradiction"}
    ours = conflicts[("AGENTS.md:155-157", "GEMINI.md:98-100")]
    assert "never push `main`" in ours and "never push `develop`" in ours
    # the three files' branch rules differ (sentry's PRs target `develop`): each pair is named, none within one file
    assert all(a.split(":")[0] != b.split(":")[0] for a, b in conflicts)
    shown = run_cli("import").stdout.splitlines()
    assert shown[0].startswith("review first: ")  # before every plan line
