"""export → import → export on every real repository's memory, for every export `--into` writes.

Each repository under fixtures/import/real/ is copied into a fresh git repository, committed, given
`git memzoi init` and `import --apply --commit` once per module; each case copies that repository,
exports into the client's file, commits, imports again (the plan: no change, no warning for what is
unchanged) and exports again (the same bytes), all through the installed `git memzoi` and real git.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from git_memzoi.export.instructions import INSTRUCTION_TYPES
from support import AUTHOR, memzoi_exe
from support.paths import FIXTURES

pytestmark = pytest.mark.slow  # a sweep: 27 cases of about three seconds each, on shared imported repositories

REAL = FIXTURES / "import" / "real"
NAMES = sorted(p.name for p in REAL.iterdir() if (p / "files").is_dir())

#: export --into FORMAT: the file the client reads, and its documented budget in bytes (docs/export.md)
INTO = {"agents-md": ("AGENTS.md", 32_768, "Codex"), "claude-md": ("CLAUDE.md", 40_000, "Claude Code")}


def _env(home: Path) -> dict[str, str]:
    """The hermetic environment of tests/conftest.py, for work that outlives one test (the module's repositories)."""
    env = dict(os.environ)
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "MEMZOI_NOW", "MEMZOI_DEBUG"):
        env.pop(var, None)
    home.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n")
    return env | {
        "HOME": str(home),
        "MEMZOI_HOME": str(home / ".memzoi"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
        "GIT_AUTHOR_NAME": AUTHOR.name,
        "GIT_AUTHOR_EMAIL": AUTHOR.email,
        "GIT_COMMITTER_NAME": AUTHOR.name,
        "GIT_COMMITTER_EMAIL": AUTHOR.email,
        "MEMZOI_ACTOR": "tester",
    }


def _run(cwd: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(list(args), cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done


def _commit(cwd: Path, message: str, env: dict[str, str] | None = None) -> None:
    _run(cwd, "git", "add", "-A", env=env)
    _run(cwd, "git", "commit", "-q", "--allow-empty", "-m", message, env=env)


@pytest.fixture(scope="module")
def imported_repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each real repository's files committed in a git repository of their own, initialised and imported."""
    base = tmp_path_factory.mktemp("real")
    env = _env(base / "home")
    repos = {}
    for name in NAMES:
        path = base / name
        shutil.copytree(REAL / name / "files", path, symlinks=True)
        _run(path, "git", "init", "-q", env=env)
        _commit(path, f"{name}'s instruction files", env)
        _run(path, memzoi_exe(), "init", env=env)
        _run(path, memzoi_exe(), "import", "--apply", "--commit", env=env)
        repos[name] = path
    return repos


def _plan_changes(plan: dict[str, object]) -> list[str]:
    """What a second import would change, and the warnings it repeats for what it left unchanged."""
    entries = plan["entries"]
    assert isinstance(entries, list)
    changes = [f"{e['action']} {e['where']}" for e in entries if e["action"] in ("create", "supersede", "tombstone")]
    quiet = [f"{e['where']}: {e['warnings']}" for e in entries if e["action"] == "unchanged" and e.get("warnings")]
    return changes + quiet


def _record(work: Path, record_id: str) -> tuple[str, str]:
    """(frontmatter, body) of a record file."""
    (found,) = (work / ".memzoi" / "records").rglob(f"{record_id}.md")
    _, head, body = found.read_text(encoding="utf-8").split("---\n", 2)
    return head, body


def _source(work: Path, record_id: str) -> tuple[str, str]:
    """(the file a record was imported from, its format), ("", "") when it was not imported."""
    ref = re.search(r"^source_ref: import:([^?\n]+)\?format=([\w-]+)", _record(work, record_id)[0], re.M)
    return (ref.group(1), ref.group(2)) if ref else ("", "")


def _rules(work: Path) -> set[str]:
    """Every record of a type an instruction file carries (all active, shared and current on import)."""
    types = "|".join(INSTRUCTION_TYPES)
    found = (work / ".memzoi" / "records").rglob("*.md")
    return {p.stem for p in found if re.search(rf"^type: ({types})$", _record(work, p.stem)[0], re.M)}


def _rank(work: Path, record_id: str) -> tuple[int, int]:
    """The documented order a budget keeps: risks and warnings, then the root instruction files, records not
    imported, nested and tool files, ADRs."""
    severe = 0 if re.search(r"^type: (risk|warning)$", _record(work, record_id)[0], re.M) else 1
    path, fmt = _source(work, record_id)
    return severe, (1 if not path else 3 if fmt == "adr" else 0 if "/" not in path else 2)


def _check_into(work: Path, target: str, first: subprocess.CompletedProcess[str], data: bytes) -> list[str]:
    """The file written stays within the client's budget, and each record left out is said, listed and reported."""
    into = INTO[target][0]
    # the smallest budget of the clients that read the file (langfuse's CLAUDE.md -> AGENTS.md: Codex's too)
    readers = [INTO[t][1:] for t in INTO if (work / INTO[t][0]).exists() and (work / INTO[t][0]).samefile(work / into)]
    budget, tool = min(readers)
    assert len(data) <= budget, f"{into}: {len(data):,} bytes past the {budget:,}-byte {tool} budget"
    over = rf"^left out \(over the {budget:,}-(?:byte|character) {re.escape(tool)} budget with [^)]+'s own text\): "
    said = [line.split(": ", 2)[1].split()[1] for line in re.findall(over + ".+$", first.stderr, re.M)]
    text = data.decode("utf-8")
    listed = re.findall(r"^- \S+ `([^`]+)`: ", text.partition("\n## Left out (")[2], re.M)
    assert said == listed, first.stderr
    report = json.loads(_run(work, memzoi_exe(), "export", target, "--into", into, "--json").stdout)
    assert [o["record_id"] for o in report["omitted"]] == said
    # nothing dropped unsaid: every rule is in the block, left out by name, or in the file itself (for Claude
    # Code, with the files its `@path` lines bring in: triggerdev's and workers-sdk's CLAUDE.md say `@AGENTS.md`)
    files = {report["files"][0]}
    if target == "claude-md":
        own = text.partition("<!-- memzoi:start -->")[0]
        files |= {
            os.path.relpath(os.path.realpath(work / p), os.path.realpath(work))
            for p in re.findall(r"@(\S+\.md)\b", own)
        }
    unsaid = _rules(work) - set(report["records"]) - set(said)
    assert {_source(work, r)[0] for r in unsaid} <= files
    # kept by priority: no entry left out ranks before one kept
    ranks = [_rank(work, r) for r in [*report["records"], *said]]
    assert ranks == sorted(ranks)
    for record_id in report["records"]:  # each entry carries its rule text, not just its first paragraph
        longest = max(_record(work, record_id)[1].splitlines(), key=len).strip().lstrip("#").strip()
        assert longest in text, f"{record_id}: {longest!r}"
    return said


def _exported(work: Path, target: str) -> dict[str, bytes]:
    """What the export wrote into the work tree: the --into file, or the cursor rules' folder."""
    if target in INTO:
        path = work / INTO[target][0]
        return {path.name: path.read_bytes()}
    folder = work / ".cursor" / "rules" / "memzoi"
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _export(work: Path, target: str) -> subprocess.CompletedProcess[str]:
    into = ("--into", INTO[target][0]) if target in INTO else ()
    return _run(work, memzoi_exe(), "export", target, *into)


@pytest.mark.parametrize("target", [*sorted(INTO), "cursor-rules"])
@pytest.mark.parametrize("name", NAMES)
def test_export_import_export_is_a_fixed_point_within_the_budget(
    name: str, target: str, imported_repos: dict[str, Path], tmp_path: Path
) -> None:
    work = tmp_path / name
    shutil.copytree(imported_repos[name], work, symlinks=True)
    first = _export(work, target)
    written = _exported(work, target)
    if target in INTO:
        (data,) = written.values()
        _check_into(work, target, first, data)
        assert written == _exported(work, target)  # the --json export wrote the same bytes
    else:
        assert written, first.stderr  # every repository keeps rules Cursor does not read already

    _commit(work, f"memory synced by export {target}")
    plan = json.loads(_run(work, memzoi_exe(), "import", "--json").stdout)
    assert _plan_changes(plan) == []
    if target == "cursor-rules":
        assert plan["counts"]["generated"] == len(written)
    plain = _run(work, memzoi_exe(), "import").stdout
    assert not re.search(r"^\s+warning:", plain, re.M), plain

    _export(work, target)
    assert _exported(work, target) == written
