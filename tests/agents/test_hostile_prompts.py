"""A prompt's cost is linear in its size: the paths it names and Gemini CLI's `<hook_context>` blocks.

Each test gives a hook process a prompt whose old handling was quadratic (minutes) and a generous
timeout the old code exceeded: a hang check, not a speed assertion (the figures are in BENCHMARKS.md).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from support import Repo, memzoi_exe
from support.agents import client_event
from support.recall import add_record

#: far more than the prompt's answer takes; the old code took minutes on each prompt below
HANG = 20
PROMPT_EVENT = {"claude": "userpromptsubmit", "codex": "userpromptsubmit", "gemini": "beforeagent"}
#: runs of path characters the path pattern once tried from every `@`, each try to the run's end
HOSTILE_PROMPTS = {
    "at-a-slash": "@a/" * 21_846,
    "at-ab-slash": "@ab/" * 16_384,
    "at-scoped-packages": "@src/" * 13_108,
}


def prompt_hook(client: str, repo: Repo, prompt: str) -> subprocess.CompletedProcess[str]:
    text = client_event(client, PROMPT_EVENT[client], repo.path, prompt=prompt)
    return subprocess.run(
        [memzoi_exe(), "agent", "hook", client], input=text, cwd=repo.path, capture_output=True, text=True, timeout=HANG
    )


@pytest.fixture
def paths_memory(repo: Repo) -> Repo:
    add_record(
        repo,
        "conventions/auth",
        "auth-sessions-server-side",
        type="convention",
        title="Sessions are checked on the server",
        applies_to=["src/auth/**"],
    )
    (repo.path / "src" / "auth").mkdir(parents=True)
    repo.commit("memory")
    return repo


@pytest.mark.parametrize("client", ["claude", "codex", "gemini"])
@pytest.mark.parametrize("shape", sorted(HOSTILE_PROMPTS))
def test_a_64_kb_prompt_of_path_characters_is_answered(paths_memory: Repo, client: str, shape: str) -> None:
    prompt = HOSTILE_PROMPTS[shape] + " and the check in src/auth/session.ts"
    done = prompt_hook(client, paths_memory, prompt)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "auth-sessions-server-side" in context, "the path after the noise is still found"


@pytest.mark.parametrize(
    "noise",
    [
        "<hook_context>" * 20_000,
        "<hook_context>x" * 18_000 + "</hook_context>",
        "<hook_context></hook_context>" * 9_000,
    ],
    ids=["unclosed-openers", "openers-then-one-closer", "closed-blocks"],
)
def test_gemini_hook_context_blocks_are_removed_in_linear_time(paths_memory: Repo, noise: str) -> None:
    assert len(noise) > 250_000
    prompt = noise + " fix src/auth/session.ts"
    done = prompt_hook("gemini", paths_memory, prompt)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    answer = json.loads(done.stdout) if done.stdout else None
    if noise.endswith("</hook_context>"):  # the path was after the last block: it is still searched
        assert answer is not None and "auth-sessions-server-side" in answer["hookSpecificOutput"]["additionalContext"]


def test_gemini_prompt_without_its_hook_context_blocks(paths_memory: Repo, tmp_path: Path) -> None:
    """What the removal keeps: text between and after blocks; an unclosed opener and what follows it."""
    prompt = "<hook_context>src/auth/session.ts</hook_context> hello <hook_context>src/auth/x.ts"
    done = prompt_hook("gemini", paths_memory, prompt)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert "auth-sessions-server-side" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    inside_only = "<hook_context>src/auth/session.ts</hook_context> hello"
    done = prompt_hook("gemini", paths_memory, inside_only)
    assert done.returncode == 0 and done.stdout == "", "a path inside a block is not the prompt's"


def test_a_codex_patch_header_of_a_megabyte_of_spaces_is_answered(repo: Repo) -> None:
    """A file name followed by a long run of spaces: the header pattern once retried the run from each of them."""
    add_record(repo, "risks/orders", "orders-append-only", type="risk", title="Orders", applies_to=["db/**"])
    repo.commit("memory")
    patch = (
        "*** Begin Patch\n*** Add File: notes"
        + " " * 1_000_000
        + "x\n+a\n*** Update File: db/0042.sql  \n*** End Patch\n"
    )
    text = client_event("codex", "pretooluse-apply-patch", repo.path, tool_input={"command": patch})
    done = subprocess.run(
        [memzoi_exe(), "agent", "hook", "codex"],
        input=text,
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=HANG,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert "orders-append-only" in json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
