#!/usr/bin/env python3
"""Benchmark the index and recall against a floor, on deterministic synthetic repositories.

For each size N it generates N records (mixed lanes, types, applies_to, bodies of realistic
length), commits them with pygit2 and measures, in one run and side by side:

- the floor: a plain loop that reads every record and YAML-parses its frontmatter (C loader);
- a cold full rebuild (empty MEMZOI_HOME, nothing cached), a no-op rebuild, and the rebuild
  of a fresh linked worktree of the same commit;
- in-process search and context (p50/p95 over the queries), each call including the
  read path's staleness check;
- end to end `git memzoi search` against `python3 -c pass`.

Figures are written to BENCHMARKS.md as ratios to the floor, with the targets beside them.
Each scripts/bench_<topic>.py module (in name order) adds a section: its `section(workdir, quick)`
returns Markdown that is appended to the report. `--sections TOPIC,…` runs just those sections.
`--before REV` also takes the records figures for REV's code and for this code, alternately, and
reports both side by side (a change that must keep the rebuild's speed shows it there).

    .venv/bin/python scripts/bench.py                 # 10k records
    .venv/bin/python scripts/bench.py --sizes 1000,10000,50000
    .venv/bin/python scripts/bench.py --quick --sizes 200 --output /tmp/B.md   # smoke run
    .venv/bin/python scripts/bench.py --before main   # and the rebuild figures of main's code beside
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import os
import platform
import random
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import pygit2  # noqa: E402
import yaml  # noqa: E402

SEED = 20260705
LANES = [("semantic", 55), ("procedural", 15), ("episodic", 20), ("session", 10)]
TYPES = {
    "semantic": ["decision", "fact", "constraint", "convention", "warning", "risk", "preference", "failed_attempt"],
    "procedural": ["procedure", "runbook"],
    "episodic": ["incident", "summary", "handoff", "note"],
    "session": ["checkpoint", "note"],
}
SOURCES = [
    ("human", None),
    ("issue", "issue://{n}"),
    ("pr", "pr://{n}"),
    ("doc", "docs/adr/{n:04d}.md"),
    ("agent", None),
    (None, None),
    ("commit", "{sha}"),
]
WORDS = """
access account adapter alert allocation analytics api archive artifact async audit auth backend backoff
backup batch benchmark binary blob branch broker browser budget buffer build bundle cache callback canary
certificate channel checkout checksum cleanup client cluster codec collector column commit compiler
component compression config connection consumer container context contract controller cookie coverage
cron cursor dashboard database deadline debug decoder default dependency deploy deprecation descriptor
diff digest directory disk dispatch docker document domain download driver endpoint engine entry
environment error event exception executor export extension failover feature fetch field filter
firewall fixture flag flaky format fragment framework gateway generator handler hash header health heap
hook host idempotent image import incident index ingest input installer instance integration interface
invoice issuer job journal kernel key lambda latency layout lease library lifecycle limit linter listener
load locale lock log lookup manifest mapping marker memory merge message metric middleware migration
mirror mobile mock model module monitor mutex namespace network node notification object offset
operator optimizer order origin output owner package page pagination parser partition patch payload
payment permission pipeline platform plugin policy pool port preview primary probe process producer
profile protocol provider proxy publisher query queue quota rate reader rebase receipt record recovery
redirect refactor refresh region registry release replica report repository request resolver resource
response retention retry review revision role rollback rollout route router runtime sandbox scheduler
schema scope script search secret segment selector sequence serializer server service session shard
signal signature snapshot socket source span spec staging state storage stream subscriber suite
supervisor switch sync syntax table tag task template tenant terminal test thread throttle ticket
timeout token topic trace tracker transaction transform transport trigger tunnel type upload upstream
user validator value vendor version view volume webhook widget worker workflow writer
""".split()
VERBS = """must should never always avoid prefer requires breaks blocks uses keeps stores validates rejects
retries caches reads writes sends returns depends handles""".split()
GLUE = "the a of in on for with when before after because so and but or to from by".split()
MODULES = [
    "api",
    "auth",
    "billing",
    "cli",
    "core",
    "db",
    "deploy",
    "docs",
    "frontend",
    "infra",
    "jobs",
    "mobile",
    "payments",
    "search",
    "storage",
    "ui",
    "worker",
    "sdk",
    "ml",
    "ops",
]
TARGETS = {  # issue targets, as ratios to the floor (rebuilds) or absolute (recall)
    "cold": 1.3,
    "noop": 0.05,
    "worktree": 0.25,
    "search_p95_ms": 10.0,
    "context_p95_ms": 25.0,
    "cli": 10.0,
    "noop_status": 2.0,  # no-op rebuild end to end, against `git status --porcelain` on the same tree
    "memory_kib": 3.0,  # a cold rebuild's peak memory above its baseline, per record, at every size
}


SUFFIXES = ["s", "er", "ing", "ed", "able", "less", "ize", "ization", "ness", "ful", "ward", "ish"]


def vocabulary(size: int = 4000) -> list[str]:
    """A deterministic project vocabulary: the base words, then derived words and compounds."""
    rng = random.Random(SEED)
    words = list(dict.fromkeys(WORDS))
    seen = set(words)
    while len(words) < size:
        base = rng.choice(WORDS)
        word = base + rng.choice(SUFFIXES) if rng.random() < 0.5 else base + rng.choice(WORDS)
        if word not in seen:
            seen.add(word)
            words.append(word)
    rng.shuffle(words)
    return words


VOCAB = vocabulary()
#: Word frequencies in real text follow Zipf's law: a few words are everywhere, most are rare. The
#: head of the curve (the, a, of …) is GLUE; content words start further down it.
ZIPF = list(__import__("itertools").accumulate(1.0 / ((rank + 20) ** 1.07) for rank in range(len(VOCAB))))


#: The corpus the records and queries draw their words from: "zipf" (the vocabulary above, by Zipf's law) or
#: "shared" (every record from the same few words, evenly: every word is held by a large share of the records,
#: the worst case for ranking, which scores every record holding a query's words). `--corpus` sets it; the
#: environment carries it to the sections, which load this module again.
CORPUS_ENV = "MEMZOI_BENCH_CORPUS"
CORPORA = ("zipf", "shared")
SHARED_WORDS = 64


def corpus() -> str:
    """The corpus this run draws from (CORPUS_ENV; "zipf" when unset)."""
    return os.environ.get(CORPUS_ENV, "zipf")


def word(rng: random.Random) -> str:
    if corpus() == "shared":
        return rng.choice(WORDS[:SHARED_WORDS])
    return rng.choices(VOCAB, cum_weights=ZIPF)[0]


def any_word(rng: random.Random) -> str:
    """A word of the corpus's vocabulary, each as likely as the others."""
    return rng.choice(WORDS[:SHARED_WORDS] if corpus() == "shared" else VOCAB)


NOTES = [
    "- **Cold** builds from nothing read, validate and parse records in worker processes (one per CPU)",
    "  while the main process writes rows, FTS entries and parse-cache entries as batches arrive; the",
    "  floor is one process. The work itself (CPU time, above) is about twice the floor's: the floor",
    "  only YAML-loads, while a build also validates every record against the profile (pydantic),",
    "  computes retention boundaries, and writes the index, its FTS5 tokens and the parse cache.",
    "  Its time as a ratio to the floor therefore rests on having a free CPU per worker: on a 2-CPU",
    "  machine shared with other work, it moves with that load while its CPU time does not (compare",
    "  the CPU figures above the table, and `--before`, which runs both codes alternately).",
    "- **No-op** is one stat per record file (and one per folder), compared with a digest of the",
    "  stats the last check confirmed; nothing is read or parsed, and nothing is written. When git's",
    "  index vouches for every record file (all committed and unchanged, as here after the first",
    "  check), `git diff-files --quiet` compares those stats in C instead (index/git_clean.py).",
    "- **Fresh linked worktree** starts from the other worktree's index.db (copied), takes the blob",
    "  OID of each unchanged file from git's own index stat cache (no file is read or hashed), and",
    "  updates the stats it holds; nothing is parsed.",
    "- **Search and context** include `open_index`'s staleness check on every call, as the no-op",
    "  rebuild does: every record file's stat, compared by git when it vouches for them (no read",
    "  trusts an earlier sweep).",
    "- **CLI** runs are separate processes; each pays Python start-up and the imports of click and",
    "  our own modules (not pydantic, PyYAML or pygit2: the read path leaves them unloaded), which",
    "  dominate the figure; each also checks every record file's stat.",
    "- The machine is a small shared VM: the same run repeated moves these ratios by roughly ±15%,",
    "  and a p95 or a single best-of-3 figure by up to ±40% (the before-and-after table shows the spread).",
]


def sentence(rng: random.Random, low: int = 8, high: int = 20) -> str:
    n = rng.randint(low, high)
    words = []
    for i in range(n):
        if i % 5 == 2:
            words.append(rng.choice(VERBS))
        elif i % 3 == 1:
            words.append(rng.choice(GLUE))
        else:
            words.append(word(rng))
    text = " ".join(words)
    return text[0].upper() + text[1:] + "."


def make_record(n: int, rng: random.Random) -> tuple[str, str]:
    """(repository path, file text) of synthetic record n."""
    lane = rng.choices([lane for lane, _ in LANES], [w for _, w in LANES])[0]
    kind = rng.choice(TYPES[lane])
    title_words = [word(rng) for _ in range(rng.randint(3, 7))]
    title = " ".join(title_words).capitalize()
    rid = f"{'-'.join(title_words[:4])}-{n}"
    day = rng.randint(1, 28)
    stamp = f"2026-{rng.randint(1, 6):02d}-{day:02d}T{rng.randint(0, 23):02d}:00:00Z"
    retention: dict[str, str] = {}
    if lane == "episodic":
        retention = {"occurred_at": stamp}
    elif lane == "session":
        retention = {"started_at": stamp, "last_active_at": stamp}
    elif rng.random() < 0.05:
        retention = {"explicit_expires_at": "2027-01-01T00:00:00Z"}
    applies: list[str] = []
    for _ in range(rng.choices([0, 1, 2, 3], [35, 40, 18, 7])[0]):
        module = rng.choice(MODULES)
        shape = rng.random()
        if shape < 0.4:
            applies.append(f"src/{module}/**")
        elif shape < 0.7:
            applies.append(f"src/{module}/{rng.choice(WORDS)}.py")
        else:
            applies.append(f"src/{module}/{rng.choice(WORDS)}")
    source, ref = rng.choice(SOURCES)
    description = sentence(rng, 10, 24)  # drawn in this order: the records of a seed stay the same
    status = "active" if rng.random() < 0.92 else rng.choice(["superseded", "tombstoned", "expired"])
    data = fields(rid, kind, lane, title, description, Stamp(stamp, status, round(rng.uniform(0.5, 1.0), 2)))
    if applies:
        data["applies_to"] = sorted(set(applies))
    tags = sorted({rng.choice(WORDS) for _ in range(rng.randint(0, 4))})
    if tags:
        data["tags"] = tags
    data["source"] = source
    data["source_ref"] = ref.format(n=n, sha=f"{n:040x}") if ref else None
    if rng.random() < 0.5:
        data["proposal_id"] = f"prop_{n:08d}"
    paragraphs = []
    for _ in range(rng.randint(1, 4)):
        paragraphs.append(" ".join(sentence(rng) for _ in range(rng.randint(2, 6))))
    folder = f"{lane}/{kind.replace('_', '-')}s"
    return f".memzoi/records/{folder}/{rid}.md", render_record(data, retention, f"bench:{n}", "\n\n".join(paragraphs))


class Stamp(NamedTuple):
    """When a record was written, whether it is current, and how sure it is."""

    timestamp: str
    status: str
    confidence: float


def fields(rid: str, kind: str, lane: str, title: str, description: str, stamp: Stamp) -> dict[str, object]:
    """The first frontmatter fields of a repository record, in the profile's order."""
    return {
        "id": rid,
        "kind": "memory",
        "profile": "memzoi",
        "type": kind,
        "lane": lane,
        "title": title,
        "description": description,
        "timestamp": stamp.timestamp,
        "status": stamp.status,
        "scope": "repo",
        "visibility": "repo",
        "content_class": "general_repo_knowledge",
        "confidence": stamp.confidence,
    }


def render_record(data: dict[str, object], retention: dict[str, str], origin_key: str, body: str) -> str:
    """A record file: `data` then its retention and origin as frontmatter, a `# title` heading and `body`."""
    data = data | {"retention": retention, "origin": {"origin_key": origin_key, "route": "repository_materialization"}}
    front = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{front}---\n\n# {data['title']}\n\n{body}\n"


def decision_record(rid: str, name: str, module: str, description: str, proposal_id: str | None = None) -> str:
    """An active decision, "Benchmark decision NAME", that applies to src/MODULE/** and cites pull request NAME:
    the one fixed record the hook and lifecycle benchmarks write many of (make_record draws varied ones)."""
    title, stamp = f"Benchmark decision {name}", "2026-01-01T00:00:00Z"
    data = fields(rid, "decision", "semantic", title, description, Stamp(stamp, "active", 0.9))
    data |= {"applies_to": [f"src/{module}/**"], "source": "pr", "source_ref": f"pr://{name}"}
    if proposal_id:
        data["proposal_id"] = proposal_id
    body = (
        f"Module {name} keeps its state in the shared store and never caches across requests. The team\n"
        "agreed on this after the incident review; revisit when the store moves."
    )
    return render_record(data, {}, f"bench:{name}", body)


def generate(root: Path, n: int) -> pygit2.Repository:
    """A committed repository with n synthetic records (deterministic for a given n)."""
    rng = random.Random(SEED + n)
    repo = pygit2.init_repository(str(root), initial_head="main")
    (root / ".memzoi" / "proposals" / "pending").mkdir(parents=True)
    (root / ".memzoi" / "index.md").write_text("# Memory index\n")
    (root / ".memzoi" / "log.md").write_text("# Memory log\n")
    (root / "README.md").write_text("# bench\n")
    for i in range(n):
        rel, text = make_record(i, rng)
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    index = repo.index
    index.add_all()
    index.write()
    sig = pygit2.Signature("Bench", "bench@example.com", 1767225600, 0)
    repo.create_commit("HEAD", sig, sig, "synthetic records", index.write_tree(), [])
    return repo


def floor(root: Path) -> float:
    """Read every record and YAML-parse its frontmatter with the C loader: the least any indexer does."""
    started = time.perf_counter()
    count = 0
    for folder, _, files in os.walk(root / ".memzoi" / "records"):
        for name in files:
            if not name.endswith(".md"):
                continue
            with open(os.path.join(folder, name), "rb") as handle:
                text = handle.read().decode("utf-8")
            end = text.index("\n---\n", 3)
            yaml.load(text[4 : end + 1], Loader=yaml.CSafeLoader)
            count += 1
    assert count
    return time.perf_counter() - started


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(pct / 100 * len(ordered) + 0.5) - 1))
    return ordered[k]


@dataclass
class Result:
    n: int
    floor: float = 0.0
    cold: float = 0.0
    noop: float = 0.0
    worktree: float = 0.0
    worktree_parsed: int = 0
    search_ms: list[float] = field(default_factory=list)
    context_ms: list[float] = field(default_factory=list)
    cli_ms: float = 0.0
    python_ms: float = 0.0
    noop_cli_ms: float = 0.0  # `git memzoi rebuild` with nothing to do, end to end
    git_status_ms: float = 0.0  # `git status --porcelain` on the same tree, the same way
    noop_cpu_ratio: float = 0.0  # the median of the pairwise ratios of their CPU times (all their processes)
    index_mb: float = 0.0
    floor_cpu: float = 0.0
    cold_cpu: float = 0.0
    imports_ms: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass
class Memory:
    """A cold full rebuild's peak RSS (largest process, KiB), and the same command's without records."""

    n: int
    peak_kib: int
    baseline_kib: int

    @property
    def per_record_kib(self) -> float:
        return (self.peak_kib - self.baseline_kib) / self.n


def queries(rng: random.Random, count: int) -> list[tuple[str, str | None]]:
    """Query texts: words a person would look up (any word of the vocabulary, common ones included),
    a quarter with --path, a tenth hostile text."""
    out: list[tuple[str, str | None]] = []
    hostile = ["session-validation", "src/auth/token.ts", '"unbalanced', "NOT cache", "v1.2.3", "a*", "tenant OR"]
    for i in range(count):
        if i % 10 == 9:
            out.append((rng.choice(hostile), None))
            continue
        pick = (lambda: word(rng)) if i % 3 == 0 else (lambda: any_word(rng))
        text = " ".join(pick() for _ in range(rng.randint(1, 3)))
        path = f"src/{rng.choice(MODULES)}/{rng.choice(WORDS)}.py" if i % 4 == 0 else None
        out.append((text, path))
    return out


def timed(fn, *args, **kwargs) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    fn(*args, **kwargs)
    return time.perf_counter() - started


def run_size(n: int, work: Path, quick: bool, nqueries: int, repeats: int) -> Result:
    from git_memzoi.runtime.workspace import Workspace

    result = Result(n)
    root = work / f"repo-{n}"
    print(f"[{n}] generating {n} records …", file=sys.stderr)
    repo = generate(root, n)
    time.sleep(0 if quick else 2.1)  # let the files' timestamps settle past the racy window
    measure_floor(root, result, repeats)
    measure_cold(root, work, result, repeats)
    ws = Workspace.open(root)
    result.index_mb = ws.layout.index_db.stat().st_size / 1e6
    measure_noop(ws, result, quick, repeats)
    measure_worktrees(repo, work, result, repeats)
    qs = queries(random.Random(SEED), nqueries)
    measure_recall(ws, qs, result)
    env = os.environ | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    measure_cli(root, env, qs, result, quick)
    return result


def measure_floor(root: Path, result: Result, repeats: int) -> None:
    """The floor, best of `repeats`, with its CPU time (page cache warmed the same way for everyone)."""
    floor(root)
    floors = []
    for _ in range(repeats):
        before = os.times()
        floors.append(floor(root))
        if floors[-1] == min(floors):
            result.floor_cpu = sum(os.times()[:2]) - sum(before[:2])
    result.floor = min(floors)
    print(f"[{result.n}] floor {result.floor:.3f}s", file=sys.stderr)


def measure_cold(root: Path, work: Path, result: Result, repeats: int) -> None:
    """A cold full rebuild into an empty MEMZOI_HOME, best of `repeats` (the last home is kept)."""
    from git_memzoi.index.rebuild import rebuild
    from git_memzoi.runtime.workspace import Workspace

    n = result.n
    cold = []
    for attempt in range(repeats):
        home = work / f"home-{n}-cold-{attempt}"
        os.environ["MEMZOI_HOME"] = str(home)
        ws = Workspace.open(root)
        before = os.times()
        cold.append(timed(rebuild, ws))
        after = os.times()
        if cold[-1] == min(cold):
            result.cold_cpu = sum(after[:4]) - sum(before[:4])  # this process and its worker processes
        if attempt < repeats - 1:
            shutil.rmtree(home)
    result.cold = min(cold)
    print(f"[{n}] cold {result.cold:.3f}s", file=sys.stderr)


def measure_noop(ws: object, result: Result, quick: bool, repeats: int) -> None:
    """The in-process no-op rebuild: the median of at least five."""
    from git_memzoi.index.rebuild import rebuild

    if not quick:
        time.sleep(2.1)  # the no-op rebuild below trusts stats older than the racy window
    rebuild(ws)
    result.noop = statistics.median(timed(rebuild, ws) for _ in range(max(repeats, 5)))
    print(f"[{result.n}] no-op {result.noop:.4f}s", file=sys.stderr)


def measure_worktrees(repo: pygit2.Repository, work: Path, result: Result, repeats: int) -> None:
    """`rebuild` in a fresh linked worktree of the same commit, best of `repeats`."""
    from git_memzoi.index.rebuild import rebuild
    from git_memzoi.runtime.workspace import Workspace

    n = result.n
    times = []
    for attempt in range(repeats):
        where = work / f"wt-{n}-{attempt}"
        branch = repo.branches.local.create(f"bench-{attempt}", repo.head.peel(pygit2.Commit))
        repo.add_worktree(f"bench-{attempt}", str(where), branch)
        other = Workspace.open(where)
        started = time.perf_counter()
        report = rebuild(other)
        times.append(time.perf_counter() - started)
        result.worktree_parsed = max(result.worktree_parsed, report.parsed)
    result.worktree = min(times)
    print(f"[{n}] fresh worktree {result.worktree:.3f}s (parsed {result.worktree_parsed})", file=sys.stderr)


def measure_recall(ws: object, qs: list[tuple[str, str | None]], result: Result) -> None:
    """In-process search and context over `qs`, after five of each to warm up."""
    from git_memzoi.recall.context import build_context
    from git_memzoi.recall.search import search

    for text, path in qs[:5]:
        search(ws, text, path=path)
    for text, path in qs:
        started = time.perf_counter()
        search(ws, text, path=path)
        result.search_ms.append((time.perf_counter() - started) * 1000)
    for text, path in qs[:5]:
        build_context(ws, text, paths=[path] if path else [])
    for text, path in qs:
        started = time.perf_counter()
        build_context(ws, text, paths=[path] if path else [])
        result.context_ms.append((time.perf_counter() - started) * 1000)
    print(
        f"[{result.n}] search p95 {percentile(result.search_ms, 95):.2f} ms, "
        f"context p95 {percentile(result.context_ms, 95):.2f} ms",
        file=sys.stderr,
    )


def run_quiet(argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> float:
    """Seconds to run `argv` as a process to its end, output thrown away."""
    return run_cpu(argv, cwd, env)[0]


def run_cpu(argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, the process and every process it waited for) to run `argv`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)  # microseconds; os.times counts clock ticks (10 ms)
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure_cli(root: Path, env: dict[str, str], qs: list[tuple[str, str | None]], result: Result, quick: bool) -> None:
    """End-to-end `git memzoi search` against `python3 -c pass`, the no-op rebuild against `git status`,
    and each dependency's import, all as processes (the first run of each discarded)."""
    runs = 3 if quick else 15
    python, cli = [], []
    for i in range(runs + 1):
        python.append(run_quiet([sys.executable, "-c", "pass"]))
        cli.append(run_quiet(["git", "memzoi", "search", qs[i % len(qs)][0]], root, env))
    result.python_ms = statistics.median(python[1:]) * 1000
    result.cli_ms = statistics.median(cli[1:]) * 1000
    # The no-op read path against what git pays to say the same of its files: every file's stat
    # (ctime, inode and device included), alternately, both as processes in the same tree.
    noop_cli, status = [], []
    for _ in range(runs + 1):
        noop_cli.append(run_cpu(["git", "memzoi", "rebuild"], root, env))
        status.append(run_cpu(["git", "status", "--porcelain"], root, env))
    result.noop_cli_ms = statistics.median(wall for wall, _ in noop_cli[1:]) * 1000
    result.git_status_ms = statistics.median(wall for wall, _ in status[1:]) * 1000
    # the same pair by CPU time: a shared machine's load stretches the longer process's wall time more
    pairs = [a[1] / b[1] for a, b in zip(noop_cli[1:], status[1:], strict=True) if b[1] > 0]
    result.noop_cpu_ratio = statistics.median(pairs) if pairs else 0.0
    for name, module in (("click", "click"), ("pydantic", "pydantic"), ("pygit2", "pygit2")):
        times = [run_quiet([sys.executable, "-c", f"import {module}"]) for _ in range(3 if quick else 7)]
        result.imports_ms[name] = statistics.median(times) * 1000 - result.python_ms
    print(
        f"[{result.n}] CLI search {result.cli_ms:.1f} ms vs python -c pass {result.python_ms:.1f} ms", file=sys.stderr
    )


#: Runs its arguments as a process and prints the largest peak RSS (KiB) among the processes it waited for.
#: A process's recorded peak starts from that of the process that forked it (exec keeps the larger), so the
#: command is started from this small launcher, not from the benchmark's own large process.
_PEAK_LAUNCHER = (
    "import resource, subprocess, sys; "
    "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
    "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
)


def peak_kib(argv: list[str], cwd: Path, env: dict[str, str]) -> int:
    """The peak resident memory (KiB) of the largest process of `argv` run to its end (its workers included)."""
    out = subprocess.run(
        [sys.executable, "-S", "-c", _PEAK_LAUNCHER, *argv], cwd=cwd, env=env, capture_output=True, text=True
    ).stdout.split()
    if len(out) != 2 or out[0] != "0":
        raise SystemExit(f"bench: {' '.join(argv)} failed in {cwd}: {out}")
    return int(out[1])


def measure_memory(sizes: list[int], work: Path, repeats: int) -> list[Memory]:
    """`git memzoi rebuild --full` into an empty MEMZOI_HOME: the peak RSS of its largest process, less
    the same command's on a repository without records (interpreter, imports, empty index), per record."""
    env = os.environ | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    empty = work / "repo-mem-0"
    if not empty.exists():
        generate(empty, 0)

    def best(root: Path, tag: str) -> int:
        peaks = []
        for attempt in range(repeats):
            home = work / f"home-mem-{tag}-{attempt}"
            peaks.append(peak_kib(["git", "memzoi", "rebuild", "--full"], root, env | {"MEMZOI_HOME": str(home)}))
            shutil.rmtree(home, ignore_errors=True)
        return min(peaks)

    baseline = best(empty, "0")
    found = []
    for n in sizes:
        root = work / f"repo-{n}"
        if not root.exists():
            print(f"[memory {n}] generating {n} records …", file=sys.stderr)
            generate(root, n)
        peak = best(root, str(n))
        found.append(Memory(n, peak, baseline))
        print(f"[memory {n}] peak {peak / 1024:.1f} MiB, baseline {baseline / 1024:.1f} MiB", file=sys.stderr)
    return found


def verdict(met: bool | None) -> str:
    """A table's "met" cell: yes, a bold no, or a dash where there is no target."""
    return "—" if met is None else ("yes" if met else "**no**")


def row(name: str, seconds: float, ratio: float | None, target: str, met: bool | None) -> str:
    ratio_text = f"{ratio:.3f}×" if ratio is not None else "—"
    return f"| {name} | {seconds * 1000:,.1f} ms | {ratio_text} | {target} | {verdict(met)} |"


def floor_row(name: str, seconds: float, floor: float, target: str) -> str:
    """A rebuild's row: its time as a ratio to the floor, against the ratio TARGETS[target]."""
    ratio = seconds / floor
    return row(name, seconds, ratio, f"≤ {TARGETS[target]}× floor", ratio <= TARGETS[target])


def render(results: list[Result], quick: bool, repeats: int, nqueries: int) -> str:
    lines = [
        "# Benchmarks",
        "",
        "Produced by `scripts/bench.py` (deterministic synthetic repositories; every figure below comes from",
        "one run of it). Rebuild times are ratios to the **floor**: a plain loop that reads every record and",
        "YAML-parses its frontmatter with `yaml.CSafeLoader`, the least any indexer has to do.",
        "",
        f"- machine: {platform.platform()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"SQLite {sqlite3.sqlite_version}, PyYAML {yaml.__version__} (libyaml {yaml.__with_libyaml__})",
        f"- corpus: {corpus()} ("
        + (
            f"every record's words drawn evenly from the same {SHARED_WORDS}"
            if corpus() == "shared"
            else f"words drawn from a {len(VOCAB):,}-word vocabulary by Zipf's law"
        )
        + "; `--corpus` chooses)",
        f"- method: floor, cold and fresh-worktree figures are the best of {repeats}; no-op is the median of "
        f"{max(repeats, 5)}; search and context are p50/p95 over {nqueries} queries (a quarter with `--path`, "
        "a tenth hostile text) in one warm process, each call including `open_index`'s staleness check; "
        "CLI figures are medians of 15 runs through `git memzoi` (the first discarded).",
        "- bytecode: the package's `.pyc` files are written before anything is measured, as `pip install` "
        "writes them, so that no `git memzoi` process compiles its modules from source (a shell with "
        "`PYTHONDONTWRITEBYTECODE` set would otherwise leave them out).",
        "- cold: empty `MEMZOI_HOME` (no index, no parse cache); page cache warm for every measurement.",
        "- fresh worktree: `git worktree add` of the same commit, then `rebuild` there (another worktree's",
        "  index and the shared parse cache exist, as they do in practice).",
    ]
    if quick:
        lines += ["", "**Quick mode (smoke run): sizes and repetitions are too small for the figures to mean much.**"]
    for r in results:
        search50, search95 = percentile(r.search_ms, 50), percentile(r.search_ms, 95)
        context50, context95 = percentile(r.context_ms, 50), percentile(r.context_ms, 95)
        cli_ratio = r.cli_ms / r.python_ms
        lines += [
            "",
            f"## {r.n:,} records",
            "",
            f"Index size {r.index_mb:.1f} MB; the fresh worktree parsed {r.worktree_parsed} files. CPU time of "
            f"the cold build (all processes) {r.cold_cpu:.2f} s against the floor's {r.floor_cpu:.2f} s "
            f"({r.cold_cpu / max(r.floor_cpu, 1e-9):.2f}×).",
            "",
            "| measure | time | ratio | target | met |",
            "|---|---:|---:|---|---|",
            row("floor: read + CSafeLoader", r.floor, 1.0, "—", None),
            floor_row("cold full rebuild", r.cold, r.floor, "cold"),
            floor_row("no-op rebuild", r.noop, r.floor, "noop"),
            floor_row("fresh linked worktree rebuild", r.worktree, r.floor, "worktree"),
            f"| search in-process p50 / p95 | {search50:.2f} / {search95:.2f} ms | — | "
            f"p95 ≤ {TARGETS['search_p95_ms']:g} ms | {verdict(search95 <= TARGETS['search_p95_ms'])} |",
            f"| context in-process p50 / p95 | {context50:.2f} / {context95:.2f} ms | — | "
            f"p95 ≤ {TARGETS['context_p95_ms']:g} ms | {verdict(context95 <= TARGETS['context_p95_ms'])} |",
            f"| `git memzoi search` end to end | {r.cli_ms:.1f} ms | {cli_ratio:.2f}× `python3 -c pass` "
            f"({r.python_ms:.1f} ms) | ≤ {TARGETS['cli']:g}× | {verdict(cli_ratio <= TARGETS['cli'])} |",
        ]
        if r.git_status_ms:
            status_ratio = r.noop_cli_ms / r.git_status_ms
            lines.append(
                f"| no-op `git memzoi rebuild` end to end | {r.noop_cli_ms:.1f} ms | {status_ratio:.2f}× "
                f"`git status --porcelain` ({r.git_status_ms:.1f} ms); by CPU time, pair by pair, "
                f"{r.noop_cpu_ratio:.2f}× | ≤ {TARGETS['noop_status']:g}× | "
                f"{verdict(status_ratio <= TARGETS['noop_status'])} |"
            )
        if r.imports_ms:
            parts = ", ".join(f"{name} {ms:.0f} ms" for name, ms in r.imports_ms.items())
            lines += [
                "",
                f"For scale, each dependency's import alone, in a process of its own: {parts}. The search "
                "above loads click; pydantic and pygit2 stay unloaded on the read path.",
            ]
        lines += [f"- {note}" for note in r.notes]
    lines += ["", "## How to read these figures", "", *NOTES]
    return "\n".join(lines) + "\n"


def render_memory(memory: list[Memory]) -> str:
    """The rebuild peak-memory table: one row per size."""
    if not memory:
        return ""
    target = TARGETS["memory_kib"]
    lines = [
        "",
        "## Rebuild peak memory",
        "",
        "`git memzoi rebuild --full` as a process, into an empty `MEMZOI_HOME` (no index, no parse cache): the peak "
        "resident memory of its largest process (the build, or one of its workers), best of the runs. The baseline "
        "is the same command on a committed repository without records: the interpreter, the imports and an "
        f"empty index ({memory[0].baseline_kib / 1024:.1f} MiB). Per record is (peak - baseline) / records.",
        "",
        "| records | peak RSS | above the baseline | per record | target | met |",
        "|---:|---:|---:|---:|---|---|",
    ]
    for m in memory:
        above = (m.peak_kib - m.baseline_kib) / 1024
        lines.append(
            f"| {m.n:,} | {m.peak_kib / 1024:.1f} MiB | {above:.1f} MiB | {m.per_record_kib:.2f} KiB | "
            f"≤ {target:g} KiB a record | {verdict(m.per_record_kib <= target)} |"
        )
    return "\n".join(lines) + "\n"


#: The rows `--before` compares, and the column of each that holds the figure.
COMPARED = {
    "cold full rebuild": ("ratio", "cold rebuild (× floor)"),
    "no-op rebuild": ("ratio", "no-op rebuild (× floor)"),
    "fresh linked worktree rebuild": ("ratio", "fresh worktree rebuild (× floor)"),
    "search in-process p50 / p95": ("p95", "search p95 (ms)"),
    "context in-process p50 / p95": ("p95", "context p95 (ms)"),
}


def compared_rows(report: str) -> dict[str, float]:
    """The COMPARED figures of a records-only report."""
    found: dict[str, float] = {}
    for line in report.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] not in COMPARED:
            continue
        column, _ = COMPARED[cells[0]]
        text = cells[2] if column == "ratio" else cells[1].split("/")[1]
        found[cells[0]] = float(text.replace("×", "").replace("ms", "").replace(",", "").strip())
    return found


def resolve_commit(rev: str) -> str | None:
    """The commit `rev` names in this repository, or None."""
    done = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    return done.stdout.strip() if done.returncode == 0 else None


def before_after(commit: str, size: int, work: Path, rounds: int, extra: list[str]) -> str:
    """The rebuild figures of `commit`'s code and of this code, from records-only runs taken alternately."""
    tree = work / "before-tree"
    git = ["git", "-C", str(ROOT)]
    label = commit[:7]
    subprocess.run([*git, "worktree", "add", "--detach", str(tree), commit], check=True, capture_output=True)
    runs: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    try:
        compileall.compile_dir(str(tree / "git_memzoi"), quiet=1)
        for attempt in range(rounds):
            for side, root in (("before", tree), ("after", ROOT)):
                out = work / f"{side}-{attempt}.md"
                print(f"bench: {side} {attempt + 1}/{rounds}", file=sys.stderr)
                args = ["--skip-sections", "--memory-sizes", "", "--sizes", str(size), "--output", str(out), *extra]
                subprocess.run([sys.executable, str(root / "scripts" / "bench.py"), *args], check=True)
                runs[side].append(compared_rows(out.read_text(encoding="utf-8")))
    finally:
        subprocess.run([*git, "worktree", "remove", "--force", str(tree)], capture_output=True)
    lines = [
        f"## Rebuild before and after: `{label}` and this code, {size:,} records",
        "",
        f"The records figures above, taken {rounds} times for the code of `{label}` and "
        f"{rounds} times for this code, alternately, each a whole `scripts/bench.py --skip-sections` run "
        "(its own repository, floor and ratios). Medians, then every run's figure.",
        "",
        "| measure | before | after | before, each run | after, each run |",
        "|---|---:|---:|---|---|",
    ]
    for name, (_, title) in COMPARED.items():
        before = [r[name] for r in runs["before"] if name in r]
        after = [r[name] for r in runs["after"] if name in r]
        if not before or not after:
            continue
        lines.append(
            f"| {title} | {statistics.median(before):.3f} | {statistics.median(after):.3f} | "
            f"{', '.join(f'{v:.3f}' for v in before)} | {', '.join(f'{v:.3f}' for v in after)} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000", help="comma-separated record counts (default 10000)")
    parser.add_argument("--quick", action="store_true", help="smoke run: few repetitions and queries")
    parser.add_argument("--output", default=str(ROOT / "BENCHMARKS.md"), help="where to write the report")
    parser.add_argument("--workdir", help="where to build the repositories (default: a temp folder, removed)")
    parser.add_argument("--queries", type=int, help="queries per measurement (default 200; 20 with --quick)")
    parser.add_argument("--sections", help="comma-separated bench_<topic>.py sections to run (default: all)")
    parser.add_argument(
        "--corpus",
        choices=CORPORA,
        default=corpus(),
        help="the records' words: zipf (a realistic vocabulary, the default) or shared (every record from the "
        f"same {SHARED_WORDS} words)",
    )
    parser.add_argument("--skip-sections", action="store_true", help="leave out every bench_<topic>.py section")
    parser.add_argument("--skip-records", action="store_true", help="leave out the record-size figures")
    parser.add_argument(
        "--memory-sizes",
        help="comma-separated record counts for the rebuild peak-memory rows (default 10000,50000; "
        "with --quick, --sizes); an empty value leaves them out",
    )
    parser.add_argument(
        "--before",
        metavar="REV",
        help="also compare the rebuild figures of REV's code with this code's (records-only runs, alternately)",
    )
    parser.add_argument("--before-rounds", type=int, default=3, help="runs of each side for --before (default 3)")
    args = parser.parse_args(argv)
    os.environ[CORPUS_ENV] = args.corpus  # the sections and --before's runs generate the same corpus
    before = resolve_commit(args.before) if args.before else None
    if args.before and before is None:
        parser.error(f"--before {args.before}: not a commit of this repository")
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    memory_text = args.memory_sizes if args.memory_sizes is not None else (args.sizes if args.quick else "10000,50000")
    memory_sizes = [int(s) for s in memory_text.split(",") if s.strip()]
    nqueries = args.queries or (20 if args.quick else 200)
    repeats = 1 if args.quick else 3
    temp = None
    if args.workdir:
        work = Path(args.workdir)
        work.mkdir(parents=True, exist_ok=True)
    else:
        temp = tempfile.mkdtemp(prefix="memzoi-bench-")
        work = Path(temp)
    saved_home = os.environ.get("MEMZOI_HOME")
    # every `git memzoi` process below loads the package as an installed one does: from bytecode
    compileall.compile_dir(str(ROOT / "git_memzoi"), quiet=1)
    try:
        results = [] if args.skip_records else [run_size(n, work, args.quick, nqueries, repeats) for n in sizes]
        report = render(results, args.quick, repeats, nqueries)
        if not args.skip_records:
            report += render_memory(measure_memory(memory_sizes, work, 1 if args.quick else 2))
        wanted = None if args.sections is None else {t.strip() for t in args.sections.split(",") if t.strip()}
        for path in [] if args.skip_sections else sorted((ROOT / "scripts").glob("bench_*.py")):
            topic = path.stem.removeprefix("bench_")
            if wanted is not None and topic not in wanted:
                continue
            spec = importlib.util.spec_from_file_location(path.stem, path)
            assert spec and spec.loader
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            print(f"bench: section {topic}", file=sys.stderr)
            report += "\n" + module.section(work / topic, args.quick).rstrip("\n") + "\n"
        if before is not None:
            extra = ["--queries", str(nqueries), *(["--quick"] if args.quick else [])]
            report += "\n" + before_after(before, sizes[0], work, args.before_rounds, extra)
        Path(args.output).write_text(report, encoding="utf-8")
        print(f"wrote {args.output}", file=sys.stderr)
    finally:
        if saved_home is None:
            os.environ.pop("MEMZOI_HOME", None)
        else:
            os.environ["MEMZOI_HOME"] = saved_home
        if temp is not None:
            shutil.rmtree(temp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
