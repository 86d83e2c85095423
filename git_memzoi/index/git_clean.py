"""The read path's sweep done by git, in C, when the git index vouches for every record file; stdlib only.

Every read must see a record file edited a moment ago, in place (an editor that truncates and
rewrites leaves its folder untouched), so every read compares every record file's stat with the
last confirmed one (`index.sweep`). In Python that is one `lstat` call and its object a file:
about 40 ms at 10,000 records, most of an agent hook's time. git keeps the same stat data for
every tracked file in its index and compares it in C, on several threads: `git diff-files
--quiet` answers the same question for tracked files in a fraction of that.

So a sweep that confirmed the index also asks git, once, whether git can stand in for it next
time (`baseline`): every record file (`.memzoi/records/**/*.md`) tracked, none marked
assume-unchanged or skip-worktree (git does not look at those), none different from the git
index, and the git index file itself not changed meanwhile. That *baseline* is kept in the
index's check file with the digest it vouches for. A later read (`clean`) then needs: the same
git index file (size, times, inode: any `git add`, commit, checkout or refresh rewrites it), the
same record folders (their mtime and inode: a file added, removed or renamed changes its
folder), and `git diff-files --quiet` clean for the records (every tracked record file still
has the stat git recorded, or, for a racily clean one, the content). Then the record files are
the ones the baseline's sweep saw. Anything else, or any doubt (a racy timestamp, an error,
`GIT_INDEX_FILE` pointing git elsewhere), and the read sweeps as before.

git may compare times to the second where a sweep compares nanoseconds; what makes that enough
is the git index's own age. A baseline is taken only of a git index written more than RACY_NS
ago, so any later edit of a record file falls in a later second than every stat that index
holds (and its ctime cannot be set back): git sees it. An edit git missed before the baseline
(its racy window) is not a risk either: the baseline's sweep saw that file's stat, at the
nanosecond, as the index had confirmed it.

git runs with the repository's own directories given explicitly, without optional locks (it
never writes the index here), and with the settings that would let it trust less than a sweep
forced back to git's defaults: `core.checkStat`, `core.trustctime`, `core.ignoreStat`, and no
file-system monitor.
"""

from __future__ import annotations

import os

from git_memzoi.index.sweep import RACY_NS, dirs_unchanged
from git_memzoi.layout import RECORDS

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the start-up path
if TYPE_CHECKING:
    from typing import Any

#: Record files from which asking git is cheaper than a sweep: starting a git process costs about what a
#: sweep of a thousand record files does (BENCHMARKS.md, "Agent hooks"). Below it, reads sweep.
GIT_FROM = 1000

#: Settings under which git compares as much of a file's stat as a sweep does, and asks no monitor.
_STRICT = (
    "-c",
    "core.checkStat=default",
    "-c",
    "core.trustctime=true",
    "-c",
    "core.ignoreStat=false",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.preloadIndex=true",
)


def index_file(git_dir: str) -> str:
    """The git index of the work tree whose git directory is `git_dir` (a linked worktree has its own)."""
    return os.path.join(git_dir, "index")


def index_stat(git_dir: str, now_ns: int) -> list[int] | None:
    """The git index file's size, mtime, ctime and inode; None when missing, too recent to trust, or redirected."""
    if os.environ.get("GIT_INDEX_FILE"):
        return None  # git would compare against another index than the one whose stat this is
    try:
        st = os.stat(index_file(git_dir))
    except OSError:
        return None
    if st.st_mtime_ns >= now_ns - RACY_NS:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _argv(git_dir: str, workdir: str, *args: str) -> list[str]:
    return [
        "git",
        f"--git-dir={git_dir}",
        f"--work-tree={workdir}",
        "-C",
        workdir,
        "--no-optional-locks",
        *_STRICT,
        *args,
        "--",
        RECORDS,
    ]


#: git comparisons started ahead of the read that takes their answer (`start`), by (git dir, work tree).
_STARTED: dict[tuple[str, str], int] = {}


def _spawn(git_dir: str, workdir: str) -> int | None:
    """Start `git diff-files --quiet` on the records, its streams on /dev/null; its pid, or None."""
    try:
        devnull = os.open(os.devnull, os.O_RDWR)
    except OSError:
        return None
    try:
        actions = [(os.POSIX_SPAWN_DUP2, devnull, fd) for fd in (0, 1, 2)]
        return os.posix_spawnp(
            "git", _argv(git_dir, workdir, "diff-files", "--quiet"), os.environ, file_actions=actions
        )
    except (OSError, AttributeError):  # no git on PATH; no posix_spawnp on this platform
        return None
    finally:
        os.close(devnull)


def start(check: object, git_dir: str, workdir: str) -> None:
    """Start git's comparison now when `check` (an index's check file) holds a baseline git vouched for, so that it
    runs while this process loads what its read needs (an agent hook's modules); `clean` takes its answer. A
    comparison that starts earlier than the read sees every change made before the read, and more."""
    baseline = check.get("git") if isinstance(check, dict) else None
    if isinstance(baseline, dict) and baseline.get("vouched") is True and (git_dir, workdir) not in _STARTED:
        pid = _spawn(git_dir, workdir)
        if pid is not None:
            _STARTED[(git_dir, workdir)] = pid


def _records_unmodified(git_dir: str, workdir: str, *, started: bool = False) -> bool:
    """`git diff-files --quiet` on the records: True when git says no tracked record file differs from its index.

    `started`: take the answer of a comparison `start` began earlier, if there is one."""
    pid = _STARTED.pop((git_dir, workdir), None) if started else None
    if pid is None:
        pid = _spawn(git_dir, workdir)
    if pid is None:
        return False
    try:
        _, status = os.waitpid(pid, 0)
    except OSError:
        return False
    return os.waitstatus_to_exitcode(status) == 0


def clean(check: dict[str, Any], git_dir: str, workdir: str, now_ns: int) -> bool:
    """True when the baseline in `check` still holds: the sweep it stands for would give `check`'s digest."""
    baseline = check.get("git")
    dirs = check.get("dirs")
    if not isinstance(baseline, dict) or baseline.get("vouched") is not True or not isinstance(dirs, dict):
        return False
    stat = baseline.get("index")
    return (
        baseline.get("digest") == check.get("digest")
        and stat is not None
        and stat == index_stat(git_dir, now_ns)
        and dirs_unchanged(workdir, dirs)
        and _records_unmodified(git_dir, workdir, started=True)
        and stat == index_stat(git_dir, now_ns)
    )


def baseline(previous: object, git_dir: str, workdir: str, before: list[int] | None, swept: tuple[int, str]) -> Any:
    """What git can say for a sweep that confirmed `swept` (its file count and digest), taken after `before` (the
    git index's stat, read before that sweep): {"index", "digest", "vouched"}; None when nothing can be said.

    The answer for the same git index and digest is kept (`previous`), vouched or not, so that a tree
    whose record files git cannot vouch for (edited and not yet added, say) asks git once, not at every read.
    """
    files, digest = swept
    if before is None or files < GIT_FROM:
        return None
    if isinstance(previous, dict) and previous.get("index") == before and previous.get("digest") == digest:
        return previous
    return {"index": before, "digest": digest, "vouched": _vouched(git_dir, workdir, before, files)}


def _vouched(git_dir: str, workdir: str, before: list[int], files: int) -> bool:
    """Every one of the `files` record files tracked, compared by git, and unmodified; the git index still `before`."""
    import subprocess

    try:
        listed = subprocess.run(
            _argv(git_dir, workdir, "ls-files", "-v", "-z"), capture_output=True, check=False, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return False
    if listed.returncode != 0:
        return False
    tracked = 0
    for entry in listed.stdout.split(b"\0"):
        if not entry.endswith(b".md"):
            continue
        if not entry.startswith(b"H "):
            return False  # assume-unchanged, skip-worktree or unmerged: git would not compare it
        tracked += 1
    if tracked != files:
        return False  # a record file git does not track (new, or ignored): only a sweep sees it change
    return _records_unmodified(git_dir, workdir) and index_stat(git_dir, _now_ns()) == before


def _now_ns() -> int:
    import time

    return time.time_ns()
