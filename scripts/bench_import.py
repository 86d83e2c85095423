#!/usr/bin/env python3
"""Benchmark `git memzoi import` of 1,000 sections: the plan against read-and-parse, a re-import against a first one.

    .venv/bin/python scripts/bench_import.py [--quick]      # prints the Markdown section

The floor is what any importer must do: read every source file and split it into sections
(`formats.items`: headings outside fences, titles, type, lane and scope, and each file's blob
OID). The plan is measured against it twice, each side the same way:

- in process: `_read_and_parse` against `plan_import` (discovery through git's index, identity
  digests, the records earlier imports made and the taken record IDs, the secret scan, the
  plan ID), modules already loaded, run alternately after one discarded warm-up of each (a
  machine that slows down between a block of floors and a block of plans would move the ratio),
  median of the runs;
- end to end: a `python -c` process that imports the splitting code and reads and splits the
  sources (`FLOOR_SCRIPT`) against a `git memzoi import --json` process, both started by the
  same interpreter from the repository's root, each including Python start-up and its imports,
  run alternately after one discarded warm-up of each, median of the runs.

The subprocesses run without PYTHONDONTWRITEBYTECODE, so the warm-up leaves the byte code an
installed package has and no run pays for compiling sources.

`section(workdir, quick)` builds the repository under `workdir` and returns the section that
scripts/bench.py appends to the report.
"""

from __future__ import annotations

import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "scripts"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from bench import sentence, vocabulary  # noqa: E402

SECTIONS = 1_000
FILES = 20
PLAN_TARGET = 2.0  # the plan of a first import, against reading and parsing the sources
REIMPORT_TARGET = 0.3  # a re-import that plans nothing, against a first import
RUNS, QUICK_RUNS = 5, 3


def _build(root: Path) -> None:
    """A repository with FILES nested AGENTS.md files holding SECTIONS H2 sections in all."""
    import pygit2

    vocabulary()
    rng = random.Random(20)
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    repo = pygit2.init_repository(str(root), initial_head="main")
    per = SECTIONS // FILES
    for f in range(FILES):
        parts = [f"# Package {f}\n"]
        for s in range(per):
            fence = "\n```sh\n# not a heading\nmake test\n```\n" if s % 7 == 0 else ""
            parts.append(f"\n## Rule {f}-{s}\n\n{sentence(rng)} {sentence(rng)}\n{fence}")
        path = root / f"pkg{f:02d}" / "AGENTS.md"
        path.parent.mkdir(parents=True)
        path.write_text("".join(parts), encoding="utf-8")
    env = dict(os.environ)
    subprocess.run([sys.executable, "-m", "git_memzoi", "init"], cwd=root, env=env, check=True, capture_output=True)
    repo.index.add_all()
    repo.index.write()
    sig = pygit2.Signature("Bench", "bench@example.com", 1_700_000_000, 0)
    repo.create_commit("HEAD", sig, sig, "sources", repo.index.write_tree(), [])


def _read_and_parse(root: Path) -> float:
    """Read every AGENTS.md and parse it into items (sections with title, type, lane and scope): the floor."""
    from git_memzoi.gitrepo.files import blob_oid
    from git_memzoi.importer import formats
    from git_memzoi.importer.sources import Loaded

    start = time.perf_counter()
    count = 0
    for path in sorted(root.glob("pkg*/AGENTS.md")):
        raw = path.read_bytes()
        rel = path.relative_to(root).as_posix()
        count += len(formats.items(Loaded(rel, rel, "agents-md", raw.decode("utf-8"), blob_oid(raw))))
    elapsed = time.perf_counter() - start
    assert count == SECTIONS, count
    return elapsed


#: The floor as a process of its own: read and split every source, as `_read_and_parse` does.
FLOOR_SCRIPT = f"""
from pathlib import Path
from git_memzoi.gitrepo.files import blob_oid
from git_memzoi.importer import formats
from git_memzoi.importer.sources import Loaded
count = 0
for path in sorted(Path(".").glob("pkg*/AGENTS.md")):
    raw = path.read_bytes()
    rel = path.as_posix()
    count += len(formats.items(Loaded(rel, rel, "agents-md", raw.decode("utf-8"), blob_oid(raw))))
assert count == {SECTIONS}, count
"""


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _timed(root: Path, argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=root, env=_env(), check=True, capture_output=True)
    return time.perf_counter() - start


def _end_to_end(root: Path, runs: int) -> tuple[float, float]:
    """(floor process, `git memzoi import --json` process): medians of alternate runs after a warm-up of each."""
    floor = [sys.executable, "-c", FLOOR_SCRIPT]
    plan = [sys.executable, "-m", "git_memzoi", "import", "--json"]
    _timed(root, floor)
    _timed(root, plan)
    floors: list[float] = []
    plans: list[float] = []
    for _ in range(runs):
        floors.append(_timed(root, floor))
        plans.append(_timed(root, plan))
    return statistics.median(floors), statistics.median(plans)


def _plan(root: Path) -> tuple[float, int]:
    from git_memzoi.importer.run import ImportRequest, plan_import
    from git_memzoi.runtime.workspace import Workspace

    start = time.perf_counter()
    plan = plan_import(Workspace.open(root), ImportRequest(cwd=root))
    return time.perf_counter() - start, len(plan.changes)


def _in_process(root: Path, runs: int) -> tuple[float, float]:
    """(floor, plan of the first import): medians of alternate runs after a warm-up of each, as `_end_to_end`."""
    _read_and_parse(root)
    _plan(root)
    floors: list[float] = []
    plans: list[float] = []
    for _ in range(runs):
        floors.append(_read_and_parse(root))
        seconds, changes = _plan(root)
        assert changes == SECTIONS, changes
        plans.append(seconds)
    return statistics.median(floors), statistics.median(plans)


def _cli(root: Path, *args: str) -> float:
    return _timed(root, [sys.executable, "-m", "git_memzoi", "import", *args])


def section(workdir: Path, quick: bool = False) -> str:
    """The Markdown section for BENCHMARKS.md."""
    runs = QUICK_RUNS if quick else RUNS
    root = workdir / "import"
    os.environ["MEMZOI_HOME"] = str(workdir / "home")
    _build(root)
    parse, first_plan = _in_process(root, runs)
    floor_cli, first_cli = _end_to_end(root, runs)
    first_apply = _cli(root, "--apply")
    again = [_plan(root) for _ in range(runs)]
    assert all(n == 0 for _, n in again), again
    again_plan = statistics.median(t for t, _ in again)
    again_cli = statistics.median(_cli(root, "--json") for _ in range(runs))
    plan_ratio = first_plan / parse
    cli_ratio = first_cli / floor_cli
    reimport_ratio = again_cli / first_apply

    def verdict(met: bool) -> str:
        return "met" if met else "NOT met"

    return "\n".join(
        [
            "## Import",
            "",
            f"`git memzoi import` of {SECTIONS:,} H2 sections in {FILES} nested AGENTS.md files "
            f"(median of {runs} runs; scripts/bench_import.py).",
            "",
            "| measurement | seconds | ratio | target | |",
            "|---|---|---|---|---|",
            f"| read and parse the sources into items (floor) | {parse:.3f} | | | |",
            f"| plan of the first import (in process) | {first_plan:.3f} | {plan_ratio:.2f}× the floor | "
            f"≤ {PLAN_TARGET}× | {verdict(plan_ratio <= PLAN_TARGET)} |",
            f"| a process that reads and parses the sources (floor, start-up included) | {floor_cli:.3f} | | | |",
            f"| `git memzoi import --json` (first, the plan) | {first_cli:.3f} | {cli_ratio:.2f}× the floor process "
            f"| ≤ {PLAN_TARGET}× | {verdict(cli_ratio <= PLAN_TARGET)} |",
            f"| `git memzoi import --apply` (first import: {SECTIONS:,} records) | {first_apply:.3f} | | | |",
            f"| re-import that plans nothing (in process) | {again_plan:.3f} | | | |",
            f"| `git memzoi import --json` that plans nothing | {again_cli:.3f} | {reimport_ratio:.2f}× the first "
            f"import | ≤ {REIMPORT_TARGET}× | {verdict(reimport_ratio <= REIMPORT_TARGET)} |",
            "",
        ]
    )


def main() -> int:
    quick = "--quick" in sys.argv[1:]
    work = Path(tempfile.mkdtemp(prefix="memzoi-bench-import-"))
    try:
        print(section(work, quick))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
