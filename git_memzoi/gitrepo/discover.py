"""Find a repository's git directory, common directory and work tree without pygit2, in the common cases.

Read commands need only these paths (for the runtime keys and the work tree); importing
pygit2 would cost them more than their own work. `find` follows libgit2's discovery for
the layouts it understands: a `.git` folder, a `.git` file pointing elsewhere (linked
worktrees, `--separate-git-dir`), and a `commondir` file. For anything else (GIT_* variables
that change discovery, bare repositories, a start inside a git directory, `core.worktree`,
`core.bare`, config includes, another owner, another file system, a missing or odd file)
it answers None and pygit2 decides, so the answer is either pygit2's or none.

The runtime keys (`runtime_key`) are derived from these paths here too, so that a start-up
path can find a worktree's runtime folder without loading `gitrepo.repo`.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the start-up path
if TYPE_CHECKING:
    from typing import Any

#: Variables that change where git looks; when any is set, pygit2 does the looking.
DISCOVERY_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
)

Found = tuple[Path, Path, Path | None]
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


def find(start: str | os.PathLike[str] | None = None) -> Found | None:
    """(git_dir, common_dir, workdir), canonical, for the repository holding `start`; None means "ask pygit2"."""
    if any(os.environ.get(name) for name in DISCOVERY_ENV):
        return None
    try:
        here = os.path.realpath(os.fspath(start) if start is not None else os.getcwd())
        top = os.stat(here)
        if not stat.S_ISDIR(top.st_mode):
            return None
        while True:
            try:
                dotgit = os.lstat(os.path.join(here, ".git"))
            except FileNotFoundError:
                dotgit = None
            if dotgit is not None:
                return _layout(here, dotgit)
            if os.path.lexists(os.path.join(here, "HEAD")):
                return None  # perhaps a bare repository or the inside of a git directory
            parent = os.path.dirname(here)
            if parent == here or os.stat(parent).st_dev != top.st_dev:
                return None  # not found (pygit2 words the error), or at a file-system boundary
            here = parent
    except (OSError, ValueError, UnicodeError):
        return None


def _layout(workdir: str, dotgit: os.stat_result) -> Found | None:
    """The repository whose work tree is `workdir`, from its `.git` entry, when the layout is a plain one."""
    entry = os.path.join(workdir, ".git")
    if stat.S_ISDIR(dotgit.st_mode):
        git_dir = entry
    elif stat.S_ISREG(dotgit.st_mode):
        with open(entry, "rb") as handle:
            text = handle.read().decode("utf-8")
        if not text.startswith("gitdir: ") or text.count("\n") > 1:
            return None
        target = text[len("gitdir: ") :].rstrip("\r\n")
        if not target:
            return None
        git_dir = os.path.realpath(os.path.join(workdir, target))
    else:
        return None
    if not os.path.isfile(os.path.join(git_dir, "HEAD")):
        return None
    common = git_dir
    commondir = os.path.join(git_dir, "commondir")
    if os.path.lexists(commondir):
        with open(commondir, "rb") as handle:
            pointer = handle.read().decode("utf-8").strip()
        if not pointer:
            return None
        common = os.path.realpath(os.path.join(git_dir, pointer))
    if not (os.path.isdir(os.path.join(common, "objects")) and os.path.isdir(os.path.join(common, "refs"))):
        return None
    uid = os.geteuid()
    if any(os.stat(path).st_uid != uid for path in (workdir, git_dir, common)):
        return None  # libgit2's ownership check (safe.directory) is pygit2's to make
    if not _plain_config(os.path.join(common, "config")):
        return None
    return Path(git_dir), Path(common), Path(workdir)


def _plain_config(path: str) -> bool:
    """True when the config cannot move the work tree (no core.worktree, bare false, no includes) and names
    no object format.

    Deliberately crude: any mention of "worktree" or "include" (even a branch name) sends
    the caller to pygit2, which is slower but never wrong.
    """
    try:
        with open(path, "rb") as handle:
            text = handle.read().decode("utf-8").lower()
    except FileNotFoundError:
        return True
    if "worktree" in text or "include" in text or "objectformat" in text:
        return False  # objectformat: pygit2 opens it, or says it cannot (gitrepo.repo.open_failure)
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("bare"):
            key, _, value = line.partition("=")
            if key.strip() != "bare" or value.split("#")[0].split(";")[0].strip() not in ("false", "no", "off", "0"):
                return False
    return True


def repository_name(common_dir: str | os.PathLike[str]) -> str:
    """The repository's readable name: its main folder, or the bare directory without .git."""
    common = os.fspath(common_dir)
    base = os.path.basename(common)
    if base == ".git":
        return os.path.basename(os.path.dirname(common))
    return base[:-4] if base.endswith(".git") else base


def light_sha256() -> Any:
    """A new SHA-256 object from CPython's own module (hashlib loads OpenSSL: milliseconds on start-up paths)."""
    try:
        from _sha256 import sha256
    except ImportError:
        try:
            from _sha2 import sha256  # its name from Python 3.12
        except ImportError:
            from hashlib import sha256
    return sha256()


def runtime_key(label: str, kind: str, *paths: str | os.PathLike[str]) -> str:
    """`<readable-prefix>-<16 hex>`: the hex from a length-prefixed hash of the kind and canonical paths."""
    digest = light_sha256()
    digest.update(len(kind).to_bytes(8, "big") + kind.encode())
    for path in paths:
        data = os.fsencode(os.path.realpath(path))
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    # every run of characters other than a-z and 0-9 becomes one hyphen
    slug: list[str] = []
    for ch in label.lower():
        if ch in _KEY_CHARS:
            slug.append(ch)
        elif not slug or slug[-1] != "-":
            slug.append("-")
    prefix = "".join(slug).strip("-")[:32] or "repo"
    return f"{prefix}-{digest.hexdigest()[:16]}"


def keys(
    git_dir: str | os.PathLike[str], common_dir: str | os.PathLike[str], workdir: str | os.PathLike[str] | None
) -> tuple[str, str]:
    """(repository key, worktree key): the first shared by every worktree, the second this worktree's own."""
    name = repository_name(common_dir)
    label = os.path.basename(os.fspath(workdir)) if workdir is not None else name
    return runtime_key(name, "repository", common_dir), runtime_key(label, "worktree", git_dir)
