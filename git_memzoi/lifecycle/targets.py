"""Resolve a TARGET (inbox ID, pending packet path, or file ID) to the proposal it names.

A target already resolved comes back as Settled: applied, rejected, or rejected as a hash-only
receipt found through the hashed alias lookup (whose report never repeats the alias).
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from git_memzoi import shortids
from git_memzoi.errors import FormatError, NotFound, Refused
from git_memzoi.gitrepo import GitRepo
from git_memzoi.index import inbox_store
from git_memzoi.index.inbox_store import ProposalRow
from git_memzoi.layout import MEMZOI_DIR, PENDING, PROPOSALS, RESOLVED_BY_OUTCOME, SUFFIX, pending_path, resolved_path
from git_memzoi.lifecycle import packets
from git_memzoi.profile import frontmatter
from git_memzoi.profile.document import ParsedPacket


@dataclass(frozen=True)
class Source:
    """A proposal to act on: its inbox row, its pending packet file in this work tree, or both."""

    proposal_id: str
    via: str  # "inbox" (named by inbox ID) or "file" (named by path or file ID)
    row: ProposalRow | None
    file_path: str | None  # repository-relative pending packet path
    file_raw: bytes | None
    raw: bytes  # the packet text the step acts on
    parsed: ParsedPacket | None
    problem: FormatError | None  # why the packet does not validate, when it does not

    @property
    def file_id(self) -> str:
        if self.file_path is not None:
            return self.file_path.rsplit("/", 1)[-1][:-3]
        if self.row is not None and self.row.file_id:
            return self.row.file_id
        return self.proposal_id

    def require_valid(self) -> ParsedPacket:
        if self.parsed is None:
            assert self.problem is not None
            raise self.problem
        return self.parsed


@dataclass(frozen=True)
class Settled:
    """A target that is already resolved; `message` never repeats a hashed alias."""

    outcome: str  # applied | rejected
    proposal_id: str | None  # None when found only through a hashed alias
    path: str | None  # the resolved packet or receipt
    message: str
    hash_only: bool = False


def _parse(raw: bytes, path: str) -> tuple[ParsedPacket | None, FormatError | None]:
    try:
        return packets.load_packet(raw, path), None
    except FormatError as exc:
        return None, exc


def _looks_like_path(target: str) -> bool:
    return "/" in target or os.sep in target or target.endswith(SUFFIX)


def _pending_rel(root: Path, target: str) -> str:
    """The repository-relative pending packet path TARGET names, refusing anything that escapes."""
    given = Path(target)
    candidate = Path(os.path.abspath(given if given.is_absolute() else Path.cwd() / given))
    try:
        rel = candidate.relative_to(root).as_posix()
    except ValueError:
        raise Refused(f"{target}: outside this work tree; a packet TARGET is a file in {PENDING}/") from None
    folder, _, name = rel.rpartition("/")
    if folder in RESOLVED_BY_OUTCOME.values():
        return rel
    if folder != PENDING or not name.endswith(SUFFIX) or name.startswith("."):
        raise Refused(f"{target}: not a packet file in {PENDING}/")
    for node in (root / MEMZOI_DIR, root / PROPOSALS, root / PENDING, root / rel):
        if node.is_symlink():
            raise Refused(f"{node.relative_to(root).as_posix()} is a symlink; packet files and folders must be real")
    if os.path.realpath(root / rel) != str(root / rel):
        raise Refused(f"{target}: resolves outside {PENDING}/")
    return rel


def settled_by_name(root: Path, conn: sqlite3.Connection, name: str) -> Settled | None:
    """Is `name` (a proposal or file ID) already resolved: by a resolved file, or by a hashed receipt?"""
    for outcome in ("applied", "rejected"):
        rel = resolved_path(outcome, name)
        if (root / rel).is_file():
            return Settled(outcome, name, rel, f"{name} is already {outcome} ({rel})")
    return hashed(root, conn, name)


def hashed(root: Path, conn: sqlite3.Connection, alias: str) -> Settled | None:
    """The hash-only receipt an alias was rejected under: shared.db first, then the receipts in the tree."""
    found = inbox_store.find_rejection(conn, packets.alias_sha256(alias))
    if found is not None:
        return _receipt(found.receipt_id, found.receipt_path)
    folder = root / RESOLVED_BY_OUTCOME["rejected"]
    if not folder.is_dir():
        return None
    wanted = {packets.digest("proposal-id", alias), packets.digest("file-id", alias)}
    for path in sorted(folder.glob("receipt_*.md")):
        try:
            data = frontmatter.parse(path.read_bytes(), str(path)).data
        except (FormatError, OSError):
            continue
        block = data.get("receipt")
        if isinstance(block, dict) and wanted & {block.get("proposal_id_sha256"), block.get("file_id_sha256")}:
            return _receipt(str(data.get("id", path.stem)), path.relative_to(root).as_posix())
    return None


def _receipt(receipt_id: str, path: str) -> Settled:
    return Settled(
        "rejected",
        None,
        path,
        f"that proposal was rejected as not repo-safe; only its hash-only receipt {receipt_id} remains ({path})",
        hash_only=True,
    )


def expand_id(root: Path, conn: sqlite3.Connection, name: str) -> str:
    """The whole proposal or file ID a unique prefix stands for (inbox, pending and resolved packets)."""
    if inbox_store.get(conn, name) is not None:
        return name
    files: list[str] = []
    for folder in (PENDING, *RESOLVED_BY_OUTCOME.values()):
        try:
            files += [entry[: -len(SUFFIX)] for entry in os.listdir(root / folder) if entry.endswith(SUFFIX)]
        except OSError:
            continue  # no such folder yet
    return shortids.expand(name, [*inbox_store.names(conn), *files], "proposal")


def resolve(repo: GitRepo, conn: sqlite3.Connection, target: str) -> Source | Settled:
    """The proposal TARGET names, or how it was already resolved; NotFound when it names nothing."""
    root = repo.require_workdir()
    if _looks_like_path(target):
        rel = _pending_rel(root, target)
        stem = rel.rsplit("/", 1)[-1][: -len(SUFFIX)]
        if rel.startswith(PENDING + "/") and (root / rel).is_file():
            return _from_file(root, conn, rel)
        settled = settled_by_name(root, conn, stem)
        if settled is not None:
            return settled
        raise NotFound(f"{target}: no such pending packet file")
    target = expand_id(root, conn, target)
    row = inbox_store.get(conn, target)
    if row is not None:
        return _from_row(root, row)
    if (root / pending_path(target)).is_file() and not (root / pending_path(target)).is_symlink():
        return _from_file(root, conn, _pending_rel(root, str(root / pending_path(target))))
    settled = settled_by_name(root, conn, target)
    if settled is not None:
        return settled
    raise NotFound(
        f"{target}: no inbox proposal, pending packet file or resolved packet has this ID",
        hint="git memzoi proposals lists what is open",
    )


def _from_row(root: Path, row: ProposalRow) -> Source:
    raw = row.packet.encode("utf-8")
    parsed, problem = _parse(raw, f"inbox:{row.id}")
    file_path = file_raw = None
    if row.file_id:
        rel = pending_path(row.file_id)
        if (root / rel).is_file() and not (root / rel).is_symlink():
            file_path, file_raw = rel, (root / rel).read_bytes()
    return Source(row.id, "inbox", row, file_path, file_raw, raw, parsed, problem)


def _from_file(root: Path, conn: sqlite3.Connection, rel: str) -> Source:
    raw = (root / rel).read_bytes()
    parsed, problem = _parse(raw, rel)
    stem = rel.rsplit("/", 1)[-1][: -len(SUFFIX)]
    proposal_id = parsed.packet.id if parsed is not None else _raw_id(raw, rel) or stem
    row = inbox_store.get(conn, proposal_id)
    return Source(proposal_id, "file", row, rel, raw, raw, parsed, problem)


def _raw_id(raw: bytes, rel: str) -> str | None:
    try:
        value = frontmatter.parse(raw, rel).data.get("id")
    except FormatError:
        return None
    return value if isinstance(value, str) and value.strip() else None
