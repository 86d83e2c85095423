#!/usr/bin/env python3
"""Benchmark freshness: how well `unverified` and `hook check`'s report find records whose code moved on.

    .venv/bin/python scripts/bench_freshness.py [--quick]      # prints the Markdown section

`section(workdir, quick)` builds a repository with `git fast-import`: packages of Python modules,
records citing them (a file in backticks, a folder as `applies_to`, a function name in its scope,
or nothing), then one range of labelled changes: files deleted, files renamed, folders moved
(`git mv` of a folder), functions renamed, edits that keep every name, unrelated files added.
Each record's expected state is decided from the changes before the run. It reports precision and
recall of `unverified` (read time, every record) and of `hook check BASE..TIP --json`'s
`invalidated`, the records an edit that kept their evidence marked (must be 0), and what the first
judging pass, a kept lookup and the range check cost; then what a one-file change costs `hook check`
(kept, and in a fresh clone) and a one-commit move of HEAD the next read, each against `python3 -c pass`.

`real_history(workdir)` replays one public project's history (fixtures/freshness/real/<name>/: a
trimmed `git fast-export` stream, NOTICE.md) over records written about its code at an old commit,
each labelled by hand before the run, and reports the same precision and recall there. No network.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

EPOCH = 1767225600
RECORDS, QUICK_RECORDS = 10_000, 400
#: modules a package holds, functions a module defines
MODULES, FUNCTIONS = 8, 4
_ENV = os.environ | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def _module(pkg: int, mod: int, names: list[str]) -> str:
    return "".join(f"def {name}(x):\n    return x + {i}\n\n" for i, name in enumerate(names))


def _names(pkg: int, mod: int) -> list[str]:
    return [f"fn_{pkg}_{mod}_{k}" for k in range(FUNCTIONS)]


def _record(rid: str, title: str, body: str, applies_to: list[str]) -> str:
    data: dict[str, object] = {
        "id": rid,
        "kind": "memory",
        "profile": "memzoi",
        "type": "decision",
        "lane": "semantic",
        "title": title,
        "timestamp": "2026-01-01T00:00:00Z",
        "status": "active",
        "scope": "repo",
        "visibility": "repo",
        "content_class": "general_repo_knowledge",
        "confidence": 1.0,
    }
    if applies_to:
        data["applies_to"] = applies_to
    data |= {"source": "human", "source_ref": None, "retention": {}}
    data["origin"] = {"origin_key": f"bench:{rid}", "route": "repository_materialization"}
    front = yaml.safe_dump(data, sort_keys=False)
    return f"---\n{front}---\n# {title}\n\n{body}\n"


class _Stream:
    """A fast-import stream of commits on main."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.mark = 0
        self.when = EPOCH

    def commit(self, message: str, files: dict[str, str], deleted: Sequence[str] = ()) -> None:
        self.mark += 1
        self.when += 60
        self.parts.append(
            f"commit refs/heads/main\nmark :{self.mark}\ncommitter Bench <bench@example.com> {self.when} +0000\n"
            f"data {len(message)}\n{message}\n"
        )
        if self.mark > 1:
            self.parts.append(f"from :{self.mark - 1}\n")
        self.parts.extend(f"D {path}\n" for path in deleted)
        for path, text in files.items():
            data = text.encode()
            self.parts.append(f"M 100644 inline {path}\ndata {len(data)}\n{text}\n")


def _records(n: int, packages: int, rng: random.Random) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """(record files, what each record cites: (kind, path or name)); a quarter each cite a file, a folder, a
    function name in its folder, or nothing."""
    records: dict[str, str] = {}
    cites: dict[str, tuple[str, str]] = {}
    for i in range(n):
        p, m, k = rng.randrange(packages), rng.randrange(MODULES), rng.randrange(FUNCTIONS)
        kind = ("file", "folder", "name", "none")[i % 4]
        rid = f"rule-{i:05d}"
        body, applies, what = {
            "file": (f"Retries are handled in `pkg{p}/mod{m}.py`.", [], f"pkg{p}/mod{m}.py"),
            "folder": ("Everything here is pure.", [f"pkg{p}/**"], f"pkg{p}"),
            "name": (f"Call `{_names(p, m)[k]}` before saving.", [f"pkg{p}/**"], _names(p, m)[k]),
            "none": ("Keep functions short.", [], ""),
        }[kind]
        records[f".memzoi/records/semantic/bench/{rid}.md"] = _record(rid, f"Rule {i}", body, applies)
        cites[rid] = (kind, what)
    return records, cites


class _Changes:
    """The labelled range: each package gets one kind of change, in turn."""

    KINDS = ("delete-file", "rename-file", "move-folder", "rename-name", "keep-edit", "none", "none")

    def __init__(self, code: dict[str, str], packages: int) -> None:
        self.files: dict[str, str] = {"unrelated/notes.txt": "unrelated\n"}
        self.deleted: list[str] = []
        self.broken_files: set[str] = set()
        self.moved_folders: set[str] = set()
        self.gone_names: set[str] = set()
        for p in range(packages):
            getattr(self, "_" + self.KINDS[p % len(self.KINDS)].replace("-", "_"))(code, p)

    def _delete_file(self, code: dict[str, str], p: int) -> None:
        self.deleted.append(f"pkg{p}/mod0.py")
        self.broken_files.add(f"pkg{p}/mod0.py")
        self.gone_names.update(_names(p, 0))

    def _rename_file(self, code: dict[str, str], p: int) -> None:
        self.deleted.append(f"pkg{p}/mod1.py")
        self.files[f"pkg{p}/renamed1.py"] = code[f"pkg{p}/mod1.py"]
        self.broken_files.add(f"pkg{p}/mod1.py")

    def _move_folder(self, code: dict[str, str], p: int) -> None:
        for m in range(MODULES):
            self.deleted.append(f"pkg{p}/mod{m}.py")
            self.files[f"moved/pkg{p}/mod{m}.py"] = code[f"pkg{p}/mod{m}.py"]
            self.broken_files.add(f"pkg{p}/mod{m}.py")
        self.moved_folders.add(f"pkg{p}")

    def _rename_name(self, code: dict[str, str], p: int) -> None:
        old = _names(p, 2)[0]
        self.files[f"pkg{p}/mod2.py"] = code[f"pkg{p}/mod2.py"].replace(old, old.replace("fn_", "renamed_"))
        self.gone_names.add(old)

    def _keep_edit(self, code: dict[str, str], p: int) -> None:
        for m in range(MODULES):
            self.files[f"pkg{p}/mod{m}.py"] = code[f"pkg{p}/mod{m}.py"] + "# reviewed\n"

    def _none(self, code: dict[str, str], p: int) -> None:
        pass

    def breaks(self, kind: str, what: str) -> bool:
        """Whether this range leaves a record citing `what` (as `kind`) unverified."""
        if kind == "file":
            return what in self.broken_files
        if kind == "folder":
            return what in self.moved_folders
        if kind == "name":
            return what in self.gone_names or f"pkg{what.split('_')[1]}" in self.moved_folders
        return False


def _build(root: Path, n: int, rng: random.Random) -> dict[str, bool]:
    """Make the repository; returns whether each record (by ID) is expected unverified."""
    packages = max(4, n // (MODULES * 3))
    code = {f"pkg{p}/mod{m}.py": _module(p, m, _names(p, m)) for p in range(packages) for m in range(MODULES)}
    stream = _Stream()
    stream.commit("code", {"README.md": "# bench\n", ".memzoi/index.md": "# Memory\n", **code})
    records, cites = _records(n, packages, rng)
    stream.commit("records", records)
    changes = _Changes(code, packages)
    stream.commit("labelled changes", changes.files, changes.deleted)
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run(["git", "fast-import", "--quiet"], cwd=root, input="".join(stream.parts).encode(), check=True)
    subprocess.run(["git", "checkout", "-q", "-f", "main"], cwd=root, check=True)
    return {rid: changes.breaks(kind, what) for rid, (kind, what) in cites.items()}


def _scores(expected: dict[str, bool], got: set[str]) -> tuple[float, float, int]:
    wanted = {rid for rid, bad in expected.items() if bad}
    hits = len(wanted & got)
    precision = hits / len(got) if got else 1.0
    recall = hits / len(wanted) if wanted else 1.0
    return precision, recall, len(got - wanted)


def _seconds(argv: list[str], cwd: Path) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=_ENV)
    elapsed = time.perf_counter() - start
    assert done.returncode == 0, done.stderr
    return elapsed, done.stdout


def _read_time(root: Path) -> tuple[set[str], float, float]:
    """(unverified record IDs, first judging pass s, a kept lookup s), through the library as every read calls it."""
    code = (
        "import json, sys, time\n"
        "from git_memzoi.runtime.workspace import Workspace\n"
        "from git_memzoi.recall.records import index_connection\n"
        "from git_memzoi.index import queries\n"
        "from git_memzoi.index.queries import Filter\n"
        "from git_memzoi.freshness import state\n"
        "ws = Workspace.open('.')\n"
        "with index_connection(ws) as conn:\n"
        "    rows = queries.records(conn, Filter(now=None))\n"
        "    t = time.perf_counter(); got = state.verdicts(ws, conn, rows); first = time.perf_counter() - t\n"
        "    t = time.perf_counter(); state.verdicts(ws, conn, rows[:10]); kept = time.perf_counter() - t\n"
        "bad = [r.record_id for r in rows if got[r.path]['state'] == 'unverified']\n"
        "print(json.dumps({'bad': bad, 'first': first, 'kept': kept}))\n"
    )
    _, out = _seconds([sys.executable, "-c", code], root)
    data = json.loads(out)
    return set(data["bad"]), data["first"], data["kept"]


def _alternate(argv: list[str], root: Path, runs: int, before: list[str] | None = None) -> tuple[float, float]:
    """(median s of `argv`, median s of `python3 -c pass`), run alternately in the same loop; `before` (a git
    command) runs untimed ahead of each run of `argv`."""
    timed, anchor = [], []
    for _ in range(runs):
        anchor.append(_seconds([sys.executable, "-c", "pass"], root)[0])
        if before:
            _seconds(before, root)
        timed.append(_seconds(argv, root)[0])
    return statistics.median(timed), statistics.median(anchor)


def _commit(root: Path, message: str) -> list[str]:
    return ["git", "-c", "user.name=Bench", "-c", "user.email=bench@example.com", "commit", "-q", "-a", "-m", message]


class _Costs:
    """What a one-file change costs `hook check`, and a move of HEAD the next read, each as a ratio to Python."""

    def __init__(self, root: Path, runs: int) -> None:
        self.root, self.runs, self.rows = root, runs, []

    def row(self, what: str, seconds: float, anchor: float | None, target: str) -> None:
        ratio = f"{seconds / anchor:.1f}×" if anchor else "—"
        self.rows.append(f"| {what} | {seconds:.3f} | {ratio} | {target} |")

    def one_file_range(self) -> None:
        """A commit deleting one cited module, then `hook check HEAD~1..HEAD` (its records tree's index kept)."""
        _seconds(["git", "rm", "-q", "pkg0/mod3.py"], self.root)
        _seconds(_commit(self.root, "delete one module"), self.root)
        check = ["git", "memzoi", "hook", "check", "HEAD~1..HEAD", "--json"]
        first, _ = _seconds(check, self.root)
        self.row("`hook check HEAD~1..HEAD --json`, one file deleted (first)", first, None, "")
        median, anchor = _alternate(check, self.root, self.runs)
        self.row("`hook check HEAD~1..HEAD --json`, one file deleted (median)", median, anchor, "≤ 10×")

    def fresh_clone(self, workdir: Path) -> None:
        """The same check in a fresh clone with an empty MEMZOI_HOME: every index made there."""
        clone = workdir / "freshness-clone"
        shutil.rmtree(clone, ignore_errors=True)
        subprocess.run(["git", "clone", "-q", str(self.root), str(clone)], check=True)
        home = _ENV["MEMZOI_HOME"]
        _ENV["MEMZOI_HOME"] = str(workdir / "clone-home")
        try:
            seconds, _ = _seconds(["git", "memzoi", "hook", "check", "HEAD~1..HEAD", "--json"], clone)
        finally:
            _ENV["MEMZOI_HOME"] = home
        self.row("`hook check HEAD~1..HEAD --json` in a fresh clone, nothing kept (first)", seconds, None, "report")

    def head_moves(self) -> None:
        """A commit editing one module (a function added), then the first `search --json` after it: the verdicts
        of the previous HEAD kept, only what the move may change judged; against the same read with HEAD kept."""
        search = ["git", "memzoi", "search", "retries", "--json", "--limit", "10"]
        _seconds(search, self.root)
        count = iter(range(1_000_000))
        target = self.root / "pkg1" / "mod5.py"

        def edit() -> None:
            with target.open("a") as handle:
                handle.write(f"def added_{next(count)}(x):\n    return x\n\n")

        timed, anchor, kept = [], [], []
        for _ in range(self.runs):
            anchor.append(_seconds([sys.executable, "-c", "pass"], self.root)[0])
            edit()
            _seconds(_commit(self.root, "add a function"), self.root)
            timed.append(_seconds(search, self.root)[0])
            kept.append(_seconds(search, self.root)[0])
        python = statistics.median(anchor)
        self.row("`search --json` after a one-commit HEAD move (median)", statistics.median(timed), python, "≤ 4×")
        self.row("`search --json`, HEAD kept (median)", statistics.median(kept), python, "")


REAL = ROOT / "fixtures" / "freshness" / "real"
_WHO = {"GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@example.com", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z"}


def _replay(fixture: Path, root: Path) -> tuple[dict[str, bool], str]:
    """The fixture's history imported under `root`, its records committed on the tagged old commit and the
    project's head merged over them; (label by record ID, the commit that wrote the records)."""
    import gzip

    spec = yaml.safe_load((fixture / "records.yaml").read_text())
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    env = _ENV | _WHO | {"GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}
    env["GIT_COMMITTER_DATE"] = _WHO["GIT_AUTHOR_DATE"]

    def git(*args: str, stdin: bytes | None = None) -> str:
        return subprocess.run(
            ["git", *args], cwd=root, input=stdin, env=env, check=True, capture_output=True
        ).stdout.decode()

    git("init", "-q", "-b", "main")
    git("fast-import", "--quiet", stdin=gzip.decompress((fixture / "history.fi.gz").read_bytes()))
    git("checkout", "-q", "-f", "-b", "memory", "records-base")
    (root / ".memzoi" / "records" / "semantic" / "real").mkdir(parents=True)
    (root / ".memzoi" / "index.md").write_text("# Memory\n")
    labels = {}
    for item in spec["records"]:
        title = item["id"].replace("-", " ").capitalize()
        text = _record(item["id"], title, item["body"], item.get("applies_to") or [])
        (root / ".memzoi" / "records" / "semantic" / "real" / f"{item['id']}.md").write_text(text)
        labels[item["id"]] = bool(item["unverified"])
    git("add", "-A")
    git("commit", "-q", "--no-verify", "-m", "memory about the code as it stands")
    records_commit = git("rev-parse", "HEAD").strip()
    git("merge", "-q", "--no-edit", "--no-verify", "main")
    return labels, records_commit


def real_history(workdir: Path) -> str:
    """Each fixture under fixtures/freshness/real/ replayed; a Markdown table of precision and recall."""
    lines = [
        "### A real history replayed",
        "",
        "A public project's history (fixtures/freshness/real/<name>/: a trimmed `git fast-export` of the paths the"
        " records cite; NOTICE.md) with records written about its code at an old commit, each labelled unverified or"
        " current by hand before the run; the project's head is merged over them.",
        "",
        "| project | records | labelled unverified | commits since | `unverified` P / R | `hook check` P / R |",
        "|---|---:|---:|---:|---|---|",
    ]
    for fixture in sorted(p for p in REAL.iterdir() if p.is_dir()):
        root = workdir / f"real-{fixture.name}"
        labels, records_commit = _replay(fixture, root)
        _seconds(["git", "memzoi", "rebuild"], root)
        bad, _, _ = _read_time(root)
        read_p, read_r, _ = _scores(labels, bad)
        _, out = _seconds(["git", "memzoi", "hook", "check", f"{records_commit}..HEAD", "--json"], root)
        reported = {item["record_id"] for item in json.loads(out)["invalidated"]}
        pr_p, pr_r, _ = _scores(labels, reported)
        _, count = _seconds(["git", "rev-list", "--count", f"{records_commit}..HEAD"], root)
        lines.append(
            f"| {fixture.name} | {len(labels)} | {sum(labels.values())} | {count.strip()} |"
            f" {read_p:.3f} / {read_r:.3f} | {pr_p:.3f} / {pr_r:.3f} |"
        )
        wrong = sorted(bad ^ {rid for rid, v in labels.items() if v})
        if wrong:
            lines.append(f"|  | misjudged: {', '.join(wrong)} | | | | |")
    return "\n".join(lines) + "\n"


def section(workdir: Path, quick: bool = False) -> str:
    """Build the repository under `workdir`, measure, and return a Markdown section."""
    workdir.mkdir(parents=True, exist_ok=True)
    n = QUICK_RECORDS if quick else RECORDS
    root = workdir / "freshness-repo"
    _ENV["MEMZOI_HOME"] = str(workdir / "memzoi-home")
    shutil.rmtree(_ENV["MEMZOI_HOME"], ignore_errors=True)
    shutil.rmtree(workdir / "clone-home", ignore_errors=True)
    expected = _build(root, n, random.Random(7))
    _seconds(["git", "memzoi", "rebuild"], root)
    bad, first, kept = _read_time(root)
    read_p, read_r, read_false = _scores(expected, bad)
    check_s, out = _seconds(["git", "memzoi", "hook", "check", "HEAD~1..HEAD", "--json"], root)
    reported = {item["record_id"] for item in json.loads(out)["invalidated"]}
    pr_p, pr_r, pr_false = _scores(expected, reported)  # the range is every change since the records
    runs = [_seconds(["git", "memzoi", "hook", "check", "HEAD~1..HEAD", "--json"], root)[0] for _ in range(3)]
    maintenance_s = statistics.median(_seconds(["git", "memzoi", "maintenance", "--json"], root)[0] for _ in range(3))
    status_s = statistics.median(_seconds(["git", "memzoi", "status", "--json"], root)[0] for _ in range(3))
    anchor = statistics.median(_seconds([sys.executable, "-c", "pass"], root)[0] for _ in range(5))
    costs = _Costs(root, 3 if quick else 7)
    costs.one_file_range()
    costs.fresh_clone(workdir)
    costs.head_moves()
    labelled = sum(expected.values())
    lines = [
        "## Freshness: records whose code moved on",
        "",
        f"{n} records over a fast-imported repository, one labelled range of changes (files deleted and renamed,"
        " folders moved, functions renamed, edits that keep every name, unrelated files);"
        f" {labelled} records are expected unverified, decided before the run."
        + (" Quick mode: a smoke run." if quick else ""),
        "",
        "| measure | precision | recall | wrongly unverified | target |",
        "|---|---:|---:|---:|---|",
        f"| `unverified` at read time | {read_p:.3f} | {read_r:.3f} | {read_false} | ≥ 0.95, 0 by kept edits |",
        f"| `hook check HEAD~1..HEAD` `invalidated` | {pr_p:.3f} | {pr_r:.3f} | {pr_false} | 1.0 |",
        "",
        "Then, on top of the labelled range: one commit deleting one cited module (`hook check` of it, its"
        " records tree's citation index kept; then in a fresh clone with nothing kept), and commits each adding a"
        f" function to one module, each followed by the first `search --json` after HEAD moved; medians of"
        f" {costs.runs}, each against `python3 -c pass` run alternately in the same loop.",
        "",
        "| cost | seconds | ratio to `python3 -c pass` | target |",
        "|---|---:|---:|---|",
        f"| first judging pass of every record (no verdicts kept) | {first:.3f} | — | |",
        f"| a kept lookup of 10 records | {kept:.4f} | — | |",
        f"| `hook check HEAD~1..HEAD --json`, the labelled range (first: its citation index made) | {check_s:.3f} | "
        f"{check_s / anchor:.1f}× | |",
        f"| `hook check HEAD~1..HEAD --json`, the labelled range (median of 3 after) | {statistics.median(runs):.3f} | "
        f"{statistics.median(runs) / anchor:.1f}× | |",
        *costs.rows,
        f"| `maintenance --json` (unverified, duplicates, contradictions; median of 3) | {maintenance_s:.3f} |"
        f" {maintenance_s / anchor:.1f}× | |",
        f"| `status --json` (with the maintenance counts; median of 3) | {status_s:.3f} | {status_s / anchor:.1f}× | |",
    ]
    return "\n".join(lines) + "\n\n" + real_history(workdir)


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        print(section(Path(folder), "--quick" in sys.argv))
