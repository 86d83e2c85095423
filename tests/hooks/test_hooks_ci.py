"""`hook install --ci github`: a workflow valid against GitHub's schema, idempotent, never over a foreign file."""

from __future__ import annotations

from pathlib import Path

import yaml

from support import Repo, git, run_cli
from support.hooks import WORKFLOW, schema_check


def test_the_workflow_is_valid_and_runs_the_checks(repo: Repo) -> None:
    result = run_cli("hook", "install", "--ci", "github")
    path = repo.path / WORKFLOW
    assert f"github workflow created: {path}" in result.stderr
    checked = schema_check(path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    flow = yaml.safe_load(path.read_text())
    steps = flow["jobs"]["memory"]["steps"]
    assert steps[0]["uses"].startswith("actions/checkout@") and steps[0]["with"]["fetch-depth"] == 0
    runs = [s.get("run", "") for s in steps]
    assert "python -m pip install git-memzoi==0.1.0" in runs
    assert 'git memzoi hook check "$BASE_SHA..HEAD"' in runs and "git memzoi validate --rev HEAD" in runs
    assert (
        next(s for s in steps if "hook check" in s.get("run", ""))["env"]["BASE_SHA"]
        == "${{ github.event.pull_request.base.sha }}"
    )
    assert list(flow[True]) == ["pull_request"]  # YAML 1.1 reads the key `on` as true
    broken = repo.write("broken.yml", path.read_text().replace("    runs-on: ubuntu-latest\n", ""))
    assert schema_check(broken).returncode != 0  # the schema check can fail


def test_install_again_is_idempotent_and_updates_its_own_file(repo: Repo) -> None:
    run_cli("hook", "install", "--ci", "github")
    before = (repo.path / WORKFLOW).read_bytes()
    again = run_cli("hook", "install", "--ci", "github", "--json").json()
    assert again["workflows"][0]["action"] == "unchanged" and (repo.path / WORKFLOW).read_bytes() == before
    spec = "git+https://example.com/git-memzoi.git@v0.1.0"
    assert (
        run_cli("hook", "install", "--ci", "github", "--pip-spec", spec, "--json").json()["workflows"][0]["action"]
        == "updated"
    )
    assert f"python -m pip install {spec}" in (repo.path / WORKFLOW).read_text()
    assert schema_check(repo.path / WORKFLOW).returncode == 0


def test_a_workflow_someone_else_wrote_is_left_alone(repo: Repo) -> None:
    repo.write(WORKFLOW, "name: ours\non: push\njobs: {}\n")
    result = run_cli("hook", "install", "--ci", "github", expect=1)
    assert "was not written by git memzoi; leaving it alone" in result.stderr
    assert (repo.path / WORKFLOW).read_text() == "name: ours\non: push\njobs: {}\n"


def test_ci_options_are_checked(repo: Repo, tmp_path: Path) -> None:
    run_cli("hook", "install", "--ci", "gitlab", expect=2)
    run_cli("hook", "install", "--pip-spec", "x", expect=2)
    run_cli("hook", "install", "--ci", "github", "--pre-commit", expect=2)
    bare = tmp_path / "server.git"
    git("init", "--bare", "-q", str(bare), cwd=tmp_path)
    run_cli("hook", "install", "--ci", "github", cwd=bare, expect=2)
    assert not (repo.path / WORKFLOW).exists()
