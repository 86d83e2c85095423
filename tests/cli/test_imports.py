"""The read path imports only what it needs: each read command, run for real under
`python -X importtime` against an up-to-date index, must not load the heavy dependencies."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from support import Repo, age, imported, memzoi_exe, python_importtime, run_cli, run_importtime

#: Modules the read path must never load: they cost more than the commands' own work, and
#: are needed only to parse (pydantic, PyYAML), to lock (filelock), to serve MCP, or (pygit2)
#: for what repository discovery's fast path leaves to it.
FORBIDDEN = ("pydantic", "pydantic_core", "yaml", "filelock", "mcp", "pygit2")
#: The read commands take no digest from hashlib either: it loads OpenSSL (milliseconds); a digest the
#: read path needs comes from CPython's own modules (index/sweep.py).
READ_FORBIDDEN = (*FORBIDDEN, "hashlib", "_hashlib")
#: Answered before click loads (cli.entry), so click is forbidden there too.
BEFORE_CLICK = {("rebuild",), ("--version",), ("-h",), ("search", "content", "classification")}
EXPIRY_ID = "automatic-private-inference-is-event-bound"

READ_COMMANDS = [
    ("search", "content", "classification"),
    ("search", "--json", "--path", "src/app.py", "memory"),
    ("context", "--task", "add a proposal", "--path", "src/app.py"),
    ("handoff", "--task", "switch agents"),
    ("precheck", "--path", "src/app.py"),
    ("precheck", "--command", "make deploy", "--json"),
    ("precheck", "--action", "bump the version"),
    ("expiry", EXPIRY_ID),
    ("rebuild",),
    ("--version",),
    ("-h",),
]


@pytest.mark.parametrize("args", READ_COMMANDS, ids=lambda a: " ".join(a))
def test_read_commands_do_not_import_heavy_modules(indexed_repo: Repo, args: tuple[str, ...]) -> None:
    modules = imported(args, indexed_repo.path)
    assert "git_memzoi.cli.entry" in modules  # the measurement sees our own imports
    forbidden = (*READ_FORBIDDEN, "click") if args in BEFORE_CLICK else READ_FORBIDDEN
    heavy = sorted(m for m in modules if m.split(".")[0] in forbidden)
    assert heavy == [], f"git memzoi {' '.join(args)} imported {heavy[:5]}"


def test_a_stale_index_still_parses(indexed_repo: Repo) -> None:
    """The guard above is not vacuous: when a record changes, the command loads the parser."""
    target = next((indexed_repo.path / ".memzoi" / "records").glob("*.md"))
    target.write_text(target.read_text().replace("\n---\n", "\n---\n\nEdited.\n", 1))
    age(indexed_repo.path, 3600)
    modules = imported(("search", "content"), indexed_repo.path)
    assert "yaml" in modules and "filelock" in modules


def test_version_is_answered_before_click_in_clicks_words(tmp_path: Path) -> None:
    proc = subprocess.run([memzoi_exe(), "--version"], cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout == run_cli("--version").stdout
    assert "click" not in imported(("--version",), tmp_path)


def test_the_read_path_queries_need_only_the_standard_library() -> None:
    """index/queries.py (every query of the read path) loads nothing but the stdlib and our own modules."""

    def loaded(code: str) -> set[str]:
        proc, modules = python_importtime("-c", code)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return modules

    modules = loaded("import git_memzoi.index.queries") - loaded("pass")  # less what start-up loads
    assert "git_memzoi.index.queries" in modules and "sqlite3" in modules
    outside = sorted(m for m in modules if m.split(".")[0] not in (*sys.stdlib_module_names, "git_memzoi"))
    assert outside == []


def test_an_import_plan_loads_neither_pygit2_nor_the_parsers(indexed_repo: Repo) -> None:
    """`git memzoi import` plans from git's index file and the index: pygit2 and PyYAML only write or apply."""
    from support import git

    indexed_repo.write("pkg/AGENTS.md", "# Package\n\n## Build\n\nRun `make`.\n\n## Style\n\nShort names.\n")
    git("add", "pkg/AGENTS.md", cwd=indexed_repo.path)
    proc, modules = run_importtime(("import", "--json"), indexed_repo.path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert '"create": 2' in proc.stdout  # the plan was made: two sections to create
    heavy = sorted(m for m in modules if m.split(".")[0] in FORBIDDEN)
    assert heavy == [], f"git memzoi import --json imported {heavy[:5]}"


def test_a_first_import_plan_opens_no_index(repo: Repo) -> None:
    """With no record file (records/ holds its .gitkeep), no record can be matched or named: sqlite3 stays unloaded."""
    from support import git

    repo.write("pkg/AGENTS.md", "# Package\n\n## Build\n\nRun `make`.\n")
    git("add", "pkg/AGENTS.md", cwd=repo.path)
    assert [p.name for p in (repo.path / ".memzoi" / "records").iterdir()] == [".gitkeep"]
    proc, modules = run_importtime(("import", "--json"), repo.path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert '"create": 1' in proc.stdout
    assert "sqlite3" not in modules and "git_memzoi.index.lookup" not in modules
    repo.write(".memzoi/records/semantic/conventions/x.md", "not a record\n")  # a record file, even a bad one
    assert "git_memzoi.index.lookup" in imported(("import", "--json"), repo.path)


def test_an_import_plan_is_answered_before_click_in_the_commands_words(repo: Repo) -> None:
    """`import --json` prints, without click, the bytes the command prints; a plan that fails is the command's."""
    from support import git

    repo.write("pkg/AGENTS.md", "# Package\n\n## Build\n\nRun `make`.\n\n## Style\n\nShort names.\n")
    git("add", "pkg/AGENTS.md", cwd=repo.path)
    proc, modules = run_importtime(("import", "--json"), repo.path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "click" not in modules and "git_memzoi.cli.import_quick" in modules
    assert proc.stdout == run_cli("import", "--json").stdout and _said(proc.stderr) == []
    repo.write("pkg/AGENTS.md", "# Package\n\n## Keys\n\naws key AKIAIOSFODNN7EXAMPLE here\n")
    git("add", "pkg/AGENTS.md", cwd=repo.path)
    repo.write(".memzoi/config.toml", '[import]\nexclude = ["other/**"]\n')
    repo.write("other/AGENTS.md", "## Other\n\nLeft out by the config.\n")
    git("add", "other/AGENTS.md", cwd=repo.path)
    proc, modules = run_importtime(("import", "--json"), repo.path)
    told = run_cli("import", "--json", expect=1)
    assert (proc.returncode, proc.stdout) == (told.code, told.stdout)
    assert _said(proc.stderr) == told.stderr.splitlines() and "refused: secret at pkg/AGENTS.md:5:" in told.stderr
    assert "click" in modules  # the command reported the refused item
    assert '"action": "refused"' in proc.stdout  # one item, not the plan
    assert '"reason": "excluded by other/**"' in proc.stdout
    repo.write("pkg/AGENTS.md", "# Package\n\ncaf\xe9\n".encode("latin-1"))
    git("add", "pkg/AGENTS.md", cwd=repo.path)
    proc, modules = run_importtime(("import", "--json"), repo.path)
    told = run_cli("import", "--json", expect=None)
    assert (proc.returncode, proc.stdout) == (told.code, "") and told.code != 0
    assert _said(proc.stderr) == told.stderr.splitlines() and "pkg/AGENTS.md:3: import-encoding:" in told.stderr
    assert "click" in modules  # the command reported it


def _said(stderr: str) -> list[str]:
    """stderr's lines less `-X importtime`'s."""
    return [line for line in stderr.splitlines() if not line.startswith("import time:")]
