"""Runtime state belongs to one repository: a repository replaced at the same path never sees the old one's,
and one moved elsewhere finds its own again with `doctor --adopt`."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from support import Repo, git, make_repo, memzoi_exe, run_cli

pytestmark = pytest.mark.slow

SECRET_NOTE = "the staging password rotates on fridays"


def memzoi(*args: str, cwd: Path, expect: int | None = 0) -> subprocess.CompletedProcess[str]:
    """The installed `git memzoi` as a user runs it, through git."""
    proc = subprocess.run(
        ["git", "memzoi", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=os.environ | {"PATH": f"{Path(memzoi_exe()).parent}:{os.environ['PATH']}"},
    )
    if expect is not None:
        assert proc.returncode == expect, (proc.returncode, proc.stdout, proc.stderr)
    return proc


def populated(path: Path) -> str:
    """A repository with private local memory and an approved proposal in its runtime state; its project folder."""
    make_repo(path)
    memzoi("local", "add", "--title", "Staging", "--body", SECRET_NOTE, cwd=path)
    pid = json.loads(
        memzoi("propose", "--type", "fact", "--title", "Old fact", "--body", "Old.", "--json", cwd=path).stdout
    )
    memzoi("approve", pid["id"], cwd=path)
    memzoi("search", "staging", cwd=path)  # the index now mirrors the local memory too
    doctor = json.loads(memzoi("doctor", "--json", cwd=path).stdout)
    assert doctor["repository_id"] and len(doctor["repository_id"]) == 32
    return str(doctor["paths"]["project"])


def test_a_repository_replaced_at_the_same_path_is_refused_the_old_state(tmp_path: Path) -> None:
    path = tmp_path / "ci-workspace"
    project = populated(path)
    pid = json.loads(memzoi("proposals", "--json", cwd=path).stdout)["proposals"][0]["id"]
    shutil.rmtree(path)
    make_repo(path)  # an unrelated repository, same path, same key

    for args in (("local", "list"), ("search", "staging"), ("proposals",), ("handoff", "--task", "t"), ("rebuild",)):
        proc = memzoi(*args, cwd=path, expect=3)
        assert SECRET_NOTE not in proc.stdout + proc.stderr and pid not in proc.stdout + proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert "shared.db belongs to another repository" in lines[0], proc.stderr
        assert "git memzoi doctor" in proc.stderr
    # the same refusal for a writer, and nothing is written into the old state
    before = (Path(project) / "shared.db").read_bytes()
    memzoi("local", "add", "--title", "New", "--body", "new", cwd=path, expect=3)
    assert (Path(project) / "shared.db").read_bytes() == before

    doctor = memzoi("doctor", cwd=path, expect=1)
    assert "belongs to another repository" in doctor.stdout and "doctor --adopt" in doctor.stdout
    adopted = memzoi("doctor", "--adopt", cwd=path)
    assert "set aside" in adopted.stdout
    assert memzoi("local", "list", cwd=path).stdout.strip() == ""
    assert SECRET_NOTE not in memzoi("search", "staging", cwd=path).stdout
    memzoi("doctor", cwd=path)
    aside = [p for p in Path(project).parent.iterdir() if ".replaced-" in p.name]
    assert len(aside) == 1 and (aside[0] / "shared.db").read_bytes() == before  # kept, never written over


def test_a_moved_repository_adopts_its_state(tmp_path: Path) -> None:
    old = tmp_path / "old-place"
    old_project = populated(old)
    new = tmp_path / "new-place"
    os.rename(old, new)

    assert SECRET_NOTE not in memzoi("local", "list", cwd=new).stdout  # a new key: nothing there yet
    doctor = memzoi("doctor", cwd=new, expect=1)
    assert f"this repository's state is at {old_project}" in doctor.stdout and "doctor --adopt" in doctor.stdout
    memzoi("doctor", "--adopt", cwd=new)
    assert not Path(old_project).exists()
    assert SECRET_NOTE in memzoi("local", "list", "--json", cwd=new).stdout
    assert len(json.loads(memzoi("proposals", "--json", cwd=new).stdout)["proposals"]) == 1
    report = json.loads(memzoi("doctor", "--json", cwd=new).stdout)
    assert report["ok"] and report["checks"]["shared_db"] == "ok"
    conn = sqlite3.connect(report["paths"]["shared_db"])
    assert dict(conn.execute("SELECT key, value FROM meta"))["common_dir"] == str((new / ".git").resolve())
    conn.close()


def test_adopt_leaves_the_state_of_a_copy_that_is_still_in_use(tmp_path: Path) -> None:
    original = tmp_path / "original"
    project = populated(original)
    copy = tmp_path / "copy"
    shutil.copytree(original, copy)  # copies share the memzoi-id

    doctor = memzoi("doctor", "--adopt", cwd=copy, expect=1)
    assert "still used by the repository at" in doctor.stderr
    assert (Path(project) / "shared.db").exists()
    assert SECRET_NOTE in memzoi("local", "list", "--json", cwd=original).stdout


def test_the_id_is_shared_by_linked_worktrees_and_written_once(tmp_path: Path) -> None:
    path = tmp_path / "main"
    populated(path)
    ident = (path / ".git" / "memzoi-id").read_text()
    git("worktree", "add", "-q", str(tmp_path / "linked"), cwd=path)
    assert SECRET_NOTE in memzoi("local", "list", "--json", cwd=tmp_path / "linked").stdout
    memzoi("local", "add", "--title", "More", "--body", "more", cwd=tmp_path / "linked")
    assert (path / ".git" / "memzoi-id").read_text() == ident


def test_a_damaged_id_file_fails_closed_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "repo"
    populated(path)
    (path / ".git" / "memzoi-id").write_text("not an id\n")
    proc = memzoi("local", "list", cwd=path, expect=3)
    assert proc.stderr.strip().splitlines()[0].startswith("git memzoi: ") and "memzoi-id" in proc.stderr


def test_a_shared_db_from_before_the_binding_is_bound_by_its_first_writer(repo: Repo) -> None:
    from git_memzoi.index import shared_db
    from git_memzoi.runtime.workspace import Workspace

    ws = Workspace.open()
    shared_db.connect(ws.layout.shared_db).close()  # made with no owner, as before the binding existed
    assert shared_db.recorded_owner(ws.layout.shared_db) is None
    assert not (ws.repo.common_dir / "memzoi-id").exists()
    run_cli("local", "list")  # a reader neither refuses nor binds it
    assert shared_db.recorded_owner(ws.layout.shared_db) is None
    run_cli("local", "add", "--title", "First", "--body", "first")
    owner = shared_db.recorded_owner(ws.layout.shared_db)
    ident = (ws.repo.common_dir / "memzoi-id").read_text().strip()
    assert owner is not None and owner.repository_id == ident and owner.common_dir == str(ws.repo.common_dir)
