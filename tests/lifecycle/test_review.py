"""`git memzoi review` driven through a real pseudo-terminal, and batch approve/apply."""

from __future__ import annotations

import os
import re
import shutil
import sys
from pathlib import Path

import pytest

from git_memzoi.profile import frontmatter
from support import FIXTURES, Repo, git, make_repo, run_cli
from support.lifecycle import add_record, inbox_ready, packet, propose_decision, write_packet
from support.terminal import PROMPT, Terminal


@pytest.fixture
def ready(repo: Repo) -> Repo:
    return inbox_ready(repo)


propose = propose_decision


def test_review_approves_rejects_skips_and_edits_through_a_terminal(ready: Repo, tmp_path: Path) -> None:
    approve_me = propose("Use postgres for persistent state")
    reject_me = propose("Store sessions in cookies")
    skip_me = propose("Maybe adopt GraphQL")
    edit_me = propose("Pin node to 20")
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import pathlib, sys\n"
        "p = pathlib.Path(sys.argv[1])\n"
        "p.write_text(p.read_text().replace('Pin node to 20', 'Pin node to 22'))\n"
    )
    env = {**os.environ, "EDITOR": f"{sys.executable} {editor}", "TERM": "dumb"}
    term = Terminal(ready.path, "review", env=env)
    for number in range(1, 5):  # the inbox's order: oldest first, then by ID
        screen = term.until(PROMPT)
        assert f"({number}/4)".encode() in screen
        shown = screen.rsplit(b"\nmem_", 1)[-1]
        if approve_me.encode()[4:] in shown:
            assert b"title: Use postgres for persistent state" in shown
            term.answer("y")
        elif reject_me.encode()[4:] in shown:
            term.answer("r")
            term.until(b"Why is it rejected")
            term.answer("client state is not trusted")
        elif skip_me.encode()[4:] in shown:
            term.answer("n")
        else:
            assert edit_me.encode()[4:] in shown
            term.answer("?")
            assert b"e - edit it in $EDITOR" in term.until(PROMPT)
            term.answer("e")
            assert b"title: Pin node to 22" in term.until(PROMPT)
            term.answer("n")
    out = term.finish()
    assert term.proc.returncode == 0, out
    assert "review: 1 approved, 1 rejected, 1 edited, 2 skipped" in out

    def state(pid: str) -> dict:  # type: ignore[type-arg]
        return dict(run_cli("proposals", "show", pid, "--json").json())

    assert state(approve_me)["state"] == "approved"
    rejected = state(reject_me)
    assert rejected["state"] == "rejected" and rejected["reason"] == "client state is not trusted"
    assert state(skip_me)["state"] == "validated"
    edited = state(edit_me)
    assert edited["state"] == "validated" and edited["title"] == "Pin node to 22"
    assert frontmatter.parse(edited["packet"].encode()).data["id"] == edit_me


def test_review_with_apply_applies_and_shows_a_supersedes_diff(ready: Repo) -> None:
    add_record(ready, "semantic/decisions/use-postgres", "use-postgres")
    pid = run_cli(
        "propose", "--action", "supersede", "--target", "use-postgres", "--title", "Use postgres 17",
        "--body", "# Use postgres 17\n\nThe body of use-postgres, on version 17.\n", "--reason", "upgrade",
    ).stdout.strip()  # fmt: skip
    term = Terminal(ready.path, "review", "--apply")
    screen = term.until(PROMPT).decode()
    assert "target: use-postgres" in screen and "-The body of use-postgres." in screen
    assert "+The body of use-postgres, on version 17." in screen
    term.answer("y")
    out = term.finish()
    assert term.proc.returncode == 0, out
    assert "1 approved, 1 applied" in out
    assert run_cli("proposals", "show", pid, "--json").json()["state"] == "applied"


def test_review_quits_on_q_and_an_edit_that_breaks_the_packet_is_refused(ready: Repo, tmp_path: Path) -> None:
    first = propose("First thing")
    editor = tmp_path / "editor.py"
    editor.write_text("import pathlib, sys\npathlib.Path(sys.argv[1]).write_text('---\\nid: [\\n---\\n')\n")
    env = {**os.environ, "EDITOR": f"{sys.executable} {editor}", "TERM": "dumb"}
    propose("Second thing")
    term = Terminal(ready.path, "review", env=env)
    term.until(PROMPT)
    term.answer("e")
    again = term.until(PROMPT)
    assert b"git memzoi:" in again and first.encode() in again
    term.answer("q")
    out = term.finish()
    assert term.proc.returncode == 0 and "nothing done" in out
    assert run_cli("proposals", "show", first, "--json").json()["title"] == "First thing"


def test_review_without_a_terminal_is_a_usage_error(ready: Repo) -> None:
    propose("Something")
    refused = run_cli("review", expect=2)
    assert "needs a terminal" in refused.stderr and "proposals --json" in refused.stderr


def test_approve_and_apply_take_several_ids_and_all(ready: Repo) -> None:
    one, two, three = propose("One rule"), propose("Two rule"), propose("Three rule")
    out = run_cli("approve", one, two[:-2], "--json").json()
    assert [r["state"] for r in out["results"]] == ["approved", "approved"]
    mixed = run_cli("approve", three, "mem_missing", expect=1)
    assert "mem_missing" in mixed.stderr
    assert run_cli("proposals", "show", three, "--json").json()["state"] == "approved"
    applied = run_cli("apply", "--all", "--json").json()
    assert sorted(r["proposal_id"] for r in applied["results"]) == sorted([one, two, three])
    assert run_cli("apply", "--all").stderr.startswith("nothing to do")
    assert "not both" in run_cli("apply", one, "--all", expect=2).stderr


@pytest.mark.parametrize(
    ("config", "term", "coloured"),
    [
        ("color.ui=always", "dumb", True),  # always wins, as for git diff
        ("color.ui=never", "xterm", False),  # a terminal, and still none
        ("color.memzoi=false", "xterm", False),  # the command's own key first
        ("color.ui=auto", "xterm", True),  # a terminal
        ("color.ui=auto", "dumb", False),
    ],
)
def test_review_colours_as_git_config_says(ready: Repo, config: str, term: str, coloured: bool) -> None:
    propose("Colour me")
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update(TERM=term, GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0=config.split("=")[0])
    env["GIT_CONFIG_VALUE_0"] = config.split("=")[1]
    session = Terminal(ready.path, "review", env=env)
    screen = session.until(PROMPT)
    session.answer("q")
    session.finish()
    assert (b"\x1b[" in screen) is coloured, screen


# --- a real import's packets ------------------------------------------------------------------------------------


def imported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """gemini-cli's eight GEMINI.md files (35 sections) in a fresh repository, `init`, and `import --write`."""
    root = tmp_path / "gemini-cli"
    make_repo(root, init_memzoi=False)
    shutil.copytree(FIXTURES / "import/real/gemini-cli/files", root, symlinks=True, dirs_exist_ok=True)
    git("add", "-A", cwd=root)
    git("commit", "-qm", "instruction files", cwd=root)
    git("memzoi", "init", cwd=root)
    monkeypatch.chdir(root)
    assert len(run_cli("import", "--write", "--json").json()["written"]) == 35
    return root


def test_review_of_an_import_applies_on_y_takes_a_file_on_d_all_on_a_and_commits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = imported(tmp_path, monkeypatch)
    term = Terminal(root, "review", "--commit", env={**os.environ, "TERM": "dumb", "LINES": "200"})
    first = term.until(PROMPT)
    assert b"35 pending packet file(s): y applies one" in first
    # in source order, each header naming the source file and lines
    assert b"from GEMINI.md:1-" in first and b"(1/35) Apply this packet" in first
    term.answer("?")
    helped = term.until(PROMPT)
    assert b"d - take this one and the rest from its source file" in helped
    assert b"title:" not in helped  # the help stays on screen: the item is not printed again under it
    term.answer("y")
    second = term.until(PROMPT).decode()
    assert "applied import_" in second and "(2/35)" in second and "from GEMINI.md:" in second
    term.answer("d")  # the rest of GEMINI.md, without asking
    nested = term.until(PROMPT).decode()
    header = re.search(r"from packages/a2a-server/GEMINI\.md:\d+-\d+  \((\S+)\)", nested)
    assert header is not None and "(3/35)" not in nested, nested
    skipped = header.group(1)
    term.answer("n")
    term.until(PROMPT)
    term.answer("a")  # every one left
    out = term.finish()
    assert term.proc.returncode == 0, out
    assert "review: 34 applied, 1 skipped" in out and "committed " in out
    pending = sorted(p.name for p in (root / ".memzoi/proposals/pending").glob("*.md"))
    assert pending == [Path(skipped).name]
    records = sorted(p.relative_to(root).as_posix() for p in (root / ".memzoi/records").rglob("*.md"))
    resolved = sorted(p.relative_to(root).as_posix() for p in (root / ".memzoi/proposals/resolved").rglob("*.md"))
    assert len(records) == len(resolved) == 34
    shown = git("show", "--name-only", "--format=", "HEAD", cwd=root).stdout.split()
    init_files = [".gitattributes", ".memzoi/index.md", ".memzoi/proposals/pending/.gitkeep"]
    init_files.append(".memzoi/records/.gitkeep")
    assert sorted(shown) == sorted([*records, *resolved, ".memzoi/log.md", *init_files])
    untracked = git("status", "--porcelain", "--untracked-files=all", cwd=root).stdout.split("\n")
    assert [line for line in untracked if line] == [f"?? .memzoi/proposals/pending/{pending[0]}"]
    run_cli("validate")


def test_review_pages_an_item_longer_than_the_screen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = imported(tmp_path, monkeypatch)
    paged = tmp_path / "paged.txt"
    pager = tmp_path / "pager.py"
    pager.write_text(f"import sys\ndata = sys.stdin.read()\nopen({str(paged)!r}, 'a').write(data + '\\f')\n")
    env = {**os.environ, "TERM": "dumb", "LINES": "14", "PAGER": f"{sys.executable} {pager}"}
    term = Terminal(root, "review", env=env)
    term.until(PROMPT)  # GEMINI.md's opening lines: a short item, printed as it is
    assert not paged.exists()
    term.answer("n")
    second = term.until(PROMPT).decode()  # "Project Overview": 29 lines shown, more than 14
    pages = paged.read_text().split("\f")
    assert len(pages) == 2 and "title: Project Overview" in pages[0] and "Monorepo structure" in pages[0]
    assert "from GEMINI.md:7-" in second.replace("\r\n", "\n").rsplit("\n", 2)[-2]  # the header, above the question
    term.answer("q")
    term.finish()


def test_a_takes_packet_files_one_at_a_time_when_their_batch_is_refused(ready: Repo) -> None:
    """Three packets, two of them with one title (one default concept ID): one batch would refuse them all."""
    for pid, title in [("mem_2026_03_01_a_aaa111", "Other title"), ("mem_2026_03_01_b_bbb222", "Same title")]:
        write_packet(ready, packet(pid, title=title), body=f"# {title}\n\nThe body of {pid}.\n")
    write_packet(ready, packet("mem_2026_03_01_c_ccc333", title="Same title"), body="# Same title\n\nAnother body.\n")
    term = Terminal(ready.path, "review", env={**os.environ, "TERM": "dumb"})
    assert b"(1/3) Apply this packet" in term.until(PROMPT)
    term.answer("a")  # this one, then the other two in one batch, which two packets writing one record refuse
    out = term.finish()
    assert term.proc.returncode == 0, out
    assert "taking them one at a time" in out and "review: 2 applied, 1 refused" in out
    assert [p.name for p in (ready.path / ".memzoi/proposals/pending").glob("*.md")] == ["mem_2026_03_01_c_ccc333.md"]


def test_review_commit_refuses_an_uncommitted_log_before_the_first_question(ready: Repo) -> None:
    write_packet(ready, packet("mem_2026_03_01_a_aaa111"))
    log = ready.path / ".memzoi/log.md"
    log.write_text(log.read_text() + "- a receipt nobody committed\n")
    term = Terminal(ready.path, "review", "--commit", env={**os.environ, "TERM": "dumb"})
    out = term.finish()
    assert term.proc.returncode == 1, out
    assert ".memzoi/log.md has changes that are not committed" in out and "Apply this packet" not in out
    assert (ready.path / ".memzoi/proposals/pending/mem_2026_03_01_a_aaa111.md").exists()


def test_the_header_reads_a_quoted_source_ref_and_an_escaped_path() -> None:
    from git_memzoi.cli.review import import_source

    ref = "import:docs/my%20notes%3A%20rules.md?format=agents-md&blob=" + "a" * 40 + "&lines=12-30"
    plain = f"---\nid: x\nsource_ref: {ref}\n---\nbody\n"
    quoted = f"---\nid: x\nsource_ref: '{ref}'\n---\nbody\n"
    assert import_source(plain) == import_source(quoted) == ("docs/my notes: rules.md", 12, 30)
    assert import_source("---\nid: x\nsource_ref: src/app.py\n---\n") is None
    assert import_source("---\nid: x\n---\nsource_ref: import:a.md?lines=1-2\n") is None


@pytest.mark.parametrize(
    ("old", "new", "said"),
    [
        ("Tabs in Makefiles.", "Tabs in Makefiles. AWS key AKIAIOSFODNN7EXAMPLE", b"looks like an AWS access key"),
        ("title: Style", "title: Style AKIAIOSFODNN7EXAMPLE", b"title: line 11: looks like an AWS access key"),
        ("id: import_style_", "id: import_other_", b"id: an edit keeps the packet's ID"),
        ("status: proposed", "status: applied", b"status: applied"),
        ("sensitivity: repo-safe", "sensitivity: secret", b"sensitivity: secret packets are never written"),
        ("type: convention", "type: no-such-type", b"type"),
    ],
    ids=["aws-key-in-body", "aws-key-in-title", "changed-id", "status", "sensitivity", "invalid"],
)
def test_review_checks_an_edit_of_a_pending_packet_file_as_an_inbox_edit(
    repo: Repo, tmp_path: Path, old: str, new: str, said: bytes
) -> None:
    """`e` on a pending packet file only parsed the edit: an AWS key or a changed `id:` was written back."""
    repo.write("AGENTS.md", "# Team\n\n## Style\n\nTabs in Makefiles.\n")
    repo.commit("agents")
    run_cli("import", "--write")
    (packet,) = (repo.path / ".memzoi/proposals/pending").glob("*.md")
    before = packet.read_bytes()
    assert old.encode() in before
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import pathlib, sys\n"
        "p = pathlib.Path(sys.argv[1])\n"
        f"p.write_text(p.read_text().replace({old!r}, {new!r}, 1))\n"
    )
    env = {**os.environ, "EDITOR": f"{sys.executable} {editor}", "TERM": "dumb"}
    term = Terminal(repo.path, "review", env=env)
    assert packet.name.encode() in term.until(PROMPT)
    term.answer("e")
    again = term.until(PROMPT)
    assert b"git memzoi: .memzoi/proposals/pending/" + packet.name.encode() in again, again
    assert said in again.split(b"git memzoi: ", 1)[1], again
    assert b"AKIAIOSFODNN7EXAMPLE" not in again.split(b"git memzoi: ", 1)[1]
    term.answer("q")
    out = term.finish()
    assert term.proc.returncode == 0 and "nothing done" in out, out
    assert packet.read_bytes() == before
    assert sorted(p.name for p in packet.parent.iterdir()) == [".gitkeep", packet.name]


def test_review_writes_back_a_clean_edit_of_a_pending_packet_file(repo: Repo, tmp_path: Path) -> None:
    repo.write("AGENTS.md", "# Team\n\n## Style\n\nTabs in Makefiles.\n")
    repo.commit("agents")
    run_cli("import", "--write")
    (packet,) = (repo.path / ".memzoi/proposals/pending").glob("*.md")
    editor = tmp_path / "editor.py"
    editor.write_text(
        "import pathlib, sys\n"
        "p = pathlib.Path(sys.argv[1])\n"
        "p.write_text(p.read_text().replace('Tabs in Makefiles.', 'Tabs in every Makefile.'))\n"
    )
    env = {**os.environ, "EDITOR": f"{sys.executable} {editor}", "TERM": "dumb"}
    term = Terminal(repo.path, "review", env=env)
    term.until(PROMPT)
    term.answer("e")
    assert b"Tabs in every Makefile." in term.until(PROMPT)
    term.answer("q")
    out = term.finish()
    assert term.proc.returncode == 0 and "1 edited" in out, out
    assert b"Tabs in every Makefile." in packet.read_bytes()
