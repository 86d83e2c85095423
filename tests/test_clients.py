"""The real clients (Claude Code, Codex, Gemini CLI, the MCP Inspector) against `agent install`, `agent hook`
and `mcp serve`.

The clients come from the npm registry into a cache outside the hermetic HOME (reused across
runs; `MEMZOI_CLIENTS_CACHE` moves it). Without npm, or when the registry cannot be reached,
these tests skip and say why. They need no API key: they list and call MCP servers, and run a
session against a model endpoint that cannot be reached, which the session hooks answer before
the first request; the request (or the session's transcript) then shows what the hooks gave.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock

from conftest import Repo, run_cli
from test_export import record_text, write_record

pytestmark = pytest.mark.clients

#: Resolved at import, before the hermetic fixture points HOME at a temp folder.
CACHE = Path(os.environ.get("MEMZOI_CLIENTS_CACHE") or Path.home() / ".cache" / "memzoi-clients")
PACKAGES = ("@anthropic-ai/claude-code", "@openai/codex", "@google/gemini-cli", "@modelcontextprotocol/inspector")
BINARIES = ("claude", "codex", "gemini", "mcp-inspector")
#: A model endpoint nothing listens on: the session starts, runs its hooks, then fails to connect.
UNREACHABLE = "http://127.0.0.1:9"
PROMPT = "Add a column to the orders table in db/migrations/0042_orders.sql"
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


def run_until(command: list[str], cwd: Path, env: dict[str, str], seen: Callable[[], bool], limit: float = 120) -> None:
    """Run a client session until `seen()` (what its hooks gave has arrived), then stop it and its children."""
    proc = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + limit
        while proc.poll() is None and not seen() and time.monotonic() < deadline:
            time.sleep(0.25)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def codex_home_for(project: Repo, home: Path) -> Path:
    """A Codex home that trusts the project and points its model at UNREACHABLE."""
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        'model = "gpt-5.5"\nmodel_provider = "offline"\n'
        f'[model_providers.offline]\nname = "offline"\nbase_url = "{UNREACHABLE}/v1"\nwire_api = "responses"\n'
        "request_max_retries = 0\nstream_max_retries = 0\n"
        f'[projects.{json.dumps(str(project.path.resolve()))}]\ntrust_level = "trusted"\n'
    )
    return codex_home


def developer_texts(codex_home: Path) -> list[str]:
    """The developer messages of every session transcript (rollout) Codex wrote: hook context lands there."""
    texts = []
    for rollout in sorted(codex_home.glob("sessions/**/rollout-*.jsonl")):
        for line in rollout.read_text(encoding="utf-8").splitlines():
            payload = json.loads(line).get("payload", {})
            if payload.get("type") == "message" and payload.get("role") == "developer":
                texts += [part.get("text", "") for part in payload.get("content", [])]
    return texts


def test_codex_runs_the_installed_hooks_and_takes_their_context(clients: Path, project: Repo, hermetic: Path) -> None:
    codex_home = codex_home_for(project, hermetic)
    run_cli("agent", "install", "codex", env={"CODEX_HOME": str(codex_home)})
    env = env_for(hermetic, CODEX_HOME=str(codex_home))

    def seen() -> bool:
        return sum("git memzoi" in text for text in developer_texts(codex_home)) >= 2

    # new hooks wait for the user's review; this flag is how automation that vets them runs them
    command = [str(clients / "codex"), "exec", "--dangerously-bypass-hook-trust", PROMPT]
    run_until(command, project.path, env, seen)
    texts = [t for t in developer_texts(codex_home) if t.startswith("git memzoi")]
    assert len(texts) == 2, texts
    start, prompt = texts
    assert "## Standing rules" in start and "Use React Query (use-react-query)" in start
    assert prompt.startswith("git memzoi: project memory relevant to this prompt:")
    assert "Migrations lock the users table (migrations-lock-users)" in prompt


def codex_schemas(clients: Path) -> dict[str, dict]:  # type: ignore[type-arg]
    """The hook input and output JSON schemas the installed Codex embeds, by title."""
    found = sorted((clients.parent / "@openai").glob("codex-*/vendor/*/bin/codex"))
    if not found:
        pytest.skip("the installed Codex has no native binary here to read its hook schemas from")
    data = found[0].read_bytes()
    schemas = {}
    for title in ("session-start", "user-prompt-submit", "pre-tool-use"):
        for kind in ("input", "output"):
            name = f"{title}.command.{kind}"
            at = data.index(f'"title": "{name}"'.encode())
            start = data.rindex(b'{\n  "$schema"', 0, at)
            schemas[name] = json.loads(data[start : data.index(b"\n}", at) + 2])
    return schemas


def test_codex_events_and_answers_match_the_schemas_codex_embeds(clients: Path, project: Repo) -> None:
    import jsonschema

    from test_agent_hook_clients import event, hook

    schemas = codex_schemas(clients)
    project.write(".memzoi/config.toml", '[agents]\nrisk_decision = "deny"\n')
    for name, title in (
        ("sessionstart", "session-start"),
        ("userpromptsubmit", "user-prompt-submit"),
        ("pretooluse-bash", "pre-tool-use"),
        ("pretooluse-apply-patch", "pre-tool-use"),
    ):
        text = event("codex", name, project.path)
        if name == "pretooluse-bash":
            text = text.replace("git push --force origin main", "python manage.py migrations --table users")
        jsonschema.validate(json.loads(text), schemas[f"{title}.command.input"])
        out, err = hook("codex", text)
        assert out is not None, (name, err)
        jsonschema.validate(out, schemas[f"{title}.command.output"])


def test_gemini_runs_the_installed_hooks_and_sends_their_context(clients: Path, project: Repo, hermetic: Path) -> None:
    run_cli("agent", "install", "gemini")
    settings = project.path / ".gemini" / "settings.json"
    data = json.loads(settings.read_text())
    # a test's own hook on the model request shows what the request carries (it then fails to connect)
    log = hermetic / "model-requests.jsonl"
    data["hooks"]["BeforeModel"] = [{"hooks": [{"type": "command", "command": f"cat >> {log}; echo '{{}}'"}]}]
    settings.write_text(json.dumps(data))
    (hermetic / ".gemini").mkdir(exist_ok=True)
    (hermetic / ".gemini" / "settings.json").write_text(
        json.dumps({"security": {"auth": {"selectedType": "gemini-api-key"}}})
    )
    env = env_for(
        hermetic, GEMINI_API_KEY="offline", GEMINI_CLI_TRUST_WORKSPACE="true", GOOGLE_GEMINI_BASE_URL=UNREACHABLE
    )
    run_until([str(clients / "gemini"), "-m", "gemini-2.5-flash", "-p", PROMPT], project.path, env, log.exists)
    time.sleep(0.5)  # the hook writes the whole request, then answers
    request = json.loads(log.read_text().splitlines()[0])["llm_request"]
    sent = "\n".join(m["content"] for m in request["messages"] if m["role"] == "user")
    assert "## Standing rules" in sent and "Use React Query (use-react-query)" in sent
    assert "git memzoi: project memory relevant to this prompt:" in sent
    assert "Migrations lock the users table (migrations-lock-users)" in sent
    assert sent.count("Use React Query (use-react-query)") == 1, "the prompt's pack does not repeat the session's rules"
