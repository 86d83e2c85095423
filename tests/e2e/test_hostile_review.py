"""What git memzoi's newest commands do when a demanding or hostile user drives them, as real processes.

Each test reproduces one defect found by attacking import, ID prefixes, review, status,
completion, agent install and apply in odd git states, through `git memzoi` in real
repositories.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support import Repo, git
from support.terminal import PROMPT, Terminal

pytestmark = pytest.mark.slow


def memzoi(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`git memzoi ARGS` as a user runs it: a real process through git."""
    return subprocess.run(
        ["git", "memzoi", *args], cwd=cwd, capture_output=True, text=True, env={**os.environ, **(env or {})}
    )


def ok(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`git memzoi ARGS`, which must succeed."""
    done = memzoi(*args, cwd=cwd)
    assert done.returncode == 0, f"{args}: exit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def test_export_into_then_import_survives_a_description_that_opens_a_code_fence(repo: Repo) -> None:
    """A record whose first paragraph starts inside a code fence has a description that opens one.

    The export wrote it as a bare line, so its `<!-- memzoi:end -->` fell inside an unclosed fence and
    the next import refused the file it had just been given (import-marker).
    """
    repo.write("AGENTS.md", "# Notes\n\nHand-written text.\n")
    repo.commit("agents")
    body = "```bash\n# before pushing\n./scripts/check --base origin/main\n\n./scripts/test\n```\n"
    ok("propose", "--type", "procedure", "--title", "Before pushing", "--body", body, "--packet", cwd=repo.path)
    ok("approve", "--all", cwd=repo.path)
    ok("apply", "--all", "--commit", cwd=repo.path)
    ok("export", "agents-md", "--into", "AGENTS.md", cwd=repo.path)
    first = (repo.path / "AGENTS.md").read_bytes()
    git("commit", "-qam", "export", cwd=repo.path)
    plan = memzoi("import", cwd=repo.path)
    assert plan.returncode == 0, plan.stderr
    assert "before-pushing" not in plan.stdout
    ok("export", "agents-md", "--into", "AGENTS.md", cwd=repo.path)
    assert (repo.path / "AGENTS.md").read_bytes() == first


def test_export_into_escapes_a_record_line_that_is_the_block_end_marker(repo: Repo) -> None:
    """A record whose description is `<!-- memzoi:end -->` closed the managed block early.

    The file then had two end markers: every later `export --into` and `import` refused it.
    """
    repo.write("AGENTS.md", "# Notes\n\nHand-written text.\n")
    repo.commit("agents")
    body = "<!-- memzoi:end -->\n\nThe block marker above is quoted from the Rust tool's docs.\n"
    ok("propose", "--type", "convention", "--title", "Marker quoted", "--body", body, "--packet", cwd=repo.path)
    ok("approve", "--all", cwd=repo.path)
    ok("apply", "--all", "--commit", cwd=repo.path)
    ok("export", "agents-md", "--into", "AGENTS.md", cwd=repo.path)
    first = (repo.path / "AGENTS.md").read_bytes()
    assert first.count(b"\n<!-- memzoi:end -->\n") == 1
    git("commit", "-qam", "export", cwd=repo.path)
    plan = memzoi("import", cwd=repo.path)
    assert plan.returncode == 0, plan.stderr
    ok("export", "agents-md", "--into", "AGENTS.md", cwd=repo.path)
    assert (repo.path / "AGENTS.md").read_bytes() == first


def test_import_of_a_crlf_agents_md_applies_and_its_packets_validate(repo: Repo) -> None:
    """A Windows-edited AGENTS.md (CRLF) planned fine, but `--apply` refused its own packets.

    `--write` wrote packets that `validate` rejected (line-endings), and `--apply` exited 1.
    """
    repo.write(
        "AGENTS.md",
        "# Team\r\n\r\n## Setup\r\n\r\nrun make\r\nthen make test\r\n\r\n## Never\r\n\r\nforce-push main\r\n",
    )
    repo.commit("crlf agents")
    ok("import", "--write", cwd=repo.path)
    ok("validate", cwd=repo.path)
    ok("import", "--apply", "--commit", cwd=repo.path)
    ok("validate", cwd=repo.path)
    record = (repo.path / ".memzoi/records/procedural/procedures/setup.md").read_bytes()
    assert b"\r" not in record and b"run make\nthen make test" in record
    assert "0 change(s)" in ok("import", cwd=repo.path).stdout


def test_export_into_a_crlf_file_keeps_its_hand_written_line_endings(repo: Repo) -> None:
    """`export agents-md --into AGENTS.md` on a CRLF file rewrote every hand-written line as LF.

    The block is all it may change: the diff showed the whole file as rewritten.
    """
    hand = b"# Team\r\n\r\n## Setup\r\n\r\nrun make\r\n"
    repo.write("AGENTS.md", hand)
    repo.commit("crlf agents")
    ok(
        "propose",
        "--type",
        "convention",
        "--title",
        "Tabs in Makefiles",
        "--body",
        "Use tabs.",
        "--packet",
        cwd=repo.path,
    )
    ok("approve", "--all", cwd=repo.path)
    ok("apply", "--all", "--commit", cwd=repo.path)
    ok("export", "agents-md", "--into", "AGENTS.md", cwd=repo.path)
    after = (repo.path / "AGENTS.md").read_bytes()
    assert after.startswith(hand)
    assert b"Tabs in Makefiles" in after and b"\n" not in after.replace(b"\r\n", b"")
    ok("export", "agents-md", "--into", "AGENTS.md", cwd=repo.path)
    assert (repo.path / "AGENTS.md").read_bytes() == after
    git("commit", "-qam", "export", cwd=repo.path)
    plan = ok("import", cwd=repo.path).stdout
    assert "AGENTS.md:3-5" in plan and "tabs" not in plan.lower()


@pytest.mark.parametrize(
    "args",
    [("approve", ""), ("apply", ""), ("show", ""), ("reject", "", "--reason", "r"), ("expiry", ""), ("apply", " ")],
)
def test_an_empty_id_is_refused_not_taken_for_a_prefix_of_the_only_one(repo: Repo, args: tuple[str, ...]) -> None:
    """`git memzoi approve ""` (an unset `$ID`) approved the only proposal there was; `apply ""` applied it.

    Every ID begins with the empty string, so it was a "unique prefix"; git refuses an empty name.
    """
    ok("propose", "--type", "convention", "--title", "Use tabs", "--body", "Tabs in Makefiles.", cwd=repo.path)
    ok("approve", "--all", cwd=repo.path)
    ok("apply", "--all", cwd=repo.path)
    ok("propose", "--type", "convention", "--title", "Use spaces", "--body", "Spaces in Python.", cwd=repo.path)
    before = ok("proposals", "--json", cwd=repo.path).stdout
    done = memzoi(*args, cwd=repo.path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "empty" in done.stderr and done.stderr.count("\n") <= 2
    assert ok("proposals", "--json", cwd=repo.path).stdout == before


def test_show_weighs_record_ids_against_proposal_ids(repo: Repo) -> None:
    """`show` looked at proposals first and at records only when no proposal matched.

    So `show mem`, a prefix of proposal `mem_2026_…` and of record `memo`, silently showed the
    proposal; and once record `mem` existed, `show mem` (its whole ID) was refused as ambiguous.
    """
    ok("propose", "--type", "convention", "--title", "Memo", "--body", "Write memos.", cwd=repo.path)
    ok("approve", "--all", cwd=repo.path)
    ok("apply", "--all", "--commit", cwd=repo.path)
    clash = memzoi("show", "mem", cwd=repo.path)
    assert clash.returncode == 2, clash
    assert "ambiguous" in clash.stderr and "record memo" in clash.stderr
    ok("propose", "--type", "convention", "--title", "Mem", "--body", "Memory lives in files.", cwd=repo.path)
    ok("approve", "--all", cwd=repo.path)
    ok("apply", "--all", "--commit", cwd=repo.path)
    assert ok("show", "mem", cwd=repo.path).stdout.startswith("record mem  active")
    assert ok("show", "memo", cwd=repo.path).stdout.startswith("record memo  active")


@pytest.mark.parametrize(
    ("editor", "said"),
    [
        ("/nonexistent/editor", "Editing failed"),
        ("false", "Editing failed"),
        (f"{sys.executable} -c 'import os, sys; os.unlink(sys.argv[1])'", "could not be read back"),
    ],
    ids=["missing", "fails", "removes-its-file"],
)
def test_review_survives_an_editor_that_fails(repo: Repo, editor: str, said: str) -> None:
    """`e` in review with a missing editor, one that exits 1, or one that removes its file ended the review.

    The first two printed click's "Error: …" and exited 1; the third was an internal error (exit 70).
    git's editors leave you where you were: the proposal is unchanged and the prompt comes back.
    """

    ok("propose", "--type", "convention", "--title", "Use tabs", "--body", "Tabs in Makefiles.", cwd=repo.path)
    term = Terminal(repo.path, "review", env={**os.environ, "EDITOR": editor, "TERM": "dumb"})
    term.until(PROMPT)
    term.answer("e")
    again = term.until(PROMPT)
    assert said.encode() in again and b"nothing was changed" in again
    term.answer("q")
    out = term.finish()
    assert term.proc.returncode == 0, out
    assert "review: nothing done" in out and "internal error" not in out
    shown = json.loads(ok("proposals", "--json", cwd=repo.path).stdout)
    assert [p["title"] for p in shown["proposals"]] == ["Use tabs"]


def test_agent_install_codex_global_writes_through_a_dotfiles_symlink(repo: Repo) -> None:
    """`agent install codex --global` replaced a symlinked ~/.codex/config.toml with a plain file.

    Dotfiles managers (stow, chezmoi, yadm) link ~/.codex/config.toml into a repository of their
    own; the update landed beside it and cut the link. `git config --global` writes through such a link.
    """
    home = Path(os.environ["HOME"])
    dotfiles = home / "dotfiles" / "codex.toml"
    dotfiles.parent.mkdir(parents=True)
    dotfiles.write_text('# mine\nmodel = "o3"\n')
    link = home / ".codex" / "config.toml"
    link.parent.mkdir()
    link.symlink_to(Path("..") / "dotfiles" / "codex.toml")
    ok("agent", "install", "codex", "--global", cwd=repo.path)
    assert link.is_symlink()
    text = dotfiles.read_text()
    assert text.startswith('# mine\nmodel = "o3"\n') and "[mcp_servers.memzoi]" in text
    again = ok("agent", "install", "codex", "--global", cwd=repo.path)
    assert "already set up" in again.stdout + again.stderr and link.is_symlink()


def test_apply_commit_shows_the_commit_hooks_output_as_git_does(repo: Repo) -> None:
    """A pre-commit hook's warnings (a linter's, a secret scanner's) reach the user of `git commit`.

    `apply --commit` runs the same hooks but captures what they print: a passing hook's warning is
    lost, and a refusing hook is cut to its last line.
    """
    hook = repo.path / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'lint: 2 warnings in .memzoi/records'\necho 'lint: see above'\n")
    hook.chmod(0o755)
    ok("propose", "--type", "convention", "--title", "Use tabs", "--body", "Tabs in Makefiles.", cwd=repo.path)
    ok("approve", "--all", cwd=repo.path)
    done = ok("apply", "--all", "--commit", cwd=repo.path)
    assert "lint: 2 warnings in .memzoi/records\nlint: see above\n" in done.stderr


def test_import_skips_an_item_whose_packet_was_rejected(repo: Repo) -> None:
    """After `reject` of one imported packet, the next import planned it again under the same ID.

    `import --write` then wrote a packet that collides with the rejected one's receipt (validate
    fails: packet-id-collision) and `import --apply` refused the whole batch, for good.
    """
    repo.write("AGENTS.md", "# Team\n\n## Setup\n\nrun make\n\n## Style\n\nTabs in Makefiles.\n")
    repo.commit("agents")
    ok("import", "--write", cwd=repo.path)
    git("add", "-A", cwd=repo.path)
    git("commit", "-qm", "import packets", cwd=repo.path)
    setup = next((repo.path / ".memzoi/proposals/pending").glob("import_setup_*.md")).stem
    ok("reject", setup, "--reason", "we use just, not make", "--commit", cwd=repo.path)
    plan = ok("import", cwd=repo.path).stdout
    assert f"rejected as {setup}" in plan and "1 change(s)" in plan
    ok("import", "--write", cwd=repo.path)
    ok("validate", cwd=repo.path)
    ok("import", "--apply", "--commit", cwd=repo.path)
    assert (repo.path / ".memzoi/records/semantic/conventions/style.md").is_file()
    assert not (repo.path / ".memzoi/records/procedural/procedures/setup.md").exists()
    repo.write("AGENTS.md", "# Team\n\n## Setup\n\nrun just\n\n## Style\n\nTabs in Makefiles.\n")
    git("commit", "-qam", "just", cwd=repo.path)
    assert "create      AGENTS.md:3-5" in ok("import", cwd=repo.path).stdout


def test_a_claude_md_line_that_only_imports_agents_md_is_no_record(repo: Repo) -> None:
    """The common `CLAUDE.md` that starts with `@AGENTS.md` made a record titled "CLAUDE.md" saying "@AGENTS.md".

    The import is followed (AGENTS.md's sections are read once); the line itself is no memory.
    """
    repo.write("AGENTS.md", "# Team\n\n## Style\n\nTabs in Makefiles.\n")
    repo.write("CLAUDE.md", "@AGENTS.md\n\n## Claude only\n\nUse the plan mode for migrations.\n")
    repo.commit("agents")
    plan = ok("import", "--json", cwd=repo.path)
    entries = json.loads(plan.stdout)["entries"]
    assert [(e["action"], e["title"]) for e in entries if e["action"] == "create"] == [
        ("create", "Style"),
        ("create", "Claude only"),
    ]
    assert not [e for e in entries if e["title"] == "CLAUDE.md"]


def test_import_never_reads_memzoi_own_files_and_takes_dot_for_the_repository(repo: Repo) -> None:
    """`import --from agents-md .memzoi` planned memory's own records and packets as new records.

    Each record became two more (its front matter as a section, its body as another); and `import .`,
    the folder SOURCE a git user types first, was "not a file git tracks".
    """
    repo.write("AGENTS.md", "# Team\n\n## Style\n\nTabs in Makefiles.\n")
    repo.commit("agents")
    ok("import", "--apply", "--commit", cwd=repo.path)
    for source in (".memzoi", ".memzoi/records/semantic/conventions/style.md", ".memzoi/log.md"):
        done = memzoi("import", "--from", "agents-md", source, cwd=repo.path)
        assert done.returncode == 2 and "own memory" in done.stderr, (source, done)
    whole = json.loads(ok("import", ".", "--json", cwd=repo.path).stdout)
    assert whole["counts"] == {"unchanged": 1}
    everything = json.loads(ok("import", "--from", "agents-md", ".", "--json", cwd=repo.path).stdout)
    assert not [e for e in everything["entries"] if e["where"].startswith(".memzoi/")]


def test_an_adr_of_front_matter_alone_spans_its_closing_line(repo: Repo) -> None:
    """An ADR that is front matter and nothing else was planned as `…:4-3`, a span past the file's end.

    The same fault was mended for rule files; the ADR reader kept it (tests/importer/test_import_fuzz.py finds it).
    """
    repo.write("docs/adr/0001-empty.md", "---\nstatus: accepted\n---")
    repo.commit("adr")
    plan = json.loads(ok("import", "--json", cwd=repo.path).stdout)
    assert [e["where"] for e in plan["entries"]] == ["docs/adr/0001-empty.md:3-3"]


@pytest.mark.parametrize("env", [{"TERM": "dumb"}, {"TERM": "xterm", "NO_COLOR": "1"}], ids=["dumb", "no-color"])
def test_review_does_not_colour_a_dumb_terminal_or_against_no_color(repo: Repo, env: dict[str, str]) -> None:
    """`review` wrote ANSI bold and diff colours on TERM=dumb (an Emacs shell) and with NO_COLOR set.

    git colours nothing on a dumb terminal; the escapes show up as `^[[1m` garbage there.
    """

    ok("propose", "--type", "convention", "--title", "Use tabs", "--body", "Tabs in Makefiles.", cwd=repo.path)
    base = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    term = Terminal(repo.path, "review", env={**base, **env})
    screen = term.until(PROMPT)
    term.answer("q")
    term.finish()
    assert b"Use tabs" in screen and b"\x1b[" not in screen


def test_import_prune_keeps_records_of_sources_a_sparse_checkout_leaves_out(repo: Repo) -> None:
    """In a sparse checkout without `web/`, `import --prune` planned web/AGENTS.md's record as a tombstone.

    Its plan said "its source is gone from web/AGENTS.md": the file is tracked and unchanged, only
    not checked out, and `--apply` would have tombstoned good memory. It is read from the index.
    """
    repo.write("AGENTS.md", "# Team\n\n## Root\n\nAt the root.\n")
    repo.write("web/AGENTS.md", "## Web\n\nUse React.\n")
    repo.write("web/app.js", "x\n")
    repo.commit("agents")
    ok("import", "--apply", "--commit", cwd=repo.path)
    git("sparse-checkout", "set", "--no-cone", "/*", "!/web/", cwd=repo.path)
    assert not (repo.path / "web").exists()
    plan = json.loads(ok("import", "--prune", "--json", cwd=repo.path).stdout)
    assert plan["counts"] == {"unchanged": 2}, plan["entries"]


def test_status_knows_a_chained_hook_and_does_not_send_you_to_a_refusal(repo: Repo) -> None:
    """With another tool's pre-commit hook, `status` said "to do: git memzoi hook install".

    That command refuses another tool's hook and hints to chain it; once chained, `status` still
    called the hook "not ours" and sent you back to `hook install`, round and round.
    """
    hooks = repo.path / ".git" / "hooks"
    husky = "#!/bin/sh\nnpx lint-staged\n"
    (hooks / "pre-commit").write_text(husky)
    (hooks / "pre-push").write_text(
        '#!/bin/sh\nrefs=$(cat); printf \'%s\\n\' "$refs" | git-memzoi hook pre-push "$@" || exit $?\n'
    )
    for name in ("pre-commit", "pre-push"):
        (hooks / name).chmod(0o755)
    before = json.loads(ok("status", "--json", cwd=repo.path).stdout)
    assert before["hooks"] == {"pre-commit": "not ours", "pre-push": "chained"}
    assert not [f for f in before["fixes"] if f.endswith("git memzoi hook install")]
    assert any("git-memzoi hook pre-commit || exit $?" in f for f in before["fixes"])
    assert memzoi("hook", "install", cwd=repo.path).returncode == 1
    (hooks / "pre-commit").write_text(husky + "git-memzoi hook pre-commit || exit $?\n")
    after = json.loads(ok("status", "--json", cwd=repo.path).stdout)
    assert after["hooks"] == {"pre-commit": "chained", "pre-push": "chained"}
    assert not [f for f in after["fixes"] if "hook" in f]


def test_import_rev_takes_a_source_relative_to_the_cwd_like_the_work_tree_does(repo: Repo) -> None:
    """In `web/`, `import AGENTS.md` read web/AGENTS.md but `import --rev HEAD AGENTS.md` read the root one.

    With --rev a SOURCE was taken from the top of the repository whatever the cwd: the plan was of
    another file, without a word.
    """
    repo.write("AGENTS.md", "## Root\n\nAt the root.\n")
    repo.write("web/AGENTS.md", "## Web\n\nUse React.\n")
    repo.commit("agents")
    here = json.loads(ok("import", "AGENTS.md", "--json", cwd=repo.path / "web").stdout)
    at_rev = json.loads(ok("import", "--rev", "HEAD", "AGENTS.md", "--json", cwd=repo.path / "web").stdout)
    assert [s["path"] for s in here["sources"]] == ["web/AGENTS.md"]
    assert [s["path"] for s in at_rev["sources"]] == ["web/AGENTS.md"]


@pytest.mark.parametrize(
    "into",
    [".memzoi/records/semantic/conventions/use-tabs.md", ".memzoi/index.md", ".git/config", ".git/info/exclude"],
)
def test_export_into_refuses_memory_files_and_the_git_directory(repo: Repo, into: str) -> None:
    """`export agents-md --into .git/config` appended the block to git's config: every git command then died.

    `--into` a record edited it in place (the hooks' record-edited), and `--into .memzoi/index.md`
    made the export part of memory; `export --output` refuses .memzoi/, `--into` took any file.
    """
    ok("propose", "--type", "convention", "--title", "Use tabs", "--body", "Tabs in Makefiles.", cwd=repo.path)
    ok("approve", "--all", cwd=repo.path)
    ok("apply", "--all", "--commit", cwd=repo.path)
    target = repo.path / into
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        target.write_text("# excludes\n")
    before = target.read_bytes()
    done = memzoi("export", "agents-md", "--into", into, cwd=repo.path)
    assert done.returncode == 2 and into in done.stderr and done.stderr.count("\n") <= 2, done
    assert target.read_bytes() == before
    assert git("status", "--porcelain", cwd=repo.path).stdout == ""
