"""Write the CI workflow that runs the server's checks on pull requests, for hosts without server hooks."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from git_memzoi import __version__
from git_memzoi.errors import Refused, UsageError
from git_memzoi.gitrepo import GitRepo
from git_memzoi.runtime.atomic import read_inside, write_inside

CiName = Literal["github"]
#: The line that marks a workflow file as ours: install replaces such a file and nothing else.
MARKER = "# git-memzoi-ci:"
WORKFLOW_PATH = ".github/workflows/memzoi.yml"
#: What a refused symlink's message adds.
REAL_FILES = "hook install writes only real files inside the repository, never through a link"


def default_pip_spec() -> str:
    """What the workflow installs unless told otherwise: this very release of git memzoi, from PyPI."""
    return f"git-memzoi=={__version__}"


def check_pip_spec(pip_spec: str) -> str:
    """`pip_spec`, refused (a usage error) when empty or holding a character that is not printable text."""
    if not pip_spec.strip():
        raise UsageError("must name what to install, not be empty", field="pip_spec")
    odd = next((ch for ch in pip_spec if not ch.isprintable()), None)
    if odd is not None:
        raise UsageError(f"must not hold control or other unprintable characters, such as {odd!r}", field="pip_spec")
    return pip_spec


def install_command(pip_spec: str) -> str:
    """The install step's `run:` value as a YAML double-quoted scalar: the shell command, quoted for both.

    A plain scalar would end at ` #` or break at `: `; a JSON string of printable text is a
    valid YAML double-quoted scalar (only `\\` and `\"` are escaped).
    """
    return json.dumps(f"python -m pip install {shlex.quote(check_pip_spec(pip_spec))}", ensure_ascii=False)


#: The actions the workflow uses, pinned by commit (a tag can be moved to other code; a commit
#: cannot), with the release tag it was read from in a comment for whoever updates them.
CHECKOUT = "11d5960a326750d5838078e36cf38b85af677262 # v4.4.0"
SETUP_PYTHON = "a26af69be951a213d495a4c3e4e4022e16d87065 # v5.6.0"
CACHE = "5a3ec84eff668545956fd18022155c47e93e2684 # v4.2.3"


def github_workflow(pip_spec: str) -> str:
    """The GitHub Actions workflow: on each pull request, `hook check BASE..HEAD` and `validate --rev HEAD`.

    The trees `hook check` validated are kept between runs with actions/cache: a summary is
    named by its tree's object ID and checked against its digest and this validator when read
    (hooks/treecache.py), so a restored one can only save work, never change a verdict.
    """
    # The base SHA reaches the shell through env, never spliced into the script, as GitHub advises
    # for event data. The checkout keeps no token in .git/config: nothing after it needs to push,
    # and the PR's own code runs in the steps after it.
    install = install_command(pip_spec)
    return f"""{MARKER} github
# Written by `git memzoi hook install --ci github`; run it again to update this file, delete it to
# remove the check. Edits here are overwritten.
name: memzoi
on:
  pull_request:
permissions:
  contents: read
jobs:
  memory:
    name: git memzoi checks
    runs-on: ubuntu-latest
    steps:
      - name: Check out the pull request with its whole history
        uses: actions/checkout@{CHECKOUT}
        with:
          fetch-depth: 0
          persist-credentials: false
      - name: Set up Python
        uses: actions/setup-python@{SETUP_PYTHON}
        with:
          python-version: "3.12"
      - name: Install git memzoi
        run: {install}
      - name: Restore the .memzoi/ trees earlier runs validated (named by their content)
        uses: actions/cache@{CACHE}
        with:
          path: ~/.memzoi/projects/*/hook-trees
          key: memzoi-hook-trees-${{{{ github.event.pull_request.base.sha }}}}
          restore-keys: memzoi-hook-trees-
      - name: Check the commits the pull request adds, as the server hook would
        env:
          BASE_SHA: ${{{{ github.event.pull_request.base.sha }}}}
        run: git memzoi hook check "$BASE_SHA..HEAD"
      - name: Validate memory at the pull request's head
        run: git memzoi validate --rev HEAD
"""


@dataclass(frozen=True)
class WrittenWorkflow:
    """The workflow file and what install did to it: created, updated or unchanged."""

    name: CiName
    path: Path
    action: Literal["created", "updated", "unchanged"]


def install_ci(repo: GitRepo, name: CiName, pip_spec: str | None = None) -> WrittenWorkflow:
    """Write the CI workflow into the work tree; refuse, changing nothing, over a file git memzoi did not write.

    A symlink anywhere on the way from the work tree root is refused, and nothing behind it is read.
    """
    root = repo.require_workdir()
    path = root / WORKFLOW_PATH
    text = github_workflow(pip_spec if pip_spec is not None else default_pip_spec())
    action: Literal["created", "updated", "unchanged"] = "created"
    try:
        found = read_inside(root, WORKFLOW_PATH, REAL_FILES)
    except OSError:
        found = b""  # unreadable: not ours, so left alone below
    if found is not None:
        current = found.decode("utf-8", errors="replace")
        if not current.startswith(MARKER):
            raise Refused(
                f"{path} exists and was not written by git memzoi; leaving it alone",
                hint='add a step running `git memzoi hook check "$BASE_SHA..HEAD"` to it, or '
                "remove it and run install again",
                code="foreign-workflow",
            )
        action = "unchanged" if current == text else "updated"
    if action != "unchanged":
        write_inside(root, WORKFLOW_PATH, text.encode("utf-8"), REAL_FILES)
    return WrittenWorkflow(name, path, action)
