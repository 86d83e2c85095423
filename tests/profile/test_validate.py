"""`git memzoi validate` over whole trees: the work tree, a revision, a bare clone."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from support import FIXTURES, git, interop_dir, run_cli

CONF = FIXTURES / "conformance"
RECORD = (CONF / "records/valid/profile-example.md").read_text()
PACKET = (CONF / "packets/valid/profile-example.md").read_text()


def _place_examples(repo) -> None:  # type: ignore[no-untyped-def]
    repo.write(".memzoi/records/apps/active/data-fetching.md", RECORD)
    repo.write(".memzoi/proposals/pending/mem_2026_07_06_auth_001.md", PACKET)


def test_profile_examples_validate(repo) -> None:
    _place_examples(repo)
    result = run_cli("validate", "--json")
    data = result.json()
    assert data["ok"] is True
    assert data["records"] == 1 and data["packets"] == 1
    # the example supersedes a record that is not in this tree: a warning, not an error
    assert [p["code"] for p in data["problems"]] == ["supersedes-missing"]


def test_interop_memory_validates_unchanged(repo) -> None:
    shutil.copytree(interop_dir() / ".memzoi" / "records", repo.path / ".memzoi" / "records", dirs_exist_ok=True)
    before = {p: p.read_bytes() for p in (repo.path / ".memzoi").rglob("*.md")}
    data = run_cli("validate", "--json").json()
    assert data["ok"] is True and data["records"] == 35 and data["problems"] == []
    assert before == {p: p.read_bytes() for p in (repo.path / ".memzoi").rglob("*.md")}


@pytest.mark.parametrize(
    "rel", sorted(p.relative_to(CONF / "records/invalid").as_posix() for p in (CONF / "records/invalid").glob("*.md"))
)
def test_each_invalid_record_fails_with_location(repo, rel: str) -> None:
    import tomllib

    expect = tomllib.loads((CONF / "cases.toml").read_text())[f"records/invalid/{rel}"]
    repo.write(f".memzoi/records/{rel}", (CONF / "records/invalid" / rel).read_bytes())
    result = run_cli("validate", expect=1)
    wanted = f".memzoi/records/{rel}:{expect['line']}: {expect['expect']}: "
    assert any(line.startswith(wanted) for line in result.stdout.splitlines()), result.stdout
    assert "Traceback" not in result.stderr


def test_reserved_files_and_concept_ids(repo) -> None:
    repo.write(".memzoi/records/index.md", "---\ntitle: nav\n---\n# nav\n")
    repo.write(".memzoi/records/ops/log.md", RECORD)
    repo.write(".memzoi/records/Bad_Name.md", RECORD.replace("use-react-query-in-apps-active", "other-id"))
    repo.write(".memzoi/records/ops/-dash.md", RECORD.replace("use-react-query-in-apps-active", "dash-id"))
    out = run_cli("validate", expect=1).stdout
    assert ".memzoi/records/index.md:1: reserved-file: index.md is for human navigation" in out
    assert ".memzoi/records/ops/log.md:1: reserved-file: log.md" in out
    assert ".memzoi/records/Bad_Name.md:1: concept-id: " in out
    assert ".memzoi/records/ops/-dash.md:1: concept-id: " in out


def test_plain_index_and_log_are_fine_at_every_level(repo) -> None:
    repo.write(".memzoi/records/team/index.md", "# Team records\n\nNavigation only.\n")
    repo.write(".memzoi/records/team/log.md", "# notes\n\n- imported 3 records\n")
    assert run_cli("validate", "--json").json()["ok"] is True


def test_duplicate_record_ids_across_tree(repo) -> None:
    repo.write(".memzoi/records/a/one.md", RECORD)
    repo.write(".memzoi/records/b/two.md", RECORD)
    out = run_cli("validate", expect=1).stdout
    assert (
        ".memzoi/records/b/two.md:2: id-duplicate: record ID 'use-react-query-in-apps-active' "
        "is also used by .memzoi/records/a/one.md" in out
    )


def test_packet_status_must_match_its_folder(repo) -> None:
    repo.write(".memzoi/proposals/resolved/applied/mem_2026_07_06_auth_001.md", PACKET)
    out = run_cli("validate", expect=1).stdout
    assert "packet-status: packets in .memzoi/proposals/resolved/applied/ must have status: applied" in out


def test_applied_packet_without_its_record_is_an_orphan(repo) -> None:
    repo.write(".memzoi/proposals/resolved/applied/x.md", (CONF / "packets/valid/resolved-applied.md").read_text())
    out = run_cli("validate", expect=1).stdout
    assert "resolution-orphan: applied packet names record 'protected-routes-must-validate-sessions-server-side'" in out


def test_non_repo_safe_packet_warns_in_worktree_and_fails_when_committed(repo, tmp_path: Path) -> None:
    repo.write(
        ".memzoi/proposals/pending/mem_2026_07_06_auth_001.md",
        PACKET.replace("sensitivity: repo-safe", "sensitivity: secret"),
    )
    worktree = run_cli("validate", "--json").json()
    assert worktree["ok"] is True
    assert [(p["code"], p["severity"]) for p in worktree["problems"]] == [("sensitivity", "warning")]
    repo.commit("add packet")
    committed = run_cli("validate", "--rev", "HEAD", expect=1)
    assert "sensitivity: sensitivity secret must not be committed to repository memory" in committed.stdout
    # a packet with no sensitivity at all reads as unknown
    repo.write(".memzoi/proposals/pending/mem_2026_07_06_auth_001.md", PACKET.replace("sensitivity: repo-safe\n", ""))
    data = run_cli("validate", "--json").json()
    assert "unknown (not declared)" in data["problems"][0]["message"]


def test_rev_in_bare_clone_gives_same_verdict(repo, tmp_path: Path) -> None:
    _place_examples(repo)
    repo.write(
        ".memzoi/records/broken.md",
        RECORD.replace("status: active", "status: current").replace("use-react-query-in-apps-active", "broken"),
    )
    repo.commit("memory")
    work = run_cli("validate", "--rev", "HEAD", "--json", expect=1).json()
    bare = tmp_path / "server.git"
    git("clone", "-q", "--bare", str(repo.path), str(bare), cwd=tmp_path)
    server = run_cli("validate", "--rev", "HEAD", "--json", cwd=bare, expect=1).json()
    assert server == work
    assert any(p["code"] == "status-alias" for p in server["problems"])
    plain = run_cli("validate", expect=1).stdout
    assert ".memzoi/records/broken.md:10: status-alias" in plain


def test_validate_named_paths_and_bad_paths(repo, tmp_path: Path) -> None:
    _place_examples(repo)
    ok = run_cli("validate", ".memzoi/records/apps", "--json").json()
    assert ok["files_checked"] == 1
    outside = run_cli("validate", "README.md", expect=2)
    assert "not inside .memzoi/" in outside.stderr
    missing = run_cli("validate", ".memzoi/records/nope.md", expect=2)
    assert "no such file" in missing.stderr
    assert "unknown revision" in run_cli("validate", "--rev", "no-such-branch", expect=2).stderr


def test_symlinked_record_is_refused(repo, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text(RECORD)
    (repo.path / ".memzoi/records/linked.md").symlink_to(outside)
    out = run_cli("validate", expect=1).stdout
    assert ".memzoi/records/linked.md:1: symlink:" in out


def test_validate_in_bare_repo_without_rev_is_a_usage_error(repo, tmp_path: Path) -> None:
    bare = tmp_path / "b.git"
    git("clone", "-q", "--bare", str(repo.path), str(bare), cwd=tmp_path)
    result = run_cli("validate", cwd=bare, expect=2)
    assert "bare" in result.stderr


def test_validate_rev_in_a_blobless_partial_clone_names_the_missing_blob(tmp_path: Path) -> None:
    """libgit2 cannot fetch a promised blob: the command says which file and object, and how git gets it."""
    from support import make_repo, memzoi_exe

    origin = make_repo(tmp_path / "origin")
    (origin.path / ".memzoi" / "records" / "note.md").unlink(missing_ok=True)
    bare = tmp_path / "served.git"
    git("clone", "-q", "--bare", str(origin.path), str(bare), cwd=tmp_path)
    git("config", "uploadpack.allowFilter", "true", cwd=bare)
    git("clone", "-q", "--no-checkout", "--filter=blob:none", f"file://{bare}", "partial", cwd=tmp_path)
    partial = tmp_path / "partial"
    log_oid = git("rev-parse", "HEAD:.memzoi/log.md", cwd=partial).stdout.strip()
    missing = git("rev-list", "--objects", "--missing=print", "HEAD", cwd=partial).stdout
    assert f"?{log_oid}" in missing  # the clone really lacks it
    import subprocess

    proc = subprocess.run([memzoi_exe(), "validate", "--rev", "HEAD"], cwd=partial, capture_output=True, text=True)
    assert proc.returncode == 3, proc.stderr
    first = proc.stderr.splitlines()[0]
    assert first.startswith("git memzoi: .memzoi/") and "is not in this repository (a partial clone" in first
    assert "git cat-file -p" in proc.stderr and "Traceback" not in proc.stderr
    git("cat-file", "-p", log_oid, cwd=partial)  # as the hint says: git fetches it from the promisor
    assert f"?{log_oid}" not in git("rev-list", "--objects", "--missing=print", "HEAD", cwd=partial).stdout
