"""log.md only grows: past the 1 MiB every other memory file keeps to, apply, validate and the hooks go on,
each reading it a piece at a time and scanning for secrets what it has to."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from git_memzoi.layout import LOG
from git_memzoi.profile.frontmatter import MAX_FILE_BYTES
from git_memzoi.profile.tree import log_chunks
from support import Repo, git, memzoi_exe, run_cli
from support.hooks import Remote

pytestmark = pytest.mark.slow

RECEIPTS = 20_000
#: An AWS key as the secret scan sees one (a documented example value).
LEAKED = "AKIAIOSFODNN7EXAMPLE"


def receipts(count: int, start: int = 0) -> str:
    """`count` receipt lines as apply writes them (made directly: 20,000 applies would take hours)."""
    return "".join(
        f"- 2026-01-01T00:00:00Z applied mem_2026_01_01_bulk_{n:06d} (create): created bulk-{n}; reviewer alice\n"
        for n in range(start, start + count)
    )


def grown_log(repo: Repo, count: int = RECEIPTS) -> bytes:
    """log.md with `count` receipts, committed; its bytes."""
    log = repo.path / LOG
    log.write_text(log.read_text() + receipts(count))
    repo.commit("twenty thousand receipts", paths=[LOG])
    data = log.read_bytes()
    assert len(data) > MAX_FILE_BYTES
    return data


def approved(title: str) -> str:
    pid = str(run_cli("propose", "--type", "fact", "--title", title, "--body", "A fact.", "--json").json()["id"])
    run_cli("approve", pid)
    return pid


def test_apply_validate_and_the_ci_check_go_on_past_twenty_thousand_receipts(repo: Repo) -> None:
    before = grown_log(repo)
    pid = approved("Past the cap")
    run_cli("apply", pid, "--commit")
    after = (repo.path / LOG).read_bytes()
    assert after.startswith(before) and after.count(b"\n") == before.count(b"\n") + 1
    assert pid.encode() in after.splitlines()[-1]
    assert run_cli("validate", "--json").json()["ok"]
    assert run_cli("validate", "--rev", "HEAD", "--json").json()["ok"]
    checked = git("memzoi", "hook", "check", "HEAD~1..HEAD", cwd=repo.path, check=False)
    assert checked.returncode == 0, checked.stderr


def test_the_server_accepts_a_log_past_the_cap_and_refuses_a_secret_appended_to_it(remote: Remote) -> None:
    log = remote.work.path / LOG
    remote.commit({LOG: log.read_text() + receipts(RECEIPTS)})
    remote.accepted()
    remote.commit({LOG: log.read_text() + f"- note: deploy key {LEAKED}\n"})
    remote.rejected("log.md", "secret")


def test_a_secret_already_in_the_log_is_found_by_validate_and_the_pre_commit_hook(repo: Repo) -> None:
    grown_log(repo)
    log = repo.path / LOG
    with log.open("a") as handle:
        handle.write(f"- note: deploy key {LEAKED}\n")
    line = log.read_bytes().count(b"\n")
    problems = run_cli("validate", "--json", expect=1).json()["problems"]
    assert [(p["path"], p["line"], p["code"]) for p in problems] == [(LOG, line, "secret")]

    pid = approved("Does not scan the whole log")
    run_cli("apply", pid)  # it scans what it appends: the note above is validate's and the hooks' to find
    assert log.read_bytes().count(b"\n") == line + 1
    run_cli("hook", "install")
    git("add", "-A", cwd=repo.path)
    commit = git("commit", "-q", "-m", "apply", cwd=repo.path, check=False)
    assert commit.returncode != 0 and f"{LOG}:{line}" in commit.stderr and "secret" in commit.stderr


def test_apply_refuses_a_secret_in_what_it_would_write(repo: Repo) -> None:
    before = grown_log(repo)
    pid = approved("Reviewer leaks a key")
    refused = run_cli("apply", pid, "--reviewer", f"alice {LEAKED}", expect=1)
    assert "AWS access key" in refused.stderr and "secret" in refused.stderr
    assert (repo.path / LOG).read_bytes() == before


def test_log_chunks_cut_after_newlines_and_never_inside_a_character() -> None:
    short = ("é" * 30 + "\n") * 100
    pieces = list(log_chunks(short.encode(), size=1000))
    assert b"".join(pieces) == short.encode() and len(pieces) > 1
    assert all(len(p) <= 1000 and p.endswith(b"\n") for p in pieces)
    long = ("é" * 700 + "\n") * 5 + "ü" * 3000  # lines longer than a piece
    pieces = list(log_chunks(long.encode(), size=1000))
    assert b"".join(pieces) == long.encode()
    for piece in pieces:
        assert len(piece) <= 1000
        piece.decode("utf-8")  # whole characters


def peak_kib(args: list[str], cwd: Path) -> tuple[int, subprocess.CompletedProcess[str]]:
    """Run `args` in a fresh child and return its peak resident set (KiB) and its result."""
    code = (
        "import resource, subprocess, sys, json\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "print(json.dumps([resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, p.returncode, p.stderr]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True, text=True, check=True)
    peak, rc, err = json.loads(out.stdout)
    return int(peak), subprocess.CompletedProcess(args, rc, "", err)


def test_validate_reads_a_large_log_a_piece_at_a_time(repo: Repo) -> None:
    log = repo.path / LOG
    size = 0
    with log.open("a") as handle:
        block = receipts(10_000)
        while size < 48 << 20:
            handle.write(block)
            size += len(block)
    peak, proc = peak_kib([memzoi_exe(), "validate"], repo.path)
    assert proc.returncode == 0, proc.stderr
    # the interpreter and its modules take about 40 MiB; the log is never held whole
    assert peak < 64 << 10, f"validate of a {size >> 20} MiB log.md peaked at {peak >> 10} MiB"
    repo.commit("a large log", paths=[LOG])
    peak, proc = peak_kib([memzoi_exe(), "validate", "--rev", "HEAD"], repo.path)
    assert proc.returncode == 0, proc.stderr
    # libgit2 inflates the blob once; it is sliced from that buffer, never copied or decoded whole
    assert peak < (size >> 10) + (64 << 10), f"validate --rev of a {size >> 20} MiB log peaked at {peak >> 10} MiB"
    pid = approved("Appended to a large log")
    peak, proc = peak_kib([memzoi_exe(), "apply", pid], repo.path)
    assert proc.returncode == 0, proc.stderr
    # before and after in the plan, one read to see nothing changed meanwhile; the journal holds the
    # appended line only (it held both images, base64, in each of its writes: ten times the log)
    assert peak < 5 * (size >> 10) + (64 << 10), f"apply to a {size >> 20} MiB log peaked at {peak >> 10} MiB"


OPEN_PROPOSALS = 5_000


def test_handoff_lists_a_bounded_inbox_and_counts_the_rest_in_the_cli_mcp_and_claude_hook(repo: Repo) -> None:
    from git_memzoi.index import shared_db
    from git_memzoi.mcp.tools import MemoryTools
    from git_memzoi.recall.handoff import INBOX_LIMIT
    from git_memzoi.runtime.workspace import Workspace

    ws = Workspace.open()
    conn = shared_db.connect(ws.layout.shared_db, owner=shared_db.owner_of(ws.repo.common_dir))
    stamp = "2026-01-01T00:00:00Z"
    rows = []
    for n in range(OPEN_PROPOSALS):
        text = (
            f"---\nid: mem_open_{n:05d}\nkind: proposal\ntitle: Open proposal {n}\nsensitivity: repo-safe\n"
            "proposal:\n  action: create\n---\nBody\n"
        )
        rows.append((f"mem_open_{n:05d}", "validated", text, f"d{n}", None, stamp, stamp))
    with shared_db.transaction(conn):
        conn.executemany(
            "INSERT INTO proposals (id, state, packet, body_digest, file_id, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
    conn.close()
    more = f"- and {OPEN_PROPOSALS - INBOX_LIMIT} more: `git memzoi proposals`"

    cli = run_cli("handoff", "--task", "pick up", "--json").json()
    assert [i["proposal_id"] for i in cli["inbox"]] == [f"mem_open_{n:05d}" for n in range(INBOX_LIMIT)]
    assert cli["inbox_more"] == OPEN_PROPOSALS - INBOX_LIMIT and more in cli["text"]
    assert len(run_cli("handoff", "--task", "pick up").stdout) < 20_000

    mcp = MemoryTools(Workspace.open()).handoff("pick up")
    assert mcp.model.model_dump()["inbox_more"] == OPEN_PROPOSALS - INBOX_LIMIT and more in mcp.text

    event = json.dumps(
        {"hook_event_name": "SessionStart", "session_id": "s", "cwd": str(repo.path), "source": "startup"}
    )
    proc = subprocess.run(
        [memzoi_exe(), "agent", "hook", "claude"], input=event, cwd=repo.path, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert more in context and "mem_open_00019" in context and "mem_open_00020" not in context
