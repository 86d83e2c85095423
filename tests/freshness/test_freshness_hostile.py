"""Hostile input against freshness: paths leaving the repository, symlinks, damaged runtime state, hostile
ranges and text that could drive a terminal or a workflow, each through real git and `git memzoi` processes."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from support import Repo, git, memzoi_exe
from support.agents import client_event
from support.freshness import commit, memzoi
from support.recall import add_record, record_text

SESSION = "export function validateSession(s) {\n  return s.ok;\n}\n"
REVIEW = "\n[freshness]\nrequire_review = true\n"


def raw_record(repo: Repo, concept: str, rid: str, body: str, **front: Any) -> None:
    """A record file whose frontmatter holds `front` as given, valid or not (written as a hostile branch would)."""
    text = record_text(rid, type="decision", title=front.pop("title", rid), body=body)
    head, _, rest = text.partition("\n---\n")
    data = yaml.safe_load(head.removeprefix("---\n"))
    data.update(front)
    dumped = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    repo.write(f".memzoi/records/{concept}.md", f"---\n{dumped}---\n{rest}")


def commit_unchecked(repo: Repo, message: str) -> str:
    """Commit everything, past any pre-commit hook (as a branch pushed from elsewhere would hold it)."""
    git("add", "-A", cwd=repo.path)
    git("commit", "-q", "-n", "-m", message, cwd=repo.path)
    return git("rev-parse", "HEAD", cwd=repo.path).stdout.strip()


def sessions(repo: Repo, config: str = "") -> None:
    repo.write("src/auth/session.ts", SESSION)
    if config:
        with (repo.path / ".memzoi" / "config.toml").open("a") as handle:
            handle.write(config)
    add_record(repo, "semantic/sessions", "session-rule", type="decision", title="Sessions validated",
               body="Sessions are validated in `validateSession`.", applies_to=["src/auth/**"])  # fmt: skip


def run(repo: Repo, *args: str, input: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [memzoi_exe(), *args], cwd=repo.path, capture_output=True, text=True, input=input, timeout=timeout
    )


def no_traceback(done: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in done.stderr + done.stdout, done.stderr


# --- 1. paths that leave the repository ------------------------------------------------------------------------


def test_a_record_citing_paths_outside_the_repository_does_not_stop_the_range_being_judged(repo: Repo) -> None:
    """`HEAD:../../etc` makes `git cat-file --batch-check` die; one such record must not make every record of the
    range go unjudged (under require_review that let the range through)."""
    sessions(repo, REVIEW)
    raw_record(repo, "semantic/hostile", "hostile-rule", "Read `validateSession` and `../../etc/passwd`.",
               applies_to=["../../etc/**", "/etc/**", "~/.ssh/**", "C:\\x/**", ".git/**", "./src/auth/**"],
               source_ref="../../etc/passwd")  # fmt: skip
    base = commit_unchecked(repo, "code and memory")
    git("rm", "-q", "src/auth/session.ts", cwd=repo.path)
    commit(repo, "drop sessions")
    done = run(repo, "hook", "check", f"{base}..HEAD", "--json")
    no_traceback(done)
    report = json.loads(done.stdout)
    assert "session-rule" in {item["record_id"] for item in report["invalidated"]}, done.stdout
    assert done.returncode == 1 and "record-unverified" in {p["code"] for p in report["problems"]}


def test_a_committed_symlink_to_outside_is_never_followed(repo: Repo, tmp_path: Path) -> None:
    """A name that only a file outside the repository holds, reached through a committed symlink (`link -> ..`,
    `root -> /`), does not keep a record current: freshness reads git's objects, never the file system."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("def sentinelOnlyName(): pass\n")
    repo.write("src/a.py", "def sentinelOnlyName(): pass\n")
    os.symlink("../outside", repo.path / "link")
    os.symlink("/", repo.path / "root")
    commit(repo, "code and links")
    add_record(repo, "semantic/sentinel", "sentinel-rule", type="decision", title="Sentinel",
               body="See `sentinelOnlyName` in `link/secret.py`, `root/etc/passwd` and `src/a.py`.")  # fmt: skip
    base = commit(repo, "record")
    repo.write("src/a.py", "def other(): pass\n")
    commit(repo, "drop the name")
    hits = json.loads(memzoi(repo, "search", "sentinel", "--json").stdout)["hits"]
    [hit] = [h for h in hits if h["record_id"] == "sentinel-rule"]
    assert hit["freshness"]["state"] == "unverified"
    assert [c["identifier"] for c in hit["freshness"]["evidence"]] == ["sentinelOnlyName"]
    found = json.loads(memzoi(repo, "hook", "check", f"{base}..HEAD", "--json").stdout)["invalidated"]
    assert [item["record_id"] for item in found] == ["sentinel-rule"]


# --- 6. damaged or hostile runtime state ------------------------------------------------------------------------


def _state(repo: Repo) -> tuple[Path, Path]:
    from git_memzoi.gitrepo.repo import open_repo
    from git_memzoi.runtime.home import Layout

    layout = Layout.for_repo(open_repo(repo.path))
    return layout.freshness_db, layout.cite_trees


def dropped(repo: Repo) -> str:
    sessions(repo)
    base = commit(repo, "code and memory")
    git("rm", "-q", "src/auth/session.ts", cwd=repo.path)
    commit(repo, "drop sessions")
    return base


def test_a_fifo_in_place_of_freshness_db_never_hangs_a_read_or_a_hook(repo: Repo) -> None:
    dropped(repo)
    db, _ = _state(repo)
    db.parent.mkdir(parents=True, exist_ok=True)
    db.unlink(missing_ok=True)
    os.mkfifo(db)
    done = run(repo, "search", "sessions", "--json", timeout=60)
    no_traceback(done)
    assert done.returncode == 0
    [hit] = [h for h in json.loads(done.stdout)["hits"] if h["record_id"] == "session-rule"]
    assert hit["freshness"]["state"] == "unverified"
    event = client_event("claude", "pretooluse-edit", repo.path, tool_input={"file_path": str(repo.path / "x.ts")})
    done = run(repo, "agent", "hook", "claude", input=event, timeout=60)
    assert done.returncode == 0 and "Traceback" not in done.stderr


def test_garbage_a_directory_and_another_schema_in_place_of_freshness_db_are_rebuilt(repo: Repo) -> None:
    dropped(repo)
    db, _ = _state(repo)
    for bad in ("garbage", "dir", "schema"):
        fresh_db = db
        if fresh_db.is_dir():
            fresh_db.rmdir()
        else:
            fresh_db.unlink(missing_ok=True)
        fresh_db.parent.mkdir(parents=True, exist_ok=True)
        if bad == "garbage":
            fresh_db.write_bytes(b"SQLite format 3\0" + os.urandom(3000))
        elif bad == "dir":
            fresh_db.mkdir()
        else:
            import sqlite3

            conn = sqlite3.connect(fresh_db)
            conn.execute("CREATE TABLE meta (key TEXT, value TEXT)")
            conn.execute("INSERT INTO meta VALUES ('head', 'x')")
            conn.execute("PRAGMA user_version = 2")
            conn.commit()
            conn.close()
        done = run(repo, "search", "sessions", "--json")
        no_traceback(done)
        assert done.returncode == 0, (bad, done.stderr)
        [hit] = [h for h in json.loads(done.stdout)["hits"] if h["record_id"] == "session-rule"]
        assert hit["freshness"]["state"] == "unverified", bad


def test_damaged_kept_citation_indexes_and_writers_are_a_miss(repo: Repo) -> None:
    base = dropped(repo)
    first = json.loads(memzoi(repo, "hook", "check", f"{base}..HEAD", "--json").stdout)["invalidated"]
    assert [item["record_id"] for item in first] == ["session-rule"]
    _, kept = _state(repo)
    files = sorted(p for p in kept.iterdir() if p.is_file())
    assert {p.suffix for p in files} >= {".cite", ".db", ".writers"}
    for how in ("truncate", "garbage", "fifo"):
        for path in files:
            path.unlink(missing_ok=True)
            if how == "fifo":
                os.mkfifo(path)
            else:
                path.write_bytes(b"" if how == "truncate" else os.urandom(200))
        done = run(repo, "hook", "check", f"{base}..HEAD", "--json", timeout=60)
        no_traceback(done)
        assert done.returncode == 0, (how, done.stderr)
        assert json.loads(done.stdout)["invalidated"] == first, how
        for path in kept.iterdir():
            if path.is_fifo():
                path.unlink()


# --- 8. hostile ranges ------------------------------------------------------------------------------------------


def test_a_hostile_range_is_one_clear_line_and_runs_nothing(repo: Repo) -> None:
    dropped(repo)
    for spec in ("--upload-pack=touch pwned..HEAD", "-o..HEAD"):  # an option to the command line parser: refused
        done = run(repo, "hook", "check", spec)
        no_traceback(done)
        assert done.returncode == 2 and "No such option" in done.stderr, done.stderr
    for spec in ("HEAD..$(touch pwned)", "nope..HEAD", "HEAD..HEAD:x", "HEAD~1..--output=pwned", "HEAD..@{-9}",
                 "HEAD..--upload-pack=touch pwned", "HEAD..\x1b[2J\n::error::x", "HEAD..\u202eexe.py"):  # fmt: skip
        done = run(repo, "hook", "check", "--", spec)
        no_traceback(done)
        assert done.returncode == 2, (spec, done.returncode, done.stderr)
        [line] = done.stderr.splitlines()
        assert line.startswith("git memzoi: ") and "\x1b" not in line and "\u202e" not in line, (spec, line)
        assert any(side[-3:] in line for side in spec.split("..") if side != "HEAD"), (spec, line)
    assert not (repo.path / "pwned").exists()


def test_a_required_review_fails_closed_when_freshness_cannot_be_judged(repo: Repo, tmp_path: Path) -> None:
    """With no `git` to ask (the memory checks read through pygit2), `require_review` refuses the range with a
    clear line, never lets it by unjudged."""
    sessions(repo, REVIEW)
    base = commit(repo, "code and memory")
    git("rm", "-q", "src/auth/session.ts", cwd=repo.path)
    commit(repo, "drop sessions")
    env = os.environ | {"PATH": str(tmp_path / "no-git")}
    done = subprocess.run([memzoi_exe(), "hook", "check", f"{base}..HEAD"], cwd=repo.path, capture_output=True,
                          text=True, env=env, timeout=120)  # fmt: skip
    no_traceback(done)
    assert done.returncode == 1, done.stderr
    assert "could not be judged" in done.stderr and "record-unverified" in done.stderr


# --- 5. text that could drive a terminal, a workflow or a shell --------------------------------------------------

HOSTILE_ID = "x\n::error file=a.py::injected\x1b[2J\u202e"
HOSTILE_TITLE = "$(touch pwned) `touch pwned`; touch pwned 'a b;touch x'\n::warning::t"
HOSTILE_DIR = "pkg/\x1b[31mred\n::error::moved\u202e$(touch pwned)"


def test_hostile_ids_titles_and_rename_targets_cannot_inject_a_line_a_command_or_a_shell_word(repo: Repo) -> None:
    sessions(repo)
    raw_record(repo, "semantic/hostile", HOSTILE_ID, "Sessions live in `src/auth` and use `validateSession`.",
               title=HOSTILE_TITLE, applies_to=["src/auth/**"])  # fmt: skip
    base = commit_unchecked(repo, "code and memory")
    (repo.path / "pkg").mkdir()
    git("mv", "src/auth", HOSTILE_DIR, cwd=repo.path)
    commit(repo, "move auth")
    report = json.loads(memzoi(repo, "hook", "check", f"{base}..HEAD", "--json").stdout)
    by_id = {item["record_id"]: item for item in report["invalidated"]}
    assert set(by_id) == {HOSTILE_ID, "session-rule"}
    for rid, item in by_id.items():
        words = shlex.split(item["command"])
        assert words[words.index("--target") + 1] == rid
        assert words[words.index("--applies-to") + 1] == HOSTILE_DIR
    hostile = shlex.split(by_id[HOSTILE_ID]["command"])
    assert hostile[hostile.index("--title") + 1] == HOSTILE_TITLE
    subprocess.run(["sh", "-c", by_id[HOSTILE_ID]["command"].replace("git memzoi", "true", 1)], cwd=repo.path,
                   check=True, input="", text=True)  # fmt: skip
    assert not (repo.path / "pwned").exists() and not (repo.path / "x").exists()
    text = run(repo, "hook", "check", f"{base}..HEAD")
    no_traceback(text)
    assert not any(c in text.stderr for c in "\x1b\u202e\r") and "\n::" not in text.stderr
    assert text.stderr.count("\n") == 5  # the heading, then two lines of each record
    annotated = run(repo, "hook", "check", f"{base}..HEAD", "--annotate", "github")
    no_traceback(annotated)
    lines = annotated.stdout.splitlines()
    assert len(lines) == 2 and all(line.startswith("::warning title=") for line in lines), annotated.stdout
    assert not any(c in annotated.stdout for c in "\x1b\u202e\r")
    for line in lines:  # the data after the command's one `::` separator holds no other workflow command
        _, _, data = line.partition("::warning ")[2].partition("::")
        assert "::error" not in data.replace("\\n::error", "") and "\\x1b" in data


# --- 4. oversized input ------------------------------------------------------------------------------------------

BIG = 48 * 1024 * 1024


def _peak_kib(repo: Repo, *args: str) -> tuple[subprocess.CompletedProcess[str], int]:
    """`git memzoi ARGS` run as a process (its entry point in a fresh interpreter): its answer and the most memory
    its Python objects held at once, in KiB (tracemalloc: what git or libgit2 map of a file is theirs)."""
    script = (
        "import atexit, sys, tracemalloc\n"
        "tracemalloc.start()\n"
        "atexit.register(lambda: sys.stderr.write('\\0peak %d' % (tracemalloc.get_traced_memory()[1] // 1024)))\n"
        "sys.argv = ['git-memzoi', *sys.argv[1:]]\n"
        "from git_memzoi.cli.entry import main\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", script, *args], cwd=repo.path, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    stderr, _, peak = done.stderr.rpartition("\0peak ")
    return subprocess.CompletedProcess(args, done.returncode, done.stdout, stderr), int(peak)


@pytest.mark.slow
def test_a_name_held_millions_of_times_costs_no_memory_of_its_own(repo: Repo) -> None:
    """git grep -o writes a line per occurrence: 3 million of them in a 48 MiB file were all held in memory
    (some 7 times the file); they are read as git writes them."""
    sessions(repo)
    repo.write("src/auth/huge.ts", "validateSession " * (BIG // 16))
    base = commit(repo, "code, memory and a huge file")
    git("rm", "-q", "src/auth/session.ts", cwd=repo.path)
    commit(repo, "drop sessions")
    done, peak = _peak_kib(repo, "search", "sessions", "--json")
    assert done.returncode == 0, done.stderr
    [hit] = [h for h in json.loads(done.stdout)["hits"] if h["record_id"] == "session-rule"]
    assert hit["freshness"]["state"] == "current"  # the name is still in huge.ts
    assert peak < BIG // 1024, peak
    done, peak = _peak_kib(repo, "hook", "check", f"{base}..HEAD", "--json")
    assert done.returncode == 0 and json.loads(done.stdout)["invalidated"] == [], done.stderr
    assert peak < BIG // 1024, peak


@pytest.mark.slow
def test_a_body_citing_100000_names_a_binary_file_and_an_enormous_word_is_judged(repo: Repo) -> None:
    """The first 200 names count (evidence.MAX_CITED): a removed one is reported; 100,000 of them made every
    git grep try each name on every line of the code (the check ran for minutes); a 50,000-letter word is none."""
    names = [f"n{i:05d}" for i in range(100_000)]  # 9 bytes each: the body stays under the profile's 1 MiB
    repo.write("src/names.py", "\n".join(names) + "\n")
    (repo.path / "src" / "blob.bin").write_bytes(b"\0validateSession\0" * 1000)
    sessions(repo)
    body = "Uses `src/blob.bin`, " + " ".join(f"`{n}`" for n in names) + " and `" + "a" * 50_000 + "`."
    raw_record(repo, "semantic/many", "many-names", body, applies_to=["src/**"])
    base = commit_unchecked(repo, "code and memory")
    repo.write("src/names.py", "\n".join(names[1:]) + "\n")
    (repo.path / "src" / "blob.bin").unlink()
    commit(repo, "drop a name and the binary")
    report = json.loads(memzoi(repo, "hook", "check", f"{base}..HEAD", "--json").stdout)
    [item] = report["invalidated"]
    assert item["record_id"] == "many-names"
    assert sorted((c["change"], c["identifier"] or c["path"]) for c in item["evidence"]) == [
        ("deleted", "src/blob.bin"),
        ("identifier-gone", "n00000"),
    ]


# --- 8. shallow clones, long ranges ----------------------------------------------------------------------------


def _shallow(repo: Repo, tmp_path: Path, *fetch: str) -> Repo:
    clone = tmp_path / "shallow"
    git("clone", "-q", "--depth", "1", f"file://{repo.path}", str(clone), cwd=tmp_path)
    for rev in fetch:
        git("fetch", "-q", "--depth", "1", "origin", rev, cwd=clone)
    return Repo(clone, repo.git.__class__(str(clone)))


def test_a_shallow_clone_without_the_base_is_one_clear_line(repo: Repo, tmp_path: Path) -> None:
    base = dropped(repo)
    clone = _shallow(repo, tmp_path)
    done = run(clone, "hook", "check", f"{base}..HEAD")
    no_traceback(done)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1 and base in done.stderr, done.stderr


@pytest.mark.slow
def test_a_shallow_clone_whose_history_stops_before_the_records_writer_is_not_passed_unjudged(
    repo: Repo, tmp_path: Path
) -> None:
    """CI's fetch-depth 1 holds BASE and TIP but not the commit that wrote the record: that commit is not the
    shallow boundary's, so the record is not judged from there (it read as current, and a require_review range
    went through); the check says it could not judge, and refuses under require_review."""
    sessions(repo, REVIEW)
    commit(repo, "code and memory")
    repo.write("README.md", "later\n")
    base = commit(repo, "a later commit")
    git("rm", "-q", "src/auth/session.ts", cwd=repo.path)
    commit(repo, "drop sessions")
    assert "session-rule" in {i["record_id"] for i in json.loads(run(repo, "hook", "check", f"{base}..HEAD",
                                                                      "--json").stdout)["invalidated"]}  # fmt: skip
    clone = _shallow(repo, tmp_path, base)
    done = run(clone, "hook", "check", f"{base}..HEAD")
    no_traceback(done)
    assert done.returncode == 1, done.stderr
    assert "could not be judged (the history is shallow: the commit that last wrote .memzoi/records/" in done.stderr


def test_a_kept_file_another_account_could_have_written_is_not_believed(repo: Repo) -> None:
    """A citation index that hides the record (valid, checksummed, but empty), made writable by others: were it
    read, the range's invalidation would go unreported (and a require_review range through); it is made again."""
    from git_memzoi.freshness.citations import fingerprint
    from git_memzoi.index.citation_store import CitationStore

    base = dropped(repo)
    first = json.loads(memzoi(repo, "hook", "check", f"{base}..HEAD", "--json").stdout)["invalidated"]
    assert [item["record_id"] for item in first] == ["session-rule"]
    db, kept = _state(repo)
    store = CitationStore(kept, fingerprint())
    for tree in store.recent():
        assert store.save(tree, [])
        for path in (kept / f"{tree}.cite", kept / f"{tree}.db"):
            path.chmod(0o666)
    for path in kept.glob("*.writers"):
        path.chmod(0o666)
    assert json.loads(memzoi(repo, "hook", "check", f"{base}..HEAD", "--json").stdout)["invalidated"] == first
    assert not any(p.stat().st_mode & 0o022 for p in kept.iterdir() if p.suffix in (".cite", ".db"))
    memzoi(repo, "search", "sessions", "--json")
    db.chmod(0o666)
    import sqlite3

    with sqlite3.connect(db) as conn:  # another account's verdict: current
        conn.execute("UPDATE verdicts SET state = 'current', evidence = '[]'")
    [hit] = [h for h in json.loads(memzoi(repo, "search", "sessions", "--json").stdout)["hits"]
             if h["record_id"] == "session-rule"]  # fmt: skip
    assert hit["freshness"]["state"] == "unverified"


# --- 2, 3. symlinked memory, case and normalisation ------------------------------------------------------------


def test_records_reached_through_a_symlink_are_never_read(repo: Repo, tmp_path: Path) -> None:
    sessions(repo)
    commit(repo, "code and memory")
    outside = tmp_path / "outside"
    (outside / "semantic").mkdir(parents=True)
    (outside / "semantic" / "evil.md").write_text(
        record_text("outside-rule", type="decision", title="Sessions from outside", body="`validateSession` outside")
    )
    os.symlink(outside / "semantic" / "evil.md", repo.path / ".memzoi" / "records" / "semantic" / "link.md")
    done = run(repo, "search", "sessions", "--json")
    no_traceback(done)
    said = done.stdout + done.stderr
    assert "outside-rule" not in said and "Sessions from outside" not in said
    records = repo.path / ".memzoi" / "records"
    os.rename(records, tmp_path / "moved-records")
    os.symlink(outside, records)
    done = run(repo, "search", "sessions", "--json")
    no_traceback(done)
    assert "outside-rule" not in done.stdout + done.stderr
    event = client_event("claude", "pretooluse-edit", repo.path, tool_input={"file_path": str(repo.path / "x.ts")})
    done = run(repo, "agent", "hook", "claude", input=event)
    assert done.returncode == 0 and "Traceback" not in done.stderr and "outside-rule" not in done.stdout


def test_case_and_unicode_variants_of_a_path_are_other_paths(repo: Repo) -> None:
    repo.write("Src/a.py", "def upperThing(): pass\n")
    repo.write("src/a.py", "def lowerThing(): pass\n")
    repo.write("src/caf\u00e9.py", "x = 1\n")  # NFC
    add_record(repo, "semantic/case", "case-rule", type="decision", title="Case",
               body="See `SRC/A.py`, `src/a.py` and `upperThing`.")  # fmt: skip
    base = commit(repo, "code and memory")
    git("rm", "-q", "src/a.py", cwd=repo.path)
    git("mv", "src/caf\u00e9.py", "src/cafe\u0301.py", cwd=repo.path)  # NFD
    commit(repo, "drop the lower-case file")
    [item] = json.loads(memzoi(repo, "hook", "check", f"{base}..HEAD", "--json").stdout)["invalidated"]
    assert item["evidence"] == [{"path": "src/a.py", "change": "deleted", "to": None, "identifier": None}]
    [hit] = [h for h in json.loads(memzoi(repo, "search", "case", "--json").stdout)["hits"]
             if h["record_id"] == "case-rule"]  # fmt: skip
    assert hit["freshness"]["evidence"] == item["evidence"]


# --- 7. races -------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_commits_racing_checks_and_reads_never_leave_a_kept_answer_that_differs_from_a_cold_one(
    repo: Repo, tmp_path: Path
) -> None:
    base = dropped(repo)
    home = Path(os.environ["MEMZOI_HOME"])
    for i in range(12):
        tip = git("rev-parse", "HEAD", cwd=repo.path).stdout.strip()
        procs = [
            subprocess.Popen([memzoi_exe(), "hook", "check", f"{base}..{tip}", "--json"], cwd=repo.path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
            subprocess.Popen([memzoi_exe(), "search", "sessions", "--json"], cwd=repo.path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
        ]  # fmt: skip
        add_record(repo, f"semantic/more{i}", f"more-{i}", type="decision", title=f"More {i}",
                   body="Also `validateSession`.", applies_to=["src/auth/**"])  # fmt: skip
        commit(repo, f"more {i}")
        if i % 3 == 2:
            git("checkout", "-q", "HEAD~1", cwd=repo.path)
            git("checkout", "-q", "main", cwd=repo.path)
        for proc in procs:
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0 and "Traceback" not in err, err
            json.loads(out)  # a whole answer, of one state or the other
    tip = git("rev-parse", "HEAD", cwd=repo.path).stdout.strip()
    kept = json.loads(memzoi(repo, "hook", "check", f"{base}..{tip}", "--json").stdout)["invalidated"]
    cold = subprocess.run(
        [memzoi_exe(), "hook", "check", f"{base}..{tip}", "--json"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        env=os.environ | {"MEMZOI_HOME": str(tmp_path / "cold")},
    )
    assert json.loads(cold.stdout)["invalidated"] == kept
    assert {item["record_id"] for item in kept} == {"session-rule"}  # the others were written after the change
    warm = json.loads(memzoi(repo, "search", "sessions", "--json").stdout)["hits"]
    cold_hits = json.loads(
        subprocess.run(
            [memzoi_exe(), "search", "sessions", "--json"],
            cwd=repo.path,
            capture_output=True,
            text=True,
            env=os.environ | {"MEMZOI_HOME": str(tmp_path / "cold2")},
        ).stdout
    )["hits"]
    assert {h["record_id"]: h["freshness"] for h in warm} == {h["record_id"]: h["freshness"] for h in cold_hits}
    assert home.exists()


@pytest.mark.slow
def test_a_range_removing_a_name_millions_of_times_reads_its_diff_a_line_at_a_time(repo: Repo) -> None:
    """The names on a range's removed lines were found in the whole `git diff` held at once, split into lines and
    every match listed (3 million for a 48 MiB file of one name); they are read a line at a time into a set."""
    sessions(repo)
    repo.write("src/auth/huge.ts", "validateSession " * (BIG // 16))
    base = commit(repo, "code, memory and a huge file")
    git("rm", "-q", "src/auth/huge.ts", "src/auth/session.ts", cwd=repo.path)
    commit(repo, "drop them")
    done, peak = _peak_kib(repo, "hook", "check", f"{base}..HEAD", "--json")
    assert done.returncode == 0, done.stderr
    assert [item["record_id"] for item in json.loads(done.stdout)["invalidated"]] == ["session-rule"]
    assert peak < 3 * BIG // 1024, peak
