"""Crafted input costs what it weighs: the secret scan is linear, an oversized file is refused by its size unread."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pygit2
import pytest

from git_memzoi.gitrepo import open_repo
from git_memzoi.hooks.run import RefUpdate, check_server_push
from git_memzoi.layout import MAX_FILE_BYTES
from git_memzoi.profile import secrets
from git_memzoi.profile.folding import shown
from support import AUTHOR, git, memzoi_exe, run_cli
from support.hooks import Remote, make_remote, record, record_path

pytestmark = pytest.mark.slow

KEY_LINE = "AKIAABCDEFGHIJKLMNOP\n"

# --- item: the secret scan is linear --------------------------------------------------------------------------

#: texts that made a pattern rescan a long run from every start inside it, or count lines from the start
CRAFTED = {
    "key-shaped lines": KEY_LINE,
    "jwt starts inside one run": "eyJ-",
    "url scheme run": "a.",
    "url user run": "a://b:",
    "assigned secret without digit": "secret=aaaaaaaaaaaa/",
    "gitlab run": "glpat-",
    "openai run": "sk-",
    "slack run": "xoxb-",
    "private key words": "-----BEGIN A ",
    "aws secret spaces": "aws_secret_access_key ",
    "stripe run": "sk_live_",
    "github run": "ghp_",
    "a run of one letter": "a",
}


def _text(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size] + "\u00e9"


@pytest.mark.parametrize("unit", list(CRAFTED.values()), ids=list(CRAFTED))
def test_scan_of_a_crafted_megabyte_is_linear(unit: str) -> None:
    # The scan before took minutes to hours on each of these (1 MB of key-shaped lines: 8 s; a
    # run of "a." 200 kB: 129 s); a linear scan takes a small fraction of a second. The bound is
    # loose for a loaded machine, and far below what any quadratic scan of a megabyte costs.
    text = _text(unit, 1 << 20)
    start = time.perf_counter()
    found = secrets.scan(text)
    assert time.perf_counter() - start < 5.0
    assert len(found) <= secrets.MAX_FINDINGS


def test_key_shaped_lines_are_found_on_their_lines_and_capped() -> None:
    text = "intro\n" + KEY_LINE * 200_000
    found = secrets.scan(text)
    assert len(found) == secrets.MAX_FINDINGS
    assert [f.line for f in found] == list(range(2, 2 + secrets.MAX_FINDINGS))
    assert {f.kind for f in found} == {"aws-access-key"}


SECRETS = [
    ("-----BEGIN RSA PRIVATE KEY-----", "private-key"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----", "private-key"),
    ("key AKIAIOSFODNN7EXAMPLE here", "aws-access-key"),
    ("ASIAIOSFODNN7EXAMPLE", "aws-access-key"),
    ("AWS_SECRET_ACCESS_KEY = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws-secret-key"),
    ("token ghp_" + "a1" * 18, "github-token"),
    ("github_pat_" + "A" * 22, "github-token"),
    ("glpat-" + "x" * 20, "gitlab-token"),
    ("xoxb-1234567890-abc", "slack-token"),
    ("https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXX", "slack-webhook"),
    ("AIza" + "B" * 35, "google-api-key"),
    ("sk_live_" + "a" * 24, "stripe-key"),
    ("rk_test_" + "a" * 24, "stripe-key"),
    ("sk-" + "a" * 40, "openai-key"),
    ("sk-proj-" + "a" * 40, "openai-key"),
    ("npm_" + "a" * 36, "npm-token"),
    ("Bearer eyJhbGciOiJI.eyJzdWIiOiIx.SflKxwRJSMeKKF2QT4", "jwt"),
    ("postgres://admin:hunter2@db.internal/app", "password-in-url"),
    ("git+ssh://user:pw@host", "password-in-url"),
    ("PASSWORD = correcthorse9battery", "assigned-secret"),
    ("client_secret: 'abcdefgh12345678'", "assigned-secret"),
    ("Api-Key=abcdefghijk1", "assigned-secret"),
    ("clé : AKIAIOSFODNN7EXAMPLE", "aws-access-key"),  # not ASCII: no character is ruled out up front
    ("api\u212aey=abcdefghijk1", "assigned-secret"),  # KELVIN SIGN folds to k
]


@pytest.mark.parametrize(("line", "kind"), SECRETS)
def test_each_kind_is_still_found_on_its_line(line: str, kind: str) -> None:
    found = secrets.scan(f"first line\n\nbefore {line} after\nlast\n")
    assert secrets.SecretFinding(kind, 3) in found, found


@pytest.mark.parametrize(
    "text",
    [
        "password = notasecretatall",  # no digit in the value
        "secret: short1",  # under 12 characters
        "1://user:pw@host",  # no scheme
        "x" * 40 + "://user:pw@host",  # a scheme longer than 32 characters
        "AKIAIOSFODNN7EXAMPL",  # too short
    ],
)
def test_near_misses_are_not_secrets(text: str) -> None:
    assert secrets.scan(text) == []


def test_server_scans_each_blob_once(remote: Remote, monkeypatch: pytest.MonkeyPatch) -> None:
    remote.accepted()
    base = remote.work.git.head.target
    log = remote.work.path / ".memzoi/log.md"
    rid = "use-redis"
    remote.commit(
        {
            record_path(rid): record(rid, body="Keep AKIAIOSFODNN7EXAMPLE out."),
            ".memzoi/log.md": log.read_text() + "- a note\n",
        }
    )
    tip = remote.work.git.head.target
    # the objects without a ref to them (as in a push's quarantine), so the check below runs in this process
    git("fetch", "-q", str(remote.work.path), "main:refs/incoming/main", cwd=remote.bare)
    git("update-ref", "-d", "refs/incoming/main", cwd=remote.bare)
    scanned: list[str] = []
    real = secrets.scan

    def counted(text: str) -> list[secrets.SecretFinding]:
        scanned.append(text)
        return real(text)

    monkeypatch.setattr(secrets, "scan", counted)
    repo = open_repo(remote.bare)
    report = check_server_push(repo, [RefUpdate("refs/heads/main", str(base), str(tip))])
    line = record(rid, body="Keep AKIAIOSFODNN7EXAMPLE out.").split("\n").index("Keep AKIAIOSFODNN7EXAMPLE out.") + 1
    assert [str(f.problem) for f in report.findings] == [
        f"{record_path(rid)}:{line}: secret: looks like an AWS access key; secrets must not enter repository memory"
    ]
    # the new record's whole text once (validating it; the added-lines scan reuses it), log.md's
    # added line once, and the base tree's files (validated to start the delta from) once each
    assert scanned.count(record(rid, body="Keep AKIAIOSFODNN7EXAMPLE out.")) == 1
    assert scanned.count("- a note") == 1
    assert len(scanned) == len(set(scanned)), scanned


# --- item: an oversized file is refused by its size, never read -----------------------------------------------

BIG = 64 << 20  # far over the 1 MiB limit; reading, decoding and scanning it costs over 3x its size


@pytest.fixture
def remote(tmp_path: Path) -> Remote:
    return make_remote(tmp_path)


def _measure_hook(hooks: Path, name: str, out: Path) -> None:
    """Put a wrapper in front of hook `name` that writes the hook's peak RSS (kB) to `out`."""
    inner = hooks / f"{name}.measured"
    (hooks / name).rename(inner)
    wrapper = hooks / name
    wrapper.write_text(
        f"#!{sys.executable}\n"
        "import resource, subprocess, sys\n"
        f"code = subprocess.call([{str(inner)!r}, *sys.argv[1:]])\n"
        f"open({str(out)!r}, 'a').write(f'{{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}}\\n')\n"
        "sys.exit(code)\n"
    )
    wrapper.chmod(0o755)


def _peaks(out: Path) -> list[int]:
    return [int(line) for line in out.read_text().split()]


def _zeros(remote: Remote, rel: str, size: int = BIG) -> None:
    """Stage `size` zero bytes at `rel` without ever holding them in this process (a sparse file, git add)."""
    path = remote.work.path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        handle.truncate(size)
    git("add", "--", rel, cwd=remote.work.path)


@pytest.mark.parametrize(
    "rel",
    [record_path("huge"), ".memzoi/log.md", ".memzoi/config.toml", ".memzoi/notes/data.bin"],
)
def test_server_refuses_an_oversized_file_unread(remote: Remote, tmp_path: Path, rel: str) -> None:
    out = tmp_path / "peaks"
    _measure_hook(remote.bare / "hooks", "pre-receive", out)
    remote.commit({record_path("small"): record("small")})
    remote.accepted()
    (baseline,) = _peaks(out)
    _zeros(remote, rel)
    git("commit", "-q", "--no-verify", "-m", "big", cwd=remote.work.path)
    if rel.endswith("log.md"):  # no size limit of its own: what one commit adds to it is bounded, by sizes
        stderr = remote.rejected(f"{rel}:1: log-growth: one commit adds")
    else:
        stderr = remote.rejected(f"{rel}:1: file-too-large: file is {BIG} bytes; the limit is {MAX_FILE_BYTES}")
    assert "Traceback" not in stderr
    peak = _peaks(out)[1]
    # reading the blob alone would add 64 MB; decoding and scanning it, twice that again
    assert peak < baseline + 24 * 1024, (baseline, peak)


def test_server_refuses_a_record_edited_to_an_oversized_blob_unread(remote: Remote, tmp_path: Path) -> None:
    out = tmp_path / "peaks"
    _measure_hook(remote.bare / "hooks", "pre-receive", out)
    remote.commit({record_path("small"): record("small")})
    remote.accepted()
    (baseline,) = _peaks(out)
    _zeros(remote, record_path("use-postgres"))
    git("commit", "-q", "--no-verify", "-m", "big", cwd=remote.work.path)
    remote.rejected("file-too-large", "record 'use-postgres' is edited in place")
    assert _peaks(out)[1] < baseline + 24 * 1024


def test_pre_commit_refuses_an_oversized_staged_file_unread(remote: Remote, tmp_path: Path) -> None:
    run_cli("hook", "install", "--pre-commit", cwd=remote.work.path)
    out = tmp_path / "peaks"
    _measure_hook(remote.work.path / ".git" / "hooks", "pre-commit", out)
    remote.work.write(".memzoi/index.md", "# memory\n\nsee records/\n")
    git("add", ".memzoi/index.md", cwd=remote.work.path)
    git("commit", "-q", "-m", "index", cwd=remote.work.path)
    (baseline,) = _peaks(out)
    _zeros(remote, ".memzoi/log.md")
    result = git("commit", "-q", "-m", "big", cwd=remote.work.path, check=False)
    assert result.returncode == 1, result.stderr
    assert ".memzoi/log.md:1: log-growth: one commit adds" in result.stderr
    assert _peaks(out)[1] < baseline + 24 * 1024


def _peak_of(args: list[str], cwd: Path) -> tuple[int, str, int]:
    """(exit code, stdout, peak RSS in kB) of a command, measured from a wrapper process."""
    probe = (
        "import resource, subprocess, sys\n"
        "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "print(r.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
        "print(r.stdout + r.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe, *args], cwd=cwd, capture_output=True, text=True, check=True)
    head, _, output = done.stdout.partition("\n")
    code, peak = head.split()
    return int(code), output, int(peak)


def test_validate_refuses_an_oversized_file_by_its_size(remote: Remote) -> None:
    exe = memzoi_exe()
    work = remote.work.path
    _, _, baseline = _peak_of([exe, "validate"], work)
    big = work / ".memzoi/records/project/huge.md"
    with big.open("wb") as handle:
        handle.truncate(1 << 30)  # a sparse gigabyte: only a read would cost anything
    code, output, peak = _peak_of([exe, "validate"], work)
    assert code == 1
    assert f".memzoi/records/project/huge.md:1: file-too-large: file is {1 << 30} bytes" in output
    assert peak < baseline + 24 * 1024


def test_validate_rev_refuses_an_oversized_blob_unread(remote: Remote) -> None:
    exe = memzoi_exe()
    work = remote.work.path
    _, _, baseline = _peak_of([exe, "validate", "--rev", "HEAD"], work)
    _zeros(remote, record_path("huge"))
    git("commit", "-q", "--no-verify", "-m", "big", cwd=work)
    os.remove(work / record_path("huge"))  # the blob only: --rev reads git objects
    code, output, peak = _peak_of([exe, "validate", "--rev", "HEAD"], work)
    assert code == 1, output
    assert f"{record_path('huge')}:1: file-too-large: file is {BIG} bytes" in output
    assert peak < baseline + 24 * 1024


# --- item: names a case-insensitive or normalising filesystem folds into .memzoi ------------------------------

TWINS = [".MEMZOI", ".MeMzOi", ".memzoi.", ".memzoi ", ".mem\u200czoi", "\ufeff.memzoi", ".memzo\u0131", "MEMZOI~1"]


def _commit_twin(remote: Remote, name: str) -> str:
    """Commit, on the clone's HEAD, a root folder `name` holding an edited copy of a record (built with pygit2)."""
    repo = remote.work.git
    head = repo.head.peel(pygit2.Commit)
    blob = repo.create_blob(record("use-postgres", body="Edited where no hook looks.").encode())
    inner = repo.TreeBuilder()
    inner.insert("use-postgres.md", blob, pygit2.enums.FileMode.BLOB)
    project = repo.TreeBuilder()
    project.insert("project", inner.write(), pygit2.enums.FileMode.TREE)
    records = repo.TreeBuilder()
    records.insert("records", project.write(), pygit2.enums.FileMode.TREE)
    root = repo.TreeBuilder(head.tree)
    root.insert(name, records.write(), pygit2.enums.FileMode.TREE)
    sha = repo.create_commit("HEAD", AUTHOR, AUTHOR, "twin", root.write(), [head.id])
    return str(sha)


@pytest.mark.parametrize("name", TWINS, ids=[shown(t) for t in TWINS])
def test_server_refuses_a_root_entry_that_folds_to_memzoi(remote: Remote, name: str) -> None:
    remote.accepted()
    sha = _commit_twin(remote, name)
    stderr = remote.rejected(sha[:7], f"{shown(name)}:1: memzoi-alias: a case-insensitive or normalising filesystem")
    assert "Traceback" not in stderr


def test_hook_check_refuses_a_folded_twin(remote: Remote) -> None:
    base = str(remote.work.git.head.target)
    sha = _commit_twin(remote, ".MEMZOI")
    result = run_cli("hook", "check", f"{base}..{sha}", cwd=remote.work.path, expect=1)
    assert ".MEMZOI:1: memzoi-alias:" in result.stdout + result.stderr
    assert sha[:7] in result.stdout + result.stderr


def test_pre_commit_refuses_a_staged_folded_twin(remote: Remote) -> None:
    run_cli("hook", "install", "--pre-commit", cwd=remote.work.path)
    remote.work.write(".MEMZOI/records/project/use-postgres.md", record("use-postgres", body="Edited."))
    git("add", ".MEMZOI", cwd=remote.work.path)
    result = git("commit", "-q", "-m", "twin", cwd=remote.work.path, check=False)
    assert result.returncode == 1, result.stderr
    assert ".MEMZOI:1: memzoi-alias:" in result.stderr


def test_a_commit_next_to_a_folded_twin_is_not_taken_by_the_fast_path(remote: Remote) -> None:
    run_cli("hook", "install", "--pre-commit", cwd=remote.work.path)
    remote.work.write(".memzoi.", "a file that Windows writes as .memzoi\n")
    git("add", ".memzoi.", cwd=remote.work.path)
    result = git("commit", "-q", "-m", "twin file", cwd=remote.work.path, check=False)
    assert result.returncode == 1, result.stderr
    assert ".memzoi.:1: memzoi-alias:" in result.stderr


# --- item: control characters in one-line fields ---------------------------------------------------------------


def _with_field(text: str, line: str, value: str) -> str:
    """A record with the frontmatter line starting `line` replaced by `value` (a double-quoted YAML scalar)."""
    lines = text.split("\n")
    index = next(i for i, each in enumerate(lines) if each.startswith(line))
    lines[index] = value
    return "\n".join(lines)


CONTROLLED = [
    ("title", 'title: "Use postgres\\e]0;owned\\a"', "title", "\\x1b"),
    ("description", 'description: "clear \\e[2J screen"', "description", "\\x1b"),
    ("source_ref", 'source_ref: "issue://1\\rforged"', "source_ref", "\\r"),
    ("source", 'source: "human\\x9b2J"', "source", "\\x9b"),
    ("title", 'title: "left \\u202e right"', "title", "\\u202e"),
    ("title", 'title: "line \\u2028 break"', "title", "\\u2028"),
    ("title", 'title: "tab\\there"', "title", "\\t"),
    ("title", 'title: "OSC 52 \\e]52;c;b3duZWQ=\\a"', "title", "\\x1b"),
    ("title", "title: >\n  Folded with a trailing newline", "title", "\\n"),
    ("origin", '  origin_key: "test:\\ex"', "origin.origin_key", "\\x1b"),
]


@pytest.mark.parametrize(("prefix", "value", "where", "char"), CONTROLLED)
def test_validate_refuses_a_control_character_in_a_one_line_field(
    remote: Remote, prefix: str, value: str, where: str, char: str
) -> None:
    rel = record_path("use-postgres")
    text = _with_field(record("use-postgres"), prefix if prefix != "origin" else "  origin_key:", value)
    remote.work.write(rel, text)
    result = run_cli("validate", rel, cwd=remote.work.path, expect=1)
    line = text.split("\n").index(value.split("\n")[0]) + 1
    assert f"{rel}:{line}: control-character: {where}: holds the control character {char};" in result.stdout


def test_tags_and_applies_to_items_are_one_line_too(remote: Remote) -> None:
    rel = record_path("use-postgres")
    text = record("use-postgres", extra='tags:\n  - fine\n  - "bad\\e[31m"\napplies_to:\n  - "src/\\x85x"\n')
    remote.work.write(rel, text)
    out = run_cli("validate", rel, cwd=remote.work.path, expect=1).stdout
    lines = text.split("\n")
    tag = lines.index('  - "bad\\e[31m"') + 1
    path = lines.index('  - "src/\\x85x"') + 1
    assert f"{rel}:{tag}: control-character: tags.1:" in out
    assert f"{rel}:{path}: control-character: applies_to.0:" in out


def test_the_body_may_hold_tabs_but_no_other_control(remote: Remote) -> None:
    rel = record_path("use-postgres")
    remote.work.write(rel, record("use-postgres", body="Tabs\tare fine."))
    run_cli("validate", rel, cwd=remote.work.path)
    text = record("use-postgres", body="First line.\n\nThen \x1b[2J a clear.")
    remote.work.write(rel, text)
    out = run_cli("validate", rel, cwd=remote.work.path, expect=1).stdout
    line = text.split("\n").index("Then \x1b[2J a clear.") + 1
    assert f"{rel}:{line}: control-character: the body holds the control character \\x1b;" in out


def test_a_multi_line_reason_may_hold_newlines(remote: Remote) -> None:
    from support.hooks import packet

    rel = ".memzoi/proposals/pending/mem_test_reason.md"
    text = packet("mem_test_reason").replace("  proposed_at:", '  reason: "two\\nlines"\n  proposed_at:')
    remote.work.write(rel, text)
    run_cli("validate", rel, cwd=remote.work.path)
    remote.work.write(rel, text.replace("two\\nlines", "two\\elines"))
    assert (
        "proposal.reason: holds the control character \\x1b"
        in run_cli("validate", rel, cwd=remote.work.path, expect=1).stdout
    )


def test_server_refuses_a_record_whose_title_drives_the_terminal(remote: Remote) -> None:
    remote.accepted()
    rel = record_path("use-redis")
    text = _with_field(record("use-redis"), "title:", 'title: "Use redis\\e]0;owned\\a"')
    remote.commit({rel: text})
    remote.rejected(f"{rel}:7: control-character: title: holds the control character \\x1b;")


def test_recalled_text_is_escaped_on_every_human_output() -> None:
    from types import SimpleNamespace

    from git_memzoi.export.instructions import render_entry
    from git_memzoi.profile.oneline import escape, escape_text

    hostile = "a\x1b]52;c;b3duZWQ=\x07b\x9b2Jc\u202ed"
    assert escape(hostile) == "a\\x1b]52;c;b3duZWQ=\\x07b\\x9b2Jc\\u202ed"
    assert escape_text("one\n\ttwo\x1b") == "one\n\ttwo\\x1b"
    # what the index would hand the export if a record held them (validation refuses them first)
    indexed = SimpleNamespace(
        record_id="r", title=hostile, description=None, body="# T\n\nbody \x1b[2J\n", applies_to=[]
    )
    entry = render_entry(indexed)  # type: ignore[arg-type]
    assert "\x1b" not in entry and "\x9b" not in entry and "\x07" not in entry
    assert "### a\\x1b]52;c;b3duZWQ=\\x07b\\x9b2Jc\\u202ed" in entry
    assert "body \\x1b[2J" in entry


def test_rebuild_refuses_an_oversized_record_by_its_size(remote: Remote) -> None:
    exe = memzoi_exe()
    work = remote.work.path
    _, _, baseline = _peak_of([exe, "search", "postgres"], work)
    with (work / ".memzoi/records/project/huge.md").open("wb") as handle:
        handle.truncate(1 << 30)  # a sparse gigabyte in a clone's work tree
    code, output, peak = _peak_of([exe, "rebuild", "--strict"], work)
    assert code == 1
    assert f".memzoi/records/project/huge.md:1: file-too-large: file is {1 << 30} bytes" in output
    code, output, peak_search = _peak_of([exe, "search", "postgres"], work)
    assert code == 0, output
    assert "Use postgres" in output
    assert max(peak, peak_search) < baseline + 24 * 1024


@pytest.mark.parametrize("new_branch", [False, True], ids=["shell quick path", "python quick path"])
def test_pre_push_refuses_a_folded_twin(tmp_path: Path, new_branch: bool) -> None:
    remote = make_remote(tmp_path, hook="none")  # no server hook: the client's pre-push alone
    remote.accepted()
    run_cli("hook", "install", "--pre-push", cwd=remote.work.path)
    sha = _commit_twin(remote, ".memzoi.")
    # an existing branch is decided by the script's shell; a new one by hooks.quick in Python
    result = remote.push("HEAD:refs/heads/topic" if new_branch else "main")
    assert result.returncode != 0, result.stderr
    assert ".memzoi.:1: memzoi-alias:" in result.stderr
    assert sha[:7] in result.stderr
