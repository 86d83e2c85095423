"""`git memzoi import` of an OKF bundle (`export okf` output), and of the Rust Memzoi's generated projection."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from git_memzoi.profile import frontmatter
from support import Repo, git, make_repo, run_cli
from support.importer import BASIC, copy_fixture, entries, memzoi_files, pending, plan
from support.lifecycle import add_record


@pytest.fixture
def source(repo: Repo) -> Repo:
    """A repository with imported records (from AGENTS.md and the rest) and two written by hand."""
    copy_fixture(BASIC, repo)
    run_cli("import", "--apply", "--commit")
    add_record(repo, "semantic/decisions/auth-tokens", "auth-tokens")
    add_record(repo, "semantic/decisions/session-store", "session-store", applies_to=["src/session/**"])
    return repo


def export_bundle() -> Path:
    return Path(run_cli("export", "okf", "--json").json()["path"])


def bundle_records(bundle: Path) -> dict[str, Path]:
    records = bundle / "records"
    return {p.relative_to(records).as_posix()[:-3]: p for p in sorted(records.rglob("*.md"))}


def test_export_okf_then_import_plans_nothing(source: Repo) -> None:
    bundle = export_bundle()
    records = bundle_records(bundle)
    assert len(records) == 19
    for args in (("--from", "okf", str(bundle)), (str(bundle),), (str(bundle / "records"),)):
        result = plan(*args)
        assert result["changes"] == 0, [e for e in result["entries"] if e["action"] != "unchanged"]
        assert len(entries(result, "unchanged")) == 19
        assert {e["where"].split(":")[0] for e in result["entries"]} == {f"okf/records/{c}.md" for c in records}
    # the plan does not depend on where the bundle lies: outside the repository, or inside and untracked
    elsewhere = source.path.parent / "elsewhere" / "okf"
    shutil.copytree(bundle, elsewhere)
    assert plan(str(elsewhere))["plan_id"] == plan(str(bundle))["plan_id"]
    run_cli("export", "okf", "--output", ".")
    assert plan("okf")["plan_id"] == plan(str(bundle))["plan_id"]


def test_a_bundle_committed_in_the_tree_is_discovered_and_plans_nothing(source: Repo) -> None:
    run_cli("export", "okf", "--output", "docs")
    source.commit("the bundle")
    result = plan()
    bundled = [e for e in result["entries"] if e["where"].startswith("docs/okf/records/")]
    # each is its record, unchanged, or the same text as the AGENTS.md section it was imported from
    assert len(bundled) == 19 and {e["action"] for e in bundled} == {"unchanged", "duplicate"}
    assert {e["where"].split(":")[0] for e in entries(result, "unchanged")} >= {
        "docs/okf/records/semantic/decisions/auth-tokens.md",
        "docs/okf/records/semantic/decisions/session-store.md",
    }
    assert result["changes"] == 0
    assert not [e for e in result["entries"] if e["where"].startswith("docs/okf/index.md")]


def test_an_edited_bundle_record_plans_one_supersede_of_its_record(source: Repo) -> None:
    bundle = export_bundle()
    path = bundle_records(bundle)["semantic/decisions/auth-tokens"]
    path.write_text(path.read_text().replace("The body of auth-tokens.", "Tokens rotate every day."))
    result = plan(str(bundle))
    assert result["changes"] == 1
    (change,) = [e for e in result["entries"] if e["action"] == "supersede"]
    assert change["target"] == "auth-tokens" and change["concept_id"] == "semantic/decisions/auth-tokens-2"


def test_into_a_fresh_repository_one_create_per_record_keeping_its_fields(
    source: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bundle = export_bundle()
    records = bundle_records(bundle)
    fresh = make_repo(tmp_path / "fresh")
    monkeypatch.chdir(fresh.path)
    result = plan(str(bundle))
    creates = entries(result, "create")
    assert result["changes"] == len(creates) == 19
    assert sorted(e["concept_id"] for e in creates) == sorted(records)
    run_cli("import", "--apply", "--commit", str(bundle))
    run_cli("validate")
    assert pending(fresh) == []
    for concept_id, path in records.items():
        original = frontmatter.parse(path.read_bytes(), str(path))
        made_path = fresh.path / ".memzoi/records" / f"{concept_id}.md"
        made = frontmatter.parse(made_path.read_bytes(), str(made_path))
        for field in ("id", "type", "lane", "title", "applies_to", "tags", "description", "confidence"):
            assert made.data.get(field) == original.data.get(field), (concept_id, field)
        assert made.body.strip() == original.body.strip()
        assert made.data["source"] == "import" and made.data["origin"]["route"] == "import"
        assert made.data["source_ref"].startswith(f"import:okf/records/{concept_id}.md?format=okf&blob=")
    assert plan(str(bundle))["changes"] == 0  # a re-import finds the records it made
    assert git("status", "--porcelain", cwd=fresh.path).stdout == ""


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda text: text.replace("---\n", "---\ntitle: [unclosed\n", 1), "import-okf:"),
        (lambda text: text.replace("type: decision", "type: gossip"), "import-okf: type:"),
        (lambda text: text.replace("kind: memory", "kind: proposal"), "import-okf: kind:"),
        (lambda text: text.split("\n---\n", 1)[1], "import-okf:"),
        (
            lambda text: re.sub(r"(?m)^title: .*$", lambda _: 'title: "Evil \\e[31m title"', text, count=1),
            "import-okf: title: holds the control character \\x1b",
        ),
    ],
    ids=["yaml", "type", "kind", "no-frontmatter", "control-escape"],
)
def test_a_malformed_bundle_is_one_line_naming_the_file_and_writes_nothing(
    source: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage, message: str
) -> None:
    bundle = export_bundle()
    broken = bundle_records(bundle)["semantic/decisions/session-store"]
    broken.write_text(damage(broken.read_text()))
    fresh = make_repo(tmp_path / "fresh")
    monkeypatch.chdir(fresh.path)
    before = memzoi_files(fresh)
    for args in ((), ("--write",), ("--apply",)):
        out = run_cli("import", *args, str(bundle), expect=1)
        first = out.stderr.strip().splitlines()[0]
        assert first.startswith(f"git memzoi: {broken}:") and message in first, out.stderr
        assert len(out.stderr.strip().splitlines()) <= 2 and "Traceback" not in out.stderr
    assert memzoi_files(fresh) == before


def test_a_folder_that_is_no_bundle_is_refused(repo: Repo, tmp_path: Path) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("# a\n")
    out = run_cli("import", "--from", "okf", str(tmp_path / "notes"), expect=2)
    assert "outside the repository" in out.stderr and "only an OKF bundle folder is read" in out.stderr
    missing = run_cli("import", "--from", "okf", str(tmp_path / "gone"), expect=2)
    assert missing.stderr.splitlines() == [f"git memzoi: {tmp_path / 'gone'}: no such file or folder"]


# --- the Rust Memzoi's generated projection ------------------------------------------------------------------

RUST_PROJECTION = (
    "<!-- Generated by memzoi. Do not edit directly. -->\n"
    "# Memzoi Projection for AGENTS.md\n\n"
    "This file is generated from active canonical memory records.\n\n"
    "## Run the tests [procedure]\n\n"
    "Record: `rec-1`\n\n"
    "Run cargo test before reporting success.\n\n"
)


def test_the_rust_memzois_generated_projection_is_not_memory(repo: Repo) -> None:
    repo.write("AGENTS.md", RUST_PROJECTION)
    repo.write("worker/CLAUDE.md", "\n\n" + RUST_PROJECTION)
    repo.write("api/AGENTS.md", "# API\n\n## Errors\n\nReturn problem+json.\n\n" + RUST_PROJECTION)
    repo.commit("projections")
    result = plan()
    generated = {e["where"]: e["reason"] for e in entries(result, "generated")}
    assert generated == {
        "AGENTS.md:1": "written by the Rust Memzoi (its generated projection)",
        "worker/CLAUDE.md:1": "written by the Rust Memzoi (its generated projection)",
    }
    # the header counts only at the top: further down it is text of a hand-written file
    assert "api: Errors" in [e["title"] for e in entries(result, "create")]


def test_a_committed_bundle_plans_nothing_from_a_bare_clone(source: Repo, tmp_path: Path) -> None:
    """With --rev the records are read from the commit: the bundle's records are found there, unchanged."""
    run_cli("export", "okf", "--output", "docs")
    source.commit("the bundle")
    bare = tmp_path / "bare.git"
    git("clone", "--bare", "-q", str(source.path), str(bare), cwd=tmp_path)
    result = run_cli("import", "--json", "--rev", "main", cwd=bare).json()
    bundled = [e for e in result["entries"] if e["where"].startswith("docs/okf/records/")]
    assert len(bundled) == 19 and result["changes"] == 0
    hand = [e for e in bundled if "auth-tokens" in e["where"]]
    assert [e["action"] for e in hand] == ["unchanged"] and hand[0]["target"] == "auth-tokens"
