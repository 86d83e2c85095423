"""Run the user's commit hooks (pre-commit, prepare-commit-msg, commit-msg, post-commit) as git commit does."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from git_memzoi.gitrepo.hookdir import hooks_dir
from git_memzoi.gitrepo.repo import GitRepo


@dataclass(frozen=True)
class HookRun:
    """A hook's exit: `ok` is True when it passed or does not exist; `output` is what it printed."""

    name: str
    ok: bool
    output: str = ""

    @property
    def reason(self) -> str:
        """One line for a refusal: the hook's last line of output, else its name."""
        lines = [line.strip() for line in self.output.splitlines() if line.strip()]
        return f"the {self.name} hook refused the commit" + (f": {lines[-1]}" if lines else "")


def run_hook(repo: GitRepo, name: str, *args: str, index_file: Path | None = None) -> HookRun:
    """Run hook `name` from the work tree root, as git does; a missing or non-executable hook passes."""
    path = hooks_dir(repo) / name
    if not path.is_file() or not os.access(path, os.X_OK):
        return HookRun(name, True)
    env = dict(os.environ)
    env["GIT_EDITOR"] = ":"  # git sets this when no editor will run, so hooks never wait for one
    if index_file is not None:
        env["GIT_INDEX_FILE"] = str(index_file)
    cwd = repo.workdir if repo.workdir is not None else repo.git_dir
    try:
        done = subprocess.run(
            [str(path), *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            check=False,
        )
    except OSError as exc:
        return HookRun(name, False, f"cannot run {path}: {exc.strerror or exc}")
    output = done.stdout.decode("utf-8", "replace")
    if output:
        # as git commit does: what the user's hook prints reaches the user, on stderr (stdout is data)
        sys.stderr.write(output if output.endswith("\n") else output + "\n")
        sys.stderr.flush()
    return HookRun(name, done.returncode == 0, output)
