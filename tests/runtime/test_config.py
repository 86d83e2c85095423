"""Config precedence and errors that name the file and key."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from git_memzoi.errors import ConfigError
from git_memzoi.runtime import config as configmod
from git_memzoi.runtime.workspace import Workspace
from support import run_cli


def _ws() -> Workspace:
    return Workspace.open()


def test_precedence_builtin_user_project_repo(repo) -> None:
    ws = _ws()
    assert ws.config.workflow.proposal_approval == "manual"
    assert ws.config.recall.search_limit == 10
    home = Path(os.environ["MEMZOI_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text('[workflow]\nproposal_approval = "auto"\n[recall]\nsearch_limit = 5\n')
    ws = _ws()
    assert ws.config.workflow.proposal_approval == "auto" and ws.config.recall.search_limit == 5
    ws.layout.project.mkdir(parents=True, exist_ok=True)
    ws.layout.project_config.write_text("[recall]\nsearch_limit = 7\n")
    ws = _ws()
    assert ws.config.recall.search_limit == 7 and ws.config.workflow.proposal_approval == "auto"
    repo.write(".memzoi/config.toml", '[workflow]\nproposal_approval = "manual"\n')
    ws = _ws()
    assert ws.config.workflow.proposal_approval == "manual"  # repo policy overrides the user-global one
    assert ws.config.recall.search_limit == 7


def test_unknown_key_and_bad_value_name_file_and_key(repo) -> None:
    repo.write(".memzoi/config.toml", '[workflow]\nproposal_aproval = "manual"\n')
    out = run_cli("doctor", "--json", expect=1).json()
    assert out["checks"]["config"].endswith(".memzoi/config.toml: unknown key 'workflow.proposal_aproval'")
    repo.write(".memzoi/config.toml", '[workflow]\nproposal_approval = "sometimes"\n')
    out = run_cli("doctor", "--json", expect=1).json()
    assert ".memzoi/config.toml: workflow.proposal_approval:" in out["checks"]["config"]
    assert "'sometimes'" in out["checks"]["config"]
    repo.write(".memzoi/config.toml", "[workflow\n")
    assert "not valid TOML" in run_cli("doctor", "--json", expect=1).json()["checks"]["config"]
    repo.write(".memzoi/config.toml", '[recall]\nsearch_limit = "10"\n')
    assert "recall.search_limit" in run_cli("doctor", "--json", expect=1).json()["checks"]["config"]


def test_config_toml_is_not_a_memory_file(repo) -> None:
    repo.write(".memzoi/config.toml", '[workflow]\nproposal_approval = "auto"\n')
    assert run_cli("validate", "--json").json()["ok"] is True


def test_agents_risk_decision_key(repo) -> None:
    assert _ws().config.agents.risk_decision == "ask"
    repo.write(".memzoi/config.toml", '[agents]\nrisk_decision = "deny"\n')
    assert _ws().config.agents.risk_decision == "deny"
    repo.write(".memzoi/config.toml", '[agents]\nrisk_decision = "block"\n')
    out = run_cli("doctor", "--json", expect=1).json()
    assert ".memzoi/config.toml: agents.risk_decision:" in out["checks"]["config"]


BAD_VALUES = [
    ("[workflow]\nproposal_approval = 1\n", "workflow.proposal_approval: Input should be 'manual' or 'auto' (got 1)"),
    ("workflow = 3\n", "workflow: Input should be a valid dictionary or instance of WorkflowConfig (got 3)"),
    ("[workflow.sub]\nx = 1\n", "unknown key 'workflow.sub'"),
    ("[foo]\nx = 1\n", "unknown key 'foo'"),
    ("[retention]\nsession_lease_hours = 0\n", "retention.session_lease_hours: Input should be greater than 0 (got 0)"),
    (
        "[retention]\nsession_lease_hours = 169\n",
        "retention.session_lease_hours: Input should be less than or equal to 168 (got 169)",
    ),
    (
        "[retention]\nsession_lease_hours = nan\n",
        "retention.session_lease_hours: Input should be less than or equal to 168 (got nan)",
    ),
    (
        "[retention]\nsession_lease_hours = true\n",
        "retention.session_lease_hours: Input should be a valid number (got True)",
    ),
    ("[recall]\nsearch_limit = 10.0\n", "recall.search_limit: Input should be a valid integer (got 10.0)"),
    ("[recall]\nsearch_limit = true\n", "recall.search_limit: Input should be a valid integer (got True)"),
    ("[recall]\ncontext_budget = 49\n", "recall.context_budget: Input should be greater than or equal to 50 (got 49)"),
    ("[recall]\nsearch_limit = 1001\n", "recall.search_limit: Input should be less than or equal to 1000 (got 1001)"),
    ("[hooks]\nallow_in_place_edits = 1\n", "hooks.allow_in_place_edits: Input should be a valid boolean (got 1)"),
    (
        '[agents]\nrisk_decision = "block"\n',
        "agents.risk_decision: Input should be 'ask', 'deny' or 'context' (got 'block')",
    ),
    (
        '[recall]\nsynonyms = [["pg"]]\n',
        "recall.synonyms: item 0: Input should be a list of 2 to 16 words (got [['pg']])",
    ),
    (
        '[recall]\nsynonyms = "pg"\n',
        "recall.synonyms: Input should be a list of at most 200 lists of words (got 'pg')",
    ),
    (
        '[recall]\nsynonyms = [["pg", 3]]\n',
        "recall.synonyms: item 0: 3 should be a word of 1 to 40 printable characters (got [['pg', 3]])",
    ),
    (
        "[agents]\nsession_budget = 20000\n",
        "agents.session_budget: Input should be less than or equal to 10000 (got 20000)",
    ),
    ("[agents]\nprompt_budget = 10\n", "agents.prompt_budget: Input should be greater than or equal to 400 (got 10)"),
    # the first problem in schema order is the one reported
    (
        'zzz = 1\n[workflow]\nproposal_approval = "x"\n',
        "workflow.proposal_approval: Input should be 'manual' or 'auto' (got 'x')",
    ),
    ("[hooks]\nallow_in_place_edits = 2\n[workflow]\nzz = 1\n", "unknown key 'workflow.zz'"),
]


@pytest.mark.parametrize(("text", "message"), BAD_VALUES)
def test_bad_values_are_one_line_naming_file_and_key(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        configmod.load([configmod.ConfigSource("/x/config.toml", text.encode())])
    assert str(caught.value) == f"/x/config.toml: {message}"


def test_values_keep_their_types() -> None:
    config = configmod.load(
        [
            configmod.ConfigSource("a", b"[retention]\nsession_lease_hours = 12\n"),
            configmod.ConfigSource("b", b"[recall]\nsearch_limit = 1000\n"),
        ]
    )
    assert config.retention.session_lease_hours == 12.0 and isinstance(config.retention.session_lease_hours, float)
    assert (config.recall.search_limit, config.recall.context_budget) == (1000, 800)
    assert config.workflow.proposal_approval == "manual" and config.hooks.allow_in_place_edits is False
