#!/usr/bin/env python3
"""Benchmark the client hooks end to end: `git commit` with pre-commit, `git push` by URL with pre-push.

    .venv/bin/python scripts/bench_client_hooks.py [--quick]    # prints the Markdown section

`section(workdir, quick)` builds the repositories under `workdir` and returns the section that
scripts/bench.py appends to BENCHMARKS.md. Every figure is a real git command run as a
subprocess with the installed hook, against the same command with `--no-verify`.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "scripts"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

import bench  # noqa: E402  (scripts/bench.py: the synthetic record generator)

EPOCH = 1767225600


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(var, None)
    env.update(
        {
            "MEMZOI_HOME": str(home / ".memzoi"),
            "HOME": str(home),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
            "GIT_AUTHOR_NAME": "Bench",
            "GIT_AUTHOR_EMAIL": "bench@example.com",
            "GIT_COMMITTER_NAME": "Bench",
            "GIT_COMMITTER_EMAIL": "bench@example.com",
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        }
    )
    return env


def _run(args: list[str], cwd: Path, env: dict[str, str], input: str | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run(args, cwd=cwd, env=env, input=input, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed: {done.stderr.strip()}")
    return elapsed


def _python_pass(env: dict[str, str], runs: int) -> float:
    return statistics.median(_run([sys.executable, "-c", "pass"], ROOT, env) for _ in range(runs))


# commits -------------------------------------------------------------------------------------


def _memzoi(args: list[str], repo: Path, env: dict[str, str]) -> str:
    """Run `git-memzoi ARGS` in `repo`; its stdout."""
    done = subprocess.run(
        [str(Path(sys.executable).parent / "git-memzoi"), *args], cwd=repo, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"git memzoi {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def _applied_record(repo: Path, env: dict[str, str], n: int) -> None:
    """A new record as an agent adds one: `git memzoi propose`, `approve`, `apply` (no --commit), then `git add`."""
    proposed = json.loads(
        _memzoi(
            [
                "propose",
                "--type",
                "decision",
                "--title",
                f"Bench decision {n}",
                "--body",
                f"Decision number {n} of the client hooks benchmark.",
                "--source",
                "human",
                "--json",
            ],
            repo,
            env,
        )
    )
    _memzoi(["approve", proposed["id"]], repo, env)
    _memzoi(["apply", proposed["id"]], repo, env)
    _run(["git", "add", "-A", ".memzoi"], repo, env)


def _commit_times(repo: Path, env: dict[str, str], runs: int, kind: str) -> tuple[float, float]:
    """Median `git commit` with the hook and with --no-verify, each adding one record (or one code file).

    `kind`: "applied" (a record written by propose and apply), "hand" (a record file written
    and staged by hand) or "code".
    """
    timed: dict[bool, list[float]] = {True: [], False: []}
    for n in range(runs * 2 + 2):
        verify = n % 2 == 0
        if kind == "applied":
            _applied_record(repo, env, n)
            label = "applied record"
        else:
            if kind == "hand":
                rel, text = bench.make_record(900_000 + n, bench.random.Random(n))
            else:
                rel, text = f"src/module_{n}.py", f"print({n})\n"
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_text(text, encoding="utf-8")
            _run(["git", "add", rel], repo, env)
            label = rel
        elapsed = _run(["git", "commit", "-q", "-m", f"add {label}", *([] if verify else ["--no-verify"])], repo, env)
        if n >= 2:  # the first of each kind warms the file cache
            timed[verify].append(elapsed)
    return statistics.median(timed[True]), statistics.median(timed[False])


def commits(work: Path, quick: bool, env: dict[str, str]) -> dict[str, float | int]:
    records = 100 if quick else 10_000
    runs = 2 if quick else 15
    repo = work / "records"
    bench.generate(repo, records)
    _memzoi(["hook", "install", "--pre-commit"], repo, env)
    _memzoi(["rebuild"], repo, env)  # the index apply reads (an agent's checkout has one)
    # The first commit that touches memory after install validates the whole tree once (and keeps it).
    (repo / "src").mkdir(exist_ok=True)
    first_rel = ".memzoi/log.md"
    (repo / first_rel).write_text("# Memory log\n\n- bench started\n", encoding="utf-8")
    _run(["git", "add", first_rel], repo, env)
    cold = _run(["git", "commit", "-q", "-m", "first memory commit"], repo, env)
    # the second such commit (another log.md line), against which the first is judged
    (repo / first_rel).write_text("# Memory log\n\n- bench started\n- and went on\n", encoding="utf-8")
    _run(["git", "add", first_rel], repo, env)
    second = _run(["git", "commit", "-q", "-m", "second memory commit"], repo, env)
    with_hook, without = _commit_times(repo, env, runs, "applied")
    hand_hook, hand_plain = _commit_times(repo, env, runs, "hand")
    code_hook, code_plain = _commit_times(repo, env, runs, "code")
    return {
        "records": records,
        "runs": runs,
        "cold": cold,
        "second": second,
        "record_hook": with_hook,
        "record_plain": without,
        "hand_hook": hand_hook,
        "hand_plain": hand_plain,
        "code_hook": code_hook,
        "code_plain": code_plain,
    }


# pushes --------------------------------------------------------------------------------------


def _history_stream(total: int, records_every: int) -> str:
    """A fast-import stream: `total` commits on main, with a two-commit side branch merged every 25."""
    out: list[str] = []
    mark = 0
    when = EPOCH

    def commit(ref: str, parents: list[str], files: dict[str, str], message: str) -> str:
        nonlocal mark, when
        mark += 1
        when += 60
        out.append(
            f"commit {ref}\nmark :{mark}\ncommitter Bench <bench@example.com> {when} +0000\n"
            f"data {len(message)}\n{message}\n"
        )
        if parents:
            out.append(f"from {parents[0]}\n")
            out.extend(f"merge {p}\n" for p in parents[1:])
        for path, text in files.items():
            data = text.encode()
            out.append(f"M 100644 inline {path}\ndata {len(data)}\n{text}\n")
        return f":{mark}"

    head = commit("refs/heads/main", [], {"README.md": "# history\n", ".memzoi/index.md": "# Memory\n"}, "root")
    made = 1
    record_n = 0
    while made < total:
        if made % 25 == 0 and made + 3 <= total:
            side = commit("refs/heads/side", [head], {f"src/side_{made}.py": f"x = {made}\n"}, f"side {made}")
            side = commit("refs/heads/side", [side], {f"src/side_{made}.py": f"x = {made + 1}\n"}, f"side {made}b")
            head = commit("refs/heads/main", [head, side], {}, f"merge side {made}")
            made += 3
            continue
        files = {f"src/file_{made % 97}.py": f"value = {made}\n"}
        if made % records_every == 0:
            rel, text = bench.make_record(record_n, bench.random.Random(record_n))
            files[rel] = text
            record_n += 1
        head = commit("refs/heads/main", [head], files, f"change {made}")
        made += 1
    out.append("reset refs/heads/side\nfrom 0000000000000000000000000000000000000000\n")
    return "".join(out)


def _push_times(repo: Path, url: str, env: dict[str, str], runs: int, target: str, memory: bool) -> tuple[float, float]:
    """Median push of one new commit by URL with the hook and with --no-verify."""
    timed: dict[bool, list[float]] = {True: [], False: []}
    for n in range(runs * 2 + 2):
        verify = n % 2 == 0
        if memory:
            rel, text = bench.make_record(800_000 + n, bench.random.Random(10_000 + n))
        else:
            rel, text = f"src/pushed_{target}_{n}.py", f"print({n})\n"
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text, encoding="utf-8")
        _run(["git", "add", rel], repo, env)
        _run(["git", "commit", "-q", "-m", f"push {n}"], repo, env)  # through pre-commit, as a developer's
        ref = f"HEAD:refs/heads/{target}-{n}" if target == "new" else "HEAD:refs/heads/main"
        elapsed = _run(["git", "push", "-q", *([] if verify else ["--no-verify"]), url, ref], repo, env)
        if n >= 2:
            timed[verify].append(elapsed)
    return statistics.median(timed[True]), statistics.median(timed[False])


def pushes(work: Path, quick: bool, env: dict[str, str]) -> dict[str, float | int]:
    total = 600 if quick else 60_000
    runs = 2 if quick else 7
    repo = work / "history"
    _run(["git", "init", "-q", "-b", "main", str(repo)], work, env)
    _run(["git", "fast-import", "--quiet"], repo, env, input=_history_stream(total, 200))
    _run(["git", "reset", "-q", "--hard", "main"], repo, env)
    commits_made = int(
        subprocess.run(
            ["git", "rev-list", "--count", "main"], cwd=repo, env=env, capture_output=True, text=True, check=True
        ).stdout
    )
    merges = int(
        subprocess.run(
            ["git", "rev-list", "--count", "--merges", "main"],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    server = work / "server.git"
    _run(["git", "init", "-q", "--bare", str(server)], work, env)
    _run(["git", "push", "-q", "--no-verify", str(server), "main"], repo, env)
    _run([str(Path(sys.executable).parent / "git-memzoi"), "hook", "install"], repo, env)
    url = str(server)
    code = _push_times(repo, url, env, runs, "main", memory=False)
    record = _push_times(repo, url, env, runs, "main", memory=True)
    new_branch = _push_times(repo, url, env, runs, "new", memory=False)
    return {
        "commits": commits_made,
        "merges": merges,
        "runs": runs,
        "code_hook": code[0],
        "code_plain": code[1],
        "record_hook": record[0],
        "record_plain": record[1],
        "new_hook": new_branch[0],
        "new_plain": new_branch[1],
    }


# report --------------------------------------------------------------------------------------


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def section(workdir: Path, quick: bool = False) -> str:
    """Build the repositories under `workdir`, time the hooks, return the Markdown section."""
    if workdir.exists():
        shutil.rmtree(workdir)
    workdir.mkdir(parents=True)
    home = workdir / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[user]\n\tname = Bench\n\temail = bench@example.com\n")
    env = _env(home)
    python = _python_pass(env, 5 if quick else 15)
    c = commits(workdir, quick, env)
    p = pushes(workdir, quick, env)
    python_after = _python_pass(env, 5 if quick else 15)
    base = statistics.median([python, python_after])

    def cost(hook: float, plain: float) -> float:
        return (hook - plain) / base

    rows = [
        (
            "`git commit` adding one record",
            c["record_hook"],
            c["record_plain"],
            f"{cost(c['record_hook'], c['record_plain']):.1f}x python",
            "<= 3x python",
            cost(c["record_hook"], c["record_plain"]) <= 3,
        ),
        (
            "`git commit` adding one hand-written record",
            c["hand_hook"],
            c["hand_plain"],
            f"{cost(c['hand_hook'], c['hand_plain']):.1f}x python",
            "<= 8x python",
            cost(c["hand_hook"], c["hand_plain"]) <= 8,
        ),
        (
            "first `git commit` touching memory after `hook install`, against the second",
            c["cold"],
            c["second"],
            f"{c['cold'] / c['second']:.2f}x",
            "<= 3x",
            c["cold"] / c["second"] <= 3,
        ),
        (
            "`git commit` of code only",
            c["code_hook"],
            c["code_plain"],
            f"{cost(c['code_hook'], c['code_plain']):.1f}x python",
            "<= 2x python",
            cost(c["code_hook"], c["code_plain"]) <= 2,
        ),
        (
            "`git push URL main`, one code commit",
            p["code_hook"],
            p["code_plain"],
            f"{p['code_hook'] / p['code_plain']:.2f}x",
            "<= 2x",
            p["code_hook"] / p["code_plain"] <= 2,
        ),
        (
            "`git push URL main`, one record commit",
            p["record_hook"],
            p["record_plain"],
            f"{p['record_hook'] / p['record_plain']:.2f}x",
            "(none)",
            None,
        ),
        (
            "`git push URL HEAD:new-branch` (nothing known)",
            p["new_hook"],
            p["new_plain"],
            f"{p['new_hook'] / p['new_plain']:.2f}x",
            "(report)",
            None,
        ),
    ]
    lines = [
        "## Client hooks: pre-commit and pre-push end to end",
        "",
        f"Commits: a repository of {c['records']:,} synthetic records (scripts/bench.py's generator) with "
        "`git memzoi hook install --pre-commit`, which validates HEAD's tree and keeps it. The first commit "
        "touching `.memzoi/` after install (a `log.md` line) starts from that kept tree, as the second one "
        "does (in the table, the `--no-verify` column holds the second commit, with its hook); then each measured "
        "`git commit` runs with the hook or with `--no-verify`, alternately, median of "
        f"{c['runs']} each, and adds one record as an agent does (`git memzoi propose`, `approve`, "
        "`apply` without `--commit`, then `git add -A .memzoi`: a record, its applied packet and a "
        "`log.md` line, which the hook accepts from the verdicts apply kept), one record file "
        "written and staged by hand (judged alone: check_file on that file, the kept tree's IDs for the "
        "cross-file rules, without pygit2 or the tree's summary), or one code file.",
        "",
        f"Pushes: a history of {p['commits']:,} commits ({p['merges']:,} merges) written with "
        "`git fast-import`, a record added every 200 commits, pushed once to a bare repository; then "
        "with `git memzoi hook install` (both client hooks), each measured `git push` sends one new "
        "commit, made through pre-commit, by URL (no remote, no remote-tracking refs) with the hook "
        "or with `--no-verify`, alternately, "
        f"median of {p['runs']} each. `main` is an existing branch (git reports its old commit); a new "
        "branch is the case where nothing says what the remote has: every commit no remote-tracking ref "
        "reaches is walked (here the whole history), and each one that touches `.memzoi/` is checked.",
        "",
        f"`python -c pass` (this interpreter, {sys.executable.rsplit('/', 1)[-1]}, not a shell shim): "
        f"{_ms(base)}, median, measured before and after in the same run. Commit targets are the hook's "
        "added time over it; push targets are the ratio of the two pushes.",
        "",
        "| operation | with hook | `--no-verify` | hook costs | target | met |",
        "|---|---|---|---|---|---|",
    ]
    for name, hook, plain, ratio, target, met in rows:
        mark = "-" if met is None else ("yes" if met else "**no**")
        lines.append(f"| {name} | {_ms(float(hook))} | {_ms(float(plain))} | {ratio} | {target} | {mark} |")
    if quick:
        lines += ["", "Quick mode: small sizes and few runs; the figures say little."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory(prefix="memzoi-bench-client-") as folder:
        print(section(Path(folder) / "client_hooks", quick="--quick" in sys.argv))
