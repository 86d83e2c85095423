"""Write the CI workflow that runs the server's checks on pull requests, for hosts without server hooks."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from git_memzoi.errors import Refused, UsageError
from git_memzoi.gitrepo import GitRepo
from git_memzoi.runtime.atomic import read_inside, write_inside

CiName = Literal["github", "gitlab"]
#: The line that marks a workflow file as ours: install replaces such a file and nothing else.
MARKER = "# git-memzoi-ci:"
WORKFLOW_PATH = ".github/workflows/memzoi.yml"
#: The GitLab CI template, included from the project's own .gitlab-ci.yml.
GITLAB_PATH = ".gitlab/memzoi.gitlab-ci.yml"
PATHS: dict[CiName, str] = {"github": WORKFLOW_PATH, "gitlab": GITLAB_PATH}
#: What a refused symlink's message adds.
REAL_FILES = "hook install writes only real files inside the repository, never through a link"

_SHA = re.compile(r"[0-9a-f]{40}")
#: A GitHub owner (letters, digits, hyphens) and repository name (letters, digits, `.`, `_`, `-`).
_GITHUB_REPO = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}")


@dataclass(frozen=True)
class Source:
    """Where CI gets git memzoi: the action (or git URL) of `repo` at commit `ref`, or what pip installs from `spec`.

    Never a version from the package index by default: none is published, and an unclaimed name
    in an install step runs whatever its first registrant uploads.
    """

    repo: str | None = None
    ref: str | None = None
    spec: str | None = None

    def describe(self) -> str:
        """What install says of the source it wrote."""
        if self.spec is not None:
            return f"installs {self.spec} with pip (--install-spec)"
        return f"uses git memzoi from {self.repo} at commit {self.ref} (--action-ref)"

    def pip_spec(self) -> str:
        """What pip installs: the spec, or the git URL of the repository pinned at the commit."""
        if self.spec is not None:
            return self.spec
        return f"git+https://github.com/{self.repo}.git@{self.ref}"


def source(action_repo: str | None, action_ref: str | None, install_spec: str | None) -> Source:
    """The source the options name, checked: a usage error names the option that is wrong or missing."""
    if install_spec is not None:
        if action_ref is not None or action_repo is not None:
            raise UsageError("--install-spec and --action-ref name two sources: give one")
        return Source(spec=check_pip_spec(install_spec))
    if action_ref is None:
        raise UsageError(
            "a CI workflow needs the git memzoi it installs: --action-ref SHA with --action-repo OWNER/REPO "
            "(a commit of the git memzoi repository), or --install-spec SPEC (what pip installs)",
            hint="no release of git memzoi is published on the package index, so none is installed by default",
        )
    if not _SHA.fullmatch(action_ref.lower()):
        raise UsageError(
            f"must be a full 40-hex commit SHA (a tag or branch can be moved), not {action_ref!r}", field="action_ref"
        )
    if action_repo is None:
        raise UsageError("--action-ref needs --action-repo OWNER/REPO: the GitHub repository of git memzoi it names")
    if not _GITHUB_REPO.fullmatch(action_repo):
        raise UsageError(f"must be a GitHub OWNER/REPO, not {action_repo!r}", field="action_repo")
    return Source(repo=action_repo, ref=action_ref.lower())


def check_pip_spec(pip_spec: str) -> str:
    """`pip_spec`, refused (a usage error) when empty or holding a character that is not printable text."""
    if not pip_spec.strip():
        raise UsageError("must name what to install, not be empty", field="install_spec")
    odd = next((ch for ch in pip_spec if not ch.isprintable()), None)
    if odd is not None:
        raise UsageError(
            f"must not hold control or other unprintable characters, such as {odd!r}", field="install_spec"
        )
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

_GITHUB_HEAD = f"""{MARKER} github
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
"""


def github_workflow(src: Source) -> str:
    """The GitHub Actions workflow: on each pull request, `hook check BASE..HEAD` and `validate --rev HEAD`.

    With an action source, the steps are the action's (action.yml at the root of the git memzoi
    repository), pinned by commit; with a pip spec, they are written out here. The trees
    `hook check` validated, and the citation indexes of the records trees it looked up, are kept
    between runs with actions/cache: each is named by its tree's object ID and checked against
    its digest and the code that made it when read (hooks/treecache.py, index/citation_store.py),
    so a restored one can only save work, never change a verdict.
    """
    # The base SHA reaches the shell through env, never spliced into the script, as GitHub advises
    # for event data. The checkout keeps no token in .git/config: nothing after it needs to push,
    # and the PR's own code runs in the steps after it.
    if src.spec is None:
        return (
            _GITHUB_HEAD
            + f"""      - name: Check .memzoi/ as the server hook would (git memzoi's action, pinned by commit)
        uses: {src.repo}@{src.ref}
"""
        )
    install = install_command(src.spec)
    return (
        _GITHUB_HEAD
        + f"""      - name: Set up Python
        uses: actions/setup-python@{SETUP_PYTHON}
        with:
          python-version: "3.12"
      - name: Install git memzoi
        run: {install}
      - name: Restore the .memzoi/ trees earlier runs validated and indexed (named by their content)
        uses: actions/cache@{CACHE}
        with:
          path: |
            ~/.memzoi/projects/*/hook-trees
            ~/.memzoi/projects/*/cite-trees
          key: memzoi-trees-${{{{ github.event.pull_request.base.sha }}}}
          restore-keys: memzoi-trees-
      - name: Check the commits the pull request adds, as the server hook would
        env:
          BASE_SHA: ${{{{ github.event.pull_request.base.sha }}}}
        run: git memzoi hook check --annotate github "$BASE_SHA..HEAD"
      - name: Validate memory at the pull request's head
        run: git memzoi validate --rev HEAD
"""
    )


def gitlab_template(src: Source) -> str:
    """The GitLab CI template: on each merge request, the same checks, git memzoi installed by pip.

    The target branch is fetched by name (a merge request pipeline's clone may not hold it) and
    the range starts at the merge request's diff base. The kept trees live in the project
    folder, where GitLab's cache can reach them.
    """
    install = install_command(src.pip_spec())
    return f"""{MARKER} gitlab
# Written by `git memzoi hook install --ci gitlab`; run it again to update this file, delete it to
# remove the check. Edits here are overwritten. Include it from .gitlab-ci.yml:
#   include:
#     - local: {GITLAB_PATH}
memzoi:
  stage: test
  image: python:3.12
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
  variables:
    GIT_DEPTH: "0"
    MEMZOI_HOME: $CI_PROJECT_DIR/.memzoi-ci-home
  cache:
    key: memzoi-trees
    paths:
      - .memzoi-ci-home/projects/*/hook-trees
      - .memzoi-ci-home/projects/*/cite-trees
  script:
    - {install}
    - git fetch --no-tags origin "refs/heads/$CI_MERGE_REQUEST_TARGET_BRANCH_NAME"
    - git memzoi hook check "$CI_MERGE_REQUEST_DIFF_BASE_SHA..HEAD"
    - git memzoi validate --rev HEAD
"""


@dataclass(frozen=True)
class WrittenWorkflow:
    """The workflow file and what install did to it: created, updated or unchanged."""

    name: CiName
    path: Path
    action: Literal["created", "updated", "unchanged"]


def install_ci(repo: GitRepo, name: CiName, src: Source) -> WrittenWorkflow:
    """Write the CI workflow into the work tree; refuse, changing nothing, over a file git memzoi did not write.

    A symlink anywhere on the way from the work tree root is refused, and nothing behind it is read.
    """
    root = repo.require_workdir()
    rel = PATHS[name]
    path = root / rel
    text = github_workflow(src) if name == "github" else gitlab_template(src)
    action: Literal["created", "updated", "unchanged"] = "created"
    try:
        found = read_inside(root, rel, REAL_FILES)
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
        write_inside(root, rel, text.encode("utf-8"), REAL_FILES)
    return WrittenWorkflow(name, path, action)
