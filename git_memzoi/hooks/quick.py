"""What a commit or push touches in .memzoi/, decided by git itself before any heavy import.

Most commits and pushes carry code, not memory. The client hooks ask git first, with the
standard library only: one `git diff-index` for pre-commit; for pre-push `git cat-file`,
`git for-each-ref`, `git rev-list` and `git cat-file --batch-check` (plus `git config` for
a push by URL). Loading pygit2 alone costs more than these git processes and the
interpreter together, which is why this module runs git's plumbing instead. A "no" from
here ends the hook with exit 0; when memory is touched, or git's answer is anything
unexpected, the full checks run.

pre-push also decides here which commits the remote is known to have (the `PushPlan`),
so that the early exit and the full check look at exactly the same commits.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys

from git_memzoi.hooks.amend import amending_head
from git_memzoi.layout import MEMZOI_DIR, MEMZOI_PATHSPECS

_ZERO = frozenset("0")


class GitUnclear(Exception):
    """git could not answer the question (an error, an unborn branch, input it rejects)."""


def _git(*args: str, input: str | None = None) -> str:
    try:
        done = subprocess.run(
            ["git", *args], input=input, capture_output=True, text=True, env=os.environ.copy(), check=False
        )
    except OSError as exc:
        raise GitUnclear(str(exc)) from None
    if done.returncode != 0:
        raise GitUnclear(done.stderr.strip())
    return done.stdout


def staged_untouched() -> bool:
    """True when the staged `.memzoi/` (GIT_INDEX_FILE honoured) equals HEAD's (and HEAD's parent's, for an
    amend); False when it differs or git cannot say.

    False at once under MEMZOI_STAGED=asked: the installed hook script asked git just before
    (a False that is wrong only costs the full check, which finds nothing to check).
    """
    if os.environ.get("MEMZOI_STAGED") == "asked":
        return False
    if not _staged_equals("HEAD"):
        return False
    # `git commit --amend` replaces HEAD: the staged .memzoi/ must then be its parent's too
    return not amending_head() or _staged_equals("HEAD^")


def _staged_equals(rev: str) -> bool:
    """True when the staged .memzoi/ is `rev`'s; False when it differs or git cannot say."""
    try:
        # :(top) because a hook run by hand may start in a subdirectory of the work tree
        done = subprocess.run(
            ["git", "diff-index", "--cached", "--quiet", rev, "--", *MEMZOI_PATHSPECS],
            capture_output=True,
            check=False,
        )
    except OSError:
        return False
    return done.returncode == 0  # 1: differs; 128: no such commit, not a repository, a broken index


class PushPlan:
    """The commits a pre-push looks at: reachable from `tips` and from none of `hide`.

    `touched` is whether any of those commits changes .memzoi/, or a ref-level rule could
    object to what a pushed ref would hold. (A plain class: importing dataclasses would cost
    this module's whole budget again.)
    """

    def __init__(self) -> None:
        self.tips: list[str] = []
        self.hide: list[str] = []
        self.commits: list[str] = []
        self.touched = False


def _is_zero(sha: str) -> bool:
    return bool(sha) and set(sha) <= _ZERO


def _existing_commits(names: list[str]) -> list[str | None]:
    """The commit each of `names` peels to, or None for a name this repository does not have."""
    if not names:
        return []
    out = _git(
        "cat-file", "--batch-check=%(objectname) %(objecttype)", input="".join(f"{n}^{{commit}}\n" for n in names)
    ).splitlines()
    if len(out) != len(names):
        raise GitUnclear("git cat-file answered a different number of lines")
    return [line.split(" ")[0] if line.endswith(" commit") else None for line in out]


def _remote_names_for(remote: str) -> list[str]:
    """The configured remotes `remote` names: itself, or every remote whose URL it is."""
    try:
        out = _git("config", "--get-regexp", r"^remote\..*\.(url|pushurl)$")
    except GitUnclear:
        out = ""  # no remote configured at all: git config exits 1
    names = set()
    for line in out.splitlines():
        key, _, value = line.partition(" ")
        name = key[len("remote.") :].rsplit(".", 1)[0]
        if name == remote or value == remote:
            names.add(name)
    return sorted(names)


def _remote_refs() -> list[list[str]]:
    """[type, object, name, symref target] of every ref under refs/remotes/."""
    out = _git("for-each-ref", "--format=%(objecttype) %(objectname) %(refname) %(symref)", "refs/remotes/")
    return [line.split(" ") for line in out.splitlines() if line.count(" ") == 3]


def _tracking_refs(remote_refs: list[list[str]]) -> list[tuple[str, str]]:
    """(commit, ref name) of every remote-tracking ref that points at a commit."""
    return [(sha, ref) for kind, sha, ref, _ in remote_refs if kind == "commit"]


def plan_push(remote: str, lines: list[tuple[str, str, str]]) -> PushPlan:
    """Which commits a push of (local sha, remote sha, remote ref) lines brings, and whether they touch .memzoi/.

    Known to be on the remote: the remote SHAs git reports that exist here, and the
    remote-tracking refs of `remote` (a name, or a URL some configured remote uses). When
    that is nothing at all, every remote-tracking ref of any remote counts as known, and every
    commit none of them reaches is walked, however many: a push of a new branch is judged down
    to its oldest commit. Raises GitUnclear when git cannot say.
    """
    plan = PushPlan()
    news = [new for new, _, _ in lines if not _is_zero(new)]
    olds = [old for _, old, _ in lines if not _is_zero(old)]
    found = _existing_commits(news + olds)
    plan.tips = [sha for sha in found[: len(news)] if sha is not None]
    peeled = dict(zip(olds, found[len(news) :], strict=True))
    tree_tags = {new for new, sha in zip(news, found, strict=False) if sha is None}  # tags of trees (or blobs)
    remote_refs = _remote_refs()
    plan.touched = _refs_move_memory(remote, lines, peeled, remote_refs, tree_tags)
    if not plan.tips:
        return plan  # deletions (or tags of trees and blobs) bring no commits
    known = {sha for sha in found[len(news) :] if sha is not None}
    tracking = _tracking_refs(remote_refs)
    if remote:
        # git passes a remote's name, or the URL itself when pushing by URL
        prefixes: tuple[str, ...] = (f"refs/remotes/{remote}/",)
        if not any(ref.startswith(prefixes) for _, ref in tracking):
            prefixes = tuple(f"refs/remotes/{name}/" for name in _remote_names_for(remote))
        known.update(sha for sha, ref in tracking if prefixes and ref.startswith(prefixes))
    if not known:
        known.update(sha for sha, _ in tracking)
    revs = "".join(f"{t}\n" for t in plan.tips) + "".join(f"^{h}\n" for h in sorted(known))
    walked = [line.split(" ") for line in _git("rev-list", "--parents", "--stdin", input=revs).splitlines()]
    plan.hide = sorted(known)
    plan.commits = [row[0] for row in walked]
    plan.touched = plan.touched or _any_touches(walked)
    return plan


def _remote_heads(remote: str, remote_refs: list[list[str]]) -> tuple[set[str], str | None]:
    """(the remote's default branch as it names it, refs/heads/NAME; the commit it points to) from refs/remotes/R/HEAD.

    Every remote's default counts when `remote` (a name, or a URL) names no configured remote.
    """
    heads = [
        (ref.split("/")[2], target, sha)
        for kind, sha, ref, target in remote_refs
        if kind == "commit" and ref.count("/") == 3 and ref.endswith("/HEAD") and target
    ]
    names = {remote} if any(name == remote for name, _, _ in heads) else set(_remote_names_for(remote))
    mine = [head for head in heads if head[0] in names] or heads
    branches = {"refs/heads/" + target.removeprefix(f"refs/remotes/{name}/") for name, target, _ in mine}
    tips = {sha for name, _, sha in mine if name in names}
    return branches, (tips.pop() if len(tips) == 1 else None)


def _refs_move_memory(
    remote: str,
    lines: list[tuple[str, str, str]],
    peeled: dict[str, str | None],
    remote_refs: list[list[str]],
    tree_tags: set[str],
) -> bool:
    """Whether a ref-level rule could object: a deletion of the remote's default branch, or a ref
    whose .memzoi/ would differ from what it holds (a new ref: from its fork point off the default branch).

    A force push to an older commit, or a new branch, brings no commit to walk and can still drop
    a record: the per-commit walk alone would never see it. `peeled` maps each remote SHA to the
    commit it is here (None: not here; the server judges what this repository cannot see);
    `tree_tags` are the pushed objects that peel to no commit (a tag of a tree is judged by its .memzoi).
    """
    deletions = [ref for new, old, ref in lines if _is_zero(new) and not _is_zero(old)]
    updates = [(new, old) for new, old, _ in lines if not _is_zero(new)]
    if not deletions and not updates:
        return False
    defaults, default_tip = _remote_heads(remote, remote_refs)
    if any(ref in defaults for ref in deletions):
        return True
    if default_tip is None and tree_tags and any(held is not None for held in _memzoi_trees(sorted(tree_tags))):
        return True  # a tree tag holding a .memzoi, and no default branch known to compare it with
    pairs: list[tuple[str, str, bool]] = []
    for new, old in updates:
        base = peeled.get(old) if not _is_zero(old) else default_tip
        if base is not None:
            pairs.append((new, base, _is_zero(old)))
    trees = _memzoi_trees([name for new, base, _ in pairs for name in (new, base)]) if pairs else []
    for i, (new, base, fresh) in enumerate(pairs):
        if trees[2 * i] == trees[2 * i + 1]:
            continue
        if not fresh:
            return True
        try:  # a new ref is judged against its fork point: a branch off an older main is no change
            fork = _git("merge-base", new, base).strip()
        except GitUnclear:
            return True  # no history in common: judged against the default branch's tip
        ends = _memzoi_trees([new, fork])
        if ends[0] != ends[1]:
            return True
    return False


def _memzoi_trees(names: list[str]) -> list[str | None]:
    """The .memzoi/ tree each commit holds (None: none), in one git process."""
    out = _git(
        "cat-file", "--batch-check=%(objectname)", input="".join(f"{n}:{MEMZOI_DIR}\n" for n in names)
    ).splitlines()
    if len(out) != len(names):
        raise GitUnclear("git cat-file answered a different number of lines")
    return [None if line.endswith(" missing") else line for line in out]


def _any_touches(walked: list[list[str]]) -> bool:
    """Whether any commit's .memzoi/ subtree differs from its first parent's (absent in both: no)."""
    names = sorted({n for row in walked for n in row[:2]})
    if not names:
        return False
    out = _git(
        "cat-file", "--batch-check=%(objectname)", input="".join(f"{n}:{MEMZOI_DIR}\n" for n in names)
    ).splitlines()
    if len(out) != len(names):
        raise GitUnclear("git cat-file answered a different number of lines")
    tree = {n: (None if line.endswith(" missing") else line) for n, line in zip(names, out, strict=True)}
    if any(tree[row[0]] != (tree[row[1]] if len(row) > 1 else None) for row in walked):
        return True
    # a root name that macOS or Windows checks out as .memzoi (.MEMZOI, .memzoi.): the full check refuses it
    twins = _git(
        "diff-tree",
        "--stdin",
        "--root",
        "--diff-merges=first-parent",
        "-r",
        "--name-only",
        "--",
        *MEMZOI_PATHSPECS[1:],
        input="".join(f"{row[0]}\n" for row in walked),
    )
    return any(line and not _is_hex(line) for line in twins.splitlines())


def parse_push_lines(text: str) -> list[tuple[str, str, str]]:
    """(local sha, remote sha, remote ref) of each `<local ref> <local sha> <remote ref> <remote sha>` line.

    Raises GitUnclear on anything else (the full check then reports the line as a usage error),
    and for a push to refs/replace/, which the full check refuses whatever it carries.
    """
    pairs = []
    for line in text.splitlines():
        if not line.strip():
            continue
        parts = line.split(" ")
        if len(parts) != 4 or not all(_is_hex(parts[i]) for i in (1, 3)):
            raise GitUnclear(f"unexpected pre-push input line {line!r}")
        if parts[2].startswith("refs/replace/"):
            raise GitUnclear("a replacement ref is refused by the full check, code or not")
        pairs.append((parts[1].lower(), parts[3].lower(), parts[2]))
    return pairs


def _is_hex(value: str) -> bool:
    return len(value) in (40, 64) and all(ch in "0123456789abcdefABCDEF" for ch in value)


def untouched_report(walked: int, checked: int = 0) -> str:
    """The --json report of a commit or push that leaves .memzoi/ alone (CheckReport.as_json's shape).

    `checked` is 1 for a staged change hooks.fastcommit accepted: one change, one tree validated.
    """
    import json  # only --json asks (bench_client_hooks "adding one record": 2 ms of a hook run)

    return (
        json.dumps(
            {
                "ok": True,
                "commits_walked": walked,
                "commits_checked": checked,
                "trees_validated": checked,
                "problems": [],
            },
            indent=2,
        )
        + "\n"
    )


def staged_accepted() -> bool:
    """True when the staged .memzoi/ differs from HEAD's and hooks.fastcommit proves it passes pre-commit."""
    from git_memzoi.hooks.fastcommit import accept_staged

    return accept_staged()


#: The plans made in this process, by (remote, stdin): the full check takes early_exit's.
_PLANS: dict[tuple[str, str], PushPlan] = {}


def push_plan(remote: str, text: str) -> PushPlan:
    """plan_push of pre-push's stdin `text`, made once per process (GitUnclear when git cannot say)."""
    key = (remote, text)
    if key not in _PLANS:
        _PLANS[key] = plan_push(remote, parse_push_lines(text))
    return _PLANS[key]


def early_exit(args: list[str]) -> int | None:
    """`hook pre-commit|pre-push [REMOTE [URL]] [--json]` that leaves .memzoi/ alone: 0, after its report.

    None means "run the command": memory is touched, git could not say, or the arguments are
    anything else (help, other options), which click then handles. A staged change to memory
    that hooks.fastcommit proves clean also ends here, with 0. pre-push's stdin is read here
    and put back for the full check (cli.gate.pre_push) to read again, with the plan made of it.
    """
    if len(args) < 1 or args[0] not in ("pre-commit", "pre-push"):
        return None
    rest = [a for a in args[1:] if a != "--json"]
    if any(a.startswith("-") for a in rest) or len(rest) > (0 if args[0] == "pre-commit" else 2):
        return None
    as_json = "--json" in args[1:]
    checked = 0
    if args[0] == "pre-commit":
        if not staged_untouched():
            if not staged_accepted():
                return None
            checked = 1
        walked = 1
    else:
        text = sys.stdin.read()
        sys.stdin = io.StringIO(text)
        try:
            plan = push_plan(rest[0] if rest else "", text)
        except GitUnclear:
            return None
        if plan.touched:
            return None
        walked = len(plan.commits)
    if as_json:
        sys.stdout.write(untouched_report(walked, checked))
    return 0
