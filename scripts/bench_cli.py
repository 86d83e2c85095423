#!/usr/bin/env python3
"""Benchmark every command's start-up: `git memzoi …` end to end against `python3 -c pass`.

    .venv/bin/python scripts/bench_cli.py           # prints the Markdown section (10,000 records)
    .venv/bin/python scripts/bench_cli.py --quick   # a smoke run on 200 records

`section(workdir, quick)` builds the repository under `workdir` and returns the section that
scripts/bench.py appends to BENCHMARKS.md.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
if str(ROOT / "scripts") not in sys.path:
    sys.path.insert(0, str(ROOT / "scripts"))

import bench  # noqa: E402  (the record generator and the floor)

#: label, `git memzoi` arguments, target as a ratio to `python3 -c pass`
COMMANDS: list[tuple[str, list[str], float]] = [
    ("`search`", ["search", "cache", "retry"], 4.0),
    ("`precheck --path`", ["precheck", "--path", "src/auth/token.py"], 4.0),
    ("no-op `rebuild`", ["rebuild"], 0.0),  # judged against the floor, below
    ("`--version`", ["--version"], 1.5),
    ("`-h`", ["-h"], 1.5),
]
NOOP_TARGET = 0.05  # no-op rebuild, end to end, as a ratio to the floor


def _median_run(argv: list[str], cwd: Path, env: dict[str, str], runs: int) -> float:
    """Median wall time of `runs` runs of `argv`, after one discarded warm-up run."""
    times = []
    for i in range(runs + 1):
        started = time.perf_counter()
        subprocess.run(argv, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if i:
            times.append(time.perf_counter() - started)
    return statistics.median(times)


def measure(workdir: Path, quick: bool) -> dict[str, object]:
    """Build the repository, rebuild once, and time every command and the floor."""
    n = 200 if quick else 10_000
    runs = 3 if quick else 11
    root = workdir / f"repo-{n}"
    if not root.exists():
        bench.generate(root, n)
    home = workdir / "home"
    env = os.environ | {
        "MEMZOI_HOME": str(home),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    env.pop("GIT_DIR", None)
    time.sleep(0 if quick else 2.1)  # stats younger than the racy window are never trusted
    subprocess.run(["git", "memzoi", "rebuild"], cwd=root, env=env, check=True, capture_output=True)
    if not quick:
        time.sleep(2.1)
    bench.floor(root)  # warm the page cache the same way for the floor and the commands
    floor = min(bench.floor(root) for _ in range(3))
    python = _median_run([sys.executable, "-c", "pass"], root, env, runs)
    timings = {label: _median_run(["git", "memzoi", *args], root, env, runs) for label, args, _ in COMMANDS}
    python_after = _median_run([sys.executable, "-c", "pass"], root, env, runs)
    return {"n": n, "runs": runs, "floor": floor, "python": (python + python_after) / 2, "timings": timings}


def render(m: dict[str, object], quick: bool) -> str:
    """The Markdown section for one measurement."""
    python = float(m["python"])  # type: ignore[arg-type]
    floor = float(m["floor"])  # type: ignore[arg-type]
    timings: dict[str, float] = m["timings"]  # type: ignore[assignment]
    lines = [
        "## Command start-up: `git memzoi …` end to end",
        "",
        f"{int(m['n']):,} synthetic records (scripts/bench.py's generator), indexed once before measuring. "  # type: ignore[call-overload]
        f"Each command runs as a subprocess through git (`git memzoi …` from the repository root), "
        f"median of {m['runs']} runs after one discarded warm-up; `python3 -c pass`, run by the interpreter "
        "git memzoi runs on (as scripts/bench.py does), is measured the same way before and after the "
        "commands, and the mean of the two is the baseline. The no-op rebuild "
        "is also compared with the floor (read + CSafeLoader over every record, best of 3). Read "
        "commands import neither pydantic, PyYAML, filelock, the MCP SDK nor pygit2 (a test pins this), "
        "so the figures are mostly Python start-up, click and our own modules; `--version`, `-h`, "
        "`search WORDS… [--json]` (the shape agents and scripts run; any option goes to click) and "
        "a no-op `rebuild` (every record file's stat against the digest the last sweep stored, compared "
        "by `git diff-files` when git's index vouches for every record file) are answered before click "
        "loads, with the standard library only.",
    ]
    if quick:
        lines += [
            "",
            "**Quick mode (smoke run): the repository and repetitions are too small for the figures to mean much.**",
        ]
    lines += [
        "",
        f"Baseline `python3 -c pass`: {python * 1000:.1f} ms. Floor: {floor * 1000:.1f} ms.",
        "",
        "| command | time | ratio to `python3 -c pass` | target | met |",
        "|---|---:|---:|---|---|",
    ]
    for label, _, target in COMMANDS:
        t = timings[label]
        if target:
            met = "yes" if t / python <= target else "**no**"
            lines.append(f"| {label} | {t * 1000:.1f} ms | {t / python:.2f}× | ≤ {target:g}× | {met} |")
        else:
            met = "yes" if t / floor <= NOOP_TARGET else "**no**"
            lines.append(
                f"| {label} | {t * 1000:.1f} ms | {t / python:.2f}× | ≤ {NOOP_TARGET:g}× the floor: "
                f"{t / floor:.3f}× | {met} |"
            )
    return "\n".join(lines) + "\n"


def section(workdir: Path, quick: bool = False) -> str:
    """Build the benchmark repository under `workdir`, measure, and return a Markdown section."""
    workdir.mkdir(parents=True, exist_ok=True)
    return render(measure(workdir, quick), quick)


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory(prefix="memzoi-bench-cli-") as temp:
        print(section(Path(temp), quick="--quick" in sys.argv[1:]))
