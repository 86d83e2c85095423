#!/usr/bin/env python3
"""Benchmark crafted input: the secret scan of a 4 MB file, and the server refusing a 200 MB zero blob.

    .venv/bin/python scripts/bench_attack.py        # prints the Markdown section

`section(workdir)` builds what it measures under `workdir` and returns the section that
scripts/bench.py appends to BENCHMARKS.md.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from git_memzoi.profile import secrets  # noqa: E402

SCAN_BYTES = 4 << 20
ZERO_BLOB = 200 << 20
#: crafted texts, each repeated to SCAN_BYTES: key-shaped lines, and runs that made a pattern backtrack
CRAFTED = [
    ("key-shaped lines (`AKIA…` on every line)", "AKIAABCDEFGHIJKLMNOP\n"),
    ("one JWT-shaped run (`eyJ-eyJ-…`)", "eyJ-"),
    ("one URL-scheme-shaped run (`a.a.a.…`)", "a."),
    ("assignments without a digit (`secret=aaaaaaaaaaaa/…`)", "secret=aaaaaaaaaaaa/"),
    ("one GitLab-token-shaped run (`glpat-glpat-…`)", "glpat-"),
]


def best(run: Callable[[], object], times: int) -> float:
    """The fastest of `times` runs, in seconds."""
    out = float("inf")
    for _ in range(times):
        start = time.perf_counter()
        run()
        out = min(out, time.perf_counter() - start)
    return out


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms" if seconds < 10 else f"{seconds:,.1f} s"


def scan_rows(workdir: Path, times: int) -> list[tuple[str, float, float]]:
    """(label, seconds to read and decode the file, seconds to scan it) for each crafted 4 MB file."""
    rows = []
    for label, unit in CRAFTED:
        path = workdir / "crafted.md"
        path.write_bytes((unit * (SCAN_BYTES // len(unit) + 1)).encode()[:SCAN_BYTES])
        read = best(lambda path=path: path.read_bytes().decode("utf-8", "replace"), times)  # type: ignore[misc]
        text = path.read_bytes().decode("utf-8", "replace")
        scan = best(lambda text=text: secrets.scan(text), times)  # type: ignore[misc]
        rows.append((label, read, scan))
    return rows


def _git(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)


def _measured_hook(hooks: Path, out: Path) -> None:
    """Put a wrapper in front of the installed pre-receive that writes its seconds and peak RSS (kB) to `out`."""
    inner = hooks / "pre-receive.measured"
    (hooks / "pre-receive").rename(inner)
    wrapper = hooks / "pre-receive"
    wrapper.write_text(
        f"#!{sys.executable}\n"
        "import resource, subprocess, sys, time\n"
        "start = time.perf_counter()\n"
        f"code = subprocess.call([{str(inner)!r}])\n"
        "seconds = time.perf_counter() - start\n"
        f"open({str(out)!r}, 'w').write(f'{{seconds}} {{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}}')\n"
        "sys.exit(code)\n"
    )
    wrapper.chmod(0o755)


RECORD = """---
id: bench-attack
kind: memory
profile: memzoi
type: decision
lane: semantic
title: Bench attack
description: A record to push first.
timestamp: 2026-01-01T00:00:00Z
status: active
scope: repo
visibility: repo
content_class: general_repo_knowledge
confidence: 1.0
source: human
retention: {}
origin:
  origin_key: bench:attack
  route: repository_materialization
---
# Bench attack

A record to push first.
"""


#: pushes timed for each row (the best is kept: one push is one sample of a loaded machine)
PUSHES = 5


def _timed_push(work: Path, out: Path, ref: str, accepted: bool) -> tuple[float, float]:
    """Push HEAD to `ref`; the hook's (seconds, peak RSS kB) as the wrapper wrote them."""
    push = subprocess.run(["git", "push", "origin", f"HEAD:{ref}"], cwd=work, capture_output=True, text=True)
    if accepted:
        assert push.returncode == 0, push.stderr
    else:
        assert push.returncode != 0 and "file-too-large" in push.stderr, push.stderr
    seconds, peak = out.read_text().split()
    return float(seconds), float(peak)


def _commit_record(work: Path, n: int) -> None:
    rel = f".memzoi/records/bench-attack-{n}.md"
    (work / rel).write_text(RECORD.replace("id: bench-attack", f"id: bench-attack-{n}"))
    _git("add", ".memzoi", cwd=work)
    _git("commit", "-q", "-m", f"record {n}", cwd=work)


def zero_blob_push(workdir: Path, pushes: int = PUSHES) -> dict[str, float]:
    """Push commits to a bare repository with the installed hook: small records (accepted), then a 200 MB zero record.

    Each push is timed by a wrapper in front of the hook; the best of `pushes` is kept for each
    (the refused one is pushed again each time: the server keeps nothing of it).
    """
    exe = str(Path(sys.executable).parent / "git-memzoi")
    env_home = workdir / "home"
    env_home.mkdir()
    os.environ["MEMZOI_HOME"] = str(env_home / ".memzoi")
    bare, work = workdir / "server.git", workdir / "work"
    _git("init", "-q", "--bare", str(bare), cwd=workdir)
    subprocess.run([exe, "hook", "install"], cwd=bare, check=True, capture_output=True)
    out = workdir / "hook.txt"
    _measured_hook(bare / "hooks", out)
    _git("clone", "-q", str(bare), str(work), cwd=workdir)
    for key, value in (("user.name", "Bench"), ("user.email", "bench@example.com")):
        _git("config", key, value, cwd=work)
    (work / ".memzoi/records").mkdir(parents=True)
    (work / ".memzoi/records/bench-attack.md").write_text(RECORD)
    _git("add", ".memzoi", cwd=work)
    _git("commit", "-q", "-m", "record", cwd=work)
    _git("push", "-q", "origin", "HEAD:refs/heads/main", cwd=work)
    accepted = []
    for n in range(pushes):  # each push adds one small record: the hook validates it and accepts
        _commit_record(work, n)
        accepted.append(_timed_push(work, out, "refs/heads/main", accepted=True))
    with (work / ".memzoi/records/zeros.md").open("wb") as handle:
        handle.truncate(ZERO_BLOB)
    _git("add", ".memzoi", cwd=work)
    _git("commit", "-q", "--no-verify", "-m", "zeros", cwd=work)
    refused = [_timed_push(work, out, "refs/heads/main", accepted=False) for _ in range(pushes)]
    python = best(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True), 5)
    return {
        "seconds": min(seconds for seconds, _ in refused),
        "peak_kb": max(peak for _, peak in refused),
        "accepted_seconds": min(seconds for seconds, _ in accepted),
        "accepted_peak_kb": max(peak for _, peak in accepted),
        "python": python,
    }


def section(workdir: Path, quick: bool = False) -> str:
    """Measure the crafted inputs under `workdir` and return a Markdown section."""
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    saved = os.environ.get("MEMZOI_HOME")
    try:
        scans = scan_rows(workdir, 3 if quick else 7)
        push = zero_blob_push(workdir)
    finally:
        if saved is None:
            os.environ.pop("MEMZOI_HOME", None)
        else:
            os.environ["MEMZOI_HOME"] = saved
    scan_table = [f"| {label} | {_ms(read)} | {_ms(scan)} | **{scan / read:.1f}×** |" for label, read, scan in scans]
    ratio = push["seconds"] / push["python"]
    peak_mb = push["peak_kb"] / 1024
    return "\n".join(
        [
            "## Crafted input: what an attacker's file costs",
            "",
            f"**The secret scan.** Each file is {SCAN_BYTES >> 20} MB of one repeated unit: lines that each "
            "hold a key, or one long run that made a pattern backtrack before (a run rescanned from every "
            "start inside it). *Read* is reading the file and decoding it (what every gate does before it "
            "scans); *scan* is `profile.secrets.scan` over the text (best of several). Target: the scan of "
            "key-shaped lines in ≤ 2× the read.",
            "",
            "| file | read | scan | scan / read |",
            "|---|---:|---:|---:|",
            *scan_table,
            "",
            f"**An oversized blob at the server.** A commit adding a {ZERO_BLOB >> 20} MB record of zeros "
            "(a sparse file, `git add`ed) is pushed to a bare repository with the installed pre-receive hook; "
            "a wrapper in front of the hook times it and takes its peak RSS (the hook script and every "
            f"process it runs). Each row is the best of {PUSHES} pushes (the refused commit pushed again, "
            "each accepted push adding one more small record), and the highest peak RSS among them. "
            "Targets: refused in ≤ 10× `python3 -c pass`, at ≤ 200 MB peak RSS.",
            "",
            "| push | hook | `python3 -c pass` | ratio | hook peak RSS |",
            "|---|---:|---:|---:|---:|",
            f"| one small record (accepted) | {_ms(push['accepted_seconds'])} | {_ms(push['python'])} "
            f"| {push['accepted_seconds'] / push['python']:.1f}× | {push['accepted_peak_kb'] / 1024:.0f} MB |",
            f"| a {ZERO_BLOB >> 20} MB zero record (refused: `file-too-large`) | {_ms(push['seconds'])} "
            f"| {_ms(push['python'])} | **{ratio:.1f}×** | **{peak_mb:.0f} MB** |",
            "",
            "The hook takes each file's size from its object header (`odb.read_header`) before anything "
            "reads it, and refuses a file over 1 MiB by its size alone: the blob is never inflated, "
            "decoded or scanned. The records accepted before it come from the kept tree (a summary, and "
            "a delta of it for each accepted push's tree), so the refused push parses no file and loads "
            "neither PyYAML nor pydantic: it costs less than an accepted push, which parses its record.",
            "",
        ]
    )


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="memzoi-bench-attack-") as tmp:
        print(section(Path(tmp)))
