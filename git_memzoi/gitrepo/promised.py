"""Blobs a partial clone's promisor remote holds: fetched through git, in one batch, when a check needs one.

libgit2 reads only the objects a repository has; a blob clone (`git clone --filter=blob:none`)
has none of the blobs it has not checked out. git fetches such a blob on demand; here git is
asked the same way it asks itself (promisor-remote.c: `fetch --filter=blob:none --stdin` of the
wanted object names, with the no-op negotiator), once for the missing blob and every other
blob the trees named so far lack, so that a check of many files costs one round trip.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from pathlib import Path

import pygit2

from git_memzoi.errors import StateError


def promisors(repo: pygit2.Repository) -> list[str]:
    """The remotes a partial clone's missing objects are promised by (remote.<name>.promisor = true)."""
    return [
        entry.name[len("remote.") : -len(".promisor")]
        for entry in repo.config
        if entry.name.startswith("remote.") and entry.name.endswith(".promisor") and entry.value == "true"
    ]


def missing_object(repo: pygit2.Repository, path: str, oid: str, why: str = "") -> StateError:
    """The one line for a blob the tree names but the object database lacks (exit 3), `path` first when known."""
    remotes = promisors(repo)
    cause = f"a partial clone: remote {remotes[0]!r} promises the blob" if remotes else "the object is missing"
    return StateError(
        f"{path + ': ' if path else ''}blob {oid} is not in this repository ({cause}{why})",
        hint=f"let git fetch it (`git cat-file -p {oid}` does), or check the revision out, then run this again",
    )


def fetch(repo: pygit2.Repository, oid: str, trees: Iterable[str]) -> None:
    """Fetch `oid` and every blob missing under `trees` from the promisor remote, through git.

    StateError (exit 3) when the repository is no partial clone, or the blob is still missing:
    git could not reach the remote, or it no longer has the blob.
    """
    remotes = promisors(repo)
    if not remotes:
        raise missing_object(repo, "", oid)
    where = Path(repo.path)
    listed = _git(where, ["rev-list", "--objects", "--missing=print", "--no-walk", *trees])
    wanted = {oid} | {line[1:] for line in listed.splitlines() if line.startswith("?")}
    done = subprocess.run(
        [
            "git",
            "-c",
            "fetch.negotiationAlgorithm=noop",
            "fetch",
            remotes[0],
            "--no-tags",
            "--no-write-fetch-head",
            "--recurse-submodules=no",
            "--filter=blob:none",
            "--stdin",
        ],
        cwd=where,
        input="\n".join(sorted(wanted)) + "\n",
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0 or pygit2.Oid(hex=oid) not in repo.odb:
        said = (done.stderr.strip().splitlines() or [""])[-1]
        raise missing_object(repo, "", oid, f"; git could not fetch it: {said}" if said else "")


def _git(where: Path, args: list[str]) -> str:
    """git's output, or "" when it fails (a listing that fails only makes the batch smaller)."""
    done = subprocess.run(["git", *args], cwd=where, capture_output=True, text=True, check=False)
    return done.stdout if done.returncode == 0 else ""
