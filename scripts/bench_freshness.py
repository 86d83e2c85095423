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
from collections.abc import Callable, Sequence
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

    def commit(
        self,
        message: str,
        files: dict[str, str],
        deleted: Sequence[str] = (),
        *,
        branch: str = "main",
        parent: int | None = None,
        merge: int | None = None,
    ) -> int:
        """Add a commit on `branch` (after `parent`, else the previous commit; merging `merge`); returns its mark."""
        self.mark += 1
        self.when += 60
        self.parts.append(
            f"commit refs/heads/{branch}\nmark :{self.mark}\n"
            f"committer Bench <bench@example.com> {self.when} +0000\ndata {len(message)}\n{message}\n"
        )
        if parent is not None or self.mark > 1:
            self.parts.append(f"from :{parent if parent is not None else self.mark - 1}\n")
        if merge is not None:
            self.parts.append(f"merge :{merge}\n")
        self.parts.extend(f"D {path}\n" for path in deleted)
        for path, text in files.items():
            data = text.encode()
            self.parts.append(f"M 100644 inline {path}\ndata {len(data)}\n{text}\n")
        return self.mark


def _pkg(p: int) -> str:
    return f"pkg{p}"


def _records(
    n: int, packages: int, rng: random.Random, where: Callable[[int], str] = _pkg
) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """(record files, what each record cites: (kind, path or name)); a quarter each cite a file, a folder, a
    function name in its folder, or nothing; `where` names package p's folder."""
    records: dict[str, str] = {}
    cites: dict[str, tuple[str, str]] = {}
    for i in range(n):
        p, m, k = rng.randrange(packages), rng.randrange(MODULES), rng.randrange(FUNCTIONS)
        kind = ("file", "folder", "name", "none")[i % 4]
        rid = f"rule-{i:05d}"
        pkg = where(p)
        body, applies, what = {
            "file": (f"Retries are handled in `{pkg}/mod{m}.py`.", [], f"{pkg}/mod{m}.py"),
            "folder": ("Everything here is pure.", [f"{pkg}/**"], pkg),
            "name": (f"Call `{_names(p, m)[k]}` before saving.", [f"{pkg}/**"], _names(p, m)[k]),
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

    def __init__(self, root: Path, runs: int, where: Callable[[int], str] = _pkg) -> None:
        self.root, self.runs, self.rows, self.where = root, runs, [], where

    def row(self, what: str, seconds: float, anchor: float | None, target: str) -> None:
        ratio = f"{seconds / anchor:.1f}×" if anchor else "—"
        self.rows.append(f"| {what} | {seconds:.3f} | {ratio} | {target} |")

    def one_file_range(self) -> None:
        """A commit deleting one cited module, then `hook check HEAD~1..HEAD` (its records tree's index kept)."""
        _seconds(["git", "rm", "-q", f"{self.where(0)}/mod3.py"], self.root)
        _seconds(_commit(self.root, "delete one module"), self.root)
        check = ["git", "memzoi", "hook", "check", "HEAD~1..HEAD", "--json"]
        first, _ = _seconds(check, self.root)
        self.row("`hook check HEAD~1..HEAD --json`, one file deleted (first)", first, None, "")
        median, anchor = _alternate(check, self.root, self.runs)
        self.row("`hook check HEAD~1..HEAD --json`, one file deleted (median)", median, anchor, "≤ 10×")

    def fresh_clone(self, workdir: Path) -> Path:
        """The same check in a fresh clone with an empty MEMZOI_HOME: every index made there; returns the clone."""
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
        return clone

    def head_moves(self) -> None:
        """A commit editing one module (a function added), then the first `search --json` after it: the verdicts
        of the previous HEAD kept, only what the move may change judged; against the same read with HEAD kept."""
        search = ["git", "memzoi", "search", "retries", "--json", "--limit", "10"]
        _seconds(search, self.root)
        count = iter(range(1_000_000))
        target = self.root / self.where(1) / "mod5.py"

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


#: The long history: commits in all, of which before the records commit; a merge of a side branch every so often.
LONG_COMMITS, LONG_BEFORE, LONG_MERGE_EVERY, LONG_RANGE = 50_000, 10_000, 100, 200
QUICK_LONG_COMMITS, QUICK_LONG_BEFORE = 2_000, 400


def _nested(p: int) -> str:
    """Package p's folder in the long history: few entries per tree, so that a commit rewrites small trees."""
    return f"src/a{p // 24}/pkg{p}"


class _Long:
    """A fast-import stream of a long history: code edited throughout, records written once early, merges."""

    def __init__(self, records: int, commits: int, before: int, rng: random.Random) -> None:
        self.packages = max(4, records // (MODULES * 3))
        self.code = {
            f"{_nested(p)}/mod{m}.py": _module(p, m, _names(p, m)) for p in range(self.packages) for m in range(MODULES)
        }
        self.rng, self.stream, self.edits = rng, _Stream(), 0
        self.tip = self.stream.commit("code", {"README.md": "# bench\n", ".memzoi/index.md": "# Memory\n", **self.code})
        self.run(before - 2)
        written, self.cites = _records(records, self.packages, rng, _nested)
        self.tip = self.stream.commit("records", written, parent=self.tip)
        self.run(commits - before - LONG_RANGE)
        self.stream.parts.append(f"reset refs/tags/long-base\nfrom :{self.tip}\n\n")
        self.labelled_range()

    def edit(self, branch: str = "main", parent: int | None = None) -> int:
        """One commit appending a line to one module: every name kept."""
        self.edits += 1
        path = f"{_nested(self.rng.randrange(self.packages))}/mod{self.rng.randrange(MODULES)}.py"
        self.code[path] += f"# edit {self.edits}\n"
        return self.stream.commit(f"edit {self.edits}", {path: self.code[path]}, branch=branch, parent=parent)

    def run(self, count: int, merge_every: int = LONG_MERGE_EVERY) -> None:
        """`count` commits on main: edits, and every `merge_every`th a merge of a side branch of two edits."""
        done = 0
        while done < count:
            if done % merge_every == merge_every - 1 and count - done >= 3:
                side = self.edit("side", self.tip)
                side = self.edit("side", side)
                self.tip = self.stream.commit("merge side", {}, parent=self.tip, merge=side)
                done += 3
            else:
                self.tip = self.edit(parent=self.tip)
                done += 1

    def labelled_range(self) -> None:
        """The last LONG_RANGE commits (a merge every 20th): a cited module deleted, one renamed, a function renamed."""
        self.run(LONG_RANGE // 2 - 2, merge_every=20)
        gone, moved = f"{_nested(2)}/mod0.py", f"{_nested(3)}/mod1.py"
        self.tip = self.stream.commit("delete a module", {}, [gone], parent=self.tip)
        self.tip = self.stream.commit(
            "rename a module", {moved.replace("mod1", "renamed1"): self.code[moved]}, [moved], parent=self.tip
        )
        old = _names(4, 2)[0]
        self.broken = {gone, moved, old, *_names(2, 0)}
        path = f"{_nested(4)}/mod2.py"
        self.code[path] = self.code[path].replace(old, old.replace("fn_", "renamed_"))
        self.tip = self.stream.commit("rename a function", {path: self.code[path]}, parent=self.tip)
        self.run(LONG_RANGE - LONG_RANGE // 2 - 1, merge_every=20)

    def write(self, root: Path) -> float:
        """Import the stream into a new repository at `root`; returns the seconds fast-import and checkout took."""
        if root.exists():
            shutil.rmtree(root)
        root.mkdir(parents=True)
        start = time.perf_counter()
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
        stream = "".join(self.stream.parts).encode()
        subprocess.run(["git", "fast-import", "--quiet"], cwd=root, input=stream, check=True)
        subprocess.run(["git", "checkout", "-q", "-f", "main"], cwd=root, check=True)
        return time.perf_counter() - start


def _first_read(clone: Path, home: Path) -> float:
    """The first `search --json` in `clone` with nothing kept under `home` (its index made, what it shows judged)."""
    saved = _ENV["MEMZOI_HOME"]
    _ENV["MEMZOI_HOME"] = str(home)
    try:
        return _seconds(["git", "memzoi", "search", "retries", "--json", "--limit", "10"], clone)[0]
    finally:
        _ENV["MEMZOI_HOME"] = saved


def long_history(workdir: Path, quick: bool = False) -> str:
    """Costs on a long history (records written long before HEAD, merges), each against `python3 -c pass`."""
    n = QUICK_RECORDS if quick else RECORDS
    commits, before = (QUICK_LONG_COMMITS, QUICK_LONG_BEFORE) if quick else (LONG_COMMITS, LONG_BEFORE)
    root = workdir / "long-repo"
    _ENV["MEMZOI_HOME"] = str(workdir / "long-home")
    for stale in ("long-home", "clone-home", "long-clone-home"):
        shutil.rmtree(workdir / stale, ignore_errors=True)
    start = time.perf_counter()
    history = _Long(n, commits, before, random.Random(11))
    made = time.perf_counter() - start
    imported = history.write(root)
    count = _seconds(["git", "rev-list", "--count", "HEAD"], root)[1].strip()
    in_range = _seconds(["git", "rev-list", "--count", "long-base..HEAD"], root)[1].strip()
    merges = _seconds(["git", "rev-list", "--count", "--merges", "long-base..HEAD"], root)[1].strip()
    runs = 3 if quick else 5
    costs = _Costs(root, runs, _nested)
    check = ["git", "memzoi", "hook", "check", "long-base..HEAD", "--json"]
    first, out = _seconds(check, root)
    reported = {item["record_id"] for item in json.loads(out)["invalidated"]}
    expected = {
        rid for rid, (kind, what) in history.cites.items() if kind in ("file", "name") and what in history.broken
    }
    costs.row(f"`hook check long-base..HEAD --json`, {in_range} commits with {merges} merges (first)", first, None, "")
    median, anchor = _alternate(check, root, runs)
    costs.row("`hook check long-base..HEAD --json`, the same (median)", median, anchor, "")
    _seconds(["git", "memzoi", "rebuild"], root)
    costs.one_file_range()
    clone = costs.fresh_clone(workdir)
    cold = _first_read(clone, workdir / "long-clone-home")
    costs.row(
        "`search --json` in a fresh clone, nothing kept (first: index made, shown records judged)", cold, None, "report"
    )
    costs.head_moves()
    about = (
        f"{n} records written in one commit {int(count) - before} commits before HEAD, over a history of {count}"
        f" commits (a merge of a side branch every {LONG_MERGE_EVERY}; code files edited throughout, every name"
        f" kept), then a labelled range of {in_range} commits with {merges} merges (a cited module deleted, one"
        f" renamed, a function renamed). Built with one `git fast-import`: the stream made in {made:.1f} s,"
        f" imported and checked out in {imported:.1f} s. Medians of {runs}, each against `python3 -c pass` run"
        " alternately in the same loop." + (" Quick mode: a smoke run." if quick else "")
    )
    found = (
        f"The range's `invalidated`: {len(reported & expected)} of the {len(expected)} records citing what it"
        f" deleted, renamed or removed, {len(reported - expected)} others."
    )
    table = ["| cost | seconds | ratio to `python3 -c pass` | target |", "|---|---:|---:|---|", *costs.rows]
    return "\n".join(["### On a long history", "", about, "", found, "", *table]) + "\n"


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
        "",
        long_history(workdir, quick),
    ]
    return "\n".join(lines) + "\n\n" + real_history(workdir)


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        if "--long-only" in sys.argv:
            print(long_history(Path(folder), "--quick" in sys.argv))
        else:
            print(section(Path(folder), "--quick" in sys.argv))
