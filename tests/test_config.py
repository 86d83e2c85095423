"""Config precedence and errors that name the file and key."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import run_cli
from git_memzoi.runtime.workspace import Workspace


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
    assert ws.config.workflow.proposal_approval == "manual"   # repo policy overrides the user-global one
    assert ws.config.recall.search_limit == 7


def test_unknown_key_and_bad_value_name_file_and_key(repo) -> None:
    repo.write(".memzoi/config.toml", "[workflow]\nproposal_aproval = \"manual\"\n")
    out = run_cli("doctor", "--json", expect=1).json()
    assert out["checks"]["config"].endswith(".memzoi/config.toml: unknown key 'workflow.proposal_aproval'")
    repo.write(".memzoi/config.toml", "[workflow]\nproposal_approval = \"sometimes\"\n")
    out = run_cli("doctor", "--json", expect=1).json()
    assert ".memzoi/config.toml: workflow.proposal_approval:" in out["checks"]["config"]
    assert "'sometimes'" in out["checks"]["config"]
    repo.write(".memzoi/config.toml", "[workflow\n")
    assert "not valid TOML" in run_cli("doctor", "--json", expect=1).json()["checks"]["config"]
    repo.write(".memzoi/config.toml", "[recall]\nsearch_limit = \"10\"\n")
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
