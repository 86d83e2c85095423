"""The checks every hook runs on a .memzoi/ change: a valid tree, no in-place edits or deletions, no secrets.

A change is one new .memzoi/ subtree against its parents' subtrees (a pushed commit, or the
staged index against HEAD). Work is shared across the changes of one push: each distinct file
blob is parsed once, each distinct tree is validated once (as a delta of its parent's, see
treestate), and each blob is scanned for secrets once: a record or packet whole, when it is
validated; any other file (log.md) for the lines a change adds.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from git_memzoi.errors import ConfigError
from git_memzoi.gitrepo import treeshape
from git_memzoi.gitrepo.history import FileEntry, History, TreeChange
from git_memzoi.hooks import refrules
from git_memzoi.hooks.refrules import ALLOWED_TRANSITIONS
from git_memzoi.hooks.treecache import Start, TreeCache
from git_memzoi.hooks.treestate import Kept, Rows, TreeState
from git_memzoi.layout import LOG_FILE, LOG_GROWTH_MAX, MAX_FILE_BYTES, MEMZOI_DIR, REPO_CONFIG
from git_memzoi.profile import secrets
from git_memzoi.profile.document import Problem
from git_memzoi.profile.folding import shown
from git_memzoi.profile.tree import SourceFile, TreeReport, check_file, secret_problem
from git_memzoi.runtime import config as configmod

__all__ = ["ALLOWED_TRANSITIONS", "CheckReport", "Finding", "MemoryChecker"]

_TREE_STATES_KEPT = 8
#: A validated tree is kept whole (a summary in the tree cache) once it differs in this many files
#: from the kept summary its state started from; closer, it is kept as a delta of that summary.
KEEP_AFTER = 32
#: code and message for a `.memzoi` that is not a folder; the symlink one is validate's own wording
_ODD_MEMZOI = {
    "symlink": ("symlink", f"{MEMZOI_DIR} must be a real folder, not a symlink; git memzoi does not follow it"),
    "gitlink": (
        "gitlink",
        f"{MEMZOI_DIR} must be a real folder, not a submodule (gitlink); git memzoi does not follow it",
    ),
    "file": ("not-a-directory", f"{MEMZOI_DIR} must be a real folder, not a file"),
    # a root tree git would not have written: what libgit2 reads as .memzoi is not what git checks out
    **{kind: ("malformed-tree", message) for kind, message in treeshape.ROOT_FAULTS.items()},
}


@dataclass(frozen=True)
class Finding:
    """A problem and the change that brought it: a commit SHA, or "index" for staged changes.

    `ref` is set for a problem in what a pushed ref would hold against what it holds now
    (`where` is then the ref's new tip).
    """

    where: str
    problem: Problem
    ref: str | None = None


@dataclass
class CheckReport:
    """What a hook found, and how much it had to look at."""

    findings: list[Finding] = field(default_factory=list)
    commits_walked: int = 0
    commits_checked: int = 0
    trees_validated: int = 0
    files_parsed: int = 0
    summaries: dict[str, str] = field(default_factory=dict)
    #: each pushed ref: (the commit it was judged against, or None for nothing; its new tip)
    refs: dict[str, tuple[str | None, str]] = field(default_factory=dict)
    #: `hook check` only: the records the range leaves unverified (freshness.invalidated), as JSON objects
    invalidated: list[dict[str, Any]] | None = None

    @property
    def ok(self) -> bool:
        return not self.findings

    def as_json(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "commits_walked": self.commits_walked,
            "commits_checked": self.commits_checked,
            "trees_validated": self.trees_validated,
            "problems": [{"commit": f.where, "ref": f.ref, **f.problem.as_json()} for f in self.findings],
        } | ({} if self.invalidated is None else {"invalidated": self.invalidated})


class MemoryChecker:
    """Checks .memzoi/ changes against their parents, caching by blob and tree OID across a push."""

    def __init__(
        self, history: History, base_config: list[configmod.ConfigSource], tree_cache: TreeCache | None = None
    ) -> None:
        self.history = history
        self.base_config = base_config
        self.tree_cache = tree_cache
        self.report = CheckReport()
        self._files: dict[tuple[str, str, bool], TreeReport] = {}
        self._states: OrderedDict[str, TreeState] = OrderedDict()
        self._tree_errors: dict[str, list[Problem]] = {}
        self._scanned: dict[tuple[str | None, str], list[secrets.SecretFinding]] = {}
        self._configs: dict[str | None, tuple[configmod.HooksConfig, Problem | None]] = {}
        self._seen: set[str] = set()
        self._starts: dict[str, str] = {}
        self._lease: float | None = None
        #: the push's time: whether a record's retention has passed is decided against it
        self.now = datetime.now(UTC)

    # the entry point ---------------------------------------------------------------
    def check(
        self,
        where: str,
        memzoi: str | None,
        parents: tuple[str, ...],
        parent_memzoi: tuple[str | None, ...],
        config: tuple[str, bytes] | None,
        policy: configmod.HooksConfig | None = None,
    ) -> list[Problem]:
        """Check one change: subtree `memzoi` over the commits `parents` (with their subtrees).

        `policy` is the [hooks] policy to judge it by; without one, the change's own config
        applies (the staged tree of a commit being made). Records and returns the problems
        not already reported for an earlier change of this push.
        """
        problems: list[Problem] = []
        own_policy, config_problem = self._config(config)
        if config_problem is not None:
            problems.append(config_problem)
        allow_edits = (policy or own_policy).allow_in_place_edits
        first = parent_memzoi[0] if parent_memzoi else None
        changes = list(self._changed(memzoi, parents, parent_memzoi))
        grown = [problem for change in changes for problem in self._log_growth(change)]
        if grown:  # judged by sizes alone: nothing of such a commit's memory is read
            return self._record(where, problems + grown)
        problems.extend(self.tree_errors(memzoi, first))
        problems.extend(
            Problem(
                path,
                1,
                "gitlink",
                "a submodule entry (gitlink) has no place in memory; memory files must be regular files",
            )
            for path in self.history.gitlinks(first, memzoi)
        )
        for change in changes:
            if refrules.is_record_path(change.path):
                # allow_in_place_edits lifts the record-file rules only: the packet rules stay
                problem = None if allow_edits else refrules.record_rule(self.history, self._file, change)
            else:
                problem = refrules.packet_rule(self.history, self._file, change, memzoi)
            if problem is not None:
                problems.append(problem)
            if change.new_oid is not None and not change.new_symlink:
                problems.extend(self._secrets(change))
        return self._record(where, problems)

    def check_ref(
        self, ref: str, where: str, base: str | None, tip: str | None, policy: configmod.HooksConfig
    ) -> list[Problem]:
        """Judge what `ref` would hold (commit `where`, subtree `tip`) against what it holds (subtree `base`)."""
        problems = refrules.ref_rules(
            self.history, self._file, base, tip, policy, now=self.now, lease_hours=self._lease_hours()
        )
        return self._record(where, problems, ref)

    def _lease_hours(self) -> float:
        """The server's [retention] session lease (a pushed config.toml cannot move an expiry earlier)."""
        if self._lease is None:
            self._lease = configmod.load(self.base_config).retention.session_lease_hours
        return self._lease

    def odd_memzoi(self, where: str, kind: str) -> list[Problem]:
        """Refuse a `.memzoi` that is not a directory (a symlink, a gitlink, a file), by name."""
        code, message = _ODD_MEMZOI[kind]
        return self._record(where, [Problem(MEMZOI_DIR, 1, code, message)])

    def replace_ref(self, ref: str, where: str) -> list[Problem]:
        """Refuse any update of a refs/replace/ ref: git would show its object in place of a checked one."""
        return self._record(
            where,
            [
                Problem(
                    ref,
                    1,
                    "replace-ref",
                    "replacement refs make git show another object in place of a checked one; none is taken",
                )
            ],
            ref,
        )

    def refuse_ref(self, ref: str, where: str, code: str, message: str) -> list[Problem]:
        """Refuse a ref update by a rule on the ref itself (default-branch-deleted, tree-tag), naming the ref."""
        return self._record(where, [Problem(ref, 1, code, message)], ref)

    def malformed_tree(self, where: str, path: str, why: str) -> list[Problem]:
        """Refuse a tree under .memzoi/ that git would not have written (see gitrepo.treeshape), by path."""
        return self._record(where, [Problem(path, 1, "malformed-tree", treeshape.malformed(why))])

    def memzoi_twins(self, where: str, names: tuple[str, ...]) -> list[Problem]:
        """Refuse root entries that a macOS or Windows checkout would write into `.memzoi/`, by name."""
        return self._record(
            where,
            [
                Problem(
                    shown(name),
                    1,
                    "memzoi-alias",
                    f"a case-insensitive or normalising filesystem (macOS, Windows) checks this out as {MEMZOI_DIR}; "
                    f"memory lives in {MEMZOI_DIR} alone",
                )
                for name in names
            ],
        )

    def policy(self, config: tuple[str, bytes] | None) -> configmod.HooksConfig:
        """The [hooks] policy of the server's config over a tree's .memzoi/config.toml (None: no file).

        A tree whose config.toml is not valid counts as having none: the built-in strict defaults
        and the server's config apply.
        """
        return self._config(config)[0]

    def _record(self, where: str, problems: list[Problem], ref: str | None = None) -> list[Problem]:
        fresh = []
        for problem in sorted(problems, key=lambda p: (p.path, p.line, p.code)):
            key = str(problem)
            if key not in self._seen:
                self._seen.add(key)
                fresh.append(problem)
                self.report.findings.append(Finding(where, problem, ref))
        return fresh

    # tree validity -----------------------------------------------------------------
    def tree_errors(self, memzoi: str | None, near: str | None = None) -> list[Problem]:
        """The errors validate_tree (committed mode) finds in a tree, computed once per tree OID.

        The tree is built from `near` (usually the parent's tree) by a delta: its cross-file rules
        re-run on the files the delta can affect alone, which is exact (see hooks/treestate.py and
        its property tests against validate_tree).
        """
        if memzoi is None:
            return []
        if memzoi not in self._tree_errors:
            state = self._state(memzoi, near)
            self.report.trees_validated += 1
            self._tree_errors[memzoi] = state.errors()
        return self._tree_errors[memzoi]

    def _state(self, memzoi: str, near: str | None) -> TreeState:
        if memzoi in self._states:
            self._states.move_to_end(memzoi)
            return self._states[memzoi]
        # a tree a hook kept before (pre-commit, usually, or an earlier push), else the parent's,
        # else the kept tree `start_from` named (the parent's tree is not kept)
        start = self._kept(memzoi) or self._near(near)
        if start is None and memzoi in self._starts:
            start = self._near(self._starts[memzoi])
        if start is None:  # validated from nothing: always worth keeping (its `base` is None)
            start = Start(None, TreeState(loader=self._reload), {})
        state = start.state
        if start.tree != memzoi:
            changes = self.history.changes(start.tree, memzoi)
            state.apply(self._own(change, start.rows) for change in changes)
        self._states[memzoi] = state
        while len(self._states) > _TREE_STATES_KEPT:
            self._states.popitem(last=False)
        return state

    def _near(self, tree: str | None) -> Start | None:
        """The state of `tree` this check holds, taken over, or else the kept one."""
        if tree is None:
            return None
        # Take the state over instead of copying it: in a linear push it is never needed again,
        # and a sibling that does need it rebuilds it from the cached per-file reports.
        state = self._states.pop(tree, None)
        return Start(tree, state, {}) if state is not None else self._kept(tree)

    def _kept(self, tree: str) -> Start | None:
        """Where the tree cache says to start validating `tree` (a delta's base must be in this repository)."""
        found = self.tree_cache.start(tree, self._reload) if self.tree_cache is not None else None
        if found is not None and found.tree not in (tree, None) and not self.history.has_object(found.tree):
            return None
        return found

    def _own(self, change: TreeChange, rows: Rows) -> tuple[str, FileEntry | None, TreeReport | Kept | None]:
        """A changed file with its own validation: a delta's row when it names this very blob, else parsed."""
        if change.new_oid is None:
            return change.path, None, None
        entry = FileEntry(change.new_oid, change.new_symlink)
        entry_row, kept = rows.get(change.path, (None, None))
        if kept is not None and entry_row == entry:
            return change.path, entry, kept
        return change.path, entry, self._file(change.path, change.new_oid, change.new_symlink)

    def start_from(self, memzoi: str, kept: str) -> None:
        """Validate tree `memzoi`, when it comes to it, as a delta of kept tree `kept` if its parent's is not at hand.

        Nothing is read now: a change refused by sizes alone (log-growth) never reads its tree.
        """
        self._starts[memzoi] = kept

    def state_of(self, memzoi: str) -> TreeState | None:
        """The state of a tree this checker validated, or None."""
        return self._states.get(memzoi)

    def remember(self, memzoi: str | None, *, replace: bool = False, delta: bool = True) -> bool:
        """Store the validated state of tree `memzoi` in the tree cache, for the next change to start from.

        A state that drifted KEEP_AFTER files or more from the kept summary it started from (a
        tree validated from nothing, always) is stored whole, as a summary; a closer one as a
        delta of that summary (unless not `delta`): the rows of the files that differ, a few KB
        where a summary is O(tree), so that the next check parses none of them again. A tree
        already kept is left as it is unless `replace` (its file may be damaged: rewrite it whole).
        Returns whether the tree is kept now (False: nothing to keep, or the cache is not writable).
        """
        if memzoi is None or self.tree_cache is None or memzoi not in self._states:
            return False
        cache, state = self.tree_cache, self._states[memzoi]
        if cache.has(memzoi) and not replace:
            return True
        near = state.base is not None and len(state.moved()) < KEEP_AFTER and cache.has(state.base)
        if replace or not near:
            if cache.save(memzoi, state):
                state.kept_as(memzoi)
                return True
            return False
        return delta and cache.save_delta(memzoi, state)

    def _reload(self, path: str, entry: FileEntry) -> TreeReport:
        return self._file(path, entry.oid, entry.is_symlink)

    def _file(self, path: str, oid: str, is_symlink: bool) -> TreeReport:
        key = (path, oid, is_symlink)
        one = self._files.get(key)
        if one is None:
            one = TreeReport()
            source = SourceFile(path, lambda: self.history.blob(oid), is_symlink, size=lambda: self.history.size(oid))
            check_file(one, source, "committed")
            self._files[key] = one
            self.report.files_parsed += 1
        return one

    def _listing(self, memzoi: str | None) -> Callable[[str], FileEntry | None]:
        """Look up a file of tree `memzoi` (None: the empty tree)."""
        if memzoi is None:
            return lambda path: None
        if memzoi in self._states:
            return self._states[memzoi].entry
        return self.history.listing(memzoi).get

    # what changed --------------------------------------------------------------------
    def _changed(
        self, memzoi: str | None, parents: tuple[str, ...], parent_memzoi: tuple[str | None, ...]
    ) -> list[TreeChange]:
        """The files this change makes differ from its first parent, minus clean merge takes.

        In a merge, a file that equals another parent's version while the first parent kept the
        merge base's version is that side's change, checked with that side's commits.
        """
        changes = self.history.changes(parent_memzoi[0] if parent_memzoi else None, memzoi)
        if len(parents) <= 1 or not changes:
            return changes
        sides = []
        for sha, theirs in zip(parents[1:], parent_memzoi[1:], strict=False):
            base = self.history.merge_base(parents[0], sha)
            base_memzoi = self.history.memzoi_of(base) if base is not None else None
            sides.append((self._listing(theirs), self._listing(base_memzoi)))
        out = []
        for change in changes:
            new = FileEntry(change.new_oid, change.new_symlink) if change.new_oid else None
            ours = FileEntry(change.old_oid, change.old_symlink) if change.old_oid else None
            if not any(listing(change.path) == new and base(change.path) == ours for listing, base in sides):
                out.append(change)
        return out

    def _log_growth(self, change: TreeChange) -> list[Problem]:
        """A log.md (no size limit of its own) that one commit grows by more than LOG_GROWTH_MAX, by sizes unread.

        Receipts are appended a line or a batch at a time; a commit adding more than that is no
        receipt, and reading it would cost what a crafted blob weighs, not what it took to send.
        """
        if change.new_oid is None or change.new_symlink or change.path.rsplit("/", 1)[-1] != LOG_FILE:
            return []
        old = self.history.size(change.old_oid) if change.old_oid is not None and not change.old_symlink else 0
        grown = self.history.size(change.new_oid) - old
        if grown <= LOG_GROWTH_MAX:
            return []
        message = f"one commit adds {grown} bytes to it; at most {LOG_GROWTH_MAX} (a receipt is a line, a batch a few)"
        return [Problem(change.path, 1, "log-growth", message)]

    # secrets ---------------------------------------------------------------------------
    def _secrets(self, change: TreeChange) -> list[Problem]:
        assert change.new_oid is not None
        base = change.old_oid if not change.old_symlink else None
        key = (base, change.new_oid)
        found = self._scanned.get(key)
        one = self._files.get((change.path, change.new_oid, False))
        if found is None and one is not None and change.path in one.scanned:
            # validating the file scanned its whole text already: each blob is scanned once
            return [p for p in one.problems if p.code == "secret"]
        is_log = change.path.rsplit("/", 1)[-1] == LOG_FILE  # no size limit: its added lines are scanned
        if found is None and not is_log and self.history.size(change.new_oid) > MAX_FILE_BYTES:
            return []  # never read: the tree check refuses the file by its size
        if found is None:
            if base is None:
                found = secrets.scan(self.history.blob(change.new_oid).decode("utf-8", "replace"))
            else:
                found = _scan_lines(self.history.added_lines(base, change.new_oid))
            self._scanned[key] = found
        return [secret_problem(change.path, f) for f in found]

    # config ------------------------------------------------------------------------------
    def _config(self, config: tuple[str, bytes] | None) -> tuple[configmod.HooksConfig, Problem | None]:
        """This tree's [hooks] policy over the server's config, and a problem when its config.toml is bad."""
        key = config[0] if config is not None else None
        if key not in self._configs:
            pushed = configmod.ConfigSource(REPO_CONFIG, config[1] if config is not None else None)
            try:
                merged = configmod.load([*self.base_config, pushed])
                self._configs[key] = (merged.hooks, None)
            except ConfigError as exc:
                message = exc.message.removeprefix(f"{REPO_CONFIG}: ")
                if not exc.message.startswith(REPO_CONFIG):
                    raise  # the server's own config is broken: fail closed, naming that file
                self._configs[key] = (
                    configmod.load(self.base_config).hooks,
                    Problem(REPO_CONFIG, 1, "config", message),
                )
        return self._configs[key]


def _scan_lines(lines: list[tuple[int, str]]) -> list[secrets.SecretFinding]:
    """Scan added lines, each run of consecutive lines as one text, reporting lines of the new file."""
    found: list[secrets.SecretFinding] = []
    run: list[str] = []
    start = 0
    for number, text in [*lines, (-1, "")]:
        if run and number != start + len(run):
            found.extend(secrets.SecretFinding(f.kind, start + f.line - 1) for f in secrets.scan("\n".join(run)))
            run = []
        if number < 0:
            break
        if not run:
            start = number
        run.append(text)
    return found
