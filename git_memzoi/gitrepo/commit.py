"""Commit exactly the given paths on HEAD as the user's `git commit --only` would, in steps a journal can replay.

The steps are: `prepare` (refuse before anything changes: unreadable index, no identity, a merge,
rebase, bisect, cherry-pick or revert in progress), `stage` (the paths' work-tree state into the
index, under `index.lock` as git takes it), `build` (hooks, message, signature, the commit object;
HEAD is not moved yet), `advance` (move HEAD by compare-and-swap), `run_post_commit`. `withdraw`
leaves the index as it was when HEAD moved meanwhile; `unstage` and `settle_staged` undo or redo
the index side for recovery.
"""

from __future__ import annotations

import email.utils
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pygit2
from pygit2.enums import FileMode

from git_memzoi.errors import Refused
from git_memzoi.gitrepo import signing
from git_memzoi.gitrepo.commit_hooks import run_hook
from git_memzoi.gitrepo.config import config_value
from git_memzoi.gitrepo.indexlock import (
    HeldIndex,
    add_from_workdir,
    index_locked_refusal,
    locked_index,
    release_stale,
    unwritable_index,
)
from git_memzoi.gitrepo.repo import GitRepo
from git_memzoi.layout import INDEX_LOCK, TEMP_PREFIX

__all__ = [
    "TEMP_INDEX_PREFIX",
    "Built",
    "Prepared",
    "advance",
    "build",
    "config_value",
    "prepare",
    "run_post_commit",
    "settle_staged",
    "stage",
    "unstage",
    "withdraw",
]

#: The temporary index the hooks see (git commit --only does the same); recovery removes leftovers.
TEMP_INDEX_PREFIX = f"{TEMP_PREFIX}index-"
#: What each of libgit2's repository states is, in the words git's own messages use.
_IN_PROGRESS = {
    "MERGE": "a merge",
    "REVERT": "a revert",
    "REVERT_SEQUENCE": "a revert",
    "CHERRYPICK": "a cherry-pick",
    "CHERRYPICK_SEQUENCE": "a cherry-pick",
    "BISECT": "a bisect",
    "REBASE": "a rebase",
    "REBASE_INTERACTIVE": "a rebase",
    "REBASE_MERGE": "a rebase",
    "APPLY_MAILBOX": "a git am",
    "APPLY_MAILBOX_OR_REBASE": "a rebase or git am",
}
#: The files git leaves while each operation is stopped, to name in the refusal (and `sequencer/`, which
#: libgit2's state reports only together with CHERRY_PICK_HEAD or REVERT_HEAD).
_MARKERS = (
    "rebase-merge",
    "rebase-apply",
    "MERGE_HEAD",
    "CHERRY_PICK_HEAD",
    "REVERT_HEAD",
    "BISECT_LOG",
    "sequencer",
)

#: (path, blob ID or None when absent, file mode) of one index entry.
IndexState = tuple[str, str | None, int]


@dataclass(frozen=True)
class Prepared:
    """What the commit starts from: the ref HEAD names ("HEAD" when detached), its commit, the paths' index entries."""

    ref: str
    head: str | None
    index_before: tuple[IndexState, ...]


@dataclass(frozen=True)
class Built:
    """The commit object made (not yet on HEAD), or why none was: a hook refused, signing failed (the paths
    stay `staged`), HEAD moved (the index is left as it was)."""

    oid: str | None
    refusal: str | None = None
    staged: bool = True


def _identity(repo: GitRepo, role: str) -> tuple[str, str]:
    """Name and email as git picks them: GIT_<ROLE>_*, then <role>.name/email, user.name/email, EMAIL."""
    lower = role.lower()
    name = os.environ.get(f"GIT_{role}_NAME") or config_value(repo, f"{lower}.name") or config_value(repo, "user.name")
    email_address = (
        os.environ.get(f"GIT_{role}_EMAIL")
        or config_value(repo, f"{lower}.email")
        or config_value(repo, "user.email")
        or os.environ.get("EMAIL")
    )
    if not name or not email_address:
        raise Refused(
            "cannot commit: git has no user.name / user.email",
            hint='git config user.name "Your Name" && git config user.email you@example.com',
        )
    return name, email_address


_RAW_DATE = re.compile(r"@?(\d+)(?:\s+([+-])(\d\d):?(\d\d))?")


def _date(role: str, default: datetime) -> datetime:
    """GIT_<ROLE>_DATE in git's raw (`@1700000000 +0100`), ISO 8601 or RFC 2822 form, else `default`."""
    text = os.environ.get(f"GIT_{role}_DATE", "").strip()
    if not text:
        return default.astimezone()  # the local offset, as git records it
    raw = _RAW_DATE.fullmatch(text)
    if raw:
        seconds, sign, hours, minutes = raw.groups()
        offset = timedelta(hours=int(hours or 0), minutes=int(minutes or 0)) * (-1 if sign == "-" else 1)
        return datetime.fromtimestamp(int(seconds), timezone(offset))
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError):
            raise Refused(
                f"GIT_{role}_DATE={text!r} is not a date git memzoi understands",
                hint="use @<seconds> <+hhmm>, ISO 8601 or RFC 2822",
            ) from None
    return parsed if parsed.tzinfo is not None else parsed.astimezone()


def _signature(repo: GitRepo, role: str, when: datetime) -> pygit2.Signature:
    name, email_address = _identity(repo, role)
    moment = _date(role, when)
    offset = moment.utcoffset()
    minutes = int(offset.total_seconds() // 60) if offset is not None else 0
    return pygit2.Signature(name, email_address, int(moment.timestamp()), minutes)


def _read_index(repo: GitRepo) -> pygit2.Index:
    index_path = repo.git_dir / "index"
    try:
        index: pygit2.Index = repo.pygit.index
        index.read(True)  # libgit2's "unchanged" test is by stat, which an index rewritten meanwhile can pass
    except pygit2.GitError as exc:
        raise unwritable_index(index_path, exc) from None
    return index


def _refuse_in_progress(repo: GitRepo) -> None:
    """Refuse while git is stopped in a merge, rebase, bisect, cherry-pick, revert or am: HEAD is transient then,
    and a commit on it would be dropped by the abort or reset that ends the operation."""
    state = pygit2.enums.RepositoryState(repo.pygit.state())
    marker = next((repo.git_dir / name for name in _MARKERS if (repo.git_dir / name).exists()), None)
    if state == pygit2.enums.RepositoryState.NONE:
        if marker is None:
            return
        what = "a cherry-pick or revert" if marker.name == "sequencer" else "a git operation"
    else:
        what = _IN_PROGRESS.get(state.name, "a git operation")
    raise Refused(
        f"cannot commit: {what} is in progress" + (f" ({marker} exists)" if marker is not None else ""),
        hint="finish or abort it (or git bisect reset), or apply without --commit",
        code="git-in-progress",
    )


def prepare(repo: GitRepo, paths: Sequence[str], held: pygit2.Index | None = None) -> Prepared:
    """Check that a commit can be made here, before anything changes; note where HEAD and the index are.

    `held`: the index `staging` holds, read under its lock (HEAD is read again there: a commit may
    have landed between the first look and the lock)."""
    repo.require_workdir()
    _refuse_in_progress(repo)
    lock = repo.git_dir / INDEX_LOCK
    if held is None and lock.exists():
        raise index_locked_refusal(lock)
    index = held if held is not None else _read_index(repo)
    for role in ("AUTHOR", "COMMITTER"):
        _identity(repo, role)
        _date(role, datetime.now(UTC))
    git = repo.pygit
    if git.head_is_unborn:
        target = git.references["HEAD"].target
        ref, head = str(target), None
    elif git.head_is_detached:
        ref, head = "HEAD", str(git.head.target)
    else:
        ref, head = git.head.name, str(git.head.target)
    before: list[IndexState] = []
    for rel in paths:
        entry = index[rel] if rel in index else None  # noqa: SIM401  (pygit2.Index has no get)
        before.append((rel, str(entry.id), int(entry.mode)) if entry is not None else (rel, None, 0))
    return Prepared(ref, head, tuple(before))


def _file_state(root: Path, rel: str) -> Path | None:
    full = root / rel
    if full.is_symlink() or (full.exists() and not full.is_file()):
        raise Refused(f"cannot commit {rel}: not a regular file")
    return full if full.exists() else None


def stage(repo: GitRepo, paths: Sequence[str]) -> None:
    """Put the work-tree state of `paths` (present or deleted) into the index, as `git add -A -- paths`."""
    with locked_index(repo) as held:
        _stage_into(repo, held, paths)


@contextmanager
def staging(repo: GitRepo, token: str) -> Iterator[HeldIndex]:
    """The index, for `stage_into`, with `index.lock` held until the block ends, as `git commit` holds it.

    The new index replaces the old one when the block ends (after HEAD moved), and only then:
    a `git commit` running meanwhile cannot take the lock, so it can neither commit the staged
    paths nor move HEAD under the step. Set `changed` to False to leave the index as it was
    (HEAD could not be moved). `token` marks the lock as this step's (indexlock.release_stale).
    """
    with locked_index(repo, token) as held:
        yield held


def stage_into(repo: GitRepo, held: HeldIndex, paths: Sequence[str]) -> None:
    """`stage` into an index `staging` holds."""
    _stage_into(repo, held, paths)


def _stage_into(repo: GitRepo, held: HeldIndex, paths: Sequence[str]) -> None:
    root = repo.require_workdir()
    try:
        for rel in paths:
            if _file_state(root, rel) is not None:
                add_from_workdir(repo, held, rel)
            elif rel in held.index:
                held.index.remove(rel)
                held.changed = True
    except pygit2.GitError as exc:
        raise Refused(f"{repo.git_dir / 'index'}: cannot stage {', '.join(paths)}: {exc}") from None


def _clean_message(text: str) -> str:
    """git's `whitespace` cleanup: trailing spaces, leading/trailing blank lines and repeated blank lines go."""
    lines = [line.rstrip() for line in text.splitlines()]
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out) + "\n" if out else ""


def build(
    repo: GitRepo,
    prepared: Prepared,
    paths: Sequence[str],
    message: str,
    *,
    when: datetime,
    staged: pygit2.Index | None = None,
) -> Built:
    """Run the commit hooks on HEAD plus `paths`, then write the (signed) commit object; HEAD does not move.

    `staged`: the index `staging` holds (else the repository's index is read)."""
    git = repo.pygit
    head = git[prepared.head].peel(pygit2.Commit) if prepared.head else None
    real = staged if staged is not None else _read_index(repo)
    temp = repo.git_dir / f"{TEMP_INDEX_PREFIX}{os.getpid()}"
    try:
        # the hooks see what `git commit --only <paths>` shows them: HEAD plus exactly these paths
        only = pygit2.Index(str(temp))
        if head is not None:
            only.read_tree(head.tree)
        for rel in paths:
            if rel in real:
                only.add(real[rel])
            elif rel in only:
                only.remove(rel)
        only.write()
        hook = run_hook(repo, "pre-commit", index_file=temp)
        if not hook.ok:
            return Built(None, hook.reason)
        msg_file = repo.git_dir / "COMMIT_EDITMSG"
        msg_file.write_text(message if message.endswith("\n") else message + "\n", encoding="utf-8")
        for hook_args in (("prepare-commit-msg", str(msg_file), "message"), ("commit-msg", str(msg_file))):
            hook = run_hook(repo, *hook_args, index_file=temp)
            if not hook.ok:
                return Built(None, hook.reason)
        final = _clean_message(msg_file.read_text(encoding="utf-8", errors="replace"))
        if not final:
            return Built(None, "the commit message is empty after the commit hooks ran")
        only.read(True)  # a pre-commit hook may have staged more, as git allows
        tree = only.write_tree(git)
        author = _signature(repo, "AUTHOR", when)
        committer = _signature(repo, "COMMITTER", when)
        parents = [head.id] if head is not None else []
        if signing.wants_signature(repo):
            # the stubs say Oid; the function returns the commit object's text (pygit2 1.21)
            payload = str(git.create_commit_string(author, committer, final, tree, list[str | pygit2.Oid](parents)))
            try:
                signature = signing.sign(repo, payload, f"{committer.name} <{committer.email}>")
            except Refused as exc:
                return Built(None, exc.message)
            oid = git.create_commit_with_signature(payload, signature)
        else:
            oid = git.create_commit(None, author, committer, final, tree, parents)
        return Built(str(oid))
    except pygit2.GitError as exc:
        return Built(None, f"git could not write the commit: {exc}")
    finally:
        temp.unlink(missing_ok=True)


def _ref_target(repo: GitRepo, ref: str) -> str | None:
    found = repo.pygit.references.get(ref)
    if found is None:
        return None
    target = found.resolve().target if ref == "HEAD" else found.target
    return str(target)


def advance(repo: GitRepo, prepared: Prepared, oid: str, message: str) -> None:
    """Move HEAD's ref from the prepared commit to `oid`, only if nothing moved it in between (Refused otherwise)."""
    git = repo.pygit
    subject = message.strip().splitlines()[0] if message.strip() else ""
    reflog = f"commit{' (initial)' if prepared.head is None else ''}: {subject}"
    current = _ref_target(repo, prepared.ref)
    if current != prepared.head:
        raise Refused(f"{prepared.ref} moved while the commit was being made (now {current})")
    try:
        if prepared.head is None:
            git.create_reference_direct(prepared.ref, pygit2.Oid(hex=oid), False, message=reflog)
        else:
            # set_target compares with the value read above and fails if the ref changed since
            git.references[prepared.ref].set_target(pygit2.Oid(hex=oid), reflog)
    except (pygit2.GitError, ValueError) as exc:
        raise Refused(f"cannot move {prepared.ref} to the new commit: {exc}") from None


def head_state(repo: GitRepo, prepared: Prepared) -> str | None:
    """Where HEAD's ref points now (for recovery)."""
    return _ref_target(repo, prepared.ref)


def unstage(repo: GitRepo, prepared: Prepared) -> None:
    """Give the paths back the index entries they had before `stage` (the roll back of an interrupted step)."""
    _restore(repo, prepared)


def withdraw(repo: GitRepo, prepared: Prepared) -> None:
    """Leave the index as it was before `stage`, when HEAD moved and the commit was not placed.

    A path HEAD now holds exactly as staged (a commit made meanwhile took it) is left as it is:
    restoring it would stage its removal from that commit.
    """
    head = repo.head_commit()
    _restore(repo, prepared, keep_committed=True, head_tree=head.tree if head is not None else None)


def _restore(
    repo: GitRepo, prepared: Prepared, *, keep_committed: bool = False, head_tree: pygit2.Tree | None = None
) -> None:
    root = repo.require_workdir()
    try:
        with locked_index(repo) as held:
            index = held.index
            for rel, oid, mode in prepared.index_before:
                current = str(index[rel].id) if rel in index else None
                if current == oid:
                    continue
                if keep_committed and _tree_blob(head_tree, rel) == current:
                    continue
                if oid is None:
                    index.remove(rel)
                    held.changed = True
                elif (root / rel).is_file() and str(git_hash(root / rel)) == oid:
                    add_from_workdir(repo, held, rel)  # from the work tree, so the entry keeps its stat data
                else:
                    index.add(pygit2.IndexEntry(rel, pygit2.Oid(hex=oid), FileMode(mode)))
                    held.changed = True
    except pygit2.GitError as exc:
        raise Refused(f"{repo.git_dir / 'index'}: cannot restore the index entries: {exc}") from None


def _tree_blob(tree: pygit2.Tree | None, rel: str) -> str | None:
    if tree is None:
        return None
    try:
        return str(tree[rel].id)
    except KeyError:
        return None


def git_hash(path: Path) -> pygit2.Oid:
    """The blob ID git gives a file's bytes."""
    return pygit2.hash(path.read_bytes())


def release_lock_of(repo: GitRepo, token: str) -> bool:
    """Remove the `index.lock` a step killed while it held it (`staging` with `token`) left; True if it did."""
    return release_stale(repo, token)


def settle_staged(repo: GitRepo, prepared: Prepared, oid: str | None, message: str, paths: Sequence[str]) -> list[str]:
    """Finish a commit interrupted after its commit point: `paths` staged and HEAD on `oid` if it still can be;
    when HEAD moved meanwhile, the commit is not placed and the index is left as it was."""
    notes: list[str] = []
    if oid is None:
        stage(repo, paths)
        notes.append(f"the commit was not made; {', '.join(paths)} are staged")
        return notes
    current = head_state(repo, prepared)
    if current == prepared.head:
        stage(repo, paths)
        advance(repo, prepared, oid, message)
        notes.append(f"placed commit {oid[:12]} on {prepared.ref}")
    elif current == oid:
        stage(repo, paths)
    else:
        withdraw(repo, prepared)
        notes.append(
            f"{prepared.ref} moved since the interrupted commit; it was not placed, the files are in the work tree "
            f"and the index is as it was"
        )
    return notes


def run_post_commit(repo: GitRepo) -> None:
    """The post-commit hook; like git, its exit status changes nothing."""
    run_hook(repo, "post-commit")
