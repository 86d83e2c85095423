"""End to end: private memory is recalled across linked worktrees only on request, and leaks nowhere else."""

from __future__ import annotations

from pathlib import Path

from git_memzoi.runtime.workspace import Workspace
from support import Repo, run_cli
from support.recall import record_text

LOCAL_MARK = "zqxlocalmark4417"
SESSION_MARK = "zqxsessionmark8821"
INCLUDE_LOCAL = "--include-local"  # the recall commands' opt-in to private and runtime memory

REPO_RECORD = record_text(
    "use-postgres", title="Use Postgres", applies_to=["src/**"], body="The service stores everything in Postgres."
)


def files_containing(root: Path, *needles: str) -> list[Path]:
    out = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            if any(n.encode() in data for n in needles):
                out.append(path)
    return out


def setup(repo: Repo, tmp_path: Path) -> tuple[Repo, str, str]:
    repo.write(".memzoi/records/semantic/decisions/use-postgres.md", REPO_RECORD)
    repo.commit("a repo record")
    linked = repo.add_worktree("agent-b", tmp_path / "agent-b")
    title, body = f"Flaky migrations {LOCAL_MARK}", f"Migrations in src fail on a cold cache {LOCAL_MARK}."
    add_risk = ("local", "add", "--type", "risk", "--applies-to", "src/**")
    local_id = run_cli(*add_risk, "--title", title, "--body", body, cwd=repo.path).stdout.strip()
    cp_id = run_cli(
        "checkpoint", "add", "--task", "Fix migrations", "--note", f"Tried a warm cache {SESSION_MARK}.", cwd=repo.path
    ).stdout.strip()
    return linked, local_id, cp_id


def test_linked_worktree_recalls_local_memory_only_on_request(repo: Repo, tmp_path: Path) -> None:
    linked, local_id, _ = setup(repo, tmp_path)
    hits = run_cli("search", LOCAL_MARK, INCLUDE_LOCAL, "--json", cwd=linked.path).json()["hits"]
    assert [(h["record_id"], h["store"]) for h in hits] == [(local_id, "local")]
    assert hits[0]["citation"]["path"] == f"shared.db:local/{local_id}"
    assert run_cli("search", LOCAL_MARK, "--json", cwd=linked.path).json()["hits"] == []
    local_hits = run_cli("local", "search", LOCAL_MARK, "--json", cwd=linked.path).json()["hits"]
    assert [h["record_id"] for h in local_hits] == [local_id]
    assert run_cli("local", "search", "Postgres", "--json", cwd=linked.path).json()["hits"] == []  # local only
    pack = run_cli(
        "context", "--task", "migrations cold cache", "--path", "src/db.py", INCLUDE_LOCAL, "--json", cwd=linked.path
    ).json()
    assert local_id in [i["record_id"] for i in pack["items"]]
    plain = run_cli(
        "context", "--task", "migrations cold cache", "--path", "src/db.py", "--json", cwd=linked.path
    ).json()
    assert local_id not in [i["record_id"] for i in plain["items"]] and LOCAL_MARK not in plain["text"]
    assert "use-postgres" in [i["record_id"] for i in plain["items"]]


def test_forget_in_one_worktree_removes_it_from_recall_in_the_other(repo: Repo, tmp_path: Path) -> None:
    linked, local_id, _ = setup(repo, tmp_path)
    assert run_cli("search", LOCAL_MARK, INCLUDE_LOCAL, "--json", cwd=repo.path).json()["hits"]
    run_cli("local", "forget", local_id, cwd=linked.path)
    assert run_cli("search", LOCAL_MARK, INCLUDE_LOCAL, "--all", "--json", cwd=repo.path).json()["hits"] == []
    assert run_cli("local", "search", LOCAL_MARK, "--json", cwd=linked.path).json()["hits"] == []


def test_private_memory_never_reaches_exports_or_the_work_tree(repo: Repo, tmp_path: Path) -> None:
    linked, local_id, _cp_id = setup(repo, tmp_path)
    out = tmp_path / "out"
    for where in (repo.path, linked.path):
        run_cli("rebuild", "--full", cwd=where)
        run_cli("search", LOCAL_MARK, INCLUDE_LOCAL, cwd=where)
        run_cli("context", "--task", "migrations cold cache", INCLUDE_LOCAL, cwd=where)
        run_cli("handoff", "--task", "Fix migrations", cwd=where)
        run_cli("precheck", "--path", "src/db.py", cwd=where)
        run_cli("local", "promote", local_id, cwd=where, expect=None)  # pending in the DB inbox only
        for kind in ("okf", "agents-md", "claude-md"):
            run_cli("export", kind, cwd=where)
            run_cli("export", kind, "--output", str(out / where.name / kind), cwd=where)
        exports = Workspace.open(where).layout.exports
        assert exports.is_dir() and any(exports.rglob("*.md"))
        assert files_containing(exports, LOCAL_MARK, SESSION_MARK) == []
    assert any(out.rglob("*.md")) and files_containing(out, LOCAL_MARK, SESSION_MARK) == []
    # nothing under either work tree, .git included, holds the private text
    assert files_containing(repo.path, LOCAL_MARK, SESSION_MARK) == []
    assert files_containing(linked.path, LOCAL_MARK, SESSION_MARK) == []
    # while the repository record is exported
    assert any("Use Postgres" in p.read_text() for p in Workspace.open(repo.path).layout.exports.rglob("*.md"))


def test_mcp_tools_leave_private_memory_out_without_opt_in(repo: Repo, tmp_path: Path) -> None:
    from git_memzoi.mcp.tools import MemoryTools

    setup(repo, tmp_path)
    tools = MemoryTools(Workspace.open(repo.path))
    assert tools.search_memory(LOCAL_MARK).model.hits == []  # type: ignore[attr-defined]
    answers = [
        tools.search_memory("migrations cold cache"),
        tools.build_context_pack("migrations cold cache", ["src/db.py"]),
        tools.precheck_path("src/db.py"),
        tools.precheck_command("run migrations on a cold cache"),
        tools.precheck_action("migrations"),
        tools.handoff("migrations cold cache"),
    ]
    for answer in answers:
        assert LOCAL_MARK not in answer.text and LOCAL_MARK not in answer.model.model_dump_json()
    opted = tools.search_memory(LOCAL_MARK, include_local=True)
    assert LOCAL_MARK in opted.text
