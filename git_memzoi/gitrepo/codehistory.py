"""The code records cite, through history: who last wrote a file, what a path was and became, where a name occurs.

Each question is one plain `git` process asked for every record at once (`cat-file --batch-check`
for any number of `rev:path` lookups, `grep -F -w` for any number of names), so judging every
record of a tree costs a handful of processes, not one per record. The HEAD commit is read from
the git directory's files (no process, no pygit2) in the common layouts, so a reader whose
judgements are kept pays a file read to know they still hold.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable, Iterator
from contextlib import suppress
from typing import TYPE_CHECKING

from git_memzoi.errors import MemzoiError
from git_memzoi.gitrepo import headref
from git_memzoi.gitrepo.headref import is_sha as _is_sha

if TYPE_CHECKING:
    from git_memzoi.gitrepo.repo import GitRepo

#: A line git prints for a `rev:path` that names nothing.
_MISSING = " missing"


class GitQueryError(MemzoiError):
    """A `git` process asked about history failed (a missing object, git not installed)."""


def _env() -> dict[str, str]:
    return os.environ | {"LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0", "GIT_PAGER": "cat"}


def _args(repo: GitRepo, *args: str) -> list[str]:
    return ["git", f"--git-dir={repo.git_dir}", "-c", "core.quotePath=off", "-c", "grep.patternType=fixed", *args]


def _run(repo: GitRepo, *args: str, input: str | None = None, ok: tuple[int, ...] = (0,)) -> str:
    try:
        done = subprocess.run(
            _args(repo, *args), input=input, capture_output=True, text=True, env=_env(), errors="surrogateescape"
        )
    except OSError as exc:
        raise GitQueryError(f"cannot run git: {exc}") from None
    if done.returncode not in ok:
        first = (done.stderr.strip().splitlines() or ["no message"])[0]
        raise GitQueryError(f"git {args[0]} failed ({done.returncode}): {first}")
    return done.stdout


def head_commit(repo: GitRepo) -> str | None:
    """The commit HEAD names, or None on an unborn branch; files first, `git rev-parse` for any other layout."""
    answered, sha = headref.head_from_files(repo.git_dir, repo.common_dir)
    if answered:
        return sha
    out = _run(repo, "rev-parse", "-q", "--verify", "HEAD^{commit}", ok=(0, 1))
    return out.strip() or None


def resolve(repo: GitRepo, rev: str) -> str | None:
    """The commit `rev` names, or None when it names none."""
    out = _run(repo, "rev-parse", "-q", "--verify", "--end-of-options", f"{rev}^{{commit}}", ok=(0, 1))
    return out.strip() or None


def shallow_commits(repo: GitRepo) -> set[str]:
    """The commits a shallow clone's history stops at (`shallow` in the git directory): git reads each as adding
    every file it holds, so the newest commit that wrote a file may be one of them though an older one did."""
    try:
        text = (repo.common_dir / "shallow").read_text(encoding="ascii", errors="replace")
    except FileNotFoundError:
        return set()
    except OSError as exc:
        raise GitQueryError(f"cannot read {repo.common_dir / 'shallow'}: {exc.strerror}") from None
    return {line.strip() for line in text.splitlines() if _is_sha(line.strip())}


def last_writers(repo: GitRepo, head: str, paths: Iterable[str], under: str) -> dict[str, str]:
    """For each of `paths` (all below the folder `under`), the newest commit reachable from `head` that wrote it.

    One `git log` walks back until every path is found (default history simplification: a merge
    that took a file from one side leads to the commit on that side that wrote it).
    """
    wanted = set(paths)
    found: dict[str, str] = {}
    if not wanted:
        return found
    current = ""
    for text in _lines(
        repo, "", ["log", "--format=commit %H", "--name-only", "--no-renames", head, "--", under], ok=(0,)
    ):
        if text.startswith("commit ") and _is_sha(text[7:]):
            current = text[7:]
        elif text in wanted and text not in found:
            found[text] = current
            if len(found) == len(wanted):
                break
    return found


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _tree_path(path: str) -> bool:
    """Whether `path` is one `REV:PATH` names inside REV's tree: no `.` or `..` segment (git reads `./x` and `../x`
    against the process's folder, and dies on one outside the repository, failing every other question asked with
    it), no empty segment, no control character (a carriage return splits git's answer)."""
    return bool(path) and _CONTROL.search(path) is None and all(part not in ("", ".", "..") for part in path.split("/"))


def object_kinds(repo: GitRepo, names: Iterable[tuple[str, str]]) -> dict[tuple[str, str], tuple[str, str] | None]:
    """For each (commit, path): (object ID, "blob" | "tree" | ...) at that commit, or None when it holds none (a path
    that names nothing inside a tree is not asked, and is absent)."""
    asked = [(rev, path) for rev, path in dict.fromkeys(names) if _tree_path(path)]
    answers: dict[tuple[str, str], tuple[str, str] | None] = {}
    if not asked:
        return answers
    text = "".join(f"{rev}:{path}\n" for rev, path in asked)
    out = _run(repo, "cat-file", "--batch-check=%(objectname) %(objecttype)", input=text).split("\n")[:-1]
    if len(out) != len(asked):
        raise GitQueryError(f"git cat-file answered {len(out)} lines for {len(asked)} questions")
    for key, line in zip(asked, out, strict=True):
        if line.endswith(_MISSING) or " " not in line:
            answers[key] = None
        else:
            oid, _, kind = line.partition(" ")
            answers[key] = (oid, kind)
    return answers


def tree_blobs(repo: GitRepo, rev: str, *paths: str) -> dict[str, str]:
    """Every file at or under `paths` at `rev`, with its blob ID (one `git ls-tree`: a lookup per path in a
    folder of thousands of files would cost the folder's size each)."""
    if not paths:
        return {}
    out = _run(repo, "ls-tree", "-r", "-z", "--full-tree", rev, "--", *(f":(literal){p}" for p in paths))
    found: dict[str, str] = {}
    for entry in out.split("\0"):
        meta, sep, path = entry.partition("\t")
        parts = meta.split()
        if sep and len(parts) == 3 and parts[1] == "blob":
            found[path] = parts[2]
    return found


def gone_paths(repo: GitRepo, old: str, new: str) -> dict[str, str | None]:
    """Files `old` holds that `new` does not, each with where it went (a rename git detects) or None (deleted)."""
    out = _run(repo, "diff-tree", "-r", "-M", "-z", "--no-ext-diff", "--name-status", old, new)
    parts = out.split("\0")
    gone: dict[str, str | None] = {}
    i = 0
    while i < len(parts) - 1:
        status = parts[i]
        if status.startswith(("R", "C")):
            if status.startswith("R"):
                gone[parts[i + 1]] = parts[i + 2]
            i += 3
            continue
        if status == "D":
            gone[parts[i + 1]] = None
        i += 2
    return gone


def changed_blobs(repo: GitRepo, old_tree: str, new_tree: str) -> dict[str, str | None]:
    """Every file path two trees differ in (relative to them), with its blob in `new_tree` (None: it holds none)."""
    parts = _run(repo, "diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", old_tree, new_tree).split("\0")
    found: dict[str, str | None] = {}
    for meta, path in zip(parts[0::2], parts[1::2], strict=False):
        fields = meta.split()
        if len(fields) == 5 and meta.startswith(":"):
            found[path] = fields[3] if fields[1] in ("100644", "100755", "120000") else None
    return found


def changed_status(repo: GitRepo, old: str, new: str) -> dict[str, str]:
    """Every file path `old` and `new` differ in, with git's status letter (A, D, M, T; no rename detection)."""
    parts = _run(repo, "diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", "--name-status", old, new).split("\0")
    return {path: status[:1] for status, path in zip(parts[0::2], parts[1::2], strict=False) if status}


def changed_files(repo: GitRepo, old: str, new: str) -> list[str]:
    """Every file path `old` and `new` differ in (either side's name)."""
    out = _run(repo, "diff-tree", "-r", "-z", "--no-ext-diff", "--name-only", old, new)
    return [part for part in out.split("\0") if part]


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,99}")


def removed_names(repo: GitRepo, old: str, new: str, exclude: str) -> set[str]:
    """The names (identifier-shaped words) on the lines `old`..`new` removed, outside the folder `exclude`."""
    return _diff_names(repo, old, new, exclude, "-")


def touched_names(repo: GitRepo, old: str, new: str, exclude: str) -> set[str]:
    """The names on the lines `old`..`new` removed or added, outside the folder `exclude`."""
    return _diff_names(repo, old, new, exclude, "-+")


def _diff_names(repo: GitRepo, old: str, new: str, exclude: str, signs: str) -> set[str]:
    args = ["diff", "--no-ext-diff", "--no-color", "--no-renames", "-U0", old, new, "--", ".", f":(exclude){exclude}"]
    names: set[str] = set()
    for line in _lines(repo, "", args, ok=(0,)):  # a line at a time: a file adding a name millions of times is one
        if line[:1] in signs and line[:1] and not line.startswith(("---", "+++")):
            names.update(found.group() for found in _NAME.finditer(line))
    return names


def written_between(repo: GitRepo, old: str, new: str, under: str) -> set[str]:
    """The files below `under` that a commit on either side of `old`...`new` wrote (merges' own changes left out,
    as `last_writers` leaves them)."""
    out = _run(repo, "log", "--format=", "--name-only", "--no-renames", "--full-history", f"{old}...{new}", "--", under)
    return {line for line in out.splitlines() if line}


#: Characters of one alternation line given to `git grep -P` (git ORs the lines; PCRE bounds a pattern's size).
_ALTERNATION_CHARS = 16_000
_WORD = "A-Za-z0-9_"


def _pcre_lines(literals: list[str], words: bool) -> list[str]:
    """`literals` as a few PCRE alternations (every other character escaped), whole words only with `words`."""
    escaped = ["".join(c if c.isalnum() or c == "_" else "\\" + c for c in lit) for lit in literals]
    lines: list[str] = []
    chunk: list[str] = []
    size = 0
    for item in [*escaped, None]:
        if item is None or (chunk and size + len(item) > _ALTERNATION_CHARS):
            body = "|".join(chunk)
            lines.append(f"(?<![{_WORD}])(?:{body})(?![{_WORD}])" if words else f"(?:{body})")
            chunk, size = [], 0
        if item is not None:
            chunk.append(item)
            size += len(item) + 1
    return lines


def _grep_run(repo: GitRepo, patterns: str, args: list[str]) -> Iterator[str]:
    """The lines of one `git grep -z ARGS`, ARGS reading the patterns (`-f -`) from `patterns` on stdin."""
    return _lines(repo, patterns, ["grep", "-z", *args], ok=(0, 1))


def _lines(repo: GitRepo, stdin: str, args: list[str], *, ok: tuple[int, ...]) -> Iterator[str]:
    """The lines of one `git ARGS` given `stdin`, as git writes them (none kept here; a carriage return in a line
    does not split it); GitQueryError after the last when git's exit code is not one of `ok`."""
    try:
        proc = subprocess.Popen(
            _args(repo, *args),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=_env(),
        )
    except OSError as exc:
        raise GitQueryError(f"cannot run git: {exc}") from None
    assert proc.stdin is not None and proc.stdout is not None
    try:
        with suppress(BrokenPipeError):  # git reads its input before it writes a line
            proc.stdin.write(stdin.encode("utf-8", "surrogateescape"))
            proc.stdin.close()
        for line in proc.stdout:  # decoded without a copy of its bytes (one line may be a whole file)
            yield str(memoryview(line)[: len(line) - line.endswith(b"\n")], "utf-8", "surrogateescape")
        if proc.wait() not in ok:
            raise GitQueryError(f"git {args[0]} failed ({proc.returncode})")
    finally:
        proc.kill()
        proc.stdout.close()
        proc.wait()


def _grep(
    repo: GitRepo, rev: str, literals: list[str], pathspecs: Iterable[str], *flags: str, words: bool
) -> Iterator[str]:
    """The lines of `git grep FLAGS` for any of `literals` in `rev`'s files under `pathspecs`, read as git writes
    them: a file holding a name millions of times costs git's time, never this process's memory.

    git tries each `-F` pattern on every line in turn (thousands of names cost thousands of passes);
    one PCRE alternation is one pass, so that is asked first, and `-F` when git was built without PCRE
    (it fails before it writes a line). The patterns go on stdin: nothing is written outside the repository.
    """
    tail = ["-I", "--no-color", *flags, "-f", "-", rev, "--", *pathspecs]
    answered = False
    try:
        for line in _grep_run(repo, "".join(f"{line}\n" for line in _pcre_lines(literals, words)), ["-P", *tail]):
            answered = True
            yield line
        return
    except GitQueryError:
        if answered:
            raise
    fixed = "".join(f"{lit}\n" for lit in literals)
    yield from _grep_run(repo, fixed, ["-F", *(["-w"] if words else []), *tail])


def occurrences(
    repo: GitRepo, rev: str, names: Iterable[str], pathspecs: Iterable[str], *, words: bool = True
) -> dict[str, set[str]]:
    """For each of `names` found (as a whole word; any substring without `words`) in the files `rev` holds under
    `pathspecs`: the files holding it."""
    wanted = sorted({name for name in names if name and "\n" not in name})
    found: dict[str, set[str]] = {}
    if not wanted:
        return found
    prefix = f"{rev}:"
    for line in _grep(repo, rev, wanted, pathspecs, "-o", words=words):
        where, sep, match = line.partition("\0")
        if sep and where.startswith(prefix):
            found.setdefault(match, set()).add(where[len(prefix) :])
    return found


def matching_lines(repo: GitRepo, rev: str, patterns: Iterable[str], pathspecs: Iterable[str]) -> list[tuple[str, str]]:
    """(file, line) of every line of the files `rev` holds under `pathspecs` that contains one of `patterns`."""
    wanted = sorted({p for p in patterns if p and "\n" not in p})
    if not wanted:
        return []
    prefix = f"{rev}:"
    found = []
    for line in _grep(repo, rev, wanted, pathspecs, words=False):
        where, sep, text = line.partition("\0")
        if sep and where.startswith(prefix):
            found.append((where[len(prefix) :], text))
    return found


def blobs(repo: GitRepo, oids: Iterable[str]) -> dict[str, bytes]:
    """The bytes of each blob named, through one `git cat-file --batch`."""
    asked = list(dict.fromkeys(oids))
    if not asked:
        return {}
    try:
        done = subprocess.run(
            _args(repo, "cat-file", "--batch"),
            input="".join(f"{oid}\n" for oid in asked).encode(),
            capture_output=True,
            env=_env(),
        )
    except OSError as exc:
        raise GitQueryError(f"cannot run git: {exc}") from None
    if done.returncode != 0:
        raise GitQueryError(f"git cat-file failed ({done.returncode})")
    out, pos, found = done.stdout, 0, {}
    for oid in asked:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) < 3:
            continue
        size = int(header[2])
        found[oid] = out[pos : pos + size]
        pos += size + 1
    return found
