#!/usr/bin/env python3
"""Benchmark the agents' hooks on 10,000 records, end to end: Claude Code's PreToolUse (Edit, Bash) and
UserPromptSubmit, Codex's PreToolUse for an apply_patch, Gemini CLI's AfterTool for a file edit.

    .venv/bin/python scripts/bench_agents.py [--quick]      # prints the Markdown section

`section(workdir, quick)` builds the repository under `workdir` (with scripts/bench.py's
generator) and returns the section that scripts/bench.py appends to the report.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "scripts"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from bench import generate  # noqa: E402

RECORDS = 10_000
TARGET = 4.0
RUNS, QUICK_RUNS = 15, 9
#: A pause between two runs, as between two edits of a session.
IDLE = 1.5


def _risky_path(root: Path) -> tuple[str, str]:
    """A file path that a current risk record's applies_to covers, and that record's ID."""
    for path in sorted((root / ".memzoi" / "records" / "semantic" / "risks").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        data = yaml.safe_load(text[4 : text.index("\n---\n", 3)])
        if data["status"] != "active" or data.get("retention"):
            continue
        for entry in data.get("applies_to", []):
            if entry.endswith("/**"):
                return entry[:-3] + "/handler.py", data["id"]
            if entry.endswith(".py"):
                return entry, data["id"]
    raise RuntimeError("the generated repository has no path-bound risk record")


def _claude_event(root: Path, name: str, **fields: object) -> str:
    """A Claude Code hook event `name` in the project `root`, as the client sends it, with the event's own `fields`."""
    return json.dumps(
        {
            "session_id": "bench",
            "transcript_path": "/dev/null",
            "cwd": str(root),
            "permission_mode": "default",
            "hook_event_name": name,
            **fields,
        }
    )


def _prompt_event(root: Path, prompt: str) -> str:
    return _claude_event(root, "UserPromptSubmit", prompt=prompt)


def _bash_event(root: Path, command: str) -> str:
    tool_input = {"command": command, "description": "bench"}
    return _claude_event(root, "PreToolUse", tool_name="Bash", tool_input=tool_input, tool_use_id="toolu_bench")


def _event(root: Path, rel: str) -> str:
    tool_input = {"file_path": str(root / rel), "old_string": "a", "new_string": "b"}
    return _claude_event(root, "PreToolUse", tool_name="Edit", tool_input=tool_input, tool_use_id="toolu_bench")


def _patch_event(root: Path, rel: str) -> str:
    """Codex's PreToolUse for an apply_patch that updates `rel`."""
    patch = f"*** Begin Patch\n*** Update File: {rel}\n@@\n-a\n+b\n*** End Patch\n"
    return json.dumps(
        {
            "session_id": "bench-codex",
            "turn_id": "bench-turn",
            "transcript_path": None,
            "cwd": str(root),
            "hook_event_name": "PreToolUse",
            "model": "gpt-5.5",
            "permission_mode": "default",
            "tool_name": "apply_patch",
            "tool_input": {"command": patch},
            "tool_use_id": "call_bench",
        }
    )


def _after_tool_event(root: Path, rel: str) -> str:
    """Gemini CLI's AfterTool for a `replace` in `rel`."""
    return json.dumps(
        {
            "session_id": "bench-gemini",
            "transcript_path": "/dev/null",
            "cwd": str(root),
            "hook_event_name": "AfterTool",
            "timestamp": "2026-12-06T00:00:00.000Z",
            "tool_name": "replace",
            "tool_input": {"file_path": str(root / rel), "old_string": "a", "new_string": "b"},
            "tool_response": {"llmContent": "Successfully modified file.", "returnDisplay": "ok"},
        }
    )


def _copilot_event(root: Path, rel: str) -> str:
    """GitHub Copilot CLI's preToolUse for an `edit` of `rel` (fixtures/copilot-hooks' shape)."""
    return json.dumps(
        {
            "sessionId": "bench-copilot",
            "timestamp": 1796678776936,
            "cwd": str(root),
            "toolName": "edit",
            "toolArgs": {"path": str(root / rel), "old_str": "a", "new_str": "b"},
        }
    )


#: This interpreter's folder first, so git finds this checkout's git-memzoi.
_ENV = os.environ | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def _run_ms(argv: list[str], cwd: Path, stdin: str | None) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, cwd=cwd, env=_ENV)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{argv} failed: {done.stderr.strip()}")
    return elapsed * 1000, done.stdout


#: every anchor run of the section, for the median the text quotes
ANCHORS: list[float] = []


class Paired:
    """`runs` runs of a command, each right after one of the anchor (`python3 -c pass`), after one
    warm-up of each: the command's median, and the median of the pair-by-pair ratios (a pair sees
    the same load of the machine, so drift during the run does not move the ratio)."""

    def __init__(self, argv: list[str], runs: int, cwd: Path, stdin: str | None = None, idle: float = 0.0) -> None:
        anchor = [sys.executable, "-c", "pass"]
        times, ratios, self.out = [], [], ""
        for i in range(runs + 1):
            python_ms, _ = _run_ms(anchor, cwd, None)
            if idle:
                time.sleep(idle)
            ms, self.out = _run_ms(argv, cwd, stdin)
            if i:
                times.append(ms)
                ratios.append(ms / python_ms)
                ANCHORS.append(python_ms)
        self.ms = statistics.median(times)
        self.ratio = statistics.median(ratios)


def _edit_one_record(root: Path) -> str:
    """Append a line to one record's body, as an editor would, without `git add`: git cannot vouch for it."""
    path = next((root / ".memzoi" / "records").rglob("*.md"))
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("\nEdited in place, not yet added.\n")
    return str(path.relative_to(root))


def section(workdir: Path, quick: bool = False) -> str:
    """Build the repository under `workdir`, measure the hook and return a Markdown section."""
    workdir.mkdir(parents=True, exist_ok=True)
    root = workdir / "agents-repo"
    if root.exists():
        shutil.rmtree(root)
    generate(root, RECORDS)
    os.environ["MEMZOI_HOME"] = str(workdir / "memzoi-home")
    _ENV["MEMZOI_HOME"] = os.environ["MEMZOI_HOME"]
    subprocess.run(["git", "memzoi", "rebuild"], cwd=root, check=True, capture_output=True, env=_ENV)
    rel, risk_id = _risky_path(root)
    runs = QUICK_RUNS if quick else RUNS
    ANCHORS.clear()
    hook = ["git", "memzoi", "agent", "hook", "claude"]
    risky = Paired(hook, runs, root, _event(root, rel))
    answer = json.loads(risky.out)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "ask" and risk_id in answer["additionalContext"], answer
    idle = Paired(hook, runs, root, _event(root, rel), idle=IDLE)
    quiet = Paired(hook, runs, root, _event(root, "docs/unrelated-notes.md"))
    assert quiet.out == "", quiet.out
    precheck = Paired(["git", "memzoi", "precheck", "--path", rel], runs, root)
    prompt_text = f"the handler in {rel} retries too often; change the retry policy and its tests"
    prompt = Paired(hook, runs, root, _prompt_event(root, prompt_text))
    assert json.loads(prompt.out)["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit", prompt.out
    bash = Paired(hook, runs, root, _bash_event(root, "make deploy service=payments --force"))
    codex = Paired([*hook[:-1], "codex"], runs, root, _patch_event(root, rel))
    assert risk_id in json.loads(codex.out)["hookSpecificOutput"]["additionalContext"], codex.out
    gemini = Paired([*hook[:-1], "gemini"], runs, root, _after_tool_event(root, rel))
    assert risk_id in json.loads(gemini.out)["hookSpecificOutput"]["additionalContext"], gemini.out
    copilot = Paired([*hook[:-1], "copilot", "preToolUse"], runs, root, _copilot_event(root, rel))
    assert risk_id in json.loads(copilot.out)["additionalContext"], copilot.out
    dirty = _edit_one_record(root)
    swept = Paired(hook, runs, root, _event(root, rel))
    subprocess.run(["git", "checkout", "--", dirty], cwd=root, check=True, env=_ENV)
    python_ms = statistics.median(ANCHORS)

    def targeted(label: str, m: Paired) -> str:
        met = "yes" if m.ratio <= TARGET else "**no**"
        return f"| {label} | {m.ms:.1f} ms | **{m.ratio:.2f}×** | ≤ {TARGET:g}× | {met} |"

    def shown(label: str, m: Paired) -> str:
        return f"| {label} | {m.ms:.1f} ms | {m.ratio:.2f}× | — | — |"

    rows = [
        targeted("Edit of a path a risk record covers (answer: ask + context)", risky),
        shown(f"the same, {IDLE:g} s after the previous run (every record file's stat compared again)", idle),
        shown("Edit of a path no record covers (no output)", quiet),
        targeted("UserPromptSubmit naming that path (answer: a context pack)", prompt),
        targeted("PreToolUse Bash command (words matched against record text)", bash),
        targeted("Codex PreToolUse apply_patch of that path (`agent hook codex`)", codex),
        targeted("Gemini CLI AfterTool replace in that path (`agent hook gemini`)", gemini),
        targeted("Copilot CLI preToolUse edit of that path (`agent hook copilot preToolUse`)", copilot),
        shown("for comparison: `git memzoi precheck --path`", precheck),
        shown("the first row's edit, one record file edited and not yet added (every record file swept)", swept),
    ]
    return (
        "\n".join(
            [
                "## Agent hooks: Claude Code, Codex, Gemini CLI and Copilot CLI on 10,000 records",
                "",
                f"A repository of {RECORDS:,} synthetic records (scripts/bench.py's generator), indexed once "
                "beforehand, as a session that has run before finds it. Claude Code runs the hook as a process "
                "for every edit, so the figure is end to end: `git memzoi agent hook claude` run through git as a "
                "subprocess, the recorded event on stdin, stdout read to the end. Each run follows one of "
                "`python3 -c pass` (this interpreter, not a version-manager shim; median "
                f"{python_ms:.1f} ms here), so that each pair sees the same load of the machine: the median of "
                f"{runs} runs after one warm-up, and the ratio is the median of the {runs} pair-by-pair ratios.",
                "",
                "| event | median | ratio to `python3 -c pass` | target | met |",
                "|---|---:|---:|---:|---|",
                *rows,
                "",
                "The hooks answer without loading click, pydantic, PyYAML, pygit2, filelock or the MCP SDK "
                "(tests/agents/test_agent_hook.py and tests/agents/test_agent_hook_clients.py pin that); "
                "its work on the 10,000 records is recall's staleness check (stats, no parsing) "
                "and the precheck queries on index.db. With every record file committed and unchanged, git's "
                "index vouches for them and the check is one `git diff-files --quiet` over the records "
                "(index/git_clean.py); with a record file edited and not yet added (the last row), every run "
                "stats every record file itself. The idle row shows a run after a pause, as between two edits "
                "of a real session.",
            ]
        )
        + "\n"
    )


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="memzoi-bench-agents-") as tmp:
        print(section(Path(tmp), quick="--quick" in sys.argv[1:]), end="")
