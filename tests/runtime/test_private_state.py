"""Everything memzoi keeps under MEMZOI_HOME is its owner's alone: folders 0700, files 0600, under a 022 umask.

Private local notes and transcript-derived checkpoints live in shared.db and are mirrored into a
worktree's index.db; the parse cache, verdicts, kept tree summaries, session files and apply
journals hold what records and sessions said. Each surface that writes there runs here as a real
process, as a user with the common umask runs it, and then no file or folder under the home
admits another account.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

from support import FIXTURES, Repo, git, memzoi_exe
from support.agents import add_migrations_risk
from support.lifecycle import add_record

SECRET_NOTE = "The staging database password rotates on Mondays"


def memzoi(*args: str, cwd: Path, input: str | None = None) -> subprocess.CompletedProcess[str]:
    """`git memzoi ARGS` as a user with umask 022 runs it."""
    return subprocess.run(
        [memzoi_exe(), *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: os.umask(0o022),
    )


def ok(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert done.returncode == 0, (done.args, done.stdout, done.stderr)
    return done


def open_to_others(home: Path) -> list[str]:
    """Every folder and file below `home` that another account could enter or read, with its mode."""
    found = []
    for folder, dirs, files in os.walk(home):
        for name in [*dirs, *files]:
            path = Path(folder, name)
            mode = stat.S_IMODE(path.lstat().st_mode)
            if mode & 0o077:
                found.append(f"{path.relative_to(home)} {mode:o}")
    return found


def claude_event(repo: Repo, name: str, transcript: Path | str = "") -> str:
    text = (FIXTURES / "claude-hooks" / f"{name}.json").read_text()
    return text.replace("{CWD}", str(repo.path)).replace("{TRANSCRIPT}", str(transcript))


def use_every_surface(repo: Repo, tmp_path: Path) -> None:
    """Private notes, a captured checkpoint, recall, agent hooks, a commit through the hooks, an apply, an export."""
    add_migrations_risk(repo)  # what the prompt and the edit below are about, so the session is given something
    ok(memzoi("hook", "install", cwd=repo.path))
    ok(memzoi("local", "add", "--type", "fact", "--title", "Staging is slow", "--body", SECRET_NOTE, cwd=repo.path))
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text((FIXTURES / "claude-hooks" / "transcript.jsonl").read_text().replace("{CWD}", str(repo.path)))
    ok(memzoi("agent", "hook", "claude", cwd=repo.path, input=claude_event(repo, "precompact", transcript)))
    ok(memzoi("search", "staging", "--include-local", "--json", cwd=repo.path))
    ok(memzoi("agent", "hook", "claude", cwd=repo.path, input=claude_event(repo, "sessionstart")))
    ok(memzoi("agent", "hook", "claude", cwd=repo.path, input=claude_event(repo, "userpromptsubmit")))
    ok(memzoi("agent", "hook", "claude", cwd=repo.path, input=claude_event(repo, "pretooluse-edit")))
    add_record(repo, "facts/ports", "dev-server-port", commit=False, type="fact", title="The dev server uses port 8080")
    git("add", ".memzoi", cwd=repo.path)
    git("commit", "-q", "-m", "a hand-written record", cwd=repo.path)  # pre-commit: verdicts, a kept tree
    proposed = ok(
        memzoi(
            "propose",
            "--type",
            "fact",
            "--title",
            "CI runs on every push",
            "--body",
            "Always.",
            "--json",
            cwd=repo.path,
        )
    )
    proposal = json.loads(proposed.stdout)["id"]
    ok(memzoi("approve", proposal, cwd=repo.path))
    ok(memzoi("apply", proposal, "--commit", cwd=repo.path))
    ok(memzoi("export", "agents-md", cwd=repo.path))
    ok(memzoi("rebuild", "--full", cwd=repo.path))


def test_no_file_or_folder_under_memzoi_home_is_open_to_another_account(repo: Repo, tmp_path: Path) -> None:
    home = Path(os.environ["MEMZOI_HOME"])
    assert not home.exists()
    use_every_surface(repo, tmp_path)
    project = next((home / "projects").iterdir())
    made = {p.name for p in project.rglob("*")}
    # every kind of private runtime state was really written, so the walk below judged each of them
    assert {"shared.db", "index.db", "parse-cache.db", "repo-lifecycle.lock", "agent-sessions", "exports"} <= made
    assert any(name.endswith(".db") for name in (p.name for p in (project / "hook-trees").rglob("*")))
    assert SECRET_NOTE.encode() in (project / "shared.db").read_bytes() + b"".join(
        p.read_bytes() for p in project.glob("shared.db-wal")
    )
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert open_to_others(home) == []


def reachable_by_others(home: Path) -> list[str]:
    """Every file under `home/projects` another account could read: no folder on its way shuts others out."""
    found = []
    for path in (home / "projects").rglob("*"):
        ways = [path.parent, *path.parent.parents]
        folders = ways[: ways.index(home)]
        if path.is_file() and not any(stat.S_IMODE(f.stat().st_mode) & 0o077 == 0 for f in folders):
            found.append(str(path.relative_to(home)))
    return found


def test_folders_an_older_version_left_open_are_closed_by_the_next_write(repo: Repo, tmp_path: Path) -> None:
    home = Path(os.environ["MEMZOI_HOME"])
    add_migrations_risk(repo)
    ok(memzoi("local", "add", "--type", "fact", "--title", "Staging is slow", "--body", SECRET_NOTE, cwd=repo.path))
    ok(memzoi("search", "staging", "--include-local", "--json", cwd=repo.path))
    for folder, dirs, _ in os.walk(home):  # as an older version left them: 0755 folders
        for name in dirs:
            os.chmod(Path(folder, name), 0o755)
    home.chmod(0o755)
    assert reachable_by_others(home) != []
    ok(memzoi("agent", "hook", "claude", cwd=repo.path, input=claude_event(repo, "sessionstart")))
    assert reachable_by_others(home) == []
    assert stat.S_IMODE(home.stat().st_mode) == 0o755, "MEMZOI_HOME itself, when it exists, is the user's to set"
