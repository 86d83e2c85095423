"""`apply --commit` racing real `git add` processes: no change another process stages is ever undone."""

from __future__ import annotations

import subprocess

import pygit2
import pytest

from git_memzoi.index import shared_db
from git_memzoi.runtime.workspace import Workspace
from support import Repo, git
from support.lifecycle import APPLIED_AT, packet, run_memzoi, write_packet

pytestmark = pytest.mark.slow

ROUNDS = 16
LOOPS = 1
#: Tracked files that make the index as big as a real project's, so reading and writing it takes a while.
BULK = 3000

#: Stages one new file after another until STOP appears; a `git add` refused because the index is
#: locked is retried, so every file written is staged, and a file that an apply unstages stays so.
ADD_LOOP = """
i=0
mkdir -p work
while [ ! -e STOP ]; do
  i=$((i+1))
  f=work/$1-f$i.txt
  echo "version $i" > "$f"
  tries=0
  until git add -- "$f" 2>/dev/null; do
    tries=$((tries+1))
    [ $tries -gt 2000 ] && exit 3
  done
done
echo "$i"
"""


def _pending(repo: Repo, n: int) -> list[str]:
    """n committed pending create packets with distinct titles (so distinct concept IDs)."""
    pids = [f"mem_2026_03_01_race{k:02d}_abc123" for k in range(n)]
    paths = [
        write_packet(
            repo,
            packet(
                pid, title=f"Race rule number {k}", origin={"origin_key": f"race:{k}", "route": "repository_proposal"}
            ),
        )
        for k, pid in enumerate(pids)
    ]
    repo.commit("packets", paths=paths)
    return pids


def test_git_add_racing_apply_commit_is_never_undone(repo: Repo) -> None:
    shared_db.connect(Workspace.open(repo.path).layout.shared_db).close()
    bulk = repo.path / "bulk"
    bulk.mkdir()
    for k in range(BULK):
        (bulk / f"{k}.txt").write_text(f"{k}\n")
    git("add", "bulk", cwd=repo.path)
    git("commit", "-q", "-m", "bulk", cwd=repo.path)
    pids = _pending(repo, ROUNDS)
    loops = [
        subprocess.Popen(["sh", "-c", ADD_LOOP, "sh", f"l{n}"], cwd=repo.path, stdout=subprocess.PIPE, text=True)
        for n in range(LOOPS)
    ]
    unclear = []
    try:
        for pid in pids:
            result = run_memzoi("apply", pid, "--commit", cwd=repo.path, env={"MEMZOI_NOW": APPLIED_AT})
            # the only refusal a racing git may cause is the clear one naming its lock
            clear = "index.lock" in result.stderr and "another git process seems to be running" in result.stderr
            if result.returncode != 0 and not (result.returncode == 1 and clear and "Traceback" not in result.stderr):
                unclear.append(result.stderr)
    finally:
        (repo.path / "STOP").touch()
        outs = [loop.communicate(timeout=60)[0] for loop in loops]
    assert [loop.returncode for loop in loops] == [0] * LOOPS and all(int(out) > ROUNDS for out in outs), outs
    index = pygit2.Repository(str(repo.path)).index
    index.read(True)
    lost = []
    for rel in sorted(p.relative_to(repo.path).as_posix() for p in (repo.path / "work").iterdir()):
        want = str(pygit2.hash((repo.path / rel).read_bytes()))
        have = str(index[rel].id) if rel in index else None
        if have != want:
            lost.append(rel)
    assert lost == [], f"staged versions undone by apply --commit: {lost}"
    assert unclear == []
    # the applies committed only their own files
    committed = git("log", "--name-only", "--format=", "HEAD", cwd=repo.path).stdout.split()
    assert not [p for p in committed if p.startswith("work/")]
