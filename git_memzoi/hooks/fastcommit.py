"""pre-commit without the checks loaded: a staged change proven clean from kept facts alone.

A commit that `git memzoi apply` prepared adds a record and its applied packet and appends to
log.md. Judging it through the full check costs importing pydantic, PyYAML and pygit2 and
loading the summary of HEAD's whole tree, many times what the commit itself costs. This module
decides such a commit with the standard library and a few git processes:

1. HEAD's .memzoi/ tree, or the nearest one among its last KEPT_TREE_SEARCH first parents, was
   accepted here before with no problem at all, under the same config files: its record and
   packet IDs are kept (hooks.verdicts tree IDs);
2. every staged change under .memzoi/, against HEAD and against that kept tree, adds a regular
   file or changes one outside records/ and proposals/ (log.md, index.md), and leaves
   config.toml alone; no merge is being concluded;
3. each file added or changed since the kept tree has a kept clean verdict for its exact path
   and blob (hooks.verdicts: apply and reject keep those of the files they write), or is a
   record or packet added by hand that check_file, run on that file alone, finds free of
   errors (this loads the profile's validator, never pygit2 or the rest of the tree);
4. what the cross-file rules would find is nothing: no new record or packet ID is taken, and
   each applied packet names only records of the new tree;
5. no file the change touches holds anything secret-looking: each has a verdict, and a verdict
   is kept only for a file whose whole text is free of secrets (check_file scans records and
   packets; apply scans the others, such as log.md, before keeping theirs), which covers
   whatever a scan of its added lines would find.

Then the full check would find nothing either (the in-place edit rules only concern files that
were already records or resolved packets), so the commit is accepted and the new tree's IDs
kept for the next one. Anything else, any doubt, any git error: the full check runs and gives
the report. This path never rejects.
"""

from __future__ import annotations

import functools
import os
import subprocess
from pathlib import Path

from git_memzoi.gitrepo.discover import find, keys
from git_memzoi.hooks import verdicts
from git_memzoi.hooks.amend import amending_head
from git_memzoi.layout import (
    DEFAULT_HOME,
    HOME_ENV,
    HOOK_TREES,
    MEMZOI_PATHSPECS,
    PROJECT_CONFIG,
    PROJECTS,
    PROPOSALS,
    RECORDS,
    REPO_CONFIG,
    USER_CONFIG,
)
from git_memzoi.layout import MEMZOI_DIR as MEMZOI

_REGULAR = "100644"
_ZERO_OIDS = frozenset("0")


class _Miss(Exception):
    """Something this path does not decide: run the full check."""


def _git(*args: str) -> str:
    env = dict(os.environ, GIT_LITERAL_PATHSPECS="0")
    try:
        done = subprocess.run(["git", *args], capture_output=True, check=False, env=env)
    except OSError:
        raise _Miss() from None
    if done.returncode != 0:
        raise _Miss()
    return done.stdout.decode("utf-8", "surrogateescape")


#: How far back along HEAD's first parents the fast path looks for a tree whose IDs are kept
#: (commits made with --no-verify, or by apply --commit, keep none).
KEPT_TREE_SEARCH = 8


def _repository() -> tuple[str, Path]:
    """(the git directory, the hook-trees folder) of the repository the hook runs in.

    runtime.home's Layout names the same folder, and GitRepo the same key; neither is imported
    here: they load shutil (with bz2 and lzma) and dataclasses, a good part of this path's budget.
    """
    found = find()  # the plain layouts, without a git process (bench_client_hooks "adding one record")
    if found is not None and found[2] is not None:
        git_dir, common_dir, top = str(found[0]), str(found[1]), str(found[2])
    else:
        lines = _git("rev-parse", "--absolute-git-dir", "--git-common-dir", "--show-toplevel").splitlines()
        if len(lines) != 3:
            raise _Miss()
        git_dir, common, top = lines
        common_dir = os.path.realpath(common if os.path.isabs(common) else os.path.join(os.getcwd(), common))
        git_dir, top = os.path.realpath(git_dir), os.path.realpath(top)
    key = keys(git_dir, common_dir, top)[0]
    return git_dir, _home() / PROJECTS / key / HOOK_TREES


def _home() -> Path:
    """$MEMZOI_HOME, or ~/.memzoi (runtime.home.memzoi_home); a relative one goes to the command, which refuses it."""
    home = Path(os.path.expanduser(os.environ.get(HOME_ENV) or DEFAULT_HOME))
    if not home.is_absolute():
        raise _Miss()
    return home


def _signature(folder: Path) -> str:
    """The signature of the config files that judge a tree: the user's, and the project's beside `folder`."""
    return verdicts.config_signature([_home() / USER_CONFIG, folder.parent / PROJECT_CONFIG])


def _kept_base(folder: Path, signature: str) -> tuple[str, set[str], set[str]]:
    """(revision, its record IDs, its packet IDs) of the nearest of HEAD's first parents whose tree IDs are kept."""
    revs = [f"HEAD~{n}" for n in range(KEPT_TREE_SEARCH)]
    out = _git_input(
        ["cat-file", "--batch-check=%(objectname) %(objecttype)"], "".join(f"{rev}:{MEMZOI}\n" for rev in revs)
    ).splitlines()
    if len(out) != len(revs):
        raise _Miss()
    for rev, line in zip(revs, out, strict=True):
        oid, _, kind = line.partition(" ")
        if kind != "tree":
            raise _Miss()  # no .memzoi/ there (or history ends): the full check decides
        kept = verdicts.read_tree_ids(folder, oid, signature)
        if kept is not None:
            return rev, kept[0], kept[1]
    raise _Miss()


def _staged_changes(base: str) -> list[tuple[str, str, str, str]]:
    """("STATUS OLDMODE", new mode, new blob OID, path) of each staged change under .memzoi/ against `base`."""
    out = _git("diff-index", "--cached", "-z", "--no-renames", base, "--", *MEMZOI_PATHSPECS)
    fields = out.split("\0")
    if fields[-1] != "" or len(fields) % 2 != 1:
        raise _Miss()
    changes = []
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):  # the last field is the empty tail
        parts = meta.split(" ")
        if len(parts) != 5 or not parts[0].startswith(":"):
            raise _Miss()
        if not path.startswith(MEMZOI + "/"):
            raise _Miss()  # a name that folds to .memzoi on macOS or Windows: the full check refuses it
        old_mode, new_mode, new_oid, status = parts[0][1:], parts[1], parts[3], parts[4]
        if set(new_oid) <= _ZERO_OIDS:
            raise _Miss()  # deleted, or a work-tree side git did not hash
        changes.append((status + " " + old_mode, new_mode, new_oid, path))
    return changes


def _git_input(args: list[str], text: str) -> str:
    try:
        done = subprocess.run(["git", *args], input=text.encode(), capture_output=True, check=False)
    except OSError:
        raise _Miss() from None
    if done.returncode != 0:
        raise _Miss()
    return done.stdout.decode("utf-8", "surrogateescape")


def accept_staged() -> bool:
    """True when the staged .memzoi/ is proven to pass pre-commit (its IDs are then kept); False: run the check."""
    try:
        return _accept()
    except (_Miss, OSError, ValueError, UnicodeError):
        return False


def _accept() -> bool:
    git_dir, folder = _repository()
    if os.path.exists(os.path.join(git_dir, "MERGE_HEAD")):
        return False  # concluding a merge: the full check compares with every parent
    if amending_head():
        return False  # replacing HEAD: the full check compares with HEAD's parents as well
    signature = _signature(folder)
    base, records, packets = _kept_base(folder, signature)
    # the tree is judged from the kept one; the edit rules and the secret scan against HEAD
    changes = _staged_changes(base)
    against_head = changes if base == "HEAD~0" else _staged_changes("HEAD")
    # a file may only be added, or changed outside records/ and proposals/: the edit rules concern those
    if not against_head or not all(_may_change(status, path) for status, _, _, path in against_head):
        return False
    known = verdicts.read_verdicts(folder, ((path, oid) for _, _, oid, path in changes))
    known.update(_judge_added(changes, known))
    all_records, all_packets = _joined(records, packets, _new_ids(changes, known))
    # a file with a verdict holds nothing secret-looking: check_file scans records and packets, and
    # any other file has a verdict only when its whole text was scanned clean (hooks.verdicts)
    if any((path, oid) not in known for _, _, oid, path in against_head):
        return False  # back to the kept tree's version of a file HEAD changed: not judged here
    staged_tree = _git("write-tree", f"--prefix={MEMZOI}/").strip()
    verdicts.write_tree_ids(folder, staged_tree, signature, all_records, all_packets)
    return True


def _may_change(status: str, path: str) -> bool:
    """Whether a staged change may be judged here: an added file, or a changed one outside records/ and proposals/."""
    return status == "A 000000" or (status == f"M {_REGULAR}" and not path.startswith((f"{RECORDS}/", f"{PROPOSALS}/")))


#: Files added by hand (no kept verdict) judged here at most: more go to the full check.
HAND_WRITTEN_MAX = 8


def _judge_added(
    changes: list[tuple[str, str, str, str]], known: dict[tuple[str, str], verdicts.Verdict]
) -> dict[tuple[str, str], verdicts.Verdict]:
    """Verdicts for records and packets added by hand (no kept verdict), from check_file on each alone.

    A hand-written record needs the file's own rules (profile.tree.check_file: the schema, its
    ID and path, the whole-text secret scan) and the cross-file rules, which the kept tree's IDs
    answer: nothing else of the tree is read, and pygit2 is not loaded. A file with any error,
    or that is neither a record nor a packet, is left without a verdict (the full check decides).
    """
    unknown = [
        (path, oid)
        for status, mode, oid, path in changes
        if (path, oid) not in known
        and status == "A 000000"
        and mode == _REGULAR
        and path.startswith((f"{RECORDS}/", f"{PROPOSALS}/"))
    ]
    if not unknown or len(unknown) > HAND_WRITTEN_MAX:
        return {}
    # loaded only here: the commit of what apply wrote needs none of it
    from git_memzoi.profile.tree import SourceFile, TreeReport, check_file, facts_of

    judged: dict[tuple[str, str], verdicts.Verdict] = {}
    for path, oid in unknown:
        data = _git_bytes("cat-file", "blob", oid)
        report = TreeReport()
        check_file(
            report, SourceFile(path, functools.partial(bytes, data), size=functools.partial(len, data)), "committed"
        )
        facts = facts_of(path, report)
        if report.errors or facts is None:
            continue
        judged[(path, oid)] = (facts.kind, facts.id, facts.affected if facts.applied else None)
    return judged


def _new_ids(
    changes: list[tuple[str, str, str, str]], known: dict[tuple[str, str], verdicts.Verdict]
) -> tuple[list[str], list[str], list[tuple[str, ...]]]:
    """The record IDs, packet IDs and applied packets' records the changes add (_Miss: a change not judged)."""
    new_records: list[str] = []
    new_packets: list[str] = []
    applied: list[tuple[str, ...]] = []
    for status, new_mode, oid, path in changes:
        verdict = known.get((path, oid))
        if verdict is None or new_mode != _REGULAR or path == REPO_CONFIG:
            raise _Miss()
        kind, ident, affected = verdict
        if status != "A 000000" and (kind != "other" or status != f"M {_REGULAR}"):
            raise _Miss()  # a record or packet replaced since the kept tree: its old ID would linger
        if kind == "record":
            new_records.append(ident)
        elif kind == "packet":
            new_packets.append(ident)
            if affected is not None:
                applied.append(affected)
    return new_records, new_packets, applied


def _joined(
    records: set[str], packets: set[str], new: tuple[list[str], list[str], list[tuple[str, ...]]]
) -> tuple[set[str], set[str]]:
    """The IDs of the new tree, when the cross-file rules find nothing in it (_Miss otherwise)."""
    new_records, new_packets, applied = new
    all_records = records | set(new_records)
    if len(all_records) != len(records) + len(new_records):
        raise _Miss()  # a record ID taken twice: id-duplicate
    all_packets = packets | set(new_packets)
    if len(all_packets) != len(packets) + len(new_packets):
        raise _Miss()  # packet-id-collision
    if any(not named or not all_records.issuperset(named) for named in applied):
        raise _Miss()  # resolution-orphan
    return all_records, all_packets


def _git_bytes(*args: str) -> bytes:
    try:
        done = subprocess.run(["git", *args], capture_output=True, check=False)
    except OSError:
        raise _Miss() from None
    if done.returncode != 0:
        raise _Miss()
    return done.stdout
