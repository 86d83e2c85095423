"""Names under .memzoi/ that a macOS or Windows checkout writes onto a governed path, through every gate.

`.memzoi/Records/` is `.memzoi/records/` on a case-insensitive filesystem: a record pushed there
would skip require_proposals on Linux and be read as a record on a Mac. Every gate refuses such
a name (malformed-tree), as it refuses the root-level `.MEMZOI` twins.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from support import git, memzoi_exe, run_cli
from support.hooks import Remote, make_remote, packet, record

pytestmark = pytest.mark.slow

APPLIED = ".memzoi/proposals/resolved/applied"
FOLD = "a case-insensitive or normalising filesystem (macOS, Windows)"


def require_proposals(tmp_path: Path) -> Remote:
    r = make_remote(tmp_path)
    r.commit({".memzoi/config.toml": "[hooks]\nrequire_proposals = true\n"})
    r.accepted()
    os.chdir(r.work.path)
    return r


#: (path committed, the message's `holds ...` part)
ALIASES = [
    (".memzoi/Records/project/use-redis.md", f"holds 'Records', which {FOLD} checks out as 'records'"),
    (".memzoi/RECORDS/project/use-redis.md", f"holds 'RECORDS', which {FOLD} checks out as 'records'"),
    (".memzoi/records./project/use-redis.md", f"holds 'records.', which {FOLD} checks out as 'records'"),
    (".memzoi/records /project/use-redis.md", f"holds 'records ', which {FOLD} checks out as 'records'"),
    (
        ".memzoi/re\u200ccords/project/use-redis.md",
        f"holds 'records' and 're\\\\u200ccords', which {FOLD} checks out as one",
    ),
    (".memzoi/recorda\u017f/project/use-redis.md", None),  # long s: not `records`, but a name of its own
    (".memzoi/records/project/use-redis.MD", f"holds 'use-redis.MD', which {FOLD} checks out as 'use-redis.md'"),
    (".memzoi/records/project/use-redis.md.", f"holds 'use-redis.md.', which {FOLD} checks out as 'use-redis.md'"),
    (".memzoi/records/project/use-redis.md:x", f"holds 'use-redis.md:x', which {FOLD} checks out as 'use-redis.md'"),
    (".memzoi/reco\u0280ds/project/use-redis.md", None),
    (".memzoi/Proposals/resolved/applied/mem_9.md", f"holds 'Proposals', which {FOLD} checks out as 'proposals'"),
    (".memzoi/Config.toml", f"holds 'Config.toml', which {FOLD} checks out as 'config.toml'"),
    (".memzoi/RECORD~1/project/use-redis.md", "holds 'RECORD~1', which Windows may take for the short name of another"),
]


def push_alias(r: Remote, path: str) -> subprocess.CompletedProcess[str]:
    r.work.write(path, record("use-redis") if "mem_9" not in path else packet("mem_9"))
    git("add", "--", path, cwd=r.work.path)
    git("commit", "-q", "--no-verify", "-m", "alias", cwd=r.work.path)
    return r.push()


@pytest.mark.parametrize(("path", "why"), ALIASES)
def test_pre_receive_refuses_a_name_that_checks_out_onto_memory(tmp_path: Path, path: str, why: str | None) -> None:
    r = require_proposals(tmp_path)
    before = r.refs()
    pushed = push_alias(r, path)
    if why is None:  # a name no filesystem folds onto memory's: a stray file, as before
        assert pushed.returncode == 0, pushed.stderr
        return
    assert pushed.returncode != 0, pushed.stderr
    assert "malformed-tree" in pushed.stderr and why in pushed.stderr, pushed.stderr
    assert r.refs() == before
    checked = run_cli("hook", "check", "origin/main..HEAD", expect=1)
    assert why in checked.stderr
    assert why in run_cli("validate", "--rev", "HEAD", expect=1).stdout


def test_twins_that_differ_in_case_or_normal_form_are_refused(tmp_path: Path) -> None:
    r = require_proposals(tmp_path)
    r.commit({".memzoi/records/Project/use-postgres.md": record("use-postgres", body="Other text.")})
    r.rejected(f"holds 'Project' and 'project', which {FOLD} checks out as one")
    git("reset", "-q", "--hard", "origin/main", cwd=r.work.path)
    nfc, nfd = "caf\u00e9.txt", "cafe\u0301.txt"
    r.commit({f".memzoi/notes/{nfc}": "a\n", f".memzoi/notes/{nfd}": "b\n"})
    r.rejected("checks out as one")


def test_the_update_hook_pre_push_and_pre_commit_refuse_it_too(tmp_path: Path) -> None:
    r = make_remote(tmp_path, hook="none")
    update = r.bare / "hooks" / "update"
    update.write_text(f'#!/bin/sh\nexec "{memzoi_exe()}" hook update "$@"\n')
    update.chmod(0o755)
    r.accepted()
    run_cli("hook", "install", cwd=r.work.path)  # pre-commit and pre-push in the clone
    why = f"holds 'Records', which {FOLD} checks out as 'records'"
    path = ".memzoi/Records/project/use-redis.md"
    r.work.write(path, record("use-redis"))
    git("add", path, cwd=r.work.path)
    committed = git("commit", "-m", "alias", cwd=r.work.path, check=False)
    assert committed.returncode == 1 and why in committed.stderr, committed.stderr  # pre-commit
    git("commit", "-q", "--no-verify", "-m", "alias", cwd=r.work.path)
    pushed = r.push()
    assert pushed.returncode != 0 and why in pushed.stderr and "hook declined" not in pushed.stderr  # pre-push
    before = r.refs()
    pushed = git("push", "--no-verify", "origin", "main", cwd=r.work.path, check=False)
    assert pushed.returncode != 0 and why in pushed.stderr and "hook declined" in pushed.stderr  # update
    assert r.refs() == before


def test_a_plain_tree_is_still_accepted(tmp_path: Path) -> None:
    r = require_proposals(tmp_path)
    r.commit(
        {
            ".memzoi/records/project/use-redis.md": record("use-redis"),
            f"{APPLIED}/mem_1.md": packet("mem_1", status="applied", affected="use-redis"),
        }
    )
    r.accepted()
