"""What pre-commit's fast path reads instead of parsing: per-file verdicts, and the IDs of error-free trees.

Two stores, both under `$MEMZOI_HOME/projects/<key>/hook-trees/` beside the tree summaries, both
plain text, read with the standard library alone (hooks/fastcommit.py runs before pydantic,
PyYAML or pygit2 load):

- **verdicts**: one line per (path, blob OID) that `check_file` (committed mode) found free of
  errors, with what the cross-file rules need of it: its kind, its ID and, for an applied
  packet with a resolution, the record IDs it names. A file that is neither a record nor a
  packet ("other", such as log.md) has a line only when its whole text is free of secrets.
  `git memzoi apply` and `reject` add the files they write (`remember_written`), so that the
  commit of those files needs no parse.
- **tree IDs** (`<tree>.ids`): for a .memzoi/ tree a pre-commit accepted with no problem at all,
  the IDs of its records and of its packets, and a signature of the config files that judged it.

Both are caches: anything missing, unreadable, of another version, or not a regular file of
at most MAX_READ_BYTES (a FIFO is never waited on) is a miss, and a miss means the full check
runs. A line is only ever written from check_file's own answer, or for a
tree the full check (or the fast path, from such lines) accepted.
"""

from __future__ import annotations

import io
import os
import stat
import time
from collections.abc import Container, Iterable, Mapping
from pathlib import Path

from git_memzoi import __version__
from git_memzoi.layout import MEMZOI_DIR
from git_memzoi.runtime.private import FILE_MODE, private_folder

#: Bump when what check_file reports, or what a line holds, changes; the package version is part of it.
VERSION = f"{__version__}+v3"
#: Verdict lines kept; past this the oldest half is dropped (a dropped line costs one full check).
MAX_VERDICTS = 4096
#: Tree ID files kept (the most recently used), as many as tree summaries.
KEEP_TREES = 16
#: The store of verdicts, one file per validator version.
VERDICTS_FILE = f"verdicts-{VERSION}.txt"
#: The largest store file read (4,096 verdicts, or the IDs of 100,000 records): a larger one is a miss.
MAX_READ_BYTES = 16 << 20
_HEADER = f"memzoi-tree-ids {VERSION}"

#: (kind, ID, affected record IDs): kind is "record", "packet" or "other" (no ID); `affected`
#: is set for an applied packet with a resolution, whose IDs must all be records of the tree.
Verdict = tuple[str, str, "tuple[str, ...] | None"]


def _plain(value: str) -> bool:
    return bool(value) and not any(ch in value for ch in "\t\n\r ,")


def read_verdicts(folder: Path, wanted: Iterable[tuple[str, str]]) -> dict[tuple[str, str], Verdict]:
    """The stored verdicts of the (path, blob OID) pairs in `wanted` (missing ones are left out)."""
    keys = set(wanted)
    found: dict[tuple[str, str], Verdict] = {}
    try:
        with _opened(folder / VERDICTS_FILE) as handle:
            for line in handle:
                parts = line.rstrip("\n").split("\t")
                if len(parts) != 5 or (parts[1], parts[0]) not in keys:
                    continue
                oid, path, kind, ident, affected = parts
                if kind not in ("record", "packet", "other"):
                    continue
                found[(path, oid)] = (kind, ident, None if affected == "-" else tuple(affected.split(",")[1:]))
    except (OSError, UnicodeDecodeError):
        return {}
    return found


def _verdict_line(path: str, oid: str, verdict: Verdict) -> str | None:
    kind, ident, affected = verdict
    names = [oid] + ([ident] if kind != "other" else []) + list(affected or ())
    if "\t" in path or "\n" in path or not all(_plain(n) for n in names):
        return None  # cannot be read back unambiguously: leave it out (a miss later)
    # affected is written with a leading comma so that an empty list stays distinct from none
    column = "-" if affected is None else "," + ",".join(affected)
    return f"{oid}\t{path}\t{kind}\t{ident if kind != 'other' else '-'}\t{column}\n"


def add_verdicts(folder: Path, items: Iterable[tuple[str, str, Verdict]]) -> None:
    """Append (path, blob OID, verdict) lines; best effort, trimmed to MAX_VERDICTS."""
    lines = [line for path, oid, verdict in items if (line := _verdict_line(path, oid, verdict)) is not None]
    if not lines:
        return
    path = folder / VERDICTS_FILE
    try:
        private_folder(folder)
        # one write of whole lines in append mode: concurrent writers interleave lines, never halves
        with _appended(path) as handle:
            handle.write("".join(lines))
        if path.stat().st_size > MAX_VERDICTS * 160:
            with _opened(path) as handle:
                kept = handle.read().splitlines(keepends=True)
            if len(kept) > MAX_VERDICTS:
                _replace(path, "".join(line for line in kept[len(kept) - MAX_VERDICTS // 2 :] if line.endswith("\n")))
        for old in folder.glob("verdicts-*.txt"):
            if old.name != VERDICTS_FILE:
                old.unlink()
    except (OSError, UnicodeDecodeError):
        return


def verdict_of(path: str, report: object) -> Verdict | None:
    """The verdict of one file from its own check_file report (a TreeReport), or None when it has errors."""
    from git_memzoi.profile.tree import TreeReport

    assert isinstance(report, TreeReport)
    if report.errors:
        return None
    if path in report.records:
        return ("record", report.records[path].record.id, None)
    if path in report.packets:
        packet = report.packets[path].packet
        affected = (
            tuple(packet.resolution.affected_record_ids)
            if packet.status == "applied" and packet.resolution is not None
            else None
        )
        return ("packet", packet.id, affected)
    return ("other", "", None)


def remember_written(
    folder: Path,
    files: Iterable[tuple[str, bytes]],
    scanned: Container[str] = frozenset(),
    appended: Mapping[str, bytes] | None = None,
) -> None:
    """Judge files just written under .memzoi/ (path, bytes) with check_file and keep the clean verdicts.

    Called after a step writes memory files (apply, reject), so that committing them is a lookup.
    `scanned`: paths whose whole text the caller already found free of secrets (not scanned
    again). `appended`: paths (log.md) the step only appended to, with their text before; the
    caller scanned the appended lines, so the new text is clean when the old one had a clean
    verdict, and otherwise it is scanned whole once. Best effort: any failure only means the
    commit runs the full check.
    """
    from git_memzoi.profile import secrets
    from git_memzoi.profile.tree import SourceFile, TreeReport, check_file

    items = []
    try:
        for path, raw in files:
            if not path.startswith(MEMZOI_DIR + "/"):
                continue
            one = TreeReport()
            check_file(one, SourceFile(path, lambda data=raw: data), "committed")  # type: ignore[misc]
            verdict = verdict_of(path, one)
            if verdict is None:
                continue
            # check_file scans records and packets; any other file (log.md) is kept only when its
            # whole text holds nothing secret-looking, so that the commit's fast path need not scan
            before = (appended or {}).get(path)
            if verdict[0] == "other" and path not in scanned and not _was_clean(folder, path, before):
                if before is not None and len(raw) > WHOLE_SCAN_BYTES:
                    continue  # no verdict: the commit's check scans the lines it adds, not the whole log
                if secrets.scan(raw.decode("utf-8", "replace")):
                    continue
            items.append((path, blob_oid(raw), verdict))
    except Exception:  # noqa: BLE001 - a cache: never fail the step that fills it
        return
    add_verdicts(folder, items)


#: A log.md appended to with no kept verdict of its own is scanned whole up to this size (once:
#: the verdicts chain from there); a larger one keeps none, and its commit runs the checks.
WHOLE_SCAN_BYTES = 1 << 20


def _was_clean(folder: Path, path: str, before: bytes | None) -> bool:
    """True when `before` (the text an append started from) has a clean verdict of its own."""
    if before is None:
        return False
    oid = blob_oid(before)
    return read_verdicts(folder, [(path, oid)]).get((path, oid)) == ("other", "", None)


def blob_oid(data: bytes) -> str:
    """The git blob OID (SHA-1) of `data`, as `git hash-object` prints it."""
    import hashlib

    digest = hashlib.sha1(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


# tree IDs ------------------------------------------------------------------------------------


def config_signature(files: Iterable[Path]) -> str:
    """Size and modification time of each config file that judges a tree (the user's, the project's)."""
    parts = []
    for path in files:
        try:
            st = os.stat(path)
            parts.append(f"{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append("-")
    return ",".join(parts)


def read_tree_ids(folder: Path, tree: str, signature: str) -> tuple[set[str], set[str]] | None:
    """(record IDs, packet IDs) of an error-free tree, or None when none is kept for this signature."""
    try:
        with _opened(folder / f"{tree}.ids") as handle:
            lines = handle.read().split("\n")
    except (OSError, UnicodeDecodeError):
        return None
    # header, the record IDs, the packet IDs, and the empty tail: whole slices, no per-line loop
    # (10,000 IDs are read on every fast-path commit: bench_client_hooks "adding one record")
    head, _, counts = lines[0].rpartition(" ")
    records_n, _, packets_n = counts.partition(":")
    if head != f"{_HEADER} {tree} {signature}" or not (records_n.isdigit() and packets_n.isdigit()):
        return None
    split = 1 + int(records_n)
    if len(lines) != split + int(packets_n) + 1 or lines[-1] != "":
        return None  # torn, or an ID that held a newline
    return set(lines[1:split]), set(lines[split:-1])


def write_tree_ids(folder: Path, tree: str, signature: str, records: Iterable[str], packets: Iterable[str]) -> None:
    """Keep the IDs of an error-free tree (best effort), pruning to the KEEP_TREES most recent."""
    record_ids, packet_ids = list(records), list(packets)
    text = f"{_HEADER} {tree} {signature} {len(record_ids)}:{len(packet_ids)}\n"
    for ids in (record_ids, packet_ids):
        if ids:
            text += "\n".join(ids) + "\n"
    if text.count("\n") != 1 + len(record_ids) + len(packet_ids):
        return  # an ID with a newline in it cannot be kept as a line
    try:
        private_folder(folder)
        _replace(folder / f"{tree}.ids", text)
        kept = sorted(folder.glob("*.ids"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in kept[KEEP_TREES:]:
            old.unlink()
    except OSError:
        return


def _opened(path: Path) -> io.TextIOWrapper:
    """A store file opened to read; OSError when it is not a regular file of at most MAX_READ_BYTES.

    A FIFO is opened without waiting for a writer, and neither it nor a device is read.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        seen = os.fstat(fd)
        if not stat.S_ISREG(seen.st_mode) or seen.st_size > MAX_READ_BYTES:
            raise OSError(f"{path}: not a file, or larger than any store")
        return open(fd, encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise


def _appended(path: Path) -> io.TextIOWrapper:
    """A store file opened to append (created if need be); OSError when it is not a regular file.

    Opened without waiting: a FIFO with no reader is refused at once (ENXIO), one with a reader
    is refused by its type, so an append never blocks a command.
    """
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, FILE_MODE)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path}: not a file")
        return open(fd, "a", encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise


def _replace(path: Path, text: str) -> None:
    # os.open rather than tempfile: tempfile loads shutil and random, too slow for the fast path
    tmp = path.parent / f".tmp-{os.getpid()}-{time.monotonic_ns()}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)  # no fsync: a torn or lost cache file is a miss
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
