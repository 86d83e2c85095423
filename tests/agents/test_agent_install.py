"""`git memzoi agent install claude|codex|gemini`: merged into real existing config files, idempotent, refusing."""

from __future__ import annotations

import difflib
import json
import os
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from support import Repo, run_cli
from support.agents import add_migrations_risk, event

OURS_SERVER = {"type": "stdio", "command": "git", "args": ["memzoi", "mcp", "serve"]}
OURS_HOOK = {"type": "command", "command": "git memzoi agent hook claude"}


def snapshot(*paths: Path) -> dict[Path, tuple[bytes, int] | None]:
    return {p: (p.read_bytes(), p.stat().st_mtime_ns) if p.exists() else None for p in paths}


def test_claude_fresh_repository(repo: Repo) -> None:
    result = run_cli("agent", "install", "claude")
    assert ".mcp.json: created" in result.stderr and ".claude/settings.json: created" in result.stderr
    mcp = json.loads((repo.path / ".mcp.json").read_text())
    assert mcp == {"mcpServers": {"memzoi": OURS_SERVER}}
    settings = json.loads((repo.path / ".claude/settings.json").read_text())
    assert settings == {
        "hooks": {
            "SessionStart": [{"hooks": [OURS_HOOK]}],
            "UserPromptSubmit": [{"hooks": [OURS_HOOK]}],
            "PreToolUse": [{"matcher": "Edit|Write|MultiEdit|NotebookEdit|Bash", "hooks": [OURS_HOOK]}],
            "PreCompact": [{"hooks": [OURS_HOOK]}],
            "Stop": [{"hooks": [OURS_HOOK]}],
            "SessionEnd": [{"hooks": [OURS_HOOK]}],
        }
    }
    files = (repo.path / ".mcp.json", repo.path / ".claude/settings.json")
    before = snapshot(*files)
    again = run_cli("agent", "install", "claude")
    assert again.stderr.count("already set up, unchanged") == 2
    assert snapshot(*files) == before, "a second run changes no byte (and does not even rewrite)"


def test_claude_runs_from_a_subfolder_and_writes_at_the_root(repo: Repo) -> None:
    sub = repo.path / "src" / "deep"
    sub.mkdir(parents=True)
    run_cli("agent", "install", "claude", cwd=sub)
    assert (repo.path / ".mcp.json").is_file() and not (sub / ".mcp.json").exists()


def test_claude_merges_into_existing_files(repo: Repo) -> None:
    repo.write(
        ".mcp.json",
        json.dumps(
            {"mcpServers": {"db": {"command": "dbmcp", "args": ["--ro"], "env": {"DB": "x"}}}, "extra": [1]}, indent=4
        ),
    )
    other_hook = {"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint-commands.sh", "timeout": 5}]}
    repo.write(
        ".claude/settings.json",
        json.dumps(
            {
                "permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Read(./.env)"]},
                "env": {"FOO": "1"},
                "hooks": {
                    "PreToolUse": [other_hook],
                    "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "prettier"}]}],
                },
                "model": "opus",
            }
        ),
    )
    run_cli("agent", "install", "claude")
    mcp = json.loads((repo.path / ".mcp.json").read_text())
    assert mcp == {
        "mcpServers": {"db": {"command": "dbmcp", "args": ["--ro"], "env": {"DB": "x"}}, "memzoi": OURS_SERVER},
        "extra": [1],
    }
    settings = json.loads((repo.path / ".claude/settings.json").read_text())
    assert settings["permissions"] == {"allow": ["Bash(npm test:*)"], "deny": ["Read(./.env)"]}
    assert settings["env"] == {"FOO": "1"} and settings["model"] == "opus"
    assert settings["hooks"]["PostToolUse"] == [
        {"matcher": "Edit", "hooks": [{"type": "command", "command": "prettier"}]}
    ]
    assert settings["hooks"]["PreToolUse"][0] == other_hook
    assert settings["hooks"]["PreToolUse"][1]["hooks"] == [OURS_HOOK]
    assert settings["hooks"]["SessionStart"] == [{"hooks": [OURS_HOOK]}]
    assert settings["hooks"]["UserPromptSubmit"] == [{"hooks": [OURS_HOOK]}]
    before = snapshot(repo.path / ".mcp.json", repo.path / ".claude/settings.json")
    run_cli("agent", "install", "claude")
    assert snapshot(repo.path / ".mcp.json", repo.path / ".claude/settings.json") == before


def test_claude_keeps_our_hook_where_the_user_moved_it(repo: Repo) -> None:
    # The user folded our hook into their own matcher group: it is still there, so nothing is added.
    text = json.dumps(
        {
            "hooks": {
                "PreToolUse": [{"matcher": "Edit|Write", "hooks": [OURS_HOOK]}],
                "SessionStart": [{"matcher": "startup", "hooks": [OURS_HOOK]}],
                "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "lint-prompt"}, OURS_HOOK]}],
                "PreCompact": [{"matcher": "auto", "hooks": [OURS_HOOK]}],
                "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}, OURS_HOOK]}],
                "SessionEnd": [{"hooks": [OURS_HOOK, {"type": "command", "command": "notify-send bye"}]}],
            }
        }
    )
    repo.write(".claude/settings.json", text)
    run_cli("agent", "install", "claude")
    assert (repo.path / ".claude/settings.json").read_text() == text


def test_claude_refuses_a_memzoi_server_it_did_not_write(repo: Repo) -> None:
    theirs = json.dumps({"mcpServers": {"memzoi": {"command": "/opt/other-memzoi", "args": []}}})
    repo.write(".mcp.json", theirs)
    result = run_cli("agent", "install", "claude", expect=1)
    assert "already has a server named 'memzoi' that agent install did not write" in result.stderr
    assert ".mcp.json" in result.stderr
    assert (repo.path / ".mcp.json").read_text() == theirs
    assert not (repo.path / ".claude").exists(), "nothing is written when any file refuses"


@pytest.mark.parametrize(
    "text, message",
    [
        ('{"mcpServers": {', ".mcp.json:1: not valid JSON"),
        ('["not", "an", "object"]', ".mcp.json: not a JSON object"),
        ('{"mcpServers": []}', ".mcp.json: mcpServers is not a JSON object"),
    ],
)
def test_claude_bad_mcp_json_is_named_and_untouched(repo: Repo, text: str, message: str) -> None:
    repo.write(".mcp.json", text)
    result = run_cli("agent", "install", "claude", expect=2)
    assert message in result.stderr and result.stderr.count("\n") <= 2
    assert (repo.path / ".mcp.json").read_text() == text and not (repo.path / ".claude").exists()


def test_claude_bad_settings_hooks_are_named(repo: Repo) -> None:
    repo.write(".claude/settings.json", '{"hooks": {"PreToolUse": {"matcher": "Edit"}}}')
    result = run_cli("agent", "install", "claude", expect=2)
    assert "settings.json: hooks.PreToolUse is not a list" in result.stderr
    assert not (repo.path / ".mcp.json").exists()


def test_claude_dry_run_prints_a_diff_and_writes_nothing(repo: Repo) -> None:
    repo.write(".mcp.json", '{"mcpServers": {"db": {"command": "dbmcp"}}}\n')
    result = run_cli("agent", "install", "claude", "--dry-run")
    assert result.stdout.startswith("--- a/.mcp.json\n+++ b/.mcp.json\n")
    assert "--- /dev/null\n+++ b/.claude/settings.json\n" in result.stdout
    # a one-line file gets its entry on that line; a new file is written whole
    assert (
        '+{"mcpServers": {"db": {"command": "dbmcp"}, "memzoi": {"type": "stdio", "command": "git", '
        '"args": ["memzoi", "mcp", "serve"]}}}\n'
        in result.stdout
        and '+            "command": "git memzoi agent hook claude"' in result.stdout
    )
    assert (repo.path / ".mcp.json").read_text() == '{"mcpServers": {"db": {"command": "dbmcp"}}}\n'
    assert not (repo.path / ".claude").exists()
    data = run_cli("agent", "install", "claude", "--dry-run", "--json").json()
    assert [f["changed"] for f in data["files"]] == [True, True] and data["dry_run"] is True
    run_cli("agent", "install", "claude")
    assert run_cli("agent", "install", "claude", "--dry-run").stdout == ""


def test_claude_installed_hook_runs_as_written(repo: Repo) -> None:
    add_migrations_risk(repo, commit=True)
    run_cli("agent", "install", "claude")
    settings = json.loads((repo.path / ".claude/settings.json").read_text())
    group = settings["hooks"]["PreToolUse"][0]
    assert re.fullmatch(group["matcher"], "Edit") and re.fullmatch(group["matcher"], "Bash")
    assert not re.fullmatch(group["matcher"], "Read")
    command = group["hooks"][0]["command"]
    done = subprocess.run(
        command, shell=True, input=event("pretooluse-edit", repo.path), capture_output=True, text=True, cwd=repo.path
    )
    assert done.returncode == 0 and json.loads(done.stdout)["hookSpecificOutput"]["permissionDecision"] == "ask"


CODEX_CONFIG = """\
# my Codex settings
model = "o3"   # the default model
approval_policy = "on-request"

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"]   # keep this comment

[profiles.fast]
model = "o4-mini"
"""


def test_codex_appends_the_table_keeping_comments(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    codex = tmp_path / "codex-home"
    codex.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(codex))
    config = codex / "config.toml"
    config.write_text(CODEX_CONFIG)
    config.chmod(0o600)
    run_cli("agent", "install", "codex", "--global")
    text = config.read_text()
    assert text.startswith(CODEX_CONFIG), "everything that was there stays byte for byte"
    data = tomllib.loads(text)
    assert data["mcp_servers"]["memzoi"] == {
        "command": "git",
        "args": ["memzoi", "mcp", "serve"],
        "env": {"MEMZOI_HOME": str(Path(os.environ["MEMZOI_HOME"]).resolve())},
    }
    assert data["mcp_servers"]["docs"] == {"command": "npx", "args": ["-y", "docs-mcp"]}
    assert data["profiles"] == {"fast": {"model": "o4-mini"}}
    assert config.stat().st_mode & 0o777 == 0o600
    before = snapshot(config)
    assert "already set up, unchanged" in run_cli("agent", "install", "codex", "--global").stderr
    assert snapshot(config) == before


def test_codex_default_home_and_no_file_yet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.delenv("MEMZOI_HOME", raising=False)
    outside = tmp_path / "anywhere"
    outside.mkdir()
    run_cli("agent", "install", "codex", "--global", cwd=outside)  # the user's config: no repository needed
    config = Path(os.environ["HOME"]) / ".codex" / "config.toml"
    assert tomllib.loads(config.read_text()) == {
        "mcp_servers": {"memzoi": {"command": "git", "args": ["memzoi", "mcp", "serve"]}}
    }


def test_codex_dry_run_and_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    config = tmp_path / "config.toml"
    config.write_text(CODEX_CONFIG)
    result = run_cli("agent", "install", "codex", "--global", "--dry-run", cwd=tmp_path)
    assert result.stdout.startswith(f"--- {config}\n+++ {config}\n")
    assert "+[mcp_servers.memzoi]\n" in result.stdout
    assert config.read_text() == CODEX_CONFIG
    data = run_cli("agent", "install", "codex", "--global", "--json", cwd=tmp_path).json()
    assert data["files"][0]["changed"] is True and data["files"][0]["path"] == str(config)
    assert "[mcp_servers.memzoi]" in config.read_text()


@pytest.mark.parametrize(
    "text, message, code",
    [
        ('[mcp_servers.memzoi]\ncommand = "memzoi-server"\n', "[mcp_servers.memzoi] is already there", 1),
        ('mcp_servers = { docs = { command = "npx" } }\n', "cannot add [mcp_servers.memzoi]", 1),
        ("[mcp_servers\n", "not valid TOML", 2),
        ('mcp_servers = "none"\n', "mcp_servers is not a table", 2),
    ],
)
def test_codex_refuses_and_leaves_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, message: str, code: int
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    config = tmp_path / "config.toml"
    config.write_text(text)
    result = run_cli("agent", "install", "codex", "--global", expect=code, cwd=tmp_path)
    assert message in result.stderr and str(config) in result.stderr
    assert config.read_text() == text


def test_codex_file_without_final_newline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    config = tmp_path / "config.toml"
    config.write_text('model = "o3" # no newline')
    run_cli("agent", "install", "codex", "--global", cwd=tmp_path)
    text = config.read_text()
    assert text.startswith('model = "o3" # no newline\n\n')
    assert tomllib.loads(text)["model"] == "o3"


def test_install_needs_a_known_client(repo: Repo) -> None:
    assert "Invalid value for '{claude|codex|gemini|copilot}'" in run_cli("agent", "install", "cursor", expect=2).stderr


def test_codex_gets_the_projects_own_config_by_default(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    codex = tmp_path / "codex-home"
    codex.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(codex))
    result = run_cli("agent", "install", "codex", cwd=repo.path)
    project = repo.path / ".codex" / "config.toml"
    assert tomllib.loads(project.read_text()) == {
        "mcp_servers": {"memzoi": {"command": "git", "args": ["memzoi", "mcp", "serve"]}}
    }, "portable: no MEMZOI_HOME of this machine in a file the project may commit"
    assert not (codex / "config.toml").exists(), "the user's own Codex config is left alone"
    assert "trust" in result.stderr
    assert "already set up, unchanged" in run_cli("agent", "install", "codex", cwd=repo.path).stderr
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    refused = run_cli("agent", "install", "codex", cwd=outside, expect=2)
    assert "inside a work tree" in refused.stderr and "--global" in refused.stderr
    assert "--global is for codex" in run_cli("agent", "install", "claude", "--global", expect=2, cwd=repo.path).stderr


CODEX_HOOK = {"type": "command", "command": "git memzoi agent hook codex"}
GEMINI_HOOK = {"name": "memzoi", "type": "command", "command": "git memzoi agent hook gemini"}


def test_codex_hooks_beside_the_config_merged_into_the_users_own(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    mine = {"type": "command", "command": "./scripts/audit.sh", "timeout": 30}
    repo.write(".codex/hooks.json", json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [mine]}]}}))
    result = run_cli("agent", "install", "codex", cwd=repo.path)
    hooks_json = repo.path / ".codex" / "hooks.json"
    assert ".codex/hooks.json: updated" in result.stderr and str(hooks_json) not in result.stderr
    assert json.loads(hooks_json.read_text()) == {
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [mine]},
                {"matcher": "Bash|apply_patch", "hooks": [CODEX_HOOK]},
            ],
            "SessionStart": [{"hooks": [CODEX_HOOK]}],
            "UserPromptSubmit": [{"hooks": [CODEX_HOOK]}],
            "Stop": [{"hooks": [CODEX_HOOK]}],
        }
    }
    before = snapshot(hooks_json, repo.path / ".codex" / "config.toml")
    assert run_cli("agent", "install", "codex", cwd=repo.path).stderr.count("already set up, unchanged") == 2
    assert snapshot(hooks_json, repo.path / ".codex" / "config.toml") == before
    # --global: the same hooks in $CODEX_HOME/hooks.json, next to its config.toml
    run_cli("agent", "install", "codex", "--global", cwd=repo.path)
    assert json.loads((tmp_path / "codex-home" / "hooks.json").read_text())["hooks"]["SessionStart"] == [
        {"hooks": [CODEX_HOOK]}
    ]


def test_codex_hooks_json_that_is_not_ours_to_fix(repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODEX_HOME", str(tmp_path))
    repo.write(".codex/hooks.json", '{"hooks": {"SessionStart": {"hooks": []}}}')
    result = run_cli("agent", "install", "codex", cwd=repo.path, expect=2)
    assert "hooks.SessionStart is not a list" in result.stderr and ".codex/hooks.json" in result.stderr
    assert not (repo.path / ".codex" / "config.toml").exists(), "nothing is written when one file is refused"


def test_gemini_settings_get_the_server_and_the_hooks(repo: Repo) -> None:
    repo.write(
        ".gemini/settings.json",
        json.dumps({"model": {"name": "gemini-2.5-pro"}, "mcpServers": {"docs": {"command": "npx", "args": ["docs"]}}}),
    )
    result = run_cli("agent", "install", "gemini", cwd=repo.path)
    assert ".gemini/settings.json: updated" in result.stderr
    settings = json.loads((repo.path / ".gemini/settings.json").read_text())
    tools = "write_file|replace|run_shell_command"
    assert settings == {
        "model": {"name": "gemini-2.5-pro"},
        "mcpServers": {
            "docs": {"command": "npx", "args": ["docs"]},
            "memzoi": {"command": "git", "args": ["memzoi", "mcp", "serve"]},
        },
        "hooks": {
            "SessionStart": [{"hooks": [GEMINI_HOOK]}],
            "BeforeAgent": [{"hooks": [GEMINI_HOOK]}],
            "BeforeTool": [{"matcher": tools, "hooks": [GEMINI_HOOK]}],
            "AfterTool": [{"matcher": tools, "hooks": [GEMINI_HOOK]}],
            "AfterAgent": [{"hooks": [GEMINI_HOOK]}],
            "PreCompress": [{"hooks": [GEMINI_HOOK]}],
        },
    }
    before = snapshot(repo.path / ".gemini/settings.json")
    assert "already set up, unchanged" in run_cli("agent", "install", "gemini", cwd=repo.path).stderr
    assert snapshot(repo.path / ".gemini/settings.json") == before


def test_gemini_dry_run_refusal_and_symlink(repo: Repo, tmp_path: Path) -> None:
    dry = run_cli("agent", "install", "gemini", "--dry-run", cwd=repo.path)
    assert dry.stdout.startswith("--- /dev/null\n+++ b/.gemini/settings.json\n") and '"BeforeAgent"' in dry.stdout
    assert not (repo.path / ".gemini").exists()
    repo.write(".gemini/settings.json", json.dumps({"mcpServers": {"memzoi": {"command": "memzoi-server"}}}))
    refused = run_cli("agent", "install", "gemini", cwd=repo.path, expect=1)
    assert "mcpServers already has a server named 'memzoi'" in refused.stderr
    (repo.path / ".gemini/settings.json").unlink()
    (repo.path / ".gemini").rmdir()
    elsewhere = tmp_path / "dotfiles"
    elsewhere.mkdir()
    (repo.path / ".gemini").symlink_to(elsewhere)
    linked = run_cli("agent", "install", "gemini", cwd=repo.path, expect=1)
    assert ".gemini is a symlink" in linked.stderr and not list(elsewhere.iterdir())
    assert "--global is for codex" in run_cli("agent", "install", "gemini", "--global", expect=2).stderr


# The user's own bytes ------------------------------------------------------------------------------

COMPACT_MCP = """{
    "mcpServers": {
        "db": {"command": "dbmcp", "args": ["--ro", "--port", "5432"], "env": {"DB": "x"}},
        "docs": { "command": "npx", "args": [ "-y", "docs-mcp" ] }
    },
    "extra": [1, 2, 3]
}
"""
COMPACT_SETTINGS = """{
  "permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Read(./.env)"]},
  "hooks": {
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh", "timeout": 5}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]
  },
  "model": "opus"
}"""
#: A Copilot CLI hooks file of the user's own, compact, in the documented format (docs.github.com, "GitHub Copilot
#: CLI hooks reference": version 1, command entries with bash/powershell/timeoutSec).
COMPACT_COPILOT = """{"version": 1, "hooks": {"preToolUse": [{"type": "command", "bash": "./audit", "timeoutSec": 5}]}}
"""
COMPACT_GEMINI = """{
\t"theme": "GitHub",
\t"mcpServers": {"search": {"command": "search-mcp", "args": ["--fast"]}},
\t"hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "audit"}]}]}
}
"""


def _only_added(before: str, after: str) -> None:
    """Every byte of `before` is in `after`, in order, and each piece inserted is one of ours (names memzoi).

    Re-spreading the user's one-line `"args": [...]` would insert only whitespace: that fails here.
    """
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    changed = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    assert changed and all(op[0] == "insert" for op in changed), changed
    for _, _, _, j1, j2 in changed:
        assert "memzoi" in after[j1:j2], f"inserted {after[j1:j2]!r}, not an entry of ours"


@pytest.mark.parametrize(
    ("client", "files"),
    [
        ("claude", {".mcp.json": COMPACT_MCP, ".claude/settings.json": COMPACT_SETTINGS}),
        ("gemini", {".gemini/settings.json": COMPACT_GEMINI}),
        ("codex", {".codex/hooks.json": COMPACT_SETTINGS.replace("./lint.sh", "./codex-lint.sh")}),
        ("copilot", {".mcp.json": COMPACT_MCP, ".github/hooks/memzoi.json": COMPACT_COPILOT}),
    ],
)
def test_install_keeps_every_byte_of_the_users_entries(
    repo: Repo, tmp_path: Path, client: str, files: dict[str, str]
) -> None:
    for rel, text in files.items():
        repo.write(rel, text)
    env = {k: v for k, v in os.environ.items()} | {"CODEX_HOME": str(tmp_path / "codex-home")}
    done = subprocess.run(
        ["git", "memzoi", "agent", "install", client], cwd=repo.path, capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    for rel, text in files.items():
        after = (repo.path / rel).read_text()
        _only_added(text, after)
        assert f"{rel}: updated" in done.stderr
    again = subprocess.run(
        ["git", "memzoi", "agent", "install", client], cwd=repo.path, capture_output=True, text=True, env=env
    )
    assert again.returncode == 0 and "updated" not in again.stderr and "created" not in again.stderr


@pytest.mark.parametrize("client", ["claude", "codex", "gemini", "copilot"])
def test_every_client_names_its_files_relative_to_the_work_tree(repo: Repo, tmp_path: Path, client: str) -> None:
    env = {k: v for k, v in os.environ.items()} | {"CODEX_HOME": str(tmp_path / "codex-home")}
    sub = repo.path / "src"
    sub.mkdir()
    done = subprocess.run(
        ["git", "memzoi", "agent", "install", client, "--dry-run"], cwd=sub, capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    named = re.findall(r"^(\S+): would create", done.stderr, re.MULTILINE)
    expected = {
        "claude": [".mcp.json", ".claude/settings.json"],
        "codex": [".codex/config.toml", ".codex/hooks.json"],
        "gemini": [".gemini/settings.json"],
        "copilot": [".mcp.json", ".github/hooks/memzoi.json"],
    }[client]
    assert named == expected, done.stderr
    assert str(repo.path) not in done.stderr and str(repo.path) not in done.stdout
    assert all(f"+++ b/{rel}" in done.stdout for rel in expected), done.stdout


def test_copilot_gets_the_server_in_mcp_json_and_its_hooks_in_github_hooks(repo: Repo) -> None:
    result = run_cli("agent", "install", "copilot", cwd=repo.path)
    assert ".mcp.json: created" in result.stderr and ".github/hooks/memzoi.json: created" in result.stderr
    assert "--trust-folder" in result.stderr  # what Copilot CLI asks before it runs them
    mcp = json.loads((repo.path / ".mcp.json").read_text())
    assert mcp == {"mcpServers": {"memzoi": {"type": "stdio", "command": "git", "args": ["memzoi", "mcp", "serve"]}}}
    hooks = json.loads((repo.path / ".github/hooks/memzoi.json").read_text())
    assert hooks["version"] == 1
    assert list(hooks["hooks"]) == ["sessionStart", "userPromptSubmitted", "preToolUse", "agentStop"]
    for name, entries in hooks["hooks"].items():
        command = f"git memzoi agent hook copilot {name}"
        assert entries == [{"type": "command", "bash": command, "powershell": command}]
    before = snapshot(repo.path / ".github/hooks/memzoi.json")
    assert "already set up, unchanged" in run_cli("agent", "install", "copilot", cwd=repo.path).stderr
    assert snapshot(repo.path / ".github/hooks/memzoi.json") == before


def test_copilot_hooks_file_of_another_version_is_refused(repo: Repo) -> None:
    repo.write(".github/hooks/memzoi.json", '{"version": 2, "hooks": {}}\n')
    result = run_cli("agent", "install", "copilot", cwd=repo.path, expect=2)
    assert (
        "git memzoi: .github/hooks/memzoi.json: version is 2; Copilot CLI's hooks files are version 1" in result.stderr
    )
    assert not (repo.path / ".mcp.json").exists()  # nothing written
