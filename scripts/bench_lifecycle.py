#!/usr/bin/env python3
"""Benchmark the write paths: supersede/tombstone of an old record on a long history, and create at scale.

    .venv/bin/python scripts/bench_lifecycle.py          # prints the Markdown section
    .venv/bin/python scripts/bench_lifecycle.py --quick  # small sizes

`section(workdir, quick)` builds the repositories under `workdir` and returns the section that
scripts/bench.py appends to BENCHMARKS.md.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import bench  # scripts/bench.py: the record generator

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
SIZES = (100, 10_000)
QUICK_SIZES = (20, 200)
COMMITS = 60_000
QUICK_COMMITS = 600
RUNS = 5
QUICK_RUNS = 2
#: Every this many main-line commits, a side branch of SIDE_LENGTH commits is merged back.
MERGE_EVERY = 40
SIDE_LENGTH = 3
EPOCH = 1_600_000_000  # 2020-09-13: the synthetic history ends long before the proposals are made

SKELETON = {
    ".memzoi/index.md": "# Memory\n",
    ".memzoi/log.md": "# Log\n",
    ".memzoi/proposals/pending/.gitkeep": "",
}


def _record(rid: str) -> str:
    return bench.decision_record(rid, rid, rid, f"Decision {rid}, one of many made while benchmarking the lifecycle.")


def record_path(rid: str) -> str:
    return f".memzoi/records/semantic/decisions/{rid}.md"


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "HOME": str(home),
            "MEMZOI_HOME": str(home / ".memzoi"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
            "MEMZOI_ACTOR": "bench",
            "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        }
    )
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "MEMZOI_NOW"):
        env.pop(var, None)
    return env


def _home(workdir: Path) -> Path:
    home = workdir / "home"
    (home / ".memzoi").mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text(
        "[user]\n\tname = Bench\n\temail = bench@example.com\n[init]\n\tdefaultBranch = main\n"
    )
    # auto approval: apply takes a proposal straight after propose, as a reviewed packet would be
    (home / ".memzoi" / "config.toml").write_text('[workflow]\nproposal_approval = "auto"\n')
    return home


def _data(text: str) -> bytes:
    raw = text.encode("utf-8")
    return b"data %d\n" % len(raw) + raw + b"\n"


def fast_import_stream(commits: int, early: list[str], late: list[str]) -> Iterator[bytes]:
    """A history of `commits` main-line commits with merged side branches; `early` records near the start."""
    mark = 0
    when = EPOCH - commits * 60
    main_tip = 0
    side_counter = 0
    late_from = commits - len(late)

    def commit(ref: str, parent: int, merge: int, message: str, files: dict[str, str]) -> bytes:
        nonlocal mark, when
        mark += 1
        when += 30
        out = [
            b"commit %s\nmark :%d\n" % (ref.encode(), mark),
            b"author Bench <bench@example.com> %d +0000\n" % when,
            b"committer Bench <bench@example.com> %d +0000\n" % when,
            _data(message),
        ]
        if parent:
            out.append(b"from :%d\n" % parent)
        if merge:
            out.append(b"merge :%d\n" % merge)
        for path, text in files.items():
            out.append(b"M 100644 inline %s\n" % path.encode() + _data(text))
        return b"".join(out) + b"\n"

    for n in range(commits):
        files = {f"src/mod_{n % 997}/file.txt": f"revision {n}\n"}
        if n == 0:
            files.update(SKELETON)
        if n == 5:
            files.update({record_path(rid): _record(rid) for rid in early})
        if n >= late_from:
            rid = late[n - late_from]
            files[record_path(rid)] = _record(rid)
        merge = 0
        if n and n % MERGE_EVERY == 0:
            side_counter += 1
            side_ref = "refs/heads/side"
            side_parent = main_tip
            for k in range(SIDE_LENGTH):
                yield commit(
                    side_ref,
                    side_parent,
                    0,
                    f"side {side_counter}.{k}",
                    {f"side/branch_{side_counter % 50}.txt": f"side {side_counter}.{k}\n"},
                )
                side_parent = mark
            merge = mark
        yield commit("refs/heads/main", main_tip, merge, f"main {n}", files)
        main_tip = mark


def build_history(path: Path, env: dict[str, str], commits: int, early: list[str], late: list[str]) -> None:
    """A work tree whose main has `commits` commits (plus merged side branches), built by git fast-import."""
    if path.exists():
        shutil.rmtree(path)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True, env=env)
    proc = subprocess.Popen(["git", "fast-import", "--quiet"], cwd=path, stdin=subprocess.PIPE, env=env)
    assert proc.stdin is not None
    for chunk in fast_import_stream(commits, early, late):
        proc.stdin.write(chunk)
    proc.stdin.close()
    if proc.wait() != 0:
        raise SystemExit("git fast-import failed")
    subprocess.run(["git", "checkout", "-q", "-f", "main"], cwd=path, check=True, env=env)


def build_flat(path: Path, env: dict[str, str], records: int) -> None:
    """A work tree with `records` committed records (one commit)."""
    if path.exists():
        shutil.rmtree(path)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True, env=env)
    for rel, text in SKELETON.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    folder = path / ".memzoi/records/semantic/decisions"
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(records):
        rid = f"bench-{n:05d}"
        (folder / f"{rid}.md").write_text(_record(rid))
    subprocess.run(["git", "add", "-A"], cwd=path, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "records"], cwd=path, check=True, env=env)


def memzoi(repo: Path, env: dict[str, str], *args: str) -> str:
    done = subprocess.run(["git", "memzoi", *args], cwd=repo, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"git memzoi {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout.strip()


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed(run: Callable[[], object], cpu: list[float] | None = None) -> float:
    """Wall seconds of `run`; with `cpu`, also appends the CPU seconds its child processes used."""
    before = _cpu()
    start = time.perf_counter()
    run()
    wall = time.perf_counter() - start
    if cpu is not None:
        cpu.append(_cpu() - before)
    return wall


Timing = tuple[float, float, float, float]  # median wall propose, apply; median CPU propose, apply


def measure(repo: Path, env: dict[str, str], action: str, targets: list[str], tag: str) -> Timing:
    """Median seconds of `propose` and of `apply`, one run per target (or per create when there is none)."""
    proposes: list[float] = []
    applies: list[float] = []
    cpu_proposes: list[float] = []
    cpu_applies: list[float] = []
    pids: list[str] = []
    for n, target in enumerate(targets):
        args = [
            "propose",
            "--type",
            "decision",
            "--title",
            f"{tag} {action} {n}",
            "--body",
            f"Benchmark {action} number {n} ({tag}): a new decision replaces an old one.",
        ]
        if action != "create":
            args += ["--action", action, "--target", target, "--reason", "benchmark"]
        proposes.append(timed(lambda args=args: pids.append(memzoi(repo, env, *args)), cpu_proposes))
        applies.append(timed(lambda pid=pids[-1]: memzoi(repo, env, "apply", pid), cpu_applies))
    return (
        statistics.median(proposes),
        statistics.median(applies),
        statistics.median(cpu_proposes),
        statistics.median(cpu_applies),
    )


def _baseline(env: dict[str, str], runs: int) -> float:
    return statistics.median(
        timed(lambda: subprocess.run(["python3", "-c", "pass"], env=env, check=True)) for _ in range(max(runs, 3))
    )


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.0f} ms"


def section(workdir: Path, quick: bool = False) -> str:
    """Build the benchmark repositories under `workdir`, measure, and return a Markdown section."""
    workdir.mkdir(parents=True, exist_ok=True)
    home = _home(workdir)
    env = _env(home)
    runs = QUICK_RUNS if quick else RUNS
    commits = QUICK_COMMITS if quick else COMMITS
    sizes = QUICK_SIZES if quick else SIZES
    floor = _baseline(env, runs)

    # (a) a long history: old records near its start, late ones at its end
    supersede_old = [f"old-supersede-{n}" for n in range(runs)]
    tombstone_old = [f"old-tombstone-{n}" for n in range(runs)]
    late = [f"late-{n}" for n in range(20)]
    history = workdir / "history"
    start = time.perf_counter()
    build_history(history, env, commits, supersede_old + tombstone_old, late)
    built = time.perf_counter() - start
    total = int(
        subprocess.run(
            ["git", "rev-list", "--count", "--all"], cwd=history, env=env, check=True, capture_output=True, text=True
        ).stdout
    )
    merges = int(
        subprocess.run(
            ["git", "rev-list", "--count", "--merges", "main"],
            cwd=history,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    memzoi(history, env, "rebuild")
    create = measure(history, env, "create", [""] * runs, "history")
    supersede = measure(history, env, "supersede", supersede_old, "history")
    tombstone = measure(history, env, "tombstone", tombstone_old, "history")

    # (b) create with few and with many records
    scale: list[tuple[int, tuple[float, float]]] = []
    for size in sizes:
        flat = workdir / f"flat-{size}"
        build_flat(flat, env, size)
        memzoi(flat, env, "rebuild")
        scale.append((size, measure(flat, env, "create", [""] * runs, f"flat {size}")))

    def ratio(a: float, b: float) -> str:
        return f"**{a / b:.2f}×**"

    def row(label: str, t: Timing, base: Timing | None) -> str:
        cells = [label, _ms(t[0]), _ms(t[1]), _ms(t[2]), _ms(t[3])]
        if base is not None:
            cells += [ratio(t[0], base[0]), ratio(t[1], base[1]), ratio(t[2], base[2]), ratio(t[3], base[3])]
        else:
            cells += ["", "", "", ""]
        return "| " + " | ".join(cells) + " |"

    (small, small_t), (big, big_t) = scale
    head = (
        "| {what} | `propose` | `apply` | propose CPU | apply CPU | propose ratio | apply ratio "
        "| propose CPU ratio | apply CPU ratio |"
    )
    rule = "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    lines = [
        "## Lifecycle write paths: an old target on a long history, and create at scale",
        "",
        "Every figure is a `git memzoi …` subprocess started through git (Python start-up and imports "
        f"included): the median of {runs} runs, each on its own target, as wall time and as the CPU "
        "time (user + system) the process used, which other load on the machine disturbs less. "
        f"`python3 -c pass` takes {_ms(floor)} in the same run. Proposals are approved automatically "
        '(`proposal_approval = "auto"`), so `apply` takes each one straight after `propose`; the '
        "index is built once before timing, as a working checkout has it. Ratios compare with the "
        "first row of each table.",
        "",
        f"**(a)** A history of {total:,} commits ({merges:,} merges of side branches), generated in "
        f"Python and piped to `git fast-import` ({built:.1f} s). The superseded and tombstoned records "
        "were added in its 6th commit and never changed again; 20 records are added by the last "
        "commits. Target: supersede and tombstone cost at most 1.5× a create on the same repository.",
        "",
        head.format(what="operation"),
        rule,
        row("create", create, None),
        row("supersede an old record", supersede, create),
        row("tombstone an old record", tombstone, create),
        "",
        f"**(b)** A create with {small:,} and with {big:,} committed records (one commit, one folder). "
        "Target: at most 1.5× at the larger size.",
        "",
        head.format(what="records"),
        rule,
        row(f"{small:,}", small_t, None),
        row(f"{big:,}", big_t, small_t),
        "",
        "A proposal made by `propose` carries the target's blob OID, so `apply` compares one blob "
        "with HEAD's instead of walking history. Record facts (IDs, statuses, origins, paths) come "
        "from the installed index while its folder signatures vouch for it, instead of parsing every "
        "record. After installing its files, `apply` refreshes only the index rows of the paths it "
        "wrote (no stat sweep of the other records, no copy of the index); the next read sweeps the "
        "folders it wrote to, as every read does after a change.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    quick_run = "--quick" in sys.argv[1:]
    with tempfile.TemporaryDirectory(prefix="memzoi-bench-lifecycle-") as tmp:
        print(section(Path(tmp), quick=quick_run))
