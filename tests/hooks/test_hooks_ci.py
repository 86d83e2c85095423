"""`hook install --ci github|gitlab`: a check valid against the host's schema, from a source that exists.

The workflow uses this repository's action (action.yml) pinned by commit, or pip-installs what
the user names; never a release nobody published. The action's own steps are run here as the
runner would run them: git memzoi installed from a copy of this checkout, then `hook check` on
a pull request's range of a real repository.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml

from git_memzoi.layout import CITE_TREES, HOOK_TREES
from support import ROOT, Repo, git, make_repo, run_cli
from support.hooks import WORKFLOW, checkout_copy, record, record_path, schema_check

SHA = "0123456789abcdef0123456789abcdef01234567"
ACTION = ("--action-repo", "acme/git-memzoi", "--action-ref", SHA)
GITLAB = ".gitlab/memzoi.gitlab-ci.yml"
#: What a CI job keeps between runs, each named by the tree it describes: tree summaries, citation indexes.
KEPT_BY_TREE = (HOOK_TREES, CITE_TREES)


def test_the_workflow_uses_the_action_pinned_by_commit_and_is_valid(repo: Repo) -> None:
    result = run_cli("hook", "install", "--ci", "github", *ACTION)
    path = repo.path / WORKFLOW
    assert f"github workflow created: {path}" in result.stderr
    assert f"it uses git memzoi from acme/git-memzoi at commit {SHA} (--action-ref)" in result.stderr
    checked = schema_check(path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    flow = yaml.safe_load(path.read_text())
    steps = flow["jobs"]["memory"]["steps"]
    assert steps[0]["uses"].startswith("actions/checkout@") and steps[0]["with"]["fetch-depth"] == 0
    assert steps[1]["uses"] == f"acme/git-memzoi@{SHA}"
    assert "pip install" not in path.read_text()
    assert list(flow[True]) == ["pull_request"]  # YAML 1.1 reads the key `on` as true
    broken = repo.write("broken.yml", path.read_text().replace("    runs-on: ubuntu-latest\n", ""))
    assert schema_check(broken).returncode != 0  # the schema check can fail


def test_the_action_is_valid_against_githubs_action_schema(tmp_path: Path) -> None:
    checked = schema_check(ROOT / "action.yml", "vendor.github-actions")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    uses = [s["uses"] for s in action["runs"]["steps"] if "uses" in s]
    assert all(re.fullmatch(r"[\w-]+/[\w-]+@[0-9a-f]{40}", u) for u in uses), uses
    broken = tmp_path / "action.yml"
    broken.write_text((ROOT / "action.yml").read_text().replace("      shell: bash\n", "", 1))
    assert schema_check(broken, "vendor.github-actions").returncode != 0  # a composite run step needs its shell


def test_an_install_spec_writes_the_steps_out(repo: Repo) -> None:
    spec = "git+https://example.com/git-memzoi.git@" + SHA
    result = run_cli("hook", "install", "--ci", "github", "--install-spec", spec)
    assert f"it installs {spec} with pip (--install-spec)" in result.stderr
    path = repo.path / WORKFLOW
    assert schema_check(path).returncode == 0
    runs = [s.get("run", "") for s in yaml.safe_load(path.read_text())["jobs"]["memory"]["steps"]]
    assert f"python -m pip install {spec}" in runs
    assert 'git memzoi hook check --annotate github "$BASE_SHA..HEAD"' in runs
    assert "git memzoi validate --rev HEAD" in runs
    [cache] = [s for s in yaml.safe_load(path.read_text())["jobs"]["memory"]["steps"] if "cache@" in s.get("uses", "")]
    assert cache["with"]["path"].split() == [f"~/.memzoi/projects/*/{name}" for name in KEPT_BY_TREE]
    assert cache["with"]["key"].startswith(cache["with"]["restore-keys"])


def test_no_version_nobody_published_is_ever_installed(repo: Repo) -> None:
    result = run_cli("hook", "install", "--ci", "github", expect=2)
    assert "--action-ref SHA with --action-repo OWNER/REPO" in result.stderr and "--install-spec" in result.stderr
    run_cli("hook", "install", "--ci", "gitlab", expect=2)
    assert not (repo.path / WORKFLOW).exists() and not (repo.path / GITLAB).exists()
    for source in (ACTION, ("--install-spec", ".")):
        run_cli("hook", "install", "--ci", "github", *source)
        run_cli("hook", "install", "--ci", "gitlab", *source)
        for written in (WORKFLOW, GITLAB):
            assert "git-memzoi==" not in (repo.path / written).read_text()


def test_the_gitlab_template_pins_the_git_url_and_is_valid(repo: Repo) -> None:
    result = run_cli("hook", "install", "--ci", "gitlab", *ACTION)
    path = repo.path / GITLAB
    assert f"gitlab workflow created: {path}" in result.stderr
    assert f"include: [{{local: {GITLAB}}}]" in result.stderr
    checked = schema_check(path, "vendor.gitlab-ci")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    job = yaml.safe_load(path.read_text())["memzoi"]
    assert job["script"][0] == f"python -m pip install git+https://github.com/acme/git-memzoi.git@{SHA}"
    assert 'git memzoi hook check "$CI_MERGE_REQUEST_DIFF_BASE_SHA..HEAD"' in job["script"]
    assert job["variables"]["GIT_DEPTH"] == "0"
    assert job["cache"]["paths"] == [f".memzoi-ci-home/projects/*/{name}" for name in KEPT_BY_TREE]
    assert job["variables"]["MEMZOI_HOME"] == "$CI_PROJECT_DIR/.memzoi-ci-home"
    broken = repo.write("broken.yml", path.read_text().replace("  script:\n", "  scripts:\n"))
    assert schema_check(broken, "vendor.gitlab-ci").returncode != 0  # the schema check can fail


def test_install_again_is_idempotent_and_updates_its_own_file(repo: Repo) -> None:
    run_cli("hook", "install", "--ci", "github", *ACTION)
    before = (repo.path / WORKFLOW).read_bytes()
    again = run_cli("hook", "install", "--ci", "github", *ACTION, "--json").json()
    assert again["workflows"][0]["action"] == "unchanged" and (repo.path / WORKFLOW).read_bytes() == before
    assert again["workflows"][0]["source"] == {"repo": "acme/git-memzoi", "ref": SHA, "install_spec": None}
    spec = "git+https://example.com/git-memzoi.git@v0.1.0"
    updated = run_cli("hook", "install", "--ci", "github", "--install-spec", spec, "--json").json()
    assert updated["workflows"][0]["action"] == "updated"
    assert f"python -m pip install {spec}" in (repo.path / WORKFLOW).read_text()
    assert schema_check(repo.path / WORKFLOW).returncode == 0


def test_a_workflow_someone_else_wrote_is_left_alone(repo: Repo) -> None:
    repo.write(WORKFLOW, "name: ours\non: push\njobs: {}\n")
    result = run_cli("hook", "install", "--ci", "github", *ACTION, expect=1)
    assert "was not written by git memzoi; leaving it alone" in result.stderr
    assert (repo.path / WORKFLOW).read_text() == "name: ours\non: push\njobs: {}\n"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--ci", "bitbucket"), "'bitbucket' is not one of"),
        (("--install-spec", "x"), "give --ci too"),
        (("--action-ref", SHA), "give --ci too"),
        (("--ci", "github", "--pre-commit", "--install-spec", "x"), "run install once for each"),
        (("--ci", "github", "--action-ref", SHA[:12], "--action-repo", "a/b"), "--action-ref must be a full 40-hex"),
        (("--ci", "github", "--action-ref", "v1.2.3" + SHA[6:], "--action-repo", "a/b"), "--action-ref must be"),
        (("--ci", "github", "--action-ref", SHA), "--action-ref needs --action-repo OWNER/REPO"),
        (("--ci", "github", *ACTION[2:], "--action-repo", "a/b/c"), "--action-repo must be a GitHub OWNER/REPO"),
        (("--ci", "github", *ACTION[2:], "--action-repo", "-x/y"), "--action-repo must be a GitHub OWNER/REPO"),
        (("--ci", "gitlab", *ACTION, "--install-spec", "x"), "name two sources: give one"),
    ],
)
def test_ci_options_are_checked(repo: Repo, args: tuple[str, ...], needle: str) -> None:
    result = run_cli("hook", "install", *args, expect=2)
    assert needle in result.stderr
    assert not (repo.path / WORKFLOW).exists() and not (repo.path / GITLAB).exists()


def test_a_bare_repository_gets_no_workflow(tmp_path: Path) -> None:
    bare = tmp_path / "server.git"
    git("init", "--bare", "-q", str(bare), cwd=tmp_path)
    run_cli("hook", "install", "--ci", "github", *ACTION, cwd=bare, expect=2)


def test_annotate_and_json_are_one_or_the_other(repo: Repo) -> None:
    result = run_cli("hook", "check", "--annotate", "github", "--json", "HEAD..HEAD", expect=2)
    assert "--annotate prints workflow commands on stdout" in result.stderr


# The action's steps, as the runner runs them ------------------------------------------------------


def _action_steps() -> dict[str, dict[str, object]]:
    steps = yaml.safe_load((ROOT / "action.yml").read_text())["runs"]["steps"]
    return {s["name"]: s for s in steps if "run" in s or "uses" in s}


def _cached_folders(home: Path) -> list[Path]:
    """The folders the action's actions/cache step saves and restores, its `path` lines globbed under `home` (~)."""
    [cache] = [s for s in _action_steps().values() if str(s.get("uses", "")).startswith("actions/cache@")]
    lines = str(dict(cache["with"])["path"]).split()  # type: ignore[call-overload]
    assert lines and all(line.startswith("~/") for line in lines), lines
    return sorted(folder for line in lines for folder in home.glob(line[2:]))


def _kept(home: Path) -> dict[str, tuple[int, int]]:
    """Each file the cache holds, by its path under `home`: (inode, size)."""
    return {str(f.relative_to(home)): (f.stat().st_ino, f.stat().st_size)
            for folder in _cached_folders(home) for f in folder.iterdir()}  # fmt: skip


def _restore(saved: Path, home: Path) -> None:
    """actions/cache's restore: the saved folders put back under a runner's empty home."""
    import shutil

    shutil.copytree(saved, home, dirs_exist_ok=True)


def _save(home: Path, saved: Path) -> None:
    """actions/cache's save: the folders its `path` names, copied under `saved`."""
    import shutil

    for folder in _cached_folders(home):
        shutil.copytree(folder, saved / folder.relative_to(home))


def _run_step(
    step: dict[str, object], values: dict[str, str], cwd: Path, path: str, **extra: str
) -> subprocess.CompletedProcess[str]:
    """Run one composite step's `run` with bash, its `env` expanded from `values` (the ${{ }} the runner fills)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV"))} | extra
    for key, value in dict(step.get("env") or {}).items():  # type: ignore[call-overload]
        env[key] = values[value]
    env["PATH"] = path
    assert step["shell"] == "bash"
    return subprocess.run(
        ["bash", "-e", "-c", str(step["run"])], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.slow
def test_the_actions_steps_install_from_its_checkout_and_check_a_pull_request(tmp_path: Path) -> None:
    action = tmp_path / "action"
    checkout_copy(action)
    assert (action / "action.yml").is_file()
    venv = tmp_path / "runner-python"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # the runner's Python: git memzoi's dependencies are importable (the test's own), git memzoi is not
    purelib = subprocess.run(
        [str(venv / "bin/python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(purelib, "runner-deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    path = f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"
    steps = _action_steps()

    project = make_repo(tmp_path / "project")
    project.write(record_path("use-postgres"), record("use-postgres"))
    base = project.commit("a record")
    git("checkout", "-q", "-b", "feature", cwd=project.path)
    project.write("src/app.py", "print(1)\n")
    project.commit("code")
    values = {"${{ github.action_path }}": str(action), "${{ inputs.base }}": base, "${{ inputs.head }}": "HEAD"}

    # its dependencies are there already: pip fetches only the build backend (setuptools) from the index
    install = steps["Install git memzoi from the action's checkout"]
    installed = _run_step(install, values, project.path, path, PIP_NO_DEPS="1")
    assert installed.returncode == 0, installed.stdout + installed.stderr
    where = subprocess.run(
        [str(venv / "bin/python"), "-c", "import git_memzoi; print(git_memzoi.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert where.startswith(str(venv)), where  # installed from the copy, into the runner's Python

    check = steps["Check the commits the range adds, as the server hook would"]
    clean = _run_step(check, values, project.path, path)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "::error" not in clean.stdout
    assert _run_step(steps["Validate memory at the head"], values, project.path, path).returncode == 0
    _second_run_reuses_what_the_first_kept(tmp_path, steps, path)

    project.write(record_path("use-postgres"), record("use-postgres", body="Edited in place."))
    project.commit("edit a record in place")
    refused = _run_step(check, values, project.path, path)
    assert refused.returncode == 1, refused.stdout + refused.stderr
    rel = record_path("use-postgres")
    assert re.search(
        rf"^::error file={re.escape(rel)},line=\d+,title=git memzoi record-edited::record 'use-postgres' is edited",
        refused.stdout,
        re.MULTILINE,
    ), refused.stdout
    assert f"{rel}:" in refused.stderr and "record-edited" in refused.stderr


def _pull_request(tmp_path: Path) -> tuple[Path, str]:
    """A bare origin with a record citing `src/old.py`, and a branch deleting it and adding a record: (origin, base)."""
    project = make_repo(tmp_path / "author")
    project.write("src/old.py", "def old_step():\n    return 1\n")
    project.write(record_path("use-postgres"), record("use-postgres", body="Call `old_step` in `src/old.py`."))
    base = project.commit("code and a record citing it")
    git("checkout", "-q", "-b", "feature", cwd=project.path)
    git("rm", "-q", "src/old.py", cwd=project.path)
    project.write("src/new.py", "def new_step():\n    return 2\n")
    project.write(record_path("use-new-step"), record("use-new-step", body="Call `new_step` in `src/new.py`."))
    project.commit("replace old.py, a record of its successor")
    origin = tmp_path / "origin.git"
    git("clone", "-q", "--bare", str(project.path), str(origin), cwd=tmp_path)
    return origin, base


def _ci_run(origin: Path, base: str, home: Path, check: dict[str, object], path: str) -> str:
    """One job: a fresh clone of the pull request (always the same workspace path) and the action's check step."""
    import shutil

    work = origin.parent / "workspace"
    shutil.rmtree(work, ignore_errors=True)
    git("clone", "-q", "--branch", "feature", str(origin), str(work), cwd=origin.parent)
    values = {"${{ inputs.base }}": base, "${{ inputs.head }}": "HEAD"}
    done = _run_step(check, values, work, path, HOME=str(home), MEMZOI_HOME=str(home / ".memzoi"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "use-postgres" in done.stderr  # the record the deletion invalidates is reported
    return done.stdout + done.stderr


def _second_run_reuses_what_the_first_kept(tmp_path: Path, steps: dict[str, dict[str, object]], path: str) -> None:
    """The action's cache holds both kept stores: a job on a new runner reads both; a damaged one is made again."""
    origin, base = _pull_request(tmp_path / "ci")
    check = steps["Check the commits the range adds, as the server hook would"]
    first_home, saved = tmp_path / "ci/runner-1", tmp_path / "ci/cache"
    first = _ci_run(origin, base, first_home, check, path)
    assert {f.name for f in _cached_folders(first_home)} == {"hook-trees", "cite-trees"}
    assert any(name.endswith(".cite") for name in _kept(first_home))
    _save(first_home, saved)

    second_home = tmp_path / "ci/runner-2"
    _restore(saved, second_home)
    restored = _kept(second_home)
    assert _ci_run(origin, base, second_home, check, path) == first
    after = _kept(second_home)
    for name, kept in restored.items():  # every restored summary and index read where it was: none made again
        if name.endswith(".db"):
            assert after[name] == kept, name
    assert not {n for n in set(after) - set(restored) if n.endswith((".cite", ".tree"))}, set(after) - set(restored)

    third_home = tmp_path / "ci/runner-3"
    _restore(saved, third_home)
    for name in _kept(third_home):
        if name.endswith(".db"):  # a byte flipped in every restored database: checked, refused, made again
            damaged = third_home / name
            data = bytearray(damaged.read_bytes())
            data[-100] ^= 0xFF
            damaged.write_bytes(bytes(data))
    damaged_kept = _kept(third_home)
    assert _ci_run(origin, base, third_home, check, path) == first
    remade = _kept(third_home)
    cite_dbs = [n for n in damaged_kept if n.endswith(".db") and "/cite-trees/" in n]
    assert cite_dbs and all(remade[n][0] != damaged_kept[n][0] for n in cite_dbs)  # written anew


def test_annotate_marks_the_line_of_each_problem(repo: Repo) -> None:
    repo.write(record_path("use-postgres"), record("use-postgres"))
    base = repo.commit("a record")
    repo.write(record_path("use-postgres"), record("use-postgres", body="Edited in place."))
    repo.commit("edit it in place")
    result = run_cli("hook", "check", "--annotate", "github", f"{base}..HEAD", expect=1)
    rel = record_path("use-postgres")
    [command] = [line for line in result.stdout.splitlines() if line.startswith("::")]
    assert re.fullmatch(
        rf"::error file={re.escape(rel)},line=\d+,title=git memzoi record-edited::record 'use-postgres' is edited .*",
        command,
    ), command
    assert "record-edited" in result.stderr  # the report itself, as without --annotate
    assert run_cli("hook", "check", "--annotate", "github", f"{base}..{base}").stdout == ""


def test_an_annotation_cannot_be_cut_short_or_add_a_command() -> None:
    from git_memzoi.cli.gate import github_annotation

    line = github_annotation(".memzoi/records/a,b:c%.md", 3, "secret", "50% done\n::warning::forged\r\x1b[2J")
    assert line == (
        "::error file=.memzoi/records/a%2Cb%3Ac%25.md,line=3,title=git memzoi secret::"
        "50%25 done\\n::warning::forged\\r\\x1b[2J\n"
    )
    assert github_annotation("refs/heads/main", 1, "default-branch-deleted", "m").startswith("::error title=")
