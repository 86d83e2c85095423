"""index.activation: a rule's activation from its source_ref, the same in Python and in index.db's SQL."""

from __future__ import annotations

import sqlite3

import pytest

from git_memzoi.index import activation

REFS = {
    None: "always",
    "import:AGENTS.md?format=agents-md&blob=ab&lines=1-9": "always",
    "import:.cursor/rules/a.mdc?format=cursor-rule&blob=ab&lines=1-9&alwaysApply=true&description=x": "always",
    "import:.cursor/rules/a.mdc?format=cursor-rule&blob=ab&lines=1-9&alwaysApply=false&globs=**/*.ts": "glob",
    "import:.cursor/rules/a.mdc?format=cursor-rule&blob=ab&lines=1-9&alwaysApply=false&description=Use%20me": (
        "requested"
    ),
    "import:.cursor/rules/a.mdc?format=cursor-rule&blob=ab&lines=1-9&alwaysApply=false&globs=": "manual",
    "import:.github/instructions/x.instructions.md?format=copilot-rule&blob=ab&lines=1-9": "manual",
    "import:.github/instructions/x.instructions.md?format=copilot-rule&blob=ab&lines=1-9&applyTo=**": "always",
    "import:.windsurf/rules/r.md?format=windsurf-rule&blob=ab&lines=1-9&trigger=model_decision": "requested",
    "import:.windsurf/rules/r.md?format=windsurf-rule&blob=ab&lines=1-9&trigger=manual": "manual",
    "import:.windsurf/rules/r.md?format=windsurf-rule&blob=ab&lines=1-9&trigger=always_on": "always",
    "import:.claude/rules/api.md?format=claude-rule&blob=ab&lines=1-9&paths=src/api/**/*.ts": "glob",
    "import:.claude/rules/all.md?format=claude-rule&blob=ab&lines=1-9": "always",
    "import:.clinerules/general.md?format=cline-rule&blob=ab&lines=1-9": "always",
    "import:.clinerules/workflows/release.md?format=cline-rule&blob=ab&lines=1-9": "manual",
    "import:.clinerules/workflows.md?format=cline-rule&blob=ab&lines=1-9": "always",
}


@pytest.mark.parametrize("ref, mode", list(REFS.items()))
def test_mode_in_python_and_in_sql_agree(ref: str | None, mode: str) -> None:
    assert activation.mode(ref) == mode
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (source_ref TEXT)")
    conn.execute("INSERT INTO t VALUES (?)", (ref,))
    assert conn.execute(f"SELECT {activation.mode_sql('t')} FROM t").fetchone()[0] == mode


@pytest.mark.parametrize(
    "globs, path, hit",
    [
        ("**/*.{ts,tsx}", "apps/web/page.tsx", "**/*.{ts,tsx}"),
        ("**/*.{ts,tsx}", "apps/web/page.js", None),
        ("*.ts,**/Dockerfile", "deploy/Dockerfile", "**/Dockerfile"),
        ("*.ts", "a/b/c.ts", "*.ts"),  # no slash: at any depth
        ("src/**/*.cs", "src/Aspire.Hosting/R.cs", "src/**/*.cs"),
        ("src/**/*.cs", "src/Aspire.Hosting/README.md", None),
        ("tools/QuarantineTools/*", "tools/QuarantineTools/Program.cs", "tools/QuarantineTools/*"),
        ("apps/web/page.tsx", "apps/web/page.tsx", "apps/web/page.tsx"),  # an exact file path
    ],
)
def test_original_globs_match_at_recall(globs: str, path: str, hit: str | None) -> None:
    ref = f"import:.cursor/rules/a.mdc?format=cursor-rule&blob=ab&lines=1-9&globs={globs}"
    assert activation.matches(ref, path) == hit


def test_a_nested_rule_folder_globs_from_its_own_folder() -> None:
    ref = "import:packages/x/.cursor/rules/a.mdc?format=cursor-rule&blob=ab&lines=1-9&globs=src/**/*.ts"
    assert activation.matches(ref, "packages/x/src/a.ts") == "src/**/*.ts"
    assert activation.matches(ref, "src/a.ts") is None


def test_origin_orders_root_files_then_other_records_then_nested_then_adrs() -> None:
    root = activation.origin("import:CLAUDE.md?format=claude-md&blob=ab&lines=12-30")
    native = activation.origin(None)
    nested = activation.origin("import:packages/a/AGENTS.md?format=agents-md&blob=ab&lines=1-3")
    adr = activation.origin("import:docs/adr/0001-x.md?format=adr&blob=ab&lines=1-40")
    assert root == (activation.ROOT_FILE, "CLAUDE.md", 12)
    assert sorted([adr, nested, native, root]) == [root, native, nested, adr]
