"""What agents get from memory imported from real repositories' instruction files (fixtures/import/real).

Each test copies one public repository's files into a fresh repository, imports and applies them with
`git memzoi import --apply`, then runs `git memzoi agent hook CLIENT` as a process on the JSON the client sends.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from support import Repo, git, memzoi_exe, run_cli
from support.agents import client_event
from support.paths import FIXTURES, ROOT

sys.path.insert(0, str(ROOT / "scripts"))
import bench_realrepos

REAL = FIXTURES / "import" / "real"
#: The event argument of Copilot CLI's hook command, by the recorded event's file name.
COPILOT_EVENTS = {
    "sessionstart": "sessionStart",
    "pretooluse": "preToolUse",
    "userpromptsubmitted": "userPromptSubmitted",
}


def imported(repo: Repo, name: str) -> None:
    """The repository `name`'s instruction files, committed, imported and applied."""
    shutil.copytree(REAL / name / "files", repo.path, symlinks=True, dirs_exist_ok=True)
    repo.commit(f"{name}'s instruction files")
    run_cli("import", "--apply", cwd=repo.path)


def hook(client: str, name: str, cwd: Path, **override: Any) -> str:
    """Every text `agent hook CLIENT` answers the recorded event `name` with, run as a process."""
    # Copilot CLI's hook command names its event (`agent install copilot` writes it so); the others' JSON does
    argv = [client, COPILOT_EVENTS[name.partition("-")[0]]] if client == "copilot" else [client]
    result = subprocess.run(
        [memzoi_exe(), "agent", "hook", *argv],
        input=client_event(client, name, cwd, **override),
        cwd=cwd,
        capture_output=True,
        text=True,
        env=os.environ.copy(),
        timeout=120,
        check=True,
    )
    return bench_realrepos.texts_in(json.loads(result.stdout)) if result.stdout.strip() else ""


def record_of(repo: Repo, source: str, title_part: str) -> str:
    """The ID of the record imported from `source` whose title holds `title_part`."""
    for path in (repo.path / ".memzoi/records").rglob("*.md"):
        text = path.read_text(encoding="utf-8")
        if f"import:{source}?" in text and re.search(rf"^title: .*{re.escape(title_part)}", text, re.M):
            found = re.search(r"^id: (\S+)", text, re.M)
            assert found is not None
            return found.group(1)
    raise AssertionError(f"no record from {source} titled like {title_part!r}")


def in_full(text: str, record_id: str) -> bool:
    return re.search(rf"^### [^\n]*\({re.escape(record_id)}\)\s*$", text, re.M) is not None


def test_glob_rule_reaches_the_agent_on_a_matching_path_only(repo: Repo) -> None:
    imported(repo, "aspire")
    xmldoc = record_of(repo, ".github/instructions/xmldoc.instructions.md", "XML Documentation")
    start = hook("claude", "sessionstart", repo.path)
    assert xmldoc not in start  # applyTo: src/**/*.cs: never at session start
    new_file = {"file_path": f"{repo.path}/src/Aspire.Hosting/NewResource.cs", "content": "class R {}\n"}
    assert xmldoc in hook("claude", "pretooluse-write", repo.path, tool_input=new_file, session_id="s2")
    readme = {"file_path": f"{repo.path}/src/Aspire.Hosting/README.md", "content": "# R\n"}
    # src/** is where its scope was broadened to; the glob itself does not match a README
    assert xmldoc not in hook("claude", "pretooluse-write", repo.path, tool_input=readme, session_id="s3")
    prompt = "Add a summary to src/Aspire.Hosting/ResourceBuilder.cs"
    assert xmldoc in hook("claude", "userpromptsubmit", repo.path, prompt=prompt, session_id="s4")
    assert (
        xmldoc
        in run_cli(
            "context", "--task", "add a summary", "--path", "src/Aspire.Hosting/ResourceBuilder.cs", cwd=repo.path
        ).stdout
    )


def test_cursor_activation_decides_session_start(repo: Repo) -> None:
    imported(repo, "sentry-javascript")
    always = record_of(repo, ".cursor/rules/sdk_development.mdc", "SDK Development")
    requested = record_of(repo, ".cursor/rules/fetch-docs/scopes.mdc", "")
    on_path = record_of(repo, ".cursor/rules/upgrade_opentelemetry_instrumentations.mdc", "")
    start = hook("codex", "sessionstart", repo.path)
    assert always in start
    assert requested not in start and on_path not in start
    edit = {"file_path": f"{repo.path}/packages/core/src/index.ts", "content": "export {};\n"}
    assert on_path in hook("claude", "pretooluse-write", repo.path, tool_input=edit)  # globs: *


def test_root_file_first_in_source_order_adrs_by_relevance_only(repo: Repo) -> None:
    imported(repo, "amux")
    start = hook("codex", "sessionstart", repo.path)
    ids = re.findall(r"\(([a-z0-9][a-z0-9-]*)\)", start.split("## Standing rules", 1)[1])
    claude_md = [rid for rid in ids if "import:CLAUDE.md?" in _record_text(repo, rid)]
    assert claude_md
    lines = [_first_line(repo, rid) for rid in claude_md]
    assert lines == sorted(lines)
    storage = record_of(repo, "docs/adr/021-deprecate-mailbox-for-storage.md", "Deprecate Mailbox")
    hooks = record_of(repo, "docs/adr/027-hook-execution-directory.md", "Hook Execution Directory")
    assert not any("format=adr" in _record_text(repo, rid) for rid in ids)  # no ADR at session start
    prompt = "why was the mailbox deprecated in favour of general storage?"
    assert storage in hook("claude", "userpromptsubmit", repo.path, prompt=prompt, session_id="a1")
    init = {"file_path": f"{repo.path}/internal/cli/commands/hooks/init.go", "content": "package hooks\n"}
    assert hooks in hook("claude", "pretooluse-write", repo.path, tool_input=init, session_id="a2")
    assert storage in run_cli("search", "mailbox storage", cwd=repo.path).stdout


def test_a_long_record_is_its_title_and_description_line(repo: Repo) -> None:
    long_section = "## Release checklist\n\n" + "".join(
        f"- Step {n}: check the release notes twice.\n" for n in range(120)
    )
    text = (REAL / "amux/files/CLAUDE.md").read_text(encoding="utf-8")
    shutil.copytree(REAL / "amux/files", repo.path, symlinks=True, dirs_exist_ok=True)
    repo.write("CLAUDE.md", text.replace("## Project Overview", long_section + "\n## Project Overview", 1))
    repo.commit("a long section")
    run_cli("import", "--apply", cwd=repo.path)
    long_id = record_of(repo, "CLAUDE.md", "Release checklist")
    later = record_of(repo, "CLAUDE.md", "Project Overview")
    start = hook("codex", "sessionstart", repo.path)
    assert re.search(rf"^- Release checklist \({long_id}\): Step 0: check the release notes twice\. .*…$", start, re.M)
    assert in_full(start, later)  # what comes after the long record is not crowded out


def _record_text(repo: Repo, record_id: str) -> str:
    for path in (repo.path / ".memzoi/records").rglob("*.md"):
        text = path.read_text(encoding="utf-8")
        if re.search(rf"^id: {re.escape(record_id)}$", text, re.M):
            return text
    return ""


def _first_line(repo: Repo, record_id: str) -> int:
    found = re.search(r"lines=(\d+)-", _record_text(repo, record_id))
    assert found is not None
    return int(found.group(1))


def test_a_rule_from_a_file_the_client_loads_is_not_sent_again(repo: Repo) -> None:
    imported(repo, "aspire")
    agents = [rid for rid in re.findall(r"\(([a-z0-9][a-z0-9-]*)\)", hook("claude", "sessionstart", repo.path))]
    from_agents_md = [rid for rid in agents if "import:AGENTS.md?" in _record_text(repo, rid)]
    assert from_agents_md
    claude = hook("claude", "sessionstart", repo.path)
    codex = hook("codex", "sessionstart", repo.path)
    assert any(in_full(claude, rid) for rid in from_agents_md)  # Claude Code does not read AGENTS.md here
    assert not any(in_full(codex, rid) for rid in from_agents_md)
    assert all(f"({rid}), in AGENTS.md" in codex for rid in from_agents_md)
    # once the file no longer holds a section's text, Codex's own copy is not that rule: it is sent; the sections
    # the file still holds stay Codex's
    text = (repo.path / "AGENTS.md").read_text(encoding="utf-8")
    general = record_of(repo, "AGENTS.md", "General")
    repo.write("AGENTS.md", text.replace("## General\n", "## General\n\nA new line.\n", 1))
    codex = hook("codex", "sessionstart", repo.path, session_id="e1")
    assert general in codex and f"({general}), in AGENTS.md" not in codex
    assert all(f"({rid}), in AGENTS.md" in codex for rid in from_agents_md if rid != general)


#: Each client's own instruction file, as `LoadedFiles` knows it.
OWN_FILE = {
    "claude": "CLAUDE.md",
    "codex": "AGENTS.md",
    "gemini": "GEMINI.md",
    "copilot": ".github/copilot-instructions.md",
}


def _ids_from(repo: Repo, source: str) -> dict[str, str]:
    """{title: ID} of the active records imported from `source`."""
    found: dict[str, str] = {}
    for path in (repo.path / ".memzoi/records").rglob("*.md"):
        text = path.read_text(encoding="utf-8")
        if f"import:{source}?" in text and re.search(r"^status: active$", text, re.M):
            title = re.search(r"^title: (.*)$", text, re.M)
            rid = re.search(r"^id: (\S+)$", text, re.M)
            assert title is not None and rid is not None
            found[title.group(1).strip("'\"")] = rid.group(1)
    return found


@pytest.mark.parametrize("client", sorted(OWN_FILE))
def test_an_edited_and_reimported_file_keeps_its_other_rules_the_clients(repo: Repo, client: str) -> None:
    own = OWN_FILE[client]
    text = (REAL / "gemini-cli" / "files" / "GEMINI.md").read_text(encoding="utf-8")
    repo.write(own, text)
    repo.commit(f"{own} of gemini-cli")
    run_cli("import", "--apply", "--commit", cwd=repo.path)
    before = _ids_from(repo, own)
    testing, docs = before["Testing Conventions"], before["Documentation"]
    start = hook(client, "sessionstart", repo.path, session_id="s1")
    assert before and all(f"({rid}), in {own}" in start for rid in before.values())
    # one section edited: its record is no longer the file's text, the others still are
    edited = text.replace("is less reliable.", "is less reliable; restore it in `afterEach`.", 1)
    repo.write(own, edited)
    start = hook(client, "sessionstart", repo.path, session_id="s2")
    assert testing in start and f"({testing}), in {own}" not in start
    assert all(f"({rid}), in {own}" in start for rid in before.values() if rid != testing)
    # the re-import supersedes that section's record alone; every rule is the client's again, none sent twice
    repo.commit(f"{own}: one section edited")
    run_cli("import", "--prune", "--apply", "--commit", cwd=repo.path)
    after = _ids_from(repo, own)
    assert {t: r for t, r in after.items() if r != after["Testing Conventions"]} == {
        t: r for t, r in before.items() if r != testing
    }
    start = hook(client, "sessionstart", repo.path, session_id="s3")
    assert all(f"({rid}), in {own}" in start for rid in after.values())
    assert not any(in_full(start, rid) for rid in after.values())
    # a file that no longer holds a section: that section's rule stops counting as the client's
    repo.write(own, edited[: edited.index("## Documentation")])
    start = hook(client, "sessionstart", repo.path, session_id="s4")
    assert docs in start and f"({docs}), in {own}" not in start
    assert f"({after['Testing Conventions']}), in {own}" in start


def test_claude_gets_a_claude_md_rule_as_a_mention(repo: Repo) -> None:
    imported(repo, "sentry-javascript")
    claude = hook("claude", "sessionstart", repo.path)
    codex = hook("codex", "sessionstart", repo.path)
    ids = set(re.findall(r"\(([a-z0-9][a-z0-9-]*)\)", codex))
    from_claude_md = [rid for rid in ids if "import:CLAUDE.md?" in _record_text(repo, rid)]
    assert from_claude_md
    assert any(in_full(codex, rid) for rid in from_claude_md)
    assert not any(in_full(claude, rid) for rid in from_claude_md)
    assert all(f"({rid}), in CLAUDE.md" in claude for rid in from_claude_md)


def test_gemini_gets_a_gemini_md_rule_as_a_mention(repo: Repo) -> None:
    imported(repo, "gemini-cli")
    overview = record_of(repo, "GEMINI.md", "Project Overview")
    assert f"- Project Overview ({overview}), in GEMINI.md" in hook("gemini", "sessionstart", repo.path)
    assert in_full(hook("codex", "sessionstart", repo.path), overview)


def test_pretooluse_gives_the_repository_wide_rule_that_names_the_file(repo: Repo) -> None:
    imported(repo, "sentry-javascript")
    ai = record_of(repo, ".cursor/rules/adding-a-new-ai-integration.mdc", "AI Integration")
    path = {"file_path": f"{repo.path}/packages/core/src/tracing/ai/gen-ai-attributes.ts", "content": "x\n"}
    text = hook("claude", "pretooluse-write", repo.path, tool_input=path, session_id="p1")
    assert ai in text  # `gen-ai-attributes.ts` is named in the rule, which applies to the whole repository
    unrelated = {"file_path": f"{repo.path}/packages/react/src/errorboundary.tsx", "content": "x\n"}
    assert ai not in hook("claude", "pretooluse-write", repo.path, tool_input=unrelated, session_id="p2")


def test_pretooluse_leaves_out_a_claude_md_rule_claude_code_has_loaded(repo: Repo) -> None:
    imported(repo, "amux")
    adr_rule = record_of(repo, "docs/adr/CLAUDE.md", "ADR Writing Instructions")
    read_first = {"file_path": f"{repo.path}/docs/adr/001-record-architecture-decisions.md", "content": "x\n"}
    new_file = {"file_path": f"{repo.path}/docs/adr/099-a-new-decision.md", "content": "x\n"}
    # an existing file is read before it is changed, which loads docs/adr/CLAUDE.md; a new one is written unread
    assert adr_rule not in hook("claude", "pretooluse-write", repo.path, tool_input=read_first, session_id="c1")
    assert adr_rule in hook("claude", "pretooluse-write", repo.path, tool_input=new_file, session_id="c2")
    patch = (
        "*** Begin Patch\n*** Update File: docs/adr/001-record-architecture-decisions.md\n@@\n-a\n+b\n*** End Patch\n"
    )
    codex = hook("codex", "pretooluse-apply-patch", repo.path, tool_input={"command": patch}, session_id="c3")
    assert adr_rule in codex  # Codex does not read CLAUDE.md


def test_pretooluse_leaves_out_a_rule_of_an_edited_and_reimported_claude_md(repo: Repo) -> None:
    imported(repo, "amux")
    adr_rule = record_of(repo, "docs/adr/CLAUDE.md", "ADR Writing Instructions")
    with (repo.path / "docs/adr/CLAUDE.md").open("a", encoding="utf-8") as out:
        out.write("\n## Numbering\n\nNumber a new ADR one past the highest number in docs/adr.\n")
    repo.commit("docs/adr/CLAUDE.md: a section added")
    run_cli("import", "--prune", "--apply", "--commit", cwd=repo.path)
    # the section is unchanged: its record is not superseded and still names the blob it was imported from
    assert record_of(repo, "docs/adr/CLAUDE.md", "ADR Writing Instructions") == adr_rule
    blob = git("hash-object", "docs/adr/CLAUDE.md", cwd=repo.path).stdout.strip()
    assert f"blob={blob}" not in _record_text(repo, adr_rule)
    read_first = {"file_path": f"{repo.path}/docs/adr/001-record-architecture-decisions.md", "content": "x\n"}
    new_file = {"file_path": f"{repo.path}/docs/adr/099-a-new-decision.md", "content": "x\n"}
    # the file still holds the section: Claude Code has it once it reads a file there
    assert adr_rule not in hook("claude", "pretooluse-write", repo.path, tool_input=read_first, session_id="r1")
    assert adr_rule in hook("claude", "pretooluse-write", repo.path, tool_input=new_file, session_id="r2")
    text = (repo.path / "docs/adr/CLAUDE.md").read_text(encoding="utf-8")
    repo.write("docs/adr/CLAUDE.md", text[text.index("## Numbering") :])
    assert adr_rule in hook("claude", "pretooluse-write", repo.path, tool_input=read_first, session_id="r3")


def _agents_md_records(repo: Repo, start: str, source: str = "AGENTS.md") -> list[str]:
    ids = dict.fromkeys(re.findall(r"\(([a-z0-9][a-z0-9-]*)\)", start))
    return [rid for rid in ids if f"import:{source}?" in _record_text(repo, rid)]


def test_codex_reads_a_symlinked_root_agents_md_itself(repo: Repo) -> None:
    (repo.path / ".agents").mkdir()
    shutil.copy(REAL / "aspire" / "files" / "AGENTS.md", repo.path / ".agents" / "AGENTS.md")
    (repo.path / "AGENTS.md").symlink_to(".agents/AGENTS.md")
    repo.commit("AGENTS.md is a link to .agents/AGENTS.md")
    run_cli("import", "--apply", cwd=repo.path)
    claude = hook("claude", "sessionstart", repo.path)
    rules = [rid for rid in re.findall(r"\(([a-z0-9][a-z0-9-]*)\)", claude) if "AGENTS.md?" in _record_text(repo, rid)]
    assert rules and any(in_full(claude, rid) for rid in rules)  # Claude Code reads no AGENTS.md
    codex = hook("codex", "sessionstart", repo.path)
    assert not any(in_full(codex, rid) for rid in rules)  # Codex reads the link's text: the same rules


def test_codex_does_not_read_agents_md_beside_an_override(repo: Repo) -> None:
    imported(repo, "aspire")
    rules = _agents_md_records(repo, hook("claude", "sessionstart", repo.path))
    assert rules and not any(in_full(hook("codex", "sessionstart", repo.path), rid) for rid in rules)
    repo.write("AGENTS.override.md", "# Local\n\nRun the tests before every push.\n")
    codex = hook("codex", "sessionstart", repo.path, session_id="o1")
    assert any(in_full(codex, rid) for rid in rules)  # Codex reads the override in its place


def test_codex_does_not_read_agents_md_past_32_kib(repo: Repo) -> None:
    # aspire's AGENTS.md with 12 KiB more before its rules: the last ones lie past the 32 KiB Codex reads
    text = (REAL / "aspire" / "files" / "AGENTS.md").read_text(encoding="utf-8")
    padding = "## Notes\n\n" + "".join(f"- Note {n}: keep this line as it is.\n" for n in range(400))
    repo.write("AGENTS.md", text.replace("## General", padding + "\n## General", 1))
    repo.commit("a long AGENTS.md")
    run_cli("import", "--apply", cwd=repo.path)
    late = record_of(repo, "AGENTS.md", "Localization files")
    early = record_of(repo, "AGENTS.md", "Repository Overview")
    codex = hook("codex", "sessionstart", repo.path)
    assert f"({early}), in AGENTS.md" in codex
    assert late in codex and f"({late}), in AGENTS.md" not in codex  # not Codex's already: listed as any rule
    # one section edited: the text Codex reads (its first 32 KiB) still holds the early rule, never the late one
    edited = (repo.path / "AGENTS.md").read_text(encoding="utf-8").replace("- Note 7:", "- Note seven:", 1)
    repo.write("AGENTS.md", edited)
    codex = hook("codex", "sessionstart", repo.path, session_id="k2")
    assert f"({early}), in AGENTS.md" in codex
    assert late in codex and f"({late}), in AGENTS.md" not in codex


def test_a_prompt_in_plain_words_finds_the_rule_in_the_projects_terms(repo: Repo) -> None:
    imported(repo, "gemini-cli")
    ink = record_of(repo, "packages/cli/GEMINI.md", "React & Ink")
    prompt = "the branch name in the footer is too long: shorten it with an ellipsis"
    assert ink in hook("claude", "userpromptsubmit", repo.path, prompt=prompt, session_id="w1")  # "truncation"


def test_a_cline_workflow_is_on_request_not_a_standing_rule(repo: Repo) -> None:
    """Cline loads `.clinerules/*.md` as rules and runs `.clinerules/workflows/*.md` by name only: a workflow is
    never given at session start, a rule is."""
    repo.write(".clinerules/general.md", "# General\n\nRun `bun run build:sdk` after changing SDK sources.\n")
    repo.write(".clinerules/workflows/release.md", "# Release\n\n1. Bump the version in package.json.\n2. Tag it.\n")
    repo.commit("cline rules and a workflow")
    run_cli("import", "--apply", cwd=repo.path)
    start = hook("claude", "sessionstart", repo.path)
    assert "build:sdk" in start or "General" in start
    assert "Release" not in start and "Bump the version" not in start
