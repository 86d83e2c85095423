"""`apply --commit` racing a real `git commit` loop: no user commit takes memzoi's staged files, no apply ends torn."""

from __future__ import annotations

import subprocess

import pytest

from git_memzoi.index import shared_db
from git_memzoi.runtime.workspace import Workspace
from support import Repo, git
from support.lifecycle import APPLIED_AT, packet, run_memzoi, write_packet

pytestmark = pytest.mark.slow

ROUNDS = 12
#: Commits a changed code file again and again until STOP appears; a commit git refuses (the index is
#: locked) is retried. Each commit is `user-<n>`.
COMMIT_LOOP = """
i=0
while [ ! -e STOP ]; do
  i=$((i+1))
  echo "version $i" > user.txt
  tries=0
  until git add user.txt 2>/dev/null && git commit -q --no-verify -m "user-$i" >/dev/null 2>&1; do
    tries=$((tries+1))
    [ -e STOP ] && break
    [ $tries -gt 5000 ] && exit 3
  done
done
echo "$i"
"""


def _pending(repo: Repo, n: int) -> list[str]:
    pids = [f"mem_2026_03_01_crace{k:02d}_abc123" for k in range(n)]
    paths = [
        write_packet(
            repo,
            packet(
                pid, title=f"Commit race rule {k}", origin={"origin_key": f"crace:{k}", "route": "repository_proposal"}
            ),
        )
        for k, pid in enumerate(pids)
    ]
    repo.commit("packets", paths=paths)
    return pids


def test_git_commit_racing_apply_commit_never_takes_its_files(repo: Repo) -> None:
    shared_db.connect(Workspace.open(repo.path).layout.shared_db).close()
    (repo.path / "user.txt").write_text("start\n")
    git("add", "user.txt", cwd=repo.path)
    git("commit", "-q", "-m", "user-0", cwd=repo.path)
    pids = _pending(repo, ROUNDS)
    loop = subprocess.Popen(["sh", "-c", COMMIT_LOOP], cwd=repo.path, stdout=subprocess.PIPE, text=True)
    outcomes: list[str] = []
    try:
        for pid in pids:
            for _ in range(200):  # a refusal naming the user's index.lock changed nothing: run it again
                done = run_memzoi("apply", pid, "--commit", cwd=repo.path, env={"MEMZOI_NOW": APPLIED_AT})
                assert "Traceback" not in done.stderr
                if done.returncode == 1 and "another git process seems to be running" in done.stderr:
                    outcomes.append("locked")
                    continue
                assert done.returncode == 0, done.stderr
                assert "committed" in done.stdout + done.stderr, done.stderr
                outcomes.append("committed")
                break
            else:
                pytest.fail(f"{pid} was never applied")
    finally:
        (repo.path / "STOP").touch()
        out = loop.communicate(timeout=120)[0]
    assert loop.returncode == 0 and int(out.split()[-1]) > ROUNDS, out
    assert outcomes.count("committed") == ROUNDS
    log = git("log", "--format=@%s", "--name-only", cwd=repo.path).stdout
    commits: list[tuple[str, list[str]]] = []
    for line in log.splitlines():
        if line.startswith("@"):
            commits.append((line[1:], []))
        elif line:
            commits[-1][1].append(line)
    took = [(subject, files) for subject, files in commits if subject.startswith("user-") and files != ["user.txt"]]
    assert took == [], f"user commits that carried memzoi's staged files: {took}"
    ours = [files for subject, files in commits if subject.startswith("memzoi: apply")]
    assert len(ours) == ROUNDS and all("user.txt" not in files for files in ours)
    # nothing of memzoi's is left staged or uncommitted
    assert git("status", "--porcelain", "--", ".memzoi", cwd=repo.path).stdout == ""
