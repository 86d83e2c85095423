"""What each hook checks: a push (pre-receive, update, pre-push) or the staged tree (pre-commit)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import NamedTuple

from git_memzoi.errors import ConfigError, UsageError
from git_memzoi.gitrepo import GitRepo
from git_memzoi.gitrepo.config import config_value
from git_memzoi.gitrepo.history import History, PushedCommit, is_zero, touches_memzoi
from git_memzoi.hooks import verdicts
from git_memzoi.hooks.checks import CheckReport, Finding, MemoryChecker
from git_memzoi.hooks.treecache import TreeCache
from git_memzoi.layout import MEMZOI_DIR, RECORDS, REPO_CONFIG
from git_memzoi.runtime import config as configmod
from git_memzoi.runtime.home import Layout


class RefUpdate(NamedTuple):
    """One ref a push moves: from `old` to `new` (all zeros: created or deleted)."""

    ref: str
    old: str
    new: str

    @property
    def is_deletion(self) -> bool:
        return is_zero(self.new)


#: A full object name, SHA-1 or SHA-256 (checked by one regular expression: a push of many refs has a line each).
_OBJECT_NAME = re.compile(r"[0-9a-fA-F]{40}(?:[0-9a-fA-F]{24})?")


def _hex(value: str, what: str, line_no: int) -> str:
    if _OBJECT_NAME.fullmatch(value) is None:
        raise UsageError(f"hook input line {line_no}: {what} {value!r} is not an object name")
    return value.lower()


def parse_pre_receive(text: str) -> list[RefUpdate]:
    """`<old> <new> <ref>` lines, as git feeds pre-receive and post-receive."""
    updates = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split(" ", 2)
        if len(parts) != 3:
            raise UsageError(f"hook input line {number}: expected '<old> <new> <ref>', got {line!r}")
        updates.append(RefUpdate(parts[2], _hex(parts[0], "old", number), _hex(parts[1], "new", number)))
    return updates


def parse_update(ref: str, old: str, new: str) -> RefUpdate:
    """The update hook's REF OLD NEW, each as the one argument it is: never joined into a line and read
    again, where a space in OLD would shift NEW into the ref name and check another ref than the one given."""
    if not ref or any(ch.isspace() or ch < " " or "\x7f" <= ch < "\xa0" for ch in ref):
        raise UsageError(f"hook update: REF {ref!r} is not a ref name (git gives one word, no control characters)")
    for value, what in ((old, "OLD"), (new, "NEW")):
        if _OBJECT_NAME.fullmatch(value) is None:
            raise UsageError(f"hook update: {what} {value!r} is not an object name")
    return RefUpdate(ref, old.lower(), new.lower())


def parse_pre_push(text: str) -> list[RefUpdate]:
    """`<local ref> <local sha> <remote ref> <remote sha>` lines, as git feeds pre-push."""
    updates = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split(" ")
        if len(parts) != 4:
            raise UsageError(
                f"hook input line {number}: expected '<local ref> <local sha> <remote ref> <remote sha>', got {line!r}"
            )
        updates.append(RefUpdate(parts[2], _hex(parts[3], "remote sha", number), _hex(parts[1], "local sha", number)))
    return updates


def base_config(repo: GitRepo) -> list[configmod.ConfigSource]:
    """The config files below the checked tree's own .memzoi/config.toml: user, then project."""
    layout = Layout.for_repo(repo)
    return [configmod.file_source(layout.user_config), configmod.file_source(layout.project_config)]


#: git config of the repository a hook runs in (the bare repository, for a server) that sets a
#: floor under every branch's [hooks]: a branch's .memzoi/config.toml may only make rules stricter.
FLOOR_ALLOW_EDITS = "memzoi.hooks.allowInPlaceEdits"
FLOOR_REQUIRE_PROPOSALS = "memzoi.hooks.requireProposals"
_YES, _NO = ("true", "yes", "on", "1"), ("false", "no", "off", "0")


def _floor_bool(repo: GitRepo, key: str) -> bool | None:
    value = config_value(repo, key)
    if value is None:
        return None
    word = value.strip().lower()
    if word in _YES or word in _NO:
        return word in _YES
    raise ConfigError(f"git config {key}: {value!r} is not a boolean (true or false)")


def policy_floor(repo: GitRepo) -> Callable[[configmod.HooksConfig], configmod.HooksConfig]:
    """What the repository's own git config makes of a branch's [hooks] policy: never looser.

    `memzoi.hooks.allowInPlaceEdits = false` keeps the in-place edit rule whatever a branch says;
    `memzoi.hooks.requireProposals = true` asks every new record for its packet whatever a branch says.
    A value that is not a boolean fails the hook, naming the key.
    """
    allow, require = _floor_bool(repo, FLOOR_ALLOW_EDITS), _floor_bool(repo, FLOOR_REQUIRE_PROPOSALS)

    def floored(policy: configmod.HooksConfig) -> configmod.HooksConfig:
        return configmod.HooksConfig(
            allow_in_place_edits=policy.allow_in_place_edits and allow is not False,
            require_proposals=policy.require_proposals or require is True,
        )

    return floored


class Judgement(NamedTuple):
    """What a ref update is judged against: the commit it is compared with, and the one giving policy.

    `base` is what the ref holds (its old tip) or, for a new ref, its fork point; `policy_from`
    is the commit whose .memzoi/config.toml sets [hooks]: never one of the commits being checked.
    None for either: nothing (the empty tree; the server's config over the built-in defaults).
    """

    base: str | None
    policy_from: str | None


def judgement(history: History, update: RefUpdate, tip: str, default_tip: str | None) -> Judgement:
    """The old tip when the ref exists; for a new ref, its fork point from the default branch (see `new_ref_base`)."""
    old = old_tip(history, update)
    if old is not None:
        return Judgement(old, old)
    return Judgement(new_ref_base(history, tip, default_tip), default_tip)


def old_tip(history: History, update: RefUpdate) -> str | None:
    """The commit a ref update moves the ref from; None for a new ref (or an old tip this repository lacks)."""
    if is_zero(update.old) or not history.has_object(update.old):
        return None
    return history.commit_sha(update.old)


def new_ref_base(history: History, tip: str, default_tip: str | None) -> str | None:
    """What a new ref at `tip` is judged against: its fork point from the default branch's tip.

    A new ref that shares no history with the default branch is judged against the default
    branch's tip: judged against nothing, an orphan commit could bring any edit of a record.
    One that holds no .memzoi/ at all (a gh-pages branch) holds no memory to judge.
    """
    if default_tip is None:
        return None
    if history.memzoi_of(tip) == history.memzoi_of(default_tip) and history.odd_memzoi(tip) is None:
        # it holds what the default branch holds, accepted already: no fork point to look for (a
        # merge base walks the branch, and a push of a ref at every commit of a chain is quadratic)
        return default_tip
    fork = history.merge_base(tip, default_tip)
    if fork is None and (history.memzoi_of(tip) is not None or history.odd_memzoi(tip) is not None):
        fork = default_tip
    return fork


#: Replacement refs make git (git show, archive, web views, clients that fetch them) show another
#: object in place of a checked one; the hooks take none.
REPLACE_REFS = "refs/replace/"
DEFAULT_BRANCH_DELETED = (
    "the default branch gives every new ref its policy and fork point; deleted, the next push of it "
    "would be judged against nothing"
)
#: A tag of a tree has no commit to judge, yet `git archive` and web views show its .memzoi/.
TREE_TAG = (
    "a tag of a tree holds a .memzoi that is not the one the default branch holds; no commit vouches "
    "for it (tag a commit instead)"
)


@dataclass(frozen=True)
class Gate:
    """How a gate reads a push: what it keeps between runs, and what stands in for a new ref's old tip.

    `tree_cache` keeps each pushed tip's validated tree (and lets the first pushed commit start
    from a kept tree); `default_tip` stands in for a new ref's old tip
    (see `judgement`), and deleting `default_ref` (the default branch, as the pushed-to
    repository names it) is refused. With `fork_point`, a ref's old tip is replaced by its
    merge base with the new tip (a pull request's view). Without `refused_deltas`, a push with
    a problem keeps no delta of its trees (a server's: git discards a refused push's objects, so
    no later push starts from them, and each would take a place in the cache from a tree that lands).
    """

    tree_cache: TreeCache | None = None
    default_tip: str | None = None
    default_ref: str | None = None
    fork_point: bool = False
    refused_deltas: bool = True


def check_push(
    repo: GitRepo, updates: Iterable[RefUpdate], hide: Iterable[str], gate: Gate | None = None
) -> CheckReport:
    """Check every commit the updates bring that no commit in `hide` reaches, parents first.

    Then judge what each ref would hold against what it holds (see `judgement`), by the policy
    of what it holds (see `Gate` for how each gate reads the push).
    """
    gate = gate or Gate()
    history = History(repo)
    checker = MemoryChecker(history, base_config(repo), gate.tree_cache)
    judged_refs = _ref_judgements(repo, history, checker, updates, gate)
    walk = _Walk(history, checker, gate, set(hide))
    # One walk per policy over every tip it judges (refs pushed together share their commits: a
    # walk per ref would read a shared chain once per ref), each ref judged as the walk passes its tip.
    groups: dict[bool, dict[str, list[_Judged]]] = {False: {}, True: {}}  # by policy, then by tip
    for judged in judged_refs:
        groups[judged.policy.allow_in_place_edits].setdefault(judged.tip, []).append(judged)
    for waiting in groups.values():
        if waiting and not _walk_group(walk, waiting):
            return walk.finish()
    deltas = gate.refused_deltas or checker.report.ok
    # the next push (and the next check of a pull request) starts from these: each tree once (a
    # push of a ref at every commit of a chain holds the same tree many times)
    for memzoi in dict.fromkeys(map(history.memzoi_of, dict.fromkeys(judged.tip for judged in judged_refs))):
        checker.remember(memzoi, delta=deltas)
    return walk.finish()


def _walk_group(walk: _Walk, waiting: dict[str, list[_Judged]]) -> bool:
    """Walk the commits of refs judged by one policy (by tip), judging each ref at its tip; False: a tree stopped it."""
    policy = next(iter(waiting.values()))[0].policy
    seen, plain_root = walk.seen[policy.allow_in_place_edits], walk.history.plain_root
    for commit in walk.history.new_commits(list(waiting), walk.hidden):
        sha = commit.sha
        if sha not in seen:
            seen.add(sha)
            # most commits of most pushes hold .memzoi/ as their first parent does: nothing to check
            if (commit.touches_memzoi or not plain_root(sha)) and not walk.check(commit, policy):
                return False
        for j in waiting.pop(sha, ()):
            walk.judge(j)
    for rest in waiting.values():  # tips the remote already has: nothing walked
        for j in rest:
            walk.judge(j)
    return True


def _ref_judgements(
    repo: GitRepo, history: History, checker: MemoryChecker, updates: Iterable[RefUpdate], gate: Gate
) -> list[_Judged]:
    """The ref updates to judge, each with its old tip and policy; refs refused on their own are refused here.

    A new ref's base (its fork point) is found as the walk passes its tip, which the walk reads anyway.
    """
    floored = policy_floor(repo)
    judged_refs: list[_Judged] = []
    policies: dict[str | None, configmod.HooksConfig] = {}
    for update in updates:
        tip = _ref_tip(history, checker, update, gate)
        if tip is None:
            continue
        old = old_tip(history, update)
        policy_from = old if old is not None else gate.default_tip  # see Judgement
        policy = policies.get(policy_from)
        if policy is None:  # new refs all take the default branch's: read it once
            policy_config = (
                history.config_blob(policy_from, REPO_CONFIG)
                if policy_from is not None and history.memzoi_of(policy_from)
                else None
            )
            policy = policies[policy_from] = floored(checker.policy(policy_config))
        judged_refs.append(_Judged(update.ref, tip, old, policy))
    return judged_refs


def _ref_tip(history: History, checker: MemoryChecker, update: RefUpdate, gate: Gate) -> str | None:
    """The commit a ref update brings, or None after refusing (or passing) an update that brings none."""
    if update.ref.startswith(REPLACE_REFS):
        checker.replace_ref(update.ref, update.new)
        return None
    if is_zero(update.new):  # a deletion
        if update.ref == gate.default_ref:
            checker.refuse_ref(update.ref, update.old, "default-branch-deleted", DEFAULT_BRANCH_DELETED)
        return None  # deleting any other ref adds nothing to memory
    tip = history.commit_sha(update.new)
    if tip is None:  # a tag of a tree or blob: no commits, but a tree may carry a .memzoi
        held = history.tree_memzoi(update.new)
        default = history.memzoi_of(gate.default_tip) if gate.default_tip is not None else None
        if held is not None and held != default:
            checker.refuse_ref(update.ref, update.new, "tree-tag", TREE_TAG)
    return tip


class _Judged(NamedTuple):
    """A ref update to judge: its new tip, its old tip (None: a new ref), and the policy it is judged by.

    Named tuples, as Judgement: a push of a ref at each commit of a chain makes one of each per ref,
    and a frozen dataclass costs several times more to build."""

    ref: str
    tip: str
    old: str | None
    policy: configmod.HooksConfig


class _Walk:
    """The commits of one push checked so far: each once per policy it is judged by."""

    def __init__(self, history: History, checker: MemoryChecker, gate: Gate, hidden: set[str]):
        self.history, self.checker, self.gate, self.hidden = history, checker, gate, hidden
        #: a new ref holding the default branch's .memzoi/ is judged against the default branch's tip itself
        self.plain_new = gate.default_tip is not None and not gate.fork_point
        self.default_memzoi = history.memzoi_of(gate.default_tip) if gate.default_tip is not None else None
        #: the commits walked under each policy, by its allow_in_place_edits
        self.seen: dict[bool, set[str]] = {False: set(), True: set()}
        self.checked: set[str] = set()

    def check(self, commit: PushedCommit, policy: configmod.HooksConfig) -> bool:
        """Check a pushed commit that changes .memzoi/ (or whose root holds an odd one or a twin);
        False when its tree cannot be read as git checks it out (stop there)."""
        history, checker, tree_cache = self.history, self.checker, self.gate.tree_cache
        odd = history.odd_memzoi(commit.sha)
        twins = history.memzoi_twins(commit.sha)
        self.checked.add(commit.sha)
        checker.report.summaries[commit.sha] = history.summary(commit.sha)
        if odd is not None:
            checker.odd_memzoi(commit.sha, odd)
        if twins:
            checker.memzoi_twins(commit.sha, twins)
        fault = history.tree_fault(commit.memzoi, commit.parent_memzoi[0] if commit.parent_memzoi else None)
        if fault is not None:
            # nothing after it can be read as git would check it out: this one line is the verdict
            checker.malformed_tree(commit.sha, *fault)
            return False
        config = history.config_blob(commit.sha, REPO_CONFIG) if commit.memzoi is not None else None
        if tree_cache is not None and commit.parents:
            _start_from_kept(checker, history, tree_cache, commit.parents[0], commit.parent_memzoi[0], commit.memzoi)
        checker.check(commit.sha, commit.memzoi, commit.parents, commit.parent_memzoi, config, policy)
        return True

    def judge(self, judged: _Judged) -> None:
        """What the ref would hold against what it holds (a new ref: its fork point, see `judgement`)."""
        history, tip, gate = self.history, judged.tip, self.gate
        tip_memzoi = history.memzoi_of(tip)
        new_plain = judged.old is None and self.plain_new and tip_memzoi == self.default_memzoi
        # new_ref_base's first answer, as most new refs get it (a .memzoi/ folder is never an odd one)
        if new_plain and (tip_memzoi is not None or history.odd_memzoi(tip) is None):
            self.checker.report.refs[judged.ref] = (gate.default_tip, tip)
            return
        base = judged.old if judged.old is not None else new_ref_base(history, tip, gate.default_tip)
        if gate.fork_point and base is not None:
            # a TIP with no history in common with BASE is judged against BASE itself, not nothing
            base = history.merge_base(base, tip) or base
        base_memzoi = history.memzoi_of(base) if base is not None else None
        if base_memzoi != tip_memzoi:  # the same tree holds the same memory: no rule can object
            self.checker.check_ref(judged.ref, tip, base_memzoi, tip_memzoi, judged.policy)
        self.checker.report.refs[judged.ref] = (base, tip)

    def finish(self) -> CheckReport:
        report = self.checker.report
        report.commits_walked, report.commits_checked = len(self.seen[False] | self.seen[True]), len(self.checked)
        return report


def check_server_push(repo: GitRepo, updates: Iterable[RefUpdate]) -> CheckReport:
    """pre-receive / update: the commits no existing ref of this (bare) repository reaches yet."""
    history = History(repo)
    gate = Gate(
        tree_cache=TreeCache(Layout.for_repo(repo).hook_trees),
        default_tip=history.symbolic_tip("HEAD"),
        default_ref=history.symbolic_target("HEAD"),
        refused_deltas=False,
    )
    updates = list(updates)
    report = check_push(repo, updates, history.ref_commits(), gate)
    judged: set[tuple[str, str]] = set()
    required: dict[str, bool] = {}  # `require_review` by base, for the branches past FRESHNESS_BRANCHES
    for update in updates:
        base = update.old if not is_zero(update.old) else gate.default_tip
        if update.is_deletion or base is None or not update.ref.startswith("refs/heads/"):
            continue  # a deleted branch, a tag, or a first push with no default branch: no code history to judge
        if not (history.has_object(base) and history.has_object(update.new)):
            continue  # an old side the server does not hold (the memory checks above report it): nothing to judge
        base, tip = history.commit_sha(base), history.commit_sha(update.new)
        if base is None or tip is None:
            continue
        fork = history.merge_base(base, tip) or base
        if (fork, tip) in judged:
            continue  # another branch of this push, at the same commit: judged once
        if len(judged) >= FRESHNESS_BRANCHES:
            if fork not in required:
                required[fork] = _review_required(repo, fork)
            if required[fork]:
                _too_many_branches(report, tip, update.ref)
            continue
        judged.add((fork, tip))
        review_freshness(repo, report, fork, tip, ref=update.ref)
    return report


#: The branches of one push whose changes are judged for records they leave unverified (each costs two `git diff`s).
FRESHNESS_BRANCHES = 32


def _too_many_branches(report: CheckReport, tip: str, ref: str) -> None:
    """A branch past FRESHNESS_BRANCHES in one push is not judged: under `require_review` it is refused, not let by."""
    from git_memzoi.profile.document import Problem

    message = (
        f"this push updates more than {FRESHNESS_BRANCHES} branches, the most whose changes are judged for"
        " unverified records at once; push the others in smaller pushes"
    )
    report.findings.append(Finding(tip, Problem(MEMZOI_DIR, 1, "record-unverified", message), ref))


def known_remote_commits(repo: GitRepo, remote: str, updates: list[RefUpdate]) -> set[str]:
    """The remote's tracking refs and the remote SHAs this repository has (when hooks.quick cannot ask git)."""
    history = History(repo)
    hide = history.ref_commits((f"refs/remotes/{remote}/",)) if remote else set()
    for update in updates:
        if not is_zero(update.old) and history.has_object(update.old):
            sha = history.commit_sha(update.old)
            if sha is not None:
                hide.add(sha)
    return hide


def check_client_push(repo: GitRepo, updates: list[RefUpdate], hide: Iterable[str], remote: str = "") -> CheckReport:
    """pre-push: the commits none of `hide` reaches (what hooks.quick.plan_push says the remote has).

    A ref the remote lacks is judged from the remote's default branch (refs/remotes/REMOTE/HEAD).
    """
    history = History(repo)
    default_tip = history.symbolic_tip(f"refs/remotes/{remote}/HEAD") if remote else None
    tracking = history.symbolic_target(f"refs/remotes/{remote}/HEAD") if remote else None
    prefix = f"refs/remotes/{remote}/"
    default_ref = "refs/heads/" + tracking.removeprefix(prefix) if tracking and tracking.startswith(prefix) else None
    gate = Gate(
        tree_cache=TreeCache(Layout.for_repo(repo).hook_trees),
        default_tip=default_tip,
        default_ref=default_ref,
    )
    return check_push(repo, updates, hide, gate)


def check_range(repo: GitRepo, spec: str) -> CheckReport:
    """`hook check BASE..TIP`: TIP's new commits as if pushed to a server that holds BASE.

    What TIP would hold is judged against its fork point from BASE (BASE itself when TIP
    contains it, BASE too when they share no history), by BASE's [hooks] policy. Both sides
    must be given: an empty one is what an unset variable leaves (`"$BASE_SHA..HEAD"`).
    Validated trees are kept in the repository's hook-trees folder, as pre-commit keeps them.
    """
    if "..." in spec or spec.count("..") != 1:
        raise UsageError(f"range {spec!r} is not BASE..TIP (for example origin/main..HEAD)")
    base_rev, tip_rev = spec.split("..")
    if not base_rev.strip() or not tip_rev.strip():
        raise UsageError(
            f"range {spec!r} has an empty side: give both BASE and TIP (for example origin/main..HEAD); "
            "is a variable in it unset?"
        )
    history = History(repo)
    base, tip = history.commit_sha(base_rev), history.commit_sha(tip_rev)
    for rev, sha in ((base_rev, base), (tip_rev, tip)):
        if sha is None:
            raise UsageError(f"{rev!r} in range {spec!r} does not name a commit")
    assert base is not None and tip is not None
    gate = Gate(tree_cache=TreeCache(Layout.for_repo(repo).hook_trees), fork_point=True)
    report = check_push(repo, [RefUpdate(spec, base, tip)], {base}, gate)
    review_freshness(repo, report, history.merge_base(base, tip) or base, tip)
    return report


def review_freshness(repo: GitRepo, report: CheckReport, base: str, tip: str, *, ref: str | None = None) -> None:
    """Add the records `base`..`tip` leaves unverified to `report`; each is a finding too (of what `ref` would hold,
    for a push) under `[freshness] require_review = true` in BASE's config (or the server's)."""
    from git_memzoi.freshness.invalidated import invalidated
    from git_memzoi.gitrepo.codehistory import GitQueryError
    from git_memzoi.profile.document import Problem

    try:
        found = invalidated(repo, base, tip, Layout.for_repo(repo).cite_trees)
    except (GitQueryError, OSError, ValueError) as exc:
        # freshness never fails a check by accident, but a review it requires is not waived by a failure to judge
        if _review_required(repo, base):
            why = f"the records this range leaves unverified could not be judged ({exc}); run the check again"
            report.findings.append(Finding(tip, Problem(RECORDS, 1, "record-unverified", why), ref))
        return
    known = {item["record_id"] for item in report.invalidated or []}
    found = [item for item in found if item.record_id not in known]  # one report for a push of several branches
    report.invalidated = (report.invalidated or []) + [item.as_json() for item in found]
    if not found or not _review_required(repo, base):
        return
    for item in found:
        broke = ", ".join(
            f"{c.identifier or c.path} {c.change}" + (f" to {c.to}" if c.to else "") for c in item.evidence
        )
        message = f"{item.record_id} is unverified by this range ({broke}); settle it: {item.command}"
        report.findings.append(Finding(tip, Problem(item.path, 1, "record-unverified", message), ref))


def _review_required(repo: GitRepo, base: str) -> bool:
    """`[freshness] require_review` of the server's config over BASE's .memzoi/config.toml (invalid: off)."""
    blob = History(repo).config_blob(base, REPO_CONFIG)
    tree = [configmod.ConfigSource(f"{base}:{REPO_CONFIG}", blob[1])] if blob is not None else []
    sources = base_config(repo) + tree
    try:
        return configmod.load(sources).freshness.require_review
    except ConfigError:
        return False


def check_staged(repo: GitRepo) -> CheckReport:
    """pre-commit: the staged .memzoi/ against HEAD (and MERGE_HEAD while concluding a merge), by HEAD's policy.

    The staged tree is validated as a delta of HEAD's when an earlier run kept HEAD's tree
    (see treecache), and is kept in turn for the commit after this one.
    """
    repo.require_workdir()
    history = History(repo)
    cache = TreeCache(Layout.for_repo(repo).hook_trees)
    checker = MemoryChecker(history, base_config(repo), cache)
    memzoi, config = history.staged_memzoi()
    head = repo.head_commit()
    parents = tuple(([str(head.id)] if head is not None else []) + history.merge_heads())
    parent_memzoi = tuple(history.memzoi_of(sha) for sha in parents)
    report = checker.report
    report.commits_walked = 1
    checker.memzoi_twins("index", history.memzoi_twins("index"))
    # `git commit --amend` replaces HEAD: the change is then the staged tree over HEAD's parents,
    # HEAD's own change included (a cherry-pick or a rebase brought it without this hook)
    amended = history.amended_parents() if not history.merge_heads() else ()
    amended_memzoi = tuple(history.memzoi_of(sha) for sha in amended)
    if amended and (amended_memzoi[0] == parent_memzoi[0] or not touches_memzoi(memzoi, amended_memzoi)):
        amended = ()  # HEAD left .memzoi/ alone, or the amend undoes what HEAD did: one check says it all
    if amended or touches_memzoi(memzoi, parent_memzoi):
        report.commits_checked = 1
        report.summaries["index"] = "staged changes"
        # git writes no malformed tree from an index, but it stages `Records/` beside `records/`
        fault = history.tree_fault(memzoi, parent_memzoi[0] if parent_memzoi else None)
        if fault is not None:
            checker.malformed_tree("index", *fault)
            return report
        if parents:
            _start_from_kept(checker, history, cache, parents[0], parent_memzoi[0], memzoi)
        config_blob = ("staged", config) if config is not None else None
        # as on the server, the [hooks] policy is HEAD's: a commit cannot relax the rules it is checked by
        head_config = history.config_blob(parents[0], REPO_CONFIG) if parents and parent_memzoi[0] else None
        policy = policy_floor(repo)(checker.policy(head_config))
        checker.check("index", memzoi, parents, parent_memzoi, config_blob, policy)
        if amended:
            checker.check("index", memzoi, amended, amended_memzoi, config_blob, policy)
        checker.remember(memzoi)
        state = checker.state_of(memzoi) if memzoi is not None else None
        if report.ok and state is not None and memzoi is not None:
            # an accepted tree: the next commit's fast path (hooks.fastcommit) starts from its IDs
            layout = Layout.for_repo(repo)
            records, packets = state.ids()
            verdicts.write_tree_ids(
                layout.hook_trees,
                memzoi,
                verdicts.config_signature([layout.user_config, layout.project_config]),
                records,
                packets,
            )
    return report


#: How far back along HEAD's first parents pre-commit looks for a tree it kept.
KEPT_TREE_SEARCH = 100


def _start_from_kept(
    checker: MemoryChecker, history: History, cache: TreeCache, parent: str, parent_tree: str | None, tree: str | None
) -> None:
    """Validate `tree` as a delta of the nearest kept tree when its parent's tree is neither kept nor at hand.

    The parent's tree came from elsewhere (a pull), or its commit was made without the full
    check (--no-verify, or pre-commit's fast path, which keeps no summary): the delta then
    starts from the nearest first-parent ancestor whose tree the cache keeps.
    """
    if tree is None or parent_tree is None or cache.has(parent_tree) or checker.state_of(parent_tree) is not None:
        return
    base = _kept_ancestor_tree(history, cache, parent) or _recent_kept_tree(history, cache)
    if base is not None:
        checker.start_from(tree, base)


#: How many of the most recently used kept trees are tried when no ancestor's tree is kept.
RECENT_TREES_TRIED = 4


def _recent_kept_tree(history: History, cache: TreeCache) -> str | None:
    """A kept tree this repository holds, the most recently used first, when no ancestor's tree is kept.

    Any kept tree is a sound start: a tree's state is a function of its content, and the state
    of another tree is that state plus the files the two trees differ in (a tree diff, which
    skips every subtree they share). After a squash merge, or in a CI job that restored the
    trees of earlier runs, the nearest kept tree by content is usually a recent one.
    """
    for tree in cache.recent()[:RECENT_TREES_TRIED]:
        if history.has_object(tree):
            return tree
    return None


class KeptTree(NamedTuple):
    """What `keep_tree` did: how many files the tree holds, and whether its summary is kept (False: not writable)."""

    files: int
    kept: bool


def keep_tree(repo: GitRepo, rev: str) -> KeptTree | None:
    """Validate the .memzoi/ tree of commit `rev` and keep it, so the first check after install costs its change.

    None when `rev` names no commit or holds no .memzoi/ tree. Pre-commit's fast path gets the
    tree's IDs too when it has no error.
    """
    history = History(repo)
    try:
        sha = history.commit_sha(rev)
    except UsageError:
        return None  # an unborn branch: nothing to keep yet
    memzoi = history.memzoi_of(sha) if sha is not None else None
    if memzoi is None:
        return None
    layout = Layout.for_repo(repo)
    cache = TreeCache(layout.hook_trees)
    checker = MemoryChecker(history, base_config(repo), cache)
    state = cache.load(memzoi)  # kept already (a summary this validator trusts): read, not validated again
    kept = state is not None
    if state is None:
        checker.tree_errors(memzoi)
        kept = checker.remember(memzoi, replace=True)
        state = checker.state_of(memzoi)
    if state is None:
        return None
    if not state.errors():
        records, packets = state.ids()
        signature = verdicts.config_signature([layout.user_config, layout.project_config])
        verdicts.write_tree_ids(layout.hook_trees, memzoi, signature, records, packets)
    return KeptTree(state.count(), kept)


def _kept_ancestor_tree(history: History, cache: TreeCache, head: str) -> str | None:
    """The .memzoi/ tree of the nearest first-parent ancestor of `head` whose state the cache keeps."""
    sha: str | None = head
    for _ in range(KEPT_TREE_SEARCH):
        if sha is None:
            return None
        try:
            tree = history.memzoi_of(sha)
            if tree is not None and cache.has(tree):
                return tree
            sha = history.first_parent(sha)
        except KeyError:
            return None  # a shallow clone's history ends here
    return None
