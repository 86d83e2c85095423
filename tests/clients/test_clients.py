"""The real clients (Claude Code, Codex, the MCP Inspector) against `agent install` and `mcp serve`.

The clients come from the npm registry into a cache outside the hermetic HOME (reused across
runs; `MEMZOI_CLIENTS_CACHE` moves it). Without npm, or when the registry cannot be reached,
these tests skip and say why. They need no API key: they only list and call MCP servers.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from filelock import FileLock

from support import Repo, run_cli
from support.export import record_text, write_record

pytestmark = pytest.mark.clients

#: Resolved at import, before the hermetic fixture points HOME at a temp folder.
CACHE = Path(os.environ.get("MEMZOI_CLIENTS_CACHE") or Path.home() / ".cache" / "memzoi-clients")
PACKAGES = ("@anthropic-ai/claude-code", "@openai/codex", "@modelcontextprotocol/inspector")
BINARIES = ("claude", "codex", "mcp-inspector")
QUIET = {
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_TELEMETRY": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "NO_COLOR": "1",
}


@pytest.fixture(scope="session")
def clients() -> Path:
    """The cache's node_modules/.bin with the three clients, installed on first use."""
    bin_dir = CACHE / "node_modules" / ".bin"
    if all((bin_dir / name).exists() for name in BINARIES):
        return bin_dir
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: the real clients come from the npm registry")
    CACHE.mkdir(parents=True, exist_ok=True)
    with FileLock(str(CACHE / ".install.lock")):  # test workers share one install
        if not all((bin_dir / name).exists() for name in BINARIES):
            try:
                done = subprocess.run(
                    [npm, "install", "--prefix", str(CACHE), "--no-audit", "--no-fund", *PACKAGES],
                    capture_output=True,
                    text=True,
                    timeout=900,
                )
            except subprocess.TimeoutExpired:
                pytest.skip("npm install of the clients timed out (is the registry reachable?)")
            if done.returncode != 0:
                lines = [ln for ln in done.stderr.splitlines() if ln.strip() and "complete log" not in ln]
                why = " / ".join(lines[:2]) or f"exit {done.returncode}"
                pytest.skip(f"npm could not install the clients (registry unreachable?): {why}")
    return bin_dir


def env_for(home: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, **QUIET, "HOME": str(home), **extra}


@pytest.fixture
def project(repo: Repo) -> Repo:
    write_record(
        repo,
        "risks/migrations",
        record_text(
            "migrations-lock-users",
            type="risk",
            title="Migrations lock the users table",
            applies_to=("db/migrations/**",),
        ),
    )
    write_record(repo, "decisions/react-query", record_text("use-react-query", title="Use React Query"))
    write_record(repo, "private/note", record_text("private-note", visibility="private"))
    repo.commit("memory")
    return repo


def test_claude_code_connects_to_the_installed_server(clients: Path, project: Repo, hermetic: Path) -> None:
    run_cli("agent", "install", "claude")
    # Project servers wait for the user's approval; this is the setting that gives it.
    project.write(".claude/settings.local.json", json.dumps({"enableAllProjectMcpServers": True}))
    done = subprocess.run(
        [str(clients / "claude"), "mcp", "list"],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=project.path,
        env=env_for(hermetic),
    )
    assert done.returncode == 0, done.stderr
    assert re.search(r"^memzoi: git memzoi mcp serve - ✔ Connected$", done.stdout, re.M), done.stdout + done.stderr


def test_codex_lists_the_installed_server(clients: Path, project: Repo, hermetic: Path, tmp_path: Path) -> None:
    codex_home = tmp_path / "codex"
    codex_home.mkdir()
    run_cli("agent", "install", "codex", env={"CODEX_HOME": str(codex_home)})
    env = env_for(hermetic, CODEX_HOME=str(codex_home))
    # the project's .codex/config.toml counts once Codex trusts the project, as it asks on first start
    untrusted = subprocess.run(
        [str(clients / "codex"), "mcp", "list"], capture_output=True, text=True, timeout=120, cwd=project.path, env=env
    )
    assert "memzoi" not in untrusted.stdout, untrusted.stdout
    trusted = f'[projects.{json.dumps(str(project.path.resolve()))}]\ntrust_level = "trusted"\n'
    (codex_home / "config.toml").write_text(trusted)
    listed = subprocess.run(
        [str(clients / "codex"), "mcp", "list"], capture_output=True, text=True, timeout=120, cwd=project.path, env=env
    )
    assert listed.returncode == 0, listed.stderr
    assert re.search(r"^memzoi\s+git\s+memzoi mcp serve\s.*\benabled\b", listed.stdout, re.M), listed.stdout
    got = subprocess.run(
        [str(clients / "codex"), "mcp", "get", "memzoi", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=project.path,
        env=env,
    )
    assert got.returncode == 0, got.stderr
    transport = json.loads(got.stdout)["transport"]
    assert transport["command"] == "git" and transport["args"] == ["memzoi", "mcp", "serve"]


def inspector(clients: Path, project: Repo, home: Path, *args: str) -> dict:  # type: ignore[type-arg]
    done = subprocess.run(
        [str(clients / "mcp-inspector"), "--cli", "git", "memzoi", "mcp", "serve", *args],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=project.path,
        env=env_for(home),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    result: dict = json.loads(done.stdout)  # type: ignore[type-arg]
    return result


def test_inspector_lists_and_reads_the_records(clients: Path, project: Repo, hermetic: Path) -> None:
    listed = inspector(clients, project, hermetic, "--method", "resources/list")["resources"]
    assert {r["uri"] for r in listed} == {"memzoi://records/risks/migrations", "memzoi://records/decisions/react-query"}
    assert all(r["mimeType"] == "text/markdown" for r in listed)
    read = inspector(
        clients, project, hermetic, "--method", "resources/read", "--uri", "memzoi://records/risks/migrations"
    )["contents"]
    assert read[0]["text"] == (project.path / ".memzoi/records/risks/migrations.md").read_text(encoding="utf-8")
    called = inspector(
        clients,
        project,
        hermetic,
        "--method",
        "tools/call",
        "--tool-name",
        "precheck_path",
        "--tool-arg",
        "path=db/migrations/0001.sql",
    )
    warnings = called["structuredContent"]["warnings"]
    assert [w["record_id"] for w in warnings] == ["migrations-lock-users"]
