#!/usr/bin/env python3
"""Benchmark the gates on one new record at 10,000 and 50,000 records: each costs the change.

    .venv/bin/python scripts/bench_hook_checks.py [--quick]    # prints the Markdown section

`section(workdir, quick)` builds the repositories under `workdir` (with `git fast-import`) and
returns the section that scripts/bench.py appends to BENCHMARKS.md. Every figure is a real
process (`git memzoi hook check`, `git memzoi hook pre-receive` as git runs it, `git push`),
timed alternately with `python -c pass`, its anchor, in the same run.
"""

from __future__ import annotations

import compileall
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "scripts"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

import bench  # noqa: E402  (scripts/bench.py: the synthetic record generator)
from bench_client_hooks import _env, _run  # noqa: E402  (the same isolated git environment and timed run)

EPOCH = 1767225600
GIT_MEMZOI = str(Path(sys.executable).parent / "git-memzoi")


def _stream(records: int) -> str:
    """A fast-import stream: one commit of `records` synthetic records on main, then one adding a record."""
    rng = bench.random.Random(bench.SEED + records)
    out = []
    files = {".memzoi/index.md": "# Memory index\n", ".memzoi/log.md": "# Memory log\n", "README.md": "# bench\n"}
    for n in range(records):
        rel, text = bench.make_record(n, rng)
        files[rel] = text
    for mark, (message, batch) in enumerate(
        (("synthetic records", files), ("one more record", dict([bench.make_record(900_000, rng)]))), start=1
    ):
        out.append(
            f"commit refs/heads/main\nmark :{mark}\ncommitter Bench <bench@example.com> {EPOCH + mark} +0000\n"
            f"data {len(message)}\n{message}\n"
        )
        for path, text in batch.items():
            data = text.encode()
            out.append(f"M 100644 inline {path}\ndata {len(data)}\n{text}\n")
    return "".join(out)


def _alternate(
    runs: int,
    measured: dict[str, tuple[list[str], Path, dict[str, str], str | None]],
    before: Callable[[], object] = lambda: None,
) -> dict[str, float]:
    """Median seconds of each command, run in turn `runs` times (the first round warms the caches).

    `before` runs, untimed, before each command.
    """
    times: dict[str, list[float]] = {name: [] for name in measured}
    for n in range(runs + 1):
        for name, (args, cwd, env, stdin) in measured.items():
            before()
            elapsed = _run(args, cwd, env, stdin)
            if n:
                times[name].append(elapsed)
    return {name: statistics.median(values) for name, values in times.items()}


def _kept(env: dict[str, str]) -> list[Path]:
    """Every kept tree's files: the `.tree` headers and the summaries' `.db` databases (hooks/treecache.py)."""
    home = Path(env["MEMZOI_HOME"])
    return sorted([*home.glob("projects/*/hook-trees/*.tree"), *home.glob("projects/*/hook-trees/*.db")])


def _hook_trees(repo: Path, env: dict[str, str]) -> Path:
    """The checkout's hook-trees folder under env's MEMZOI_HOME (runtime.home.Layout)."""
    from git_memzoi.gitrepo import open_repo
    from git_memzoi.runtime.home import Layout

    saved = os.environ.get("MEMZOI_HOME")
    os.environ["MEMZOI_HOME"] = env["MEMZOI_HOME"]
    try:
        return Layout.for_repo(open_repo(repo)).hook_trees
    finally:
        if saved is None:
            os.environ.pop("MEMZOI_HOME", None)
        else:
            os.environ["MEMZOI_HOME"] = saved


def one_size(work: Path, records: int, runs: int, env: dict[str, str]) -> dict[str, float]:
    """hook check and pre-receive of one new record over `records`, against `python -c pass`."""
    repo = work / f"records-{records}"
    _run(["git", "init", "-q", "-b", "main", str(repo)], work, env)
    _run(["git", "fast-import", "--quiet"], repo, env, input=_stream(records))
    _run(["git", "reset", "-q", "--hard", "main"], repo, env)
    bare = work / f"server-{records}.git"
    _run(["git", "clone", "-q", "--bare", str(repo), str(bare)], work, env)
    _run(["git", "update-ref", "refs/heads/main", "main~1"], bare, env)
    base = subprocess.run(["git", "rev-parse", "main~1"], cwd=repo, env=env, capture_output=True, text=True).stdout
    tip = subprocess.run(["git", "rev-parse", "main"], cwd=repo, env=env, capture_output=True, text=True).stdout
    # what an earlier run kept (a restored CI cache, `hook install` in the bare repository): the base's tree
    seeded = time.perf_counter()
    _run([GIT_MEMZOI, "hook", "install", "--pre-receive"], bare, env)
    seed = time.perf_counter() - seeded
    # the same tree summary serves the checkout: its name is the tree's, not the repository's
    folder = _hook_trees(repo, env)
    folder.mkdir(parents=True, exist_ok=True)
    for one in _kept(env):
        if one.parent != folder:
            shutil.copy2(one, folder / one.name)
    pre_receive_env = {**env, "GIT_DIR": str(bare)}
    # each check keeps the tip's tree (a delta of the kept one): removed before each run, so that
    # every run validates the new commit as its first check does
    tip_tree = subprocess.run(["git", "rev-parse", "main:.memzoi"], cwd=repo, env=env, capture_output=True, text=True)
    home = Path(env["MEMZOI_HOME"])

    def fresh() -> None:
        for kept in home.glob(f"projects/*/hook-trees/{tip_tree.stdout.strip()}.tree"):
            kept.unlink()

    medians = _alternate(
        runs,
        {
            "python": ([sys.executable, "-c", "pass"], work, env, None),
            "check": ([GIT_MEMZOI, "hook", "check", "main~1..main"], repo, env, None),
            "pre_receive": (
                [GIT_MEMZOI, "hook", "pre-receive"],
                bare,
                pre_receive_env,
                f"{base.strip()} {tip.strip()} refs/heads/main\n",
            ),
        },
        fresh,
    )
    return {"records": records, "seed": seed, **medians}


def pushes(work: Path, records: int, runs: int, env: dict[str, str]) -> dict[str, float]:
    """`git push` of one record commit to a server with pre-receive (client pre-push on) and to one without hooks."""
    repo = work / f"records-{records}"
    served = work / f"server-{records}.git"
    _run(["git", "update-ref", "refs/heads/main", "main"], repo, env)
    _run(["git", "push", "-q", "--no-verify", str(served), "main"], repo, env)  # the check's record: on both
    plain = work / f"plain-{records}.git"
    _run(["git", "clone", "-q", "--bare", str(served), str(plain)], work, env)
    _run([GIT_MEMZOI, "hook", "install", "--pre-push"], repo, env)
    python: list[float] = []
    on: list[float] = []
    off: list[float] = []
    for n in range(runs + 1):
        rel, text = bench.make_record(700_000 + n, bench.random.Random(700_000 + n))
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
        _run(["git", "add", rel], repo, env)
        _run(["git", "commit", "-q", "--no-verify", "-m", f"push {n}"], repo, env)
        order = [(True, served), (False, plain)] if n % 2 == 0 else [(False, plain), (True, served)]
        for hooks, url in order:
            elapsed = _run(["git", "push", "-q", *([] if hooks else ["--no-verify"]), str(url), "main"], repo, env)
            if n:
                (on if hooks else off).append(elapsed)
        elapsed = _run([sys.executable, "-c", "pass"], work, env)
        if n:
            python.append(elapsed)
    return {"on": statistics.median(on), "off": statistics.median(off), "python": statistics.median(python)}


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms" if seconds < 10 else f"{seconds:,.1f} s"


def section(workdir: Path, quick: bool = False) -> str:
    """Build the repositories under `workdir`, time the gates, return the Markdown section."""
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    # every process loads the package as an installed one does: from bytecode
    compileall.compile_dir(str(ROOT / "git_memzoi"), quiet=1)
    sizes = (200, 1000) if quick else (10_000, 50_000)
    runs = 3 if quick else 9
    results = []
    push = None
    for records in sizes:
        home = workdir / f"home-{records}"
        home.mkdir()
        (home / ".gitconfig").write_text("[user]\n\tname = Bench\n\temail = bench@example.com\n")
        env = _env(home)
        results.append(one_size(workdir, records, runs, env))
        if records == sizes[0]:
            push = pushes(workdir, records, runs, env)
    assert push is not None
    lines = [
        "## Hook checks cost the change: one new record at 10,000 and 50,000 records",
        "",
        "A repository of N synthetic records (scripts/bench.py's generator, written with `git fast-import`) "
        "and one commit on top adding one record. The server is a bare clone whose `main` holds the "
        "records; `git memzoi hook install` there validates and keeps its tree (the time in the last "
        "column, paid once). The checkout's hook-trees folder gets a copy of that summary, as a CI job "
        "restores one with `actions/cache` (a summary is named by its tree, so any clone may use it). "
        "Then, alternately, median of "
        f"{runs}: `python -c pass`; `git memzoi hook check main~1..main` in the checkout (the CI check); "
        "`git memzoi hook pre-receive` in the bare repository with git's ref line on stdin (the push of "
        "that commit). Each validates the new commit's tree as a delta of the kept one: the new record "
        "is parsed, the cross-file rules run on the files it touches (their rows read from the kept "
        "summary's SQLite database, whose CRC-32 is the one pass over the whole summary), and the new "
        "tree is kept as a delta of the kept one (a few KB; removed before each run, so that each run is "
        "the commit's first check).",
        "",
        "| records | `python -c pass` | `hook check HEAD~1..HEAD` | ratio (target <= 10x) "
        "| `hook pre-receive` | ratio | `hook install` (keeps the tree, once) |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {int(r['records']):,} | {_ms(r['python'])} | {_ms(r['check'])} | **{r['check'] / r['python']:.1f}x** "
            f"| {_ms(r['pre_receive'])} | **{r['pre_receive'] / r['python']:.1f}x** | {_ms(r['seed'])} |"
        )
    added = (push["on"] - push["off"]) / push["python"]
    lines += [
        "",
        f"`git push` of one record commit at {sizes[0]:,} records, to the server above (pre-receive) with "
        "the client's pre-push on, against the same push with `--no-verify` to a bare clone without "
        f"hooks; alternately, median of {runs}:",
        "",
        "| push | hooks on | hooks off | `python -c pass` | hooks add (target <= 12x python) |",
        "|---|---:|---:|---:|---:|",
        f"| one record commit | {_ms(push['on'])} | {_ms(push['off'])} | {_ms(push['python'])} | **{added:.1f}x** |",
    ]
    if quick:
        lines += ["", "Quick mode: small sizes and few runs; the figures say little."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory(prefix="memzoi-bench-checks-") as folder:
        print(section(Path(folder) / "hook_checks", quick="--quick" in sys.argv))
