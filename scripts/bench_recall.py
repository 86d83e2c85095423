#!/usr/bin/env python3
"""Benchmark recall quality: does the right memory reach the agent at each moment, and at what cost in tokens?

    .venv/bin/python scripts/bench_recall.py [--quick]      # prints the Markdown section

The corpus is fixtures/recall/: records.yaml (a mid-size monorepo's memory, with superseded, expired
and tombstoned records marked `stale`) and tasks.yaml (prompts, edits, commands and a session start,
each with the records it needs, chosen by meaning). `section(workdir, quick)` renders the records into a
committed repository, runs every task through the real surfaces in process (search, context, and the
Claude Code hook's own `answer_text` on the event JSON Claude Code sends) and scores what each surface
hands over: a record counts as given when its ID appears in the text the agent receives. Recall is the
mean per task of gold given / gold; precision is gold given / all corpus records given, over all tasks;
tokens are characters / 4 of that text. A second repository adds ~1,920 distractor records (seeded)
to check that recall holds when the dump is far too big to paste.
"""

from __future__ import annotations

import json
import os
import random
import re
import sqlite3
import sys
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

import pygit2
import yaml

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "scripts"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from bench import Stamp, fields, render_record  # noqa: E402

CORPUS = ROOT / "fixtures" / "recall"
DISTRACTORS = 1_920
#: A --quick run's distractors: a smoke run of the same code, not the figures BENCHMARKS.md shows.
QUICK_DISTRACTORS = 240
SEED = 19
SEARCH_TOP = 5
#: How much of a title must be shown beside its ID for the record to count as handed over.
TITLE_HEAD = 24
CONTEXT_TOKENS = (600, 1_500)
PROCEDURAL = {"procedure", "runbook"}
STAMP = 1767225600  # 2026-01-01, the commit's date


def corpus(folder: Path = CORPUS) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(records, tasks) as a corpus folder (fixtures/recall, or one under fixtures/recall/heldout) holds them."""
    records = yaml.safe_load((folder / "records.yaml").read_text(encoding="utf-8"))["records"]
    for entry in records:  # YAML reads a bare timestamp as a datetime; the profile wants RFC 3339 text
        for key in ("timestamp", "expires"):
            if isinstance(entry.get(key), datetime):
                entry[key] = entry[key].strftime("%Y-%m-%dT%H:%M:%SZ")
    tasks = yaml.safe_load((folder / "tasks.yaml").read_text(encoding="utf-8"))["tasks"]
    return records, tasks


def applies_to(entries: list[str]) -> list[str]:
    """A corpus entry's scopes as the profile can hold them: a glob the profile's `applies_to` cannot express
    (`src/**/*.tsx`, `.env*`) becomes the folder it lies in, as import makes it of a rule file's globs."""
    from git_memzoi.importer.formats import glob_scope

    out: list[str] = []
    for entry in entries:
        plain = entry.removesuffix("/**")
        for scope in glob_scope([entry], "")[0] if any(c in plain for c in "*?[{") else (entry,):
            if scope not in out:
                out.append(scope)
    return out


def record_file(entry: dict[str, Any]) -> tuple[str, str]:
    """(repository path, file text) of one corpus entry, as a valid profile record."""
    kind = entry["type"]
    lane = "procedural" if kind in PROCEDURAL else "semantic"
    status = {"superseded": "superseded", "tombstoned": "tombstoned"}.get(entry.get("stale", ""), "active")
    stamp = Stamp(entry["timestamp"], status, entry["confidence"])
    data = fields(entry["id"], kind, lane, entry["title"], entry["description"], stamp)
    if entry.get("applies_to"):
        data["applies_to"] = applies_to(entry["applies_to"])
    if entry.get("tags"):
        data["tags"] = entry["tags"]
    data["source"] = "human"
    data["source_ref"] = None
    if entry.get("supersedes"):
        data["supersedes"] = entry["supersedes"]
    retention = {"explicit_expires_at": entry["expires"]} if entry.get("expires") else {}
    folder = f"{lane}/{kind.replace('_', '-')}s"
    return f".memzoi/records/{folder}/{entry['id']}.md", render_record(
        data, retention, f"recall-bench:{entry['id']}", (entry.get("body") or entry["description"]).strip()
    )


# Distractors: the memory of other parts of a bigger organisation's monorepo, in the same words a real
# memory uses (deploys, tests, caches, migrations), so they compete with the corpus on every query.
_AREAS = [
    f"{kind}/{name}"
    for kind, names in (
        (
            "services",
            "inventory loyalty shipping reviews warehouse pricing-engine recommendations fraud payouts "
            "returns catalogue-import gift-cards subscriptions affiliates ledger",
        ),
        ("packages", "analytics feature-toggles forms charts maps media-upload markdown pdf-export telemetry sdk-js"),
        ("apps", "docs-site partner-portal kiosk storybook-host status-page"),
        ("tools", "codegen fixtures-builder load-tests data-migrator"),
    )
    for name in names.split()
]
_TYPES = ["fact", "decision", "convention", "warning", "risk", "procedure", "note", "failed_attempt", "constraint"]
_TOPICS = [
    (
        "{area} retries {dep} calls with exponential backoff",
        "Calls to {dep} from {area} retry up to {n} times with jittered exponential backoff before failing the job.",
    ),
    (
        "{area} caches {dep} responses for {n} minutes",
        "The {dep} client in {area} keeps an in-memory cache with a {n} minute TTL; invalidate it after writes.",
    ),
    (
        "Deploy {area} after the {dep} schema change",
        "Deploy order matters: the {dep} schema change ships first, then {area}, or the consumer reads missing fields.",
    ),
    (
        "{area} tests need the {dep} emulator",
        "Integration tests in {area} start the {dep} emulator with docker; unit tests stub it with the fake client.",
    ),
    (
        "{area} owns the {dep} queue",
        "Only {area} consumes the {dep} queue; other services publish to it through the outbox table.",
    ),
    (
        "Batch size for {area} jobs is {n}",
        "Larger batches in {area} timed out against {dep}; {n} items per batch keeps each run under a minute.",
    ),
    (
        "{area} logs are sampled at {n} percent",
        "Debug logs from {area} are sampled at {n} percent in production to keep the {dep} bill down.",
    ),
    (
        "{area} migrations run in the {dep} maintenance window",
        "Long-running data migrations for {area} run during the {dep} maintenance window on Sunday mornings.",
    ),
    (
        "Feature flag {area}.{dep}-v2 gates the rewrite",
        "The rewrite of the {dep} integration in {area} is behind a flag; roll back by turning it off.",
    ),
    (
        "{area} exposes metrics on port {n}",
        "The {area} metrics endpoint listens on port {n}; the scrape config lives next to its manifest.",
    ),
    (
        "{area} uses {dep} for background jobs",
        "Background work in {area} runs on {dep}; keep handlers idempotent because jobs are delivered at least once.",
    ),
    (
        "{area} pagination returns at most {n} items",
        "List calls in {area} return at most {n} items per page and a continuation token from {dep}.",
    ),
]
_DEPS = [
    "Kafka",
    "BullMQ",
    "S3",
    "Redis streams",
    "SQS",
    "Elasticsearch",
    "DynamoDB",
    "Segment",
    "Mapbox",
    "Algolia",
    "ClickHouse",
    "Temporal",
    "Snowflake",
    "Sentry",
    "Twilio",
    "Contentful",
]


def distractor(i: int, rng: random.Random) -> tuple[str, str]:
    """One realistic record about another part of the organisation, never the answer to a corpus task."""
    area = rng.choice(_AREAS)
    kind = rng.choice(_TYPES)
    title_t, body_t = rng.choice(_TOPICS)
    values = {"area": area.split("/")[1], "dep": rng.choice(_DEPS), "n": rng.choice([3, 5, 10, 15, 30, 50, 100])}
    title = title_t.format(**values)
    title = title[0].upper() + title[1:]
    body = body_t.format(**values)
    rid = f"d{i:04d}-{re.sub(r'[^a-z0-9]+', '-', title.lower()).strip('-')[:48].strip('-')}"
    lane = "procedural" if kind in PROCEDURAL else "semantic"
    stamp = f"2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}T10:00:00Z"
    data = fields(rid, kind, lane, title, body, Stamp(stamp, "active", round(rng.uniform(0.5, 1.0), 2)))
    if rng.random() < 0.95:  # a few stay repository-wide, as facts and notes do
        data["applies_to"] = [rng.choice([f"{area}/**", f"{area}/src/{values['dep'].lower().replace(' ', '-')}.ts"])]
    elif kind not in ("fact", "note"):
        data["type"] = kind = "fact"
    data["tags"] = sorted({area.split("/")[1], values["dep"].lower().replace(" ", "-")})
    data["source"] = "human"
    data["source_ref"] = None
    folder = f"{lane}/{kind.replace('_', '-')}s"
    return f".memzoi/records/{folder}/{rid}.md", render_record(data, {}, f"recall-bench:{rid}", body)


def build(root: Path, distractors: int = 0, folder: Path = CORPUS) -> Path:
    """A committed repository holding the corpus in `folder` (plus `distractors` seeded distractor records)."""
    records, _ = corpus(folder)
    repo = pygit2.init_repository(str(root), initial_head="main")
    (root / ".memzoi" / "proposals" / "pending").mkdir(parents=True)
    (root / ".memzoi" / "index.md").write_text("# Memory index\n")
    (root / ".memzoi" / "log.md").write_text("# Memory log\n")
    (root / "README.md").write_text(f"# {folder.name}\n")
    files = [record_file(entry) for entry in records]
    rng = random.Random(SEED)
    files += [distractor(i, rng) for i in range(distractors)]
    for rel, text in files:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        os.utime(path, (STAMP, STAMP))  # old enough that recall trusts the stats, as in a repository worked in
    index = repo.index
    index.add_all()
    index.write()
    sig = pygit2.Signature("Bench", "bench@example.com", STAMP, 0)
    repo.create_commit("HEAD", sig, sig, "recall corpus", index.write_tree(), [])
    return root


def tokens(text: str) -> float:
    """What a text costs an agent, as characters / 4."""
    return len(text) / 4


class Given:
    """Finds which records a text hands over: a record's whole ID (`use-pnpm` is not inside `use-pnpm-2`)
    where its title is shown too. Every surface shows a record by its title and ID; an ID alone is a mention
    in another record's text ("was 24h until … (patch-freeze-24h)"), which hands that record over no more
    than a link does."""

    def __init__(self, ids: list[str], titles: dict[str, str] | None = None) -> None:
        alternatives = "|".join(re.escape(i) for i in sorted(ids, key=len, reverse=True))
        self._pattern = re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])")
        self._heads = {key: " ".join(title.split())[:TITLE_HEAD] for key, title in (titles or {}).items()}

    def __call__(self, text: str) -> set[str]:
        found = set(self._pattern.findall(text))
        if not self._heads:
            return found
        flat = " ".join(text.split())
        return {key for key in found if self._heads.get(key, "") in flat}


class Score:
    """One surface's figures over its tasks (plain classes: bench.py loads this module without importing it)."""

    def __init__(self) -> None:
        self.recalls: list[float] = []
        self.gold_given = 0
        self.given = 0
        self.token_counts: list[float] = []

    def add(self, gold: set[str], given: set[str], text: str) -> None:
        """Score one task's answer."""
        self.recalls.append(len(gold & given) / len(gold) if gold else 1.0)
        self.gold_given += len(gold & given)
        self.given += len(given)
        self.token_counts.append(tokens(text))

    @property
    def recall(self) -> float:
        return sum(self.recalls) / len(self.recalls) if self.recalls else 0.0

    @property
    def precision(self) -> float:
        return self.gold_given / self.given if self.given else 0.0

    @property
    def mean_tokens(self) -> float:
        return sum(self.token_counts) / len(self.token_counts) if self.token_counts else 0.0


class Run:
    """Every surface's score on one repository, and the stale records any surface handed over."""

    def __init__(self, scores: dict[str, Score], leaked: dict[str, set[str]], dump_tokens: float) -> None:
        self.scores = scores
        self.leaked = leaked
        self.dump_tokens = dump_tokens


def _event(root: Path, name: str, session: str, **extra: Any) -> bytes:
    base = {
        "session_id": session,
        "transcript_path": f"/home/dev/.claude/projects/harbor/{session}.jsonl",
        "cwd": str(root),
        "hook_event_name": name,
    }
    if name != "SessionStart":
        base["permission_mode"] = "default"
    return json.dumps(base | extra).encode()


def _hook_text(root: Path, event: bytes) -> str:
    from git_memzoi.cli.agent_hook import answer_text

    out, err = answer_text(event)
    if err is not None:  # an event the hook cannot answer gives the agent nothing; say so in the report
        print(f"bench_recall: {err}", file=sys.stderr)
    if out is None:
        return ""
    return str(json.loads(out)["hookSpecificOutput"].get("additionalContext", ""))


def _search_text(ws: Any, query: str) -> str:
    """The lines `git memzoi search` prints for the top hits (what an agent running it reads)."""
    from git_memzoi.recall.search import search

    lines = []
    for number, hit in enumerate(search(ws, query, limit=SEARCH_TOP).hits, 1):
        lines.append(f"{number}. {hit.title}  ({hit.type}, {hit.lane})")
        lines.append(f"   id: {hit.record_id}  score: {hit.score:.3f}")
        lines.append(f"   {hit.snippet}")
    return "\n".join(lines)


def _context_text(ws: Any, task: str, limit: float) -> str:
    """The largest context pack for `task` whose text fits `limit` tokens (the budget is in words)."""
    from git_memzoi.recall.context import build_context

    lo, hi, best = 1, int(limit), ""
    while lo <= hi:
        mid = (lo + hi) // 2
        text = build_context(ws, task, budget=mid).text
        if tokens(text) <= limit:
            best, lo = text, mid + 1
        else:
            hi = mid - 1
    return best


def _blocks(ws: Any) -> dict[str, str]:
    """Each current repository record as a context pack shows it, by record ID."""
    from git_memzoi.index.queries import Filter, records
    from git_memzoi.index.rebuild import open_index
    from git_memzoi.recall.context import block, clean_body
    from git_memzoi.recall.records import now

    conn = open_index(ws)
    try:
        rows = records(conn, Filter(now=now()[1]))
    finally:
        conn.close()
    return {row.record_id: block(row, clean_body(row.title, row.body)) for row in rows}


def _bm25_text(ws: Any, blocks: dict[str, str], query: str, limit: float) -> str:
    """Plain FTS5 bm25 on the raw query's words (any of them), best records first while `limit` tokens last."""
    from git_memzoi.index import fts
    from git_memzoi.index.rebuild import open_index

    words = fts.terms(query)
    if not words:
        return ""
    conn = open_index(ws)
    try:
        rows = conn.execute(
            "SELECT r.record_id FROM records_fts JOIN records r ON r.rowid = records_fts.rowid "
            "WHERE records_fts MATCH ? ORDER BY bm25(records_fts) LIMIT 200",
            (fts.any_of(words),),
        ).fetchall()
    except sqlite3.OperationalError:
        rows = []
    finally:
        conn.close()
    text = ""
    for (rid,) in rows:
        if rid not in blocks:
            continue  # not current
        if tokens(text + blocks[rid]) > limit:
            break
        text += blocks[rid]
    return text


SURFACES = (
    "search top 5",
    "context 600 tokens",
    "context 1,500 tokens",
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse path",
    "PreToolUse command",
)
#: UserPromptSubmit on the prompts marked `paraphrase: true` alone (sharing few words with their gold).
PARAPHRASED = "UserPromptSubmit, paraphrased"
BASELINES = ("baseline: whole memory dumped", "baseline: plain bm25, 600 tokens")


def measure(root: Path, folder: Path = CORPUS) -> Run:
    """Run every task of the corpus in `folder` through every surface on the repository at `root`."""
    from git_memzoi.runtime.workspace import Workspace

    records, tasks = corpus(folder)
    ws = Workspace.open(root)
    blocks = _blocks(ws)
    ids = [entry["id"] for entry in records] + list(blocks)
    given = Given(list(dict.fromkeys(ids)), {entry["id"]: str(entry["title"]) for entry in records})
    stale = {entry["id"] for entry in records if entry.get("stale")}
    scores = {name: Score() for name in (*SURFACES, PARAPHRASED, *BASELINES)}
    leaked: dict[str, set[str]] = {name: set() for name in SURFACES}
    dump = "".join(blocks.values())

    def score(surface: str, gold: set[str], text: str) -> None:
        found = given(text)
        scores[surface].add(gold, found, text)
        if surface in leaked:
            leaked[surface] |= found & stale

    for number, task in enumerate(tasks):
        gold, text, kind = set(task["gold"]), task["text"], task["kind"]
        session = f"bench-{number:03d}"
        if kind == "session":
            score("SessionStart", gold, _hook_text(root, _event(root, "SessionStart", session, source="startup")))
        elif kind == "prompt":
            score("search top 5", gold, _search_text(ws, text))
            for limit, name in zip(CONTEXT_TOKENS, SURFACES[1:3], strict=True):
                score(name, gold, _context_text(ws, text, limit))
            prompt_text = _hook_text(root, _event(root, "UserPromptSubmit", session, prompt=text))
            score("UserPromptSubmit", gold, prompt_text)
            if task.get("paraphrase"):
                score(PARAPHRASED, gold, prompt_text)
            score(BASELINES[0], gold, dump)
            score(BASELINES[1], gold, _bm25_text(ws, blocks, text, CONTEXT_TOKENS[0]))
        elif kind == "edit":
            tool_input = {"file_path": str(root / text), "old_string": "a", "new_string": "b"}
            event = _event(root, "PreToolUse", session, tool_name="Edit", tool_input=tool_input, tool_use_id="toolu_1")
            score("PreToolUse path", gold, _hook_text(root, event))
        elif kind == "command":
            tool_input = {"command": text, "description": "run it"}
            event = _event(root, "PreToolUse", session, tool_name="Bash", tool_input=tool_input, tool_use_id="toolu_1")
            score("PreToolUse command", gold, _hook_text(root, event))
    return Run(scores, leaked, tokens(dump))


def _rows(run: Run) -> list[str]:
    out = []
    for name, s in run.scores.items():
        if not s.recalls:
            continue  # a corpus with no such task (paraphrases are marked in the held-out corpora)
        out.append(f"| {name} | {len(s.recalls)} | {s.recall:.2f} | {s.precision:.2f} | {s.mean_tokens:,.0f} |")
    return out


TUNING = CORPUS / "tuning"
HELDOUT = CORPUS / "heldout"
#: Every corpus is measured again at this many records, seeded distractors making up the rest.
LARGE_TOTAL = 2_000


def _folders(parent: Path) -> list[Path]:
    return sorted(p for p in parent.iterdir() if (p / "records.yaml").is_file()) if parent.is_dir() else []


def corpora() -> list[tuple[str, Path]]:
    """(role, folder) of every corpus: the ones the ranking is tuned on, then each held-out one."""
    tuning = [CORPUS, *_folders(TUNING)]
    return [*(("tuning", p) for p in tuning), *(("held-out", p) for p in _folders(HELDOUT))]


def runs(workdir: Path, distractors: int = DISTRACTORS, folder: Path = CORPUS) -> tuple[Run, Run]:
    """(the corpus alone, the corpus with distractors), each in its own repository and MEMZOI_HOME."""
    out = []
    for name, extra in (("small", 0), ("large", distractors)):
        root = workdir / f"recall-{folder.name}-{name}"
        build(root, extra, folder)
        os.environ["MEMZOI_HOME"] = str(workdir / f"recall-{folder.name}-{name}-home")
        out.append(measure(root, folder))
    return out[0], out[1]


def _corpus_section(workdir: Path, role: str, folder: Path, quick: bool) -> tuple[list[str], set[str], float]:
    """The tables of one corpus (alone and at LARGE_TOTAL records), its stale leaks and its largest drift."""
    records, tasks = corpus(folder)
    distractors = QUICK_DISTRACTORS if quick else max(LARGE_TOTAL - len(records), DISTRACTORS * (role == "tuning"))
    small, large = runs(workdir, distractors, folder)
    leaks = set().union(*small.leaked.values(), *large.leaked.values())
    drift = max(abs(small.scores[n].recall - large.scores[n].recall) for n in SURFACES)
    header = "| surface | tasks | recall | precision | mean tokens |\n|---|---:|---:|---:|---:|"
    where = folder.relative_to(ROOT).as_posix()
    stale = sum(1 for r in records if r.get("stale"))
    lines = [
        f"### {role}: `{where}`, {len(records)} records ({stale} stale), {len(tasks)} tasks "
        f"(whole memory: {small.dump_tokens:,.0f} tokens)",
        "",
        header,
        *_rows(small),
        "",
        f"#### the same with {distractors:,} seeded distractors: {len(records) + distractors:,} records "
        f"(whole memory: {large.dump_tokens:,.0f} tokens)",
        "",
        header,
        *_rows(large),
        "",
        f"Stale records leaked on any surface: **{len(leaks)}**"
        + (f" ({', '.join(sorted(leaks))})" if leaks else "")
        + f". Largest recall change between the two sizes on any surface: {drift:.2f}.",
        "",
    ]
    return lines, leaks, drift


def section(workdir: Path, quick: bool = False) -> str:
    """Build every corpus's repositories under `workdir`, run every task and return a Markdown section."""
    workdir.mkdir(parents=True, exist_ok=True)
    body: list[str] = []
    for role, folder in corpora():
        lines, _, _ = _corpus_section(workdir, role, folder, quick)
        body += lines
    return (
        "\n".join(
            [
                "## Recall quality: the right memory at the right moment",
                "",
                "Each corpus is a project's memory (with superseded, expired and tombstoned records marked stale) "
                "and tasks whose records were chosen by meaning before any run (scripts/bench_recall.py). "
                "`fixtures/recall` and the corpora under `fixtures/recall/tuning/` are tuned on; "
                "each corpus under "
                "`fixtures/recall/heldout/` was written by an author who had not read the ranking, with its gold "
                "fixed first, and is never tuned on: its figures are the ones to trust. A record counts as given "
                "when its ID is in the text the agent receives with the head of its title (an ID named in another "
                "record's text is a mention, not the record); tokens are characters / 4 of that text. Recall is "
                "the mean per task, precision is over all tasks. Context at N tokens is the largest word budget "
                'whose pack fits N tokens. "UserPromptSubmit, paraphrased" is UserPromptSubmit on the prompts '
                "marked as sharing few words with their gold. A corpus scope the profile's `applies_to` cannot hold "
                "(`src/**/*.tsx`) is rendered as the folder it lies in, as import renders a rule file's globs.",
                "",
                *body,
            ]
        )
        + "\n"
    )


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="memzoi-bench-recall-") as tmp:
        print(section(Path(tmp), quick="--quick" in sys.argv[1:]), end="")
