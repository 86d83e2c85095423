"""The real clients (Claude Code, Codex, Gemini CLI, GitHub Copilot CLI, the MCP Inspector) against `agent
install`, `agent hook` and `mcp serve`.

The clients come from the npm registry into a cache outside the hermetic HOME (reused across
runs; `MEMZOI_CLIENTS_CACHE` moves it). Without npm, or when the registry cannot be reached,
these tests skip and say why. They need no API key: they list and call MCP servers, and run a
session against a model endpoint that cannot be reached, which the session hooks answer before
the first request; the request (or the session's transcript) then shows what the hooks gave.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from support import Repo, run_cli
from support.export import record_text, write_record

pytestmark = pytest.mark.clients

#: Resolved at import, before the hermetic fixture points HOME at a temp folder.
CACHE = Path(os.environ.get("MEMZOI_CLIENTS_CACHE") or Path.home() / ".cache" / "memzoi-clients")
PACKAGES = (
    "@anthropic-ai/claude-code",
    "@openai/codex",
    "@google/gemini-cli",
    "@github/copilot",
    "@modelcontextprotocol/inspector",
)
BINARIES = ("claude", "codex", "gemini", "copilot", "mcp-inspector")
#: A model endpoint nothing listens on: the session starts, runs its hooks, then fails to connect.
UNREACHABLE = "http://127.0.0.1:9"
PROMPT = "Add a column to the orders table in db/migrations/0042_orders.sql"
#: How the SessionStart answer and a prompt's pack begin.
SESSION, PACK = "git memzoi: this repository keeps", "git memzoi: project memory relevant to this prompt:"
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


class ScriptedModel(http.server.ThreadingHTTPServer):
    """A model endpoint that answers the first request with one tool call and every later one with a message,
    keeping each request's JSON: the Responses API as Codex streams it, Gemini's streamGenerateContent, or the
    Chat Completions API as Copilot CLI's own-provider mode (COPILOT_PROVIDER_BASE_URL) streams it."""

    def __init__(self, call: dict[str, Any]) -> None:
        self.call = call
        self.requests: list[dict[str, Any]] = []
        super().__init__(("127.0.0.1", 0), _Responder)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


def _responses_events(number: int, call: dict[str, Any]) -> str:
    done = {"type": "message", "role": "assistant", "id": f"msg_{number}"}
    done["content"] = [{"type": "output_text", "text": "done"}]
    usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
    events = [
        {"type": "response.created", "response": {"id": f"resp_{number}"}},
        {"type": "response.output_item.done", "output_index": 0, "item": call if number == 1 else done},
        {"type": "response.completed", "response": {"id": f"resp_{number}", "usage": usage}},
    ]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def _gemini_events(number: int, call: dict[str, Any]) -> str:
    part = {"functionCall": call} if number == 1 else {"text": "done"}
    chunk = {
        "candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
    }
    return f"data: {json.dumps(chunk)}\r\n\r\n"


def _chat_events(number: int, call: dict[str, Any]) -> str:
    if number == 1:
        tool = {"index": 0, "id": "call_1", "type": "function"}
        tool["function"] = {"name": call["name"], "arguments": json.dumps(call["arguments"])}
        delta, finish = {"role": "assistant", "content": None, "tool_calls": [tool]}, "tool_calls"
    else:
        delta, finish = {"role": "assistant", "content": "done"}, "stop"
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    chunks = [
        {"id": f"c{number}", "object": "chat.completion.chunk", "model": "gpt-4.1", "choices": [c]}
        for c in (
            {"index": 0, "delta": delta, "finish_reason": None},
            {"index": 0, "delta": {}, "finish_reason": finish},
        )
    ]
    chunks[-1]["usage"] = usage
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


class _Responder(http.server.BaseHTTPRequestHandler):
    server: ScriptedModel

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["content-length"])))
        chat = self.path.endswith("/chat/completions")
        if not self.path.endswith("/responses") and ":streamGenerateContent" not in self.path and not chat:
            self.send_response(404)
            self.end_headers()
            return
        self.server.requests.append(request)
        answer = _chat_events if chat else _responses_events if self.path.endswith("/responses") else _gemini_events
        body = answer(len(self.server.requests), self.server.call).encode()
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        return


@contextlib.contextmanager
def scripted(call: dict[str, Any]) -> Iterator[ScriptedModel]:
    model = ScriptedModel(call)
    thread = threading.Thread(target=model.serve_forever, daemon=True)
    thread.start()
    try:
        yield model
    finally:
        model.shutdown()
        model.server_close()


def codex_home_for(project: Repo, home: Path, url: str = UNREACHABLE) -> Path:
    """A Codex home that trusts the project and points its model at `url` (by default, where nothing listens)."""
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        'model = "gpt-5.5"\nmodel_provider = "offline"\n'
        f'[model_providers.offline]\nname = "offline"\nbase_url = "{url}/v1"\nwire_api = "responses"\n'
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
        return any(text.startswith(PACK) for text in developer_texts(codex_home))

    # new hooks wait for the user's review; this flag is how automation that vets them runs them
    command = [str(clients / "codex"), "exec", "--dangerously-bypass-hook-trust", PROMPT]
    run_until(command, project.path, env, seen)
    texts = developer_texts(codex_home)
    start = [t for t in texts if t.startswith(SESSION)]
    prompt = [t for t in texts if t.startswith(PACK)]
    assert len(start) == 1 and len(prompt) == 1, texts
    assert "## Standing rules" in start[0] and "Use React Query (use-react-query)" in start[0]
    assert "Migrations lock the users table (migrations-lock-users)" in prompt[0]


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

    from support.agents import client_event as event
    from support.agents import client_hook as hook

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
    assert PACK in sent
    assert "Migrations lock the users table (migrations-lock-users)" in sent
    assert sent.count("Use React Query (use-react-query)") == 1, "the prompt's pack does not repeat the session's rules"


@pytest.mark.parametrize(
    "call, setting",
    [
        # a shell command the migrations risk is about: Codex runs it, the model gets the warning as context
        (
            {
                "type": "function_call",
                "name": "exec_command",
                "arguments": json.dumps({"cmd": "echo migrations users"}),
            },
            "ask",
        ),
        # a patch adding a migration: refused before the file exists, the model gets the reason
        (
            {
                "type": "custom_tool_call",
                "name": "apply_patch",
                "input": "*** Begin Patch\n*** Add File: db/migrations/0042_orders.sql\n+SELECT 1;\n*** End Patch\n",
            },
            "deny",
        ),
    ],
)
def test_codex_runs_the_tool_hook_before_a_command_or_patch(
    clients: Path, project: Repo, hermetic: Path, call: dict[str, Any], setting: str
) -> None:
    project.write(".memzoi/config.toml", f'[agents]\nrisk_decision = "{setting}"\n')
    with scripted({**call, "id": "call_item_1", "call_id": "call_1"}) as model:
        codex_home = codex_home_for(project, hermetic, model.url)
        run_cli("agent", "install", "codex", env={"CODEX_HOME": str(codex_home)})
        env = env_for(hermetic, CODEX_HOME=str(codex_home))
        command = [str(clients / "codex"), "exec", "--dangerously-bypass-hook-trust", "go"]
        run_until(command, project.path, env, lambda: len(model.requests) >= 2)
        assert len(model.requests) >= 2, "Codex made the tool call and came back with its result"
        after = json.dumps(model.requests[1]["input"])
    assert "git memzoi risk migrations-lock-users" in after or "[risk] Migrations lock the users table" in after
    if setting == "deny":
        assert not (project.path / "db/migrations/0042_orders.sql").exists(), "the hook refused the patch"


@pytest.mark.parametrize(
    "call, setting",
    [
        # a shell command the migrations risk is about: it runs, and AfterTool adds the warning to its result
        ({"name": "run_shell_command", "args": {"command": "echo migrations users"}}, "ask"),
        # a new migration: BeforeTool refuses it before the file exists, and the model gets the reason
        (
            {"name": "write_file", "args": {"file_path": "db/migrations/0042_orders.sql", "content": "SELECT 1;"}},
            "deny",
        ),
    ],
)
def test_gemini_runs_the_tool_hooks_around_a_command_or_edit(
    clients: Path, project: Repo, hermetic: Path, call: dict[str, Any], setting: str
) -> None:
    project.write(".memzoi/config.toml", f'[agents]\nrisk_decision = "{setting}"\n')
    run_cli("agent", "install", "gemini")
    (hermetic / ".gemini").mkdir(exist_ok=True)
    auth = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    (hermetic / ".gemini" / "settings.json").write_text(json.dumps(auth))
    if call["name"] == "write_file":
        call["args"]["file_path"] = str(project.path / call["args"]["file_path"])
    with scripted(call) as model:
        env = env_for(
            hermetic, GEMINI_API_KEY="offline", GEMINI_CLI_TRUST_WORKSPACE="true", GOOGLE_GEMINI_BASE_URL=model.url
        )
        command = [str(clients / "gemini"), "-m", "gemini-2.5-flash", "--approval-mode", "yolo", "-p", "go"]
        run_until(command, project.path, env, lambda: len(model.requests) >= 2)
        assert len(model.requests) >= 2, "Gemini CLI made the tool call and came back with its result"
        after = json.dumps(model.requests[1]["contents"][-1])
    assert "[risk] Migrations lock the users table (id: migrations-lock-users)" in after
    if setting == "deny":
        assert not (project.path / "db/migrations/0042_orders.sql").exists(), "the hook refused the write"


def _chat_text(request: dict[str, Any]) -> str:
    """Every message of a Chat Completions request but the system prompt, as one text."""
    return "\n".join(
        m["content"] if isinstance(m.get("content"), str) else json.dumps(m.get("content"))
        for m in request["messages"]
        if m.get("role") != "system"
    )


@pytest.mark.parametrize("setting", ["ask", "deny"])
def test_copilot_runs_the_installed_hooks_and_takes_their_context(
    clients: Path, project: Repo, hermetic: Path, setting: str
) -> None:
    project.write(".memzoi/config.toml", f'[agents]\nrisk_decision = "{setting}"\n')
    run_cli("agent", "install", "copilot")
    target = project.path / "db/migrations/0042_orders.sql"
    call = {"name": "create", "arguments": {"path": str(target), "file_text": "SELECT 1;\n"}}
    (project.path / "db/migrations").mkdir(parents=True)
    with scripted(call) as model:
        env = env_for(hermetic, COPILOT_PROVIDER_BASE_URL=f"{model.url}/v1", COPILOT_MODEL="gpt-4.1")
        command = [str(clients / "copilot"), "-p", PROMPT, "--allow-all-tools", "--trust-folder"]
        command += ["--disable-client-telemetry"]
        run_until(command, project.path, env, lambda: False)  # to its end: agentStop runs after the last answer
        assert len(model.requests) >= 2, "Copilot CLI made the tool call and came back with its result"
        first, after = _chat_text(model.requests[0]), _chat_text(model.requests[1])
    # sessionStart's standing rules, then userPromptSubmitted's pack, in the first request
    assert SESSION in first and "## Standing rules" in first and "Use React Query (use-react-query)" in first
    assert PACK in first and "Migrations lock the users table (migrations-lock-users)" in first
    # preToolUse of a file `create` makes: the warning reaches the model; with "deny" the file is never written
    assert "[risk] Migrations lock the users table (id: migrations-lock-users)" in after
    if setting == "deny":
        assert "Denied by preToolUse hook: git memzoi risk migrations-lock-users" in after
        assert not target.exists()
    else:
        assert target.exists()
    # agentStop kept the session's checkpoint from its events.jsonl
    (only,) = run_cli("checkpoint", "list", "--json").json()["checkpoints"]
    note = run_cli("checkpoint", "show", only["record_id"], "--json").json()["note"]
    assert note.startswith("Captured by GitHub Copilot CLI's agentStop") and "db/migrations/0042_orders.sql" in note
