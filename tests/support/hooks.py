"""What the hook tests share: record and packet texts, a bare remote with the server hook, the CI workflow check."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pygit2

from git_memzoi.runtime.init import init_tree
from support.paths import ROOT, VENV_BIN
from support.repos import Repo, git
from support.running import run_cli

RECORD = """---
id: {rid}
kind: memory
profile: memzoi
type: decision
lane: semantic
title: {title}
description: {title}.
timestamp: 2026-01-01T00:00:00Z
status: {status}
scope: repo
visibility: repo
content_class: general_repo_knowledge
confidence: 1.0
source: human
source_ref: {source_ref}
retention: {{}}
origin:
  origin_key: test:{rid}
  route: repository_materialization
{extra}---
# {title}

{body}
"""

PACKET = """---
id: {pid}
kind: proposal
profile: memzoi
retention: {{}}
origin:
  origin_key: test:{pid}
  route: repository_proposal
type: decision
lane: semantic
title: Packet {pid}
description: A packet for review.
status: {status}
proposal:
  action: create
  proposed_by: agent
  proposed_at: 2026-01-01T00:00:00Z
timestamp: 2026-01-01T00:00:00Z
sensitivity: {sensitivity}
content_class: general_repo_knowledge
{resolution}---
# Packet {pid}

Review context for {pid}.
"""

RESOLUTION = """resolution:
  outcome: applied
  reviewer: alice
  resolved_at: 2026-01-02T00:00:00Z
  affected_record_ids:
    - {rid}
"""


def record(
    rid: str,
    title: str | None = None,
    *,
    status: str = "active",
    body: str | None = None,
    source_ref: str = "issue://1",
    extra: str = "",
) -> str:
    """A valid canonical record (semantic decision) with the given ID."""
    title = title or rid.replace("-", " ").capitalize()
    return RECORD.format(
        rid=rid, title=title, status=status, body=body or f"{title} body text.", source_ref=source_ref, extra=extra
    )


def packet(pid: str, *, status: str = "proposed", sensitivity: str = "repo-safe", affected: str | None = None) -> str:
    """A create packet: pending, or applied with a resolution naming `affected`."""
    resolution = RESOLUTION.format(rid=affected) if status == "applied" else ""
    return PACKET.format(pid=pid, status=status, sensitivity=sensitivity, resolution=resolution)


def retire_packet(pid: str, action: str, target: str, created: str | None = None) -> str:
    """An applied supersede (creating `created`) or tombstone packet that names `target`."""
    text = packet(pid, status="applied", affected=created or target)
    if action == "supersede":
        text = text.replace("  action: create\n", "  action: supersede\n  reason: Replaced.\n")
        text = text.replace(
            "timestamp: 2026-01-01T00:00:00Z\n", f"timestamp: 2026-01-01T00:00:00Z\nsupersedes:\n  - {target}\n", 1
        )
        return text.replace(f"    - {created}\n", f"    - {created}\n    - {target}\n")
    return text.replace("  action: create\n", f"  action: tombstone\n  reason: Obsolete.\n  target: {target}\n")


def record_path(rid: str) -> str:
    return f".memzoi/records/project/{rid}.md"


@dataclass
class Remote:
    """A bare repository with git memzoi's pre-receive hook, and a clone to push from."""

    bare: Path
    work: Repo

    def refs(self) -> dict[str, str]:
        out = git("for-each-ref", "--format=%(refname) %(objectname)", cwd=self.bare).stdout
        return dict(line.split(" ") for line in out.splitlines())

    def push(self, *args: str) -> subprocess.CompletedProcess[str]:
        return git("push", "origin", *(args or ("main",)), cwd=self.work.path, check=False)

    def commit(self, files: dict[str, str | None], message: str = "change") -> str:
        """Write (or, for None, delete) files in the clone and commit them."""
        for rel, text in files.items():
            if text is None:
                (self.work.path / rel).unlink()
            else:
                self.work.write(rel, text)
        return self.work.commit(message, paths=list(files))

    def commit_zeros(self, rel: str, size: int) -> str:
        """Commit a file of `size` zero bytes (sparse on disk) in the clone, without the client hooks."""
        path = self.work.path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as handle:
            handle.truncate(size)
        git("add", rel, cwd=self.work.path)
        git("commit", "-q", "--no-verify", "-m", "zeros", cwd=self.work.path)
        return git("rev-parse", "HEAD", cwd=self.work.path).stdout.strip()

    def deliver(self, sha: str) -> None:
        """Bring commit `sha`'s objects into the bare repository with no ref to them: what a hook sees of a push."""
        git("fetch", "-q", str(self.work.path), f"{sha}:refs/pending", cwd=self.bare)
        git("update-ref", "-d", "refs/pending", cwd=self.bare)

    def accepted(self, *args: str) -> subprocess.CompletedProcess[str]:
        before = self.refs()
        result = self.push(*args)
        assert result.returncode == 0, result.stderr
        assert self.refs() != before
        return result

    def rejected(self, *needles: str, args: tuple[str, ...] = ()) -> str:
        """Push, expect git to refuse it with every needle in its output, and the remote's refs unmoved."""
        before = self.refs()
        result = self.push(*args)
        assert result.returncode != 0, result.stderr
        assert "pre-receive hook declined" in result.stderr or "hook declined" in result.stderr
        for needle in needles:
            assert needle in result.stderr, result.stderr
        assert self.refs() == before
        return result.stderr


def make_remote(tmp_path: Path, hook: str = "pre-receive") -> Remote:
    bare = tmp_path / "server.git"
    git("init", "--bare", "-q", str(bare), cwd=tmp_path)
    if hook == "pre-receive":
        installed = run_cli("hook", "install", cwd=bare)
        assert "pre-receive hook created" in installed.stderr
    git("clone", "-q", str(bare), "work", cwd=tmp_path)
    work = Repo(tmp_path / "work", pygit2.Repository(str(tmp_path / "work")))
    init_tree(work.path)
    work.write(record_path("use-postgres"), record("use-postgres"))
    work.write("README.md", "# project\n")
    work.commit("initial")
    return Remote(bare, work)


WORKFLOW = ".github/workflows/memzoi.yml"


def schema_check(path: Path, schema: str = "vendor.github-workflows") -> subprocess.CompletedProcess[str]:
    """check-jsonschema against its vendored copy of a host's schema: GitHub's workflow by default.

    Offline: every proxy points at a closed port, so a schema fetched from the network would fail the check.
    """
    closed = "http://127.0.0.1:9"
    env = {**os.environ, "HTTP_PROXY": closed, "HTTPS_PROXY": closed, "http_proxy": closed, "https_proxy": closed}
    env.pop("NO_PROXY", None)
    env.pop("no_proxy", None)
    return subprocess.run(
        [str(VENV_BIN / "check-jsonschema"), "--builtin-schema", schema, str(path)],
        env=env,
        capture_output=True,
        text=True,
    )


def checkout_copy(dest: Path, *, commit: bool = False) -> str | None:
    """The files this repository tracks, with their contents in the work tree, copied to `dest`.

    What a clean clone of this checkout holds, uncommitted edits included; with `commit`, `dest`
    is made a repository of one commit holding them (its SHA returned).
    """
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for rel in filter(None, tracked.decode().split("\0")):
        source, target = ROOT / rel, dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(source.readlink())
        elif source.is_file():  # a file deleted in the work tree is not copied
            target.write_bytes(source.read_bytes())
    if not commit:
        return None
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "copy"]):
        git(*args, cwd=dest)
    return git("rev-parse", "HEAD", cwd=dest).stdout.strip()
