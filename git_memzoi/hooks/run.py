"""What each hook checks: a push (pre-receive, update, pre-push) or the staged tree (pre-commit)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from git_memzoi.errors import UsageError
from git_memzoi.gitrepo import GitRepo
from git_memzoi.gitrepo.history import History, is_zero, touches_memzoi
from git_memzoi.hooks import verdicts
from git_memzoi.hooks.checks import CheckReport, MemoryChecker
from git_memzoi.hooks.treecache import TreeCache
from git_memzoi.layout import REPO_CONFIG
from git_memzoi.runtime import config as configmod
from git_memzoi.runtime.home import Layout


@dataclass(frozen=True)
class RefUpdate:
    """One ref a push moves: from `old` to `new` (all zeros: created or deleted)."""

    ref: str
    old: str
    new: str

    @property
    def is_deletion(self) -> bool:
        return is_zero(self.new)


def _hex(value: str, what: str, line_no: int) -> str:
    if not value or any(ch not in "0123456789abcdef" for ch in value.lower()) or len(value) not in (40, 64):
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


@dataclass(frozen=True)
class Judgement:
    """What a ref update is judged against: the commit it is compared with, and the one giving policy.

    `base` is what the ref holds (its old tip) or, for a new ref, its fork point; `policy_from`
    is the commit whose .memzoi/config.toml sets [hooks]: never one of the commits being checked.
    None for either: nothing (the empty tree; the server's config over the built-in defaults).
    """

    base: str | None
    policy_from: str | None


def judgement(history: History, update: RefUpdate, tip: str, default_tip: str | None) -> Judgement:
    """The old tip when the ref exists; for a new ref, its fork point from the default branch."""
    old = None if is_zero(update.old) or not history.has_object(update.old) else history.commit_sha(update.old)
    if old is not None:
        return Judgement(old, old)
    if default_tip is None:
        return Judgement(None, None)
    return Judgement(history.merge_base(tip, default_tip), default_tip)


def check_push(
    repo: GitRepo,
    updates: Iterable[RefUpdate],
    hide: Iterable[str],
    *,
    tree_cache: TreeCache | None = None,
    verify: bool = True,
    default_tip: str | None = None,
    fork_point: bool = False,
) -> CheckReport:
    """Check every commit the updates bring that no commit in `hide` reaches, parents first.

    Then judge what each ref would hold against what it holds (see `judgement`; `default_tip`
    stands in for a new ref's old tip), by the policy of what it holds. With `fork_point`, a
    ref's old tip is replaced by its merge base with the new tip (a pull request's view).
    `verify` re-validates each pushed tip's tree whole (the server's check of the delta logic);
    `tree_cache` lets the first pushed commit start from its parent's kept tree.
    """
    history = History(repo)
    checker = MemoryChecker(history, base_config(repo), tree_cache)
    hidden = set(hide)
    report = checker.report
    seen: set[tuple[str, bool]] = set()
    walked: set[str] = set()
    checked: set[str] = set()
    for update in updates:
        if update.is_deletion:
            continue  # deleting a ref adds nothing to memory
        tip = history.commit_sha(update.new)
        if tip is None:  # a tag of a tree or blob carries no commits to check
            continue
        judged = judgement(history, update, tip, default_tip)
        if fork_point and judged.base is not None:
            judged = Judgement(history.merge_base(judged.base, tip), judged.policy_from)
        policy_config = (
            history.config_blob(judged.policy_from, REPO_CONFIG)
            if judged.policy_from is not None and history.memzoi_of(judged.policy_from)
            else None
        )
        policy = checker.policy(policy_config)
        for commit in history.new_commits([tip], hidden):
            # refs pushed together share commits: check each once per policy it is judged by
            if (commit.sha, policy.allow_in_place_edits) in seen:
                continue
            seen.add((commit.sha, policy.allow_in_place_edits))
            walked.add(commit.sha)
            odd = history.odd_memzoi(commit.sha)
            twins = history.memzoi_twins(commit.sha)
            if odd is None and not twins and not commit.touches_memzoi:
                continue
            checked.add(commit.sha)
            report.summaries[commit.sha] = commit.summary
            if odd is not None:
                checker.odd_memzoi(commit.sha, odd)
            if twins:
                checker.memzoi_twins(commit.sha, twins)
            config = history.config_blob(commit.sha, REPO_CONFIG) if commit.memzoi is not None else None
            if tree_cache is not None and commit.parents:
                _start_from_kept(
                    checker, history, tree_cache, commit.parents[0], commit.parent_memzoi[0], commit.memzoi
                )
            checker.check(commit.sha, commit.memzoi, commit.parents, commit.parent_memzoi, config, policy)
        tip_memzoi = history.memzoi_of(tip)
        if verify:
            checker.verify(tip, tip_memzoi)
        base_memzoi = history.memzoi_of(judged.base) if judged.base is not None else None
        checker.check_ref(update.ref, tip, base_memzoi, tip_memzoi, policy)
        report.refs[update.ref] = (judged.base, tip)
    report.commits_walked, report.commits_checked = len(walked), len(checked)
    return report


def check_server_push(repo: GitRepo, updates: Iterable[RefUpdate]) -> CheckReport:
    """pre-receive / update: the commits no existing ref of this (bare) repository reaches yet."""
    history = History(repo)
    return check_push(repo, updates, history.ref_commits(), default_tip=history.symbolic_tip("HEAD"))


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
    default_tip = History(repo).symbolic_tip(f"refs/remotes/{remote}/HEAD") if remote else None
    return check_push(
        repo,
        updates,
        hide,
        tree_cache=TreeCache(Layout.for_repo(repo).hook_trees),
        verify=False,
        default_tip=default_tip,
    )


def check_range(repo: GitRepo, spec: str) -> CheckReport:
    """`hook check BASE..TIP`: TIP's new commits as if pushed to a server that holds BASE.

    What TIP would hold is judged against its fork point from BASE (BASE itself when TIP
    contains it), by BASE's [hooks] policy; an empty side of the range means HEAD.
    """
    if "..." in spec or spec.count("..") != 1:
        raise UsageError(f"range {spec!r} is not BASE..TIP (for example origin/main..HEAD)")
    base_rev, tip_rev = (side or "HEAD" for side in spec.split(".."))
    history = History(repo)
    base, tip = history.commit_sha(base_rev), history.commit_sha(tip_rev)
    for rev, sha in ((base_rev, base), (tip_rev, tip)):
        if sha is None:
            raise UsageError(f"{rev!r} in range {spec!r} does not name a commit")
    assert base is not None and tip is not None
    return check_push(repo, [RefUpdate(spec, base, tip)], {base}, fork_point=True)


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
    if touches_memzoi(memzoi, parent_memzoi):
        report.commits_checked = 1
        report.summaries["index"] = "staged changes"
        if parents:
            _start_from_kept(checker, history, cache, parents[0], parent_memzoi[0], memzoi)
        config_blob = ("staged", config) if config is not None else None
        # as on the server, the [hooks] policy is HEAD's: a commit cannot relax the rules it is checked by
        head_config = history.config_blob(parents[0], REPO_CONFIG) if parents and parent_memzoi[0] else None
        checker.check("index", memzoi, parents, parent_memzoi, config_blob, checker.policy(head_config))
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
    base = _kept_ancestor_tree(history, cache, parent)
    if base is not None:
        checker.tree_errors(tree, base)


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
