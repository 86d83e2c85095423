"""Install a Plan all-or-nothing: journal first, then the files, then the shared.db commit point.

The database transaction is the commit point. Before it commits, recovery restores every
before-image; once it has committed, recovery finishes writing every after-image. Either way
the work tree ends exactly as it was before the step or exactly as the step leaves it.

With a git commit (`--commit`) the commit is part of the same unit: the paths are staged and
the commit object is made (hooks, signature) before the commit point, and its ID is journaled;
after the commit point HEAD moves to it. Recovery before the commit point restores the index
entries too; after it, it stages the paths and moves HEAD, so HEAD, index and work tree agree (when HEAD moved
meanwhile, the commit is not placed and the index is left as it was, as git leaves it when its ref
update fails).

Test hook: `MEMZOI_FAULT=<step>` (read only here) makes the process kill itself with SIGKILL at
that step, so tests can prove the claim above at every step (see `fault_steps`).
"""

from __future__ import annotations

import os
import signal
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from git_memzoi.errors import Refused, StateError
from git_memzoi.gitrepo import commit as gitcommit
from git_memzoi.gitrepo import sparse
from git_memzoi.gitrepo.indexlock import HeldIndex
from git_memzoi.gitrepo.repo import GitRepo, open_repo
from git_memzoi.index import inbox_store, rebuild
from git_memzoi.layout import GITATTRIBUTES, MEMZOI_DIR, SUFFIX, TEMP_PREFIX
from git_memzoi.lifecycle import journal as journals
from git_memzoi.lifecycle.plan import FileChange, Plan
from git_memzoi.profile import secrets
from git_memzoi.runtime import clock
from git_memzoi.runtime.atomic import fsync_dir, refuse_symlinks, write_atomic
from git_memzoi.runtime.home import Layout
from git_memzoi.runtime.private import FILE_MODE, private_folder

if TYPE_CHECKING:
    from git_memzoi.runtime.workspace import Workspace

FAULT_ENV = "MEMZOI_FAULT"


def fault(step: str) -> None:
    """Test hook: die by SIGKILL when MEMZOI_FAULT names this step."""
    if os.environ.get(FAULT_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)


def fault_steps(n_files: int, *, commit: bool = False) -> list[str]:
    """Every fault step of an install that writes `n_files` files (and with `commit`, commits them), in order."""
    steps = ["planned", "journal-temp", "journal"]
    for i in range(1, n_files + 1):
        steps += [f"file-{i}-temp", f"file-{i}"]
    steps.append("files-installed")
    if commit:
        steps += ["index-staged", "commit-built", "journal-oid-temp", "journal-oid"]
    steps += ["db-before-commit", "db-committed"]
    if commit:
        steps.append("head-moved")
    return [*steps, "journal-commit-temp", "journal-commit", "journal-deleted"]


#: The first step at which an interrupted install must end in the after state.
FIRST_COMMITTED_STEP = "db-committed"


def safe_path(root: Path, rel: str) -> Path:
    """`root/rel` for a path inside .memzoi/ (or .gitattributes), refusing escapes and symlinked folders."""
    parts = rel.split("/")
    if (
        (rel != GITATTRIBUTES and parts[0] != MEMZOI_DIR)
        or any(p in ("", ".", "..") for p in parts)
        or os.path.isabs(rel)
    ):
        raise Refused(f"{rel}: outside {MEMZOI_DIR}/; lifecycle steps only write memory files")
    return refuse_symlinks(root, rel, "memory files and folders must be real")


def read_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise Refused(f"{path} is a folder where a memory file belongs") from None


#: What holds_bytes reads at a time.
_PIECE = 1 << 20


def holds_bytes(path: Path, data: bytes | None) -> bool:
    """Whether the file at `path` holds exactly `data` (None: there is no file), read a piece at a time.

    log.md grows without bound: reading it whole to compare would hold it a third time beside the
    plan's before- and after-images (BENCHMARKS.md, "apply with a large log.md").
    """
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below, after the size check
    except FileNotFoundError:
        return data is None
    except IsADirectoryError:
        raise Refused(f"{path} is a folder where a memory file belongs") from None
    with handle:
        if data is None or os.fstat(handle.fileno()).st_size != len(data):
            return False
        view = memoryview(data)
        for start in range(0, len(data), _PIECE):
            if handle.read(_PIECE) != view[start : start + _PIECE]:
                return False
        return handle.read(1) == b""


def put(path: Path, data: bytes | None, step: str | None = None, *, new_mode: int = 0o644) -> None:
    """Replace (or remove, for None) one file durably: temp file, fsync, rename, fsync the folder.

    A file that exists keeps its mode; a new one gets `new_mode`.
    """
    if data is None:
        if step:
            fault(f"{step}-temp")
        try:
            path.unlink()
        except FileNotFoundError:
            pass
        fsync_dir(path.parent)
        if step:
            fault(step)
        return
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = new_mode
    write_atomic(path, data, mode=mode, before_replace=(lambda: fault(f"{step}-temp")) if step else None)
    if step:
        fault(step)


@dataclass(frozen=True)
class CommitRequest:
    """Record the step's paths in one git commit on HEAD of `repo`, with `message`, made at `when`."""

    repo: GitRepo
    message: str
    when: datetime


def refuse_secrets(plan: Plan) -> frozenset[str]:
    """Refuse (before anything is written) a step that would write a secret-looking span into any
    field of any file under .memzoi/: a packet edited in review is scanned again here.

    log.md is scanned only for the lines the step appends: what it held before is what
    validate and the hooks judge (a step must not cost the whole log).

    Returns the paths whose whole new text was scanned and found clean.
    """
    scanned: set[str] = set()
    for change in plan.files:
        if change.after is None or change.after == change.before or not change.path.endswith(SUFFIX):
            continue
        before = journals.appended_to(change.path, change.before, change.after)
        if before is None:
            scanned.add(change.path)
            text, skipped = change.after.decode("utf-8", "replace"), 0
        else:
            text, skipped = change.after[len(before) :].decode("utf-8", "replace"), before.count(b"\n")
        found = secrets.scan(text)
        if found:
            first = found[0]
            field = secrets.field_at(text, first.line) if before is None else "body"
            raise Refused(
                f"{change.path}:{first.line + skipped}: {field}: {first.looks_like}; "
                f"secrets must not enter repository memory; nothing was changed",
                hint="remove the secret-looking text from the packet and run the command again",
                code="secret",
            )
    return frozenset(scanned)


def install(
    root: Path, layout: Layout, conn: sqlite3.Connection, plan: Plan, commit: CommitRequest | None = None
) -> gitcommit.Built | None:
    """Carry out `plan` in the work tree at `root` and in shared.db (and with `commit`, in git), all or nothing.

    Returns the commit made, or why none was (a hook refused, signing failed: the step stands and
    its files stay staged); None without `commit`.
    """
    fault("planned")
    clean = refuse_secrets(plan)
    _refuse_changed(root, plan)
    prepared = gitcommit.prepare(commit.repo, plan.paths) if commit is not None else None
    step = (
        journals.CommitStep(commit.message, prepared.ref, prepared.head, prepared.index_before)
        if commit is not None and prepared is not None
        else None
    )
    journal = journals.Journal(
        journals.new_txid(),
        plan.operation,
        plan.proposal_id,
        str(root),
        tuple(journals.Entry(c.path, c.before, c.after) for c in plan.files),
        plan.new_dirs,
        commit=step,
    )
    jpath = journals.path_for(layout.journal_dir, journal.txid)
    private_folder(layout.journal_dir)
    put(jpath, journal.to_bytes(), "journal", new_mode=FILE_MODE)
    work = _Step(root=root, layout=layout, conn=conn, plan=plan, clean=clean, commit=commit, jpath=jpath)
    latest = [journal]  # the journal as last written (with the commit's ID once it is journaled)
    try:
        built = _carry_out(work, prepared, latest)
    except BaseException as exc:
        journal = latest[0]
        committed = inbox_store.journal_committed(conn, journal.txid)
        settle(journal, committed)
        jpath.unlink()
        fsync_dir(jpath.parent)
        _reraise(exc, layout, plan)
        raise
    journal = latest[0]
    put(jpath, replace(journal, committed=True).to_bytes(), "journal-commit")
    jpath.unlink()
    fsync_dir(jpath.parent)
    fault("journal-deleted")
    if commit is not None and built is not None and built.oid is not None:
        gitcommit.run_post_commit(commit.repo)
    return built


@dataclass(frozen=True, kw_only=True)
class _Step:
    """What `install` carries out, and where."""

    root: Path
    layout: Layout
    conn: sqlite3.Connection
    plan: Plan
    clean: frozenset[str]
    commit: CommitRequest | None
    jpath: Path


def _carry_out(
    step: _Step, prepared: gitcommit.Prepared | None, latest: list[journals.Journal]
) -> gitcommit.Built | None:
    """The files, the commit and the commit point, then HEAD; the commit made (None without --commit).

    With --commit, index.lock is held from before the staging until HEAD moved, as `git commit`
    holds it: the new index replaces the old one only then, so a `git commit` running meanwhile
    can neither take the staged files nor move HEAD under the step (it finds the lock and stops,
    as git makes it). A failure leaves the index as it was.
    """
    commit = step.commit
    if commit is None or prepared is None or latest[0].commit is None:
        return _install_steps(step, prepared, None, latest)
    with gitcommit.staging(commit.repo, latest[0].txid) as held:
        if gitcommit.head_state(commit.repo, prepared) != prepared.head:
            # a commit landed before the lock was taken (nothing is written yet): start from the HEAD it left
            prepared = gitcommit.prepare(commit.repo, step.plan.paths, held.index)
            journal = latest[0]
            assert journal.commit is not None
            step_now = replace(journal.commit, ref=prepared.ref, head=prepared.head, index_before=prepared.index_before)
            latest[0] = replace(journal, commit=step_now)
            put(step.jpath, latest[0].to_bytes(), "journal")
        try:
            built = _install_steps(step, prepared, held, latest)
        except BaseException:
            held.changed = False  # the index as it was: settle restores nothing there
            raise
        if built is not None and built.oid is not None:
            built = _advance(commit, step.plan.paths, (prepared, built), held, _journal_remade(step, latest))
    return built


def _install_steps(
    step: _Step, prepared: gitcommit.Prepared | None, held: HeldIndex | None, latest: list[journals.Journal]
) -> gitcommit.Built | None:
    """The files, the commit object (staged into `held`), then the shared.db commit point; the commit made."""
    root, layout, conn, plan, commit, jpath = step.root, step.layout, step.conn, step.plan, step.commit, step.jpath
    journal = latest[0]
    built: gitcommit.Built | None = None
    for folder in plan.new_dirs:
        (root / folder).mkdir(exist_ok=True)
    for number, change in enumerate(plan.files, 1):
        put(root / change.path, change.after, f"file-{number}")
    fault("files-installed")
    _remember_verdicts(layout, plan, step.clean)
    if commit is not None and prepared is not None and held is not None and journal.commit is not None:
        gitcommit.stage_into(commit.repo, held, plan.paths)
        fault("index-staged")
        built = gitcommit.build(commit.repo, prepared, plan.paths, commit.message, when=commit.when, staged=held.index)
        fault("commit-built")
        if built.oid is not None:
            journal = replace(journal, commit=replace(journal.commit, oid=built.oid))
            put(jpath, journal.to_bytes(), "journal-oid")
            latest[0] = journal
    inbox_store.execute(conn, plan.db, journal.txid, before_commit=lambda: fault("db-before-commit"))
    fault("db-committed")
    return built


def _refuse_changed(root: Path, plan: Plan) -> None:
    """Refuse when a file is no longer what the plan was made from (its before-image)."""
    for change in plan.files:
        if not holds_bytes(safe_path(root, change.path), change.before):
            raise Refused(
                f"{change.path} changed while the {plan.operation} was being planned; nothing was changed",
                hint="run the command again",
            )


def _reraise(exc: BaseException, layout: Layout, plan: Plan) -> None:
    """After a roll back: a lost compare-and-swap or an unusable shared.db as the package's errors."""
    if isinstance(exc, inbox_store.Conflict):
        raise Refused(f"{exc}: another process changed it first; nothing was changed") from None
    if isinstance(exc, sqlite3.DatabaseError):
        raise StateError(f"{layout.shared_db}: {exc}; the {plan.operation} was rolled back") from None


#: How many times apply --commit makes its commit again over a HEAD that moved before giving up.
ADVANCE_TRIES = 8


def _advance(
    request: CommitRequest,
    paths: Sequence[str],
    made: tuple[gitcommit.Prepared, gitcommit.Built],
    held: HeldIndex,
    remade: Callable[[gitcommit.Prepared, gitcommit.Built], None] | None = None,
) -> gitcommit.Built:
    """Move the branch to the built commit. When HEAD moved meanwhile, make the commit again over it and retry.

    `git commit` holds index.lock only to refresh the index, not while it moves HEAD, so a commit
    of the user's can land after the step took the lock. It took nothing of the step's (the new
    index is put in place only after HEAD moved); the step's commit is then made again, hooks
    included, as the same `paths` over the HEAD it left, and `remade` is told (a journaled step
    records the new commit). After ADVANCE_TRIES, no commit, and the index as it was
    (held.changed False): the step stands, its files unstaged.
    """
    prepared, built = made
    assert built.oid is not None
    for _ in range(ADVANCE_TRIES):
        try:
            gitcommit.advance(request.repo, prepared, built.oid, request.message)
        except Refused as exc:
            moved = exc
        else:
            fault("head-moved")
            return built
        prepared = gitcommit.prepare(request.repo, paths, held.index)
        built = gitcommit.build(request.repo, prepared, paths, request.message, when=request.when, staged=held.index)
        if built.oid is None:
            return built  # a hook or the signature refused it this time: the files stay staged
        if remade is not None:
            remade(prepared, built)
    held.changed = False  # the staged index was never put in place: it is dropped with the lock
    return gitcommit.Built(None, moved.message, staged=False)


def _journal_remade(
    step: _Step, latest: list[journals.Journal]
) -> Callable[[gitcommit.Prepared, gitcommit.Built], None]:
    """What `_advance` does for a journaled step when it made the commit again: the journal names the new one."""

    def remade(prepared: gitcommit.Prepared, built: gitcommit.Built) -> None:
        journal = latest[0]
        assert journal.commit is not None
        again = replace(journal.commit, head=prepared.head, index_before=prepared.index_before, oid=built.oid)
        latest[0] = replace(journal, commit=again)
        put(step.jpath, latest[0].to_bytes(), "journal-oid")

    return remade


def _remember_verdicts(layout: Layout, plan: Plan, clean: frozenset[str]) -> None:
    """Keep check_file's verdict of each file just written, so that committing them needs no parse.

    pre-commit's fast path (hooks.fastcommit) reads them; best effort, a cache. `clean`: the
    paths refuse_secrets already scanned whole, which are not scanned again; log.md, of which
    it scanned only the appended lines, keeps a clean verdict when its text before did.
    """
    from git_memzoi.hooks.verdicts import remember_written

    appended = {
        c.path: before for c in plan.files if (before := journals.appended_to(c.path, c.before, c.after)) is not None
    }
    files = [(c.path, c.after) for c in plan.files if c.after is not None]
    remember_written(layout.hook_trees, files, clean, appended)


def settle(journal: journals.Journal, committed: bool) -> list[str]:
    """Bring every path of `journal` to its after-image (committed) or before-image; report paths left alone."""
    root = Path(journal.workdir)
    notes: list[str] = []
    left: set[str] = set()
    for entry in journal.entries:
        full = root / entry.path
        want, other = (entry.after, entry.before) if committed else (entry.before, entry.after)
        try:
            safe_path(root, entry.path)
            current = read_or_none(full)
        except Refused as exc:
            notes.append(f"{entry.path}: left as is ({exc})")
            left.add(entry.path)
            continue
        if current == want:
            continue
        if current == other:
            put(full, want)
        else:
            notes.append(f"{entry.path}: left as is, it changed after the interrupted {journal.operation}")
            left.add(entry.path)
    if not committed:
        for folder in reversed(journal.new_dirs):
            try:
                (root / folder).rmdir()
            except OSError:
                pass
    if journal.commit is not None:
        notes.extend(_settle_commit(journal, journal.commit, committed, left))
    return notes


def _settle_commit(journal: journals.Journal, step: journals.CommitStep, committed: bool, left: set[str]) -> list[str]:
    """The git side of `settle`: restore the index entries, or stage the paths and put the commit on HEAD."""
    repo = open_repo(journal.workdir)
    gitcommit.release_lock_of(repo, journal.txid)  # the index.lock the killed step held, if it held one
    prepared = gitcommit.Prepared(step.ref, step.head, step.index_before)
    if not committed:
        gitcommit.unstage(repo, prepared)
        return []
    paths = [entry.path for entry in journal.entries if entry.path not in left]
    return gitcommit.settle_staged(repo, prepared, step.oid, step.message, paths)


def clean_temp(roots: list[Path], journal_dir: Path, git_dirs: tuple[Path, ...] = ()) -> list[str]:
    """Remove temp files an interrupted write left in .memzoi/, the work tree roots, the journal and git folders."""
    removed: list[str] = []
    folders: list[Path] = [journal_dir, *git_dirs]
    for root in roots:
        folders.append(root)
        top = root / MEMZOI_DIR
        if top.is_dir() and not top.is_symlink():
            for here, subdirs, _ in os.walk(top):
                folders.append(Path(here))
                subdirs[:] = [d for d in subdirs if not (Path(here) / d).is_symlink()]
    for folder in folders:
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            if not name.startswith(TEMP_PREFIX):
                continue  # most names: no path object, no stat (records/ may hold tens of thousands)
            path = folder / name
            if path.is_file() and not path.is_symlink():
                path.unlink()
                removed.append(str(path))
    return removed


_COMMITTED = {"apply": ("applied", "applied"), "reject": ("rejected", "resolved")}


def install_and_commit(
    ws: Workspace, root: Path, conn: sqlite3.Connection, plan: Plan, *, verb: str, commit: bool
) -> tuple[list[str], str | None]:
    """Install `plan`, update the index, and with `commit` record exactly its paths in one git commit."""
    _refuse_left_out(ws.repo, plan)
    if commit:
        refuse_uncommitted(ws, plan, verb)
        plan = with_init_files(ws, root, plan)
    request = CommitRequest(ws.repo, f"memzoi: {verb} {plan.proposal_id}", clock.now()) if commit else None
    built = install(root, ws.layout, conn, plan, request)
    warnings = refresh_index(ws, plan.paths)
    if built is None:
        return warnings, None
    if built.oid is None:
        done, files = _COMMITTED[verb]
        where = (
            f"the {files} files are staged"
            if built.staged
            else f"the {files} files are in the work tree, not staged (the index is as it was)"
        )
        raise Refused(
            f"{done} {plan.proposal_id}, but no commit was made: {built.refusal}; {where}",
            hint="fix what stopped the commit, then git commit"
            if built.staged
            else f"commit them yourself if you want them committed: git add -A -- {' '.join(plan.paths)}",
            code="commit-failed",
        )
    return warnings, built.oid


def untracked_init_files(ws: Workspace, root: Path, skip: Iterable[str] = ()) -> list[str]:
    """The files `init` wrote that HEAD does not track yet (regular files in the work tree), but `skip`."""
    from git_memzoi.runtime.init import INIT_PATHS

    left = set(skip)
    return [
        rel
        for rel in INIT_PATHS
        if rel not in left
        and (root / rel).is_file()
        and not (root / rel).is_symlink()
        and ws.repo.head_blob(rel) is None
    ]


def with_init_files(ws: Workspace, root: Path, plan: Plan) -> Plan:
    """`plan` plus, unchanged, each file `init` wrote that HEAD lacks: the first commit takes init's files along.

    Otherwise .gitattributes' union rule, index.md and the .gitkeep files would stay untracked after
    every `--commit` until committed by hand.
    """
    extra = []
    for rel in untracked_init_files(ws, root, plan.paths):
        data = read_or_none(safe_path(root, rel))
        if data is not None:
            extra.append(FileChange(rel, data, data))
    return replace(plan, files=(*plan.files, *extra)) if extra else plan


def refuse_uncommitted(ws: Workspace, plan: Plan, verb: str) -> None:
    """With --commit, a tracked file the step edits must be as HEAD has it, or the commit would carry another change.

    An earlier step left uncommitted (a reject's log.md line, an edited record) would otherwise ride
    along in this commit while that step's other files stay behind. Refused before anything is written.
    A file the step creates or removes carries nothing else, and neither does one HEAD does not track
    yet (the first commit after `init` takes init's files whole).
    """
    for change in plan.files:
        if change.before is None or change.after is None or ws.repo.head_blob(change.path) is None:
            continue
        if not ws.repo.matches_head(change.path, change.before):
            raise Refused(
                f"{change.path} has changes that are not committed (an earlier step's, or yours); "
                f"--commit would carry them in the commit of this {verb}",
                hint="commit or restore them first (git status shows them), or run it without --commit",
                code="uncommitted",
            )


def _refuse_left_out(repo: GitRepo, plan: Plan) -> None:
    """Refuse to create a file git tracks but the work tree lacks (a sparse checkout left it out): it would
    replace the committed file."""
    hidden = sparse.tracked(repo, [c.path for c in plan.files if c.before is None and c.after is not None])
    if hidden:
        raise Refused(
            f"{hidden[0]} is tracked by git but not in the work tree (a sparse checkout leaves it out, or it was "
            f"deleted); the {plan.operation} would replace it; nothing was changed",
            hint=f"git sparse-checkout add {hidden[0].rsplit('/', 1)[0]} (or git restore {hidden[0]})",
            code="not-checked-out",
        )


def refresh_index(ws: Workspace, paths: Iterable[str]) -> list[str]:
    """Update this worktree's index.db for the files just written; a failure is a warning, never an
    undo (the index is disposable)."""
    try:
        rebuild.refresh(ws, paths)
    except Exception as exc:  # noqa: BLE001 - the files are installed; the next read refreshes the index
        return [f"index.db was not updated ({type(exc).__name__}: {exc}); the next read refreshes it"]
    return []


def refuse_uncommitted_paths(ws: Workspace, paths: Iterable[str], verb: str) -> None:
    """Before a run of steps committed together: each tracked file of `paths` must be as HEAD has it."""
    root = ws.repo.require_workdir()
    gitcommit.prepare(ws.repo, [])  # a merge in progress, a held index.lock, no identity: refused before any step
    for rel in paths:
        if ws.repo.head_blob(rel) is not None and not ws.repo.matches_head(rel, read_or_none(safe_path(root, rel))):
            raise Refused(
                f"{rel} has changes that are not committed (an earlier step's, or yours); "
                f"--commit would carry them in the commit of this {verb}",
                hint="commit or restore them first (git status shows them), or run it without --commit",
                code="uncommitted",
            )


def commit_paths(ws: Workspace, paths: Iterable[str], message: str) -> str:
    """Record `paths` (files steps already installed) in one commit on HEAD, as `git commit --only` would.

    For steps that each installed their files on their own (`review --commit`): the commit is made after
    them, so an interrupted run leaves them applied and uncommitted, which `git status` shows.
    init's untracked files go along, as with every `--commit`.
    """
    root = ws.repo.require_workdir()
    wanted = sorted(set(paths))
    wanted += untracked_init_files(ws, root, wanted)
    request = CommitRequest(ws.repo, message, clock.now())
    with gitcommit.staging(ws.repo, f"commit-{os.getpid()}") as held:
        prepared = gitcommit.prepare(ws.repo, wanted, held.index)
        gitcommit.stage_into(ws.repo, held, wanted)
        built = gitcommit.build(ws.repo, prepared, wanted, message, when=request.when, staged=held.index)
        if built.oid is not None:
            built = _advance(request, wanted, (prepared, built), held)
    if built.oid is None:
        where = "the files are staged" if built.staged else "the files are in the work tree, not staged"
        raise Refused(
            f"no commit was made: {built.refusal}; {where}",
            hint=f"commit them yourself: git add -A -- {' '.join(wanted)} && git commit",
            code="commit-failed",
        )
    gitcommit.run_post_commit(ws.repo)
    return built.oid
