"""Validate a whole .memzoi/ tree: every file on its own, then the rules that span files.

Pure: it takes (path, loader) pairs, from the work tree or from git objects alike, and
returns problems; it never reads the disk itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from git_memzoi.errors import FormatError
from git_memzoi.layout import (
    GITATTRIBUTES,
    INDEX_FILE,
    LOG_FILE,
    MAX_FILE_BYTES,
    MEMZOI_DIR,
    PENDING,
    RECORDS,
    REPO_CONFIG,
    RESERVED_FILES,
    RESOLVED_BY_OUTCOME,
    SUFFIX,
)
from git_memzoi.profile import concept_id, frontmatter, secrets
from git_memzoi.profile.document import (
    InvalidDocument,
    ParsedPacket,
    ParsedRecord,
    Problem,
    problem_from,
    read_packet,
    read_record,
)
from git_memzoi.profile.receipt import receipt_problems

#: The status a packet must have in each packet folder.
PACKET_FOLDERS = {
    f"{PENDING}/": "proposed",
    **{f"{folder}/": outcome for outcome, folder in RESOLVED_BY_OUTCOME.items()},
}
Mode = Literal["worktree", "committed"]


@dataclass(frozen=True)
class SourceFile:
    """A file to validate: its repository-relative path and how to get its bytes."""

    path: str
    read: Callable[[], bytes]
    is_symlink: bool = False
    #: The bytes a piece at a time (log.md, which has no size limit); None: `read` is sliced.
    chunks: Callable[[], Iterable[bytes]] | None = None
    #: its size without reading it (a stat, a git object header); None: known only by reading it
    size: Callable[[], int] | None = None


@dataclass
class TreeReport:
    """Everything validation learned: problems plus the valid records and packets by path."""

    problems: list[Problem] = field(default_factory=list)
    records: dict[str, ParsedRecord] = field(default_factory=dict)
    packets: dict[str, ParsedPacket] = field(default_factory=dict)
    files_checked: int = 0
    #: files whose whole text was scanned for secrets (their findings are in `problems`)
    scanned: set[str] = field(default_factory=set)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]


def check_reserved(path: str, raw: bytes) -> list[Problem]:
    """index.md has no frontmatter; neither index.md nor log.md may define a record or proposal."""
    name = path.rsplit("/", 1)[-1]
    try:
        parts = frontmatter.split(raw, path)
    except FormatError as exc:
        return [problem_from(exc, path)]
    if parts is None:
        return []
    if name == INDEX_FILE:
        return [
            Problem(path, 1, "reserved-file", "index.md is for human navigation and must not have YAML frontmatter")
        ]
    try:
        data = frontmatter.load_frontmatter(parts[0], path)
    except FormatError as exc:
        return [problem_from(exc, path)]
    if data.get("kind") in ("memory", "proposal") or "id" in data:
        return [
            Problem(
                path, 1, "reserved-file", "log.md is for append-only notes and must not define a record or proposal"
            )
        ]
    return []


#: log.md is read in pieces of at most this many bytes, cut after a newline where there is one.
LOG_CHUNK = MAX_FILE_BYTES


def log_chunks(data: bytes | memoryview, size: int = LOG_CHUNK) -> Iterable[bytes]:
    """`data` in pieces of at most `size` bytes, each ending after a newline when one is in reach.

    A piece without a newline is cut before a UTF-8 continuation byte, so no character is split.
    """
    view = memoryview(data)
    start = 0
    while start < len(view):
        end = min(start + size, len(view))
        if end < len(view):
            cut = bytes(view[start:end]).rfind(b"\n")
            if cut >= 0:
                end = start + cut + 1
            else:
                while end > start + 1 and view[end] & 0xC0 == 0x80:
                    end -= 1
        yield bytes(view[start:end])
        start = end


def check_log(path: str, source: SourceFile, *, scan_secrets: bool = False) -> list[Problem]:
    """log.md, which only grows: no size limit, read a piece at a time, never whole as text.

    The profile keeps log.md append-only, so it is the one memory file without the 1 MiB cap:
    the reserved-file rule needs only its head (frontmatter can only open a file), the encoding
    rules hold for each piece, and `scan_secrets` scans each piece for secret-looking spans.
    """
    problems: list[Problem] = []
    first_line = 1
    encoding_ok = True
    pieces = source.chunks() if source.chunks is not None else log_chunks(source.read())
    for number, piece in enumerate(pieces):
        if number == 0:
            head = check_reserved(path, piece)
            problems.extend(head)
            encoding_ok = not any(p.code in ("encoding", "encoding-bom", "line-endings") for p in head)
        elif encoding_ok:
            problem = _encoding_problem(path, piece, first_line)
            if problem is not None:
                problems.append(problem)
                encoding_ok = False
        if scan_secrets:
            for found in secrets.scan(piece.decode("utf-8", "replace")):
                problems.append(secret_problem(path, secrets.SecretFinding(found.kind, found.line + first_line - 1)))
        first_line += piece.count(b"\n")
    return problems


def _encoding_problem(path: str, piece: bytes, first_line: int) -> Problem | None:
    """The first encoding or line-ending problem in a piece of log.md that starts at `first_line`."""
    try:
        text = piece.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = first_line + piece[: exc.start].count(b"\n")
        return Problem(path, line, "encoding", "file is not valid UTF-8")
    for char, code, message in (
        ("\r", "line-endings", "CR or CRLF line endings; memory files use LF"),
        ("\x00", "encoding", "file contains a NUL byte"),
    ):
        if char in text:
            return Problem(path, first_line + text[: text.index(char)].count("\n"), code, message)
    return None


def validate_tree(files: Iterable[SourceFile], mode: Mode = "worktree", *, scan_logs: bool = True) -> TreeReport:
    """Validate every file under .memzoi/ and the cross-file rules (unique IDs, resolved packets).

    `scan_logs`: as check_file's (apply, which scans only what it appends, passes False).
    """
    report = TreeReport()
    for source in files:
        check_file(report, source, mode, scan_logs=scan_logs)
    cross_check(report)
    return report


def check_file(report: TreeReport, source: SourceFile, mode: Mode = "worktree", *, scan_logs: bool = False) -> None:
    """Validate one file on its own into `report` (files outside .memzoi/ are ignored).

    validate_tree is check_file on every file, then cross_check; callers that validate many
    similar trees (the push hook) reuse per-file reports and run cross_check on their union.
    `scan_logs`: scan all of log.md for secrets too (validate); the hooks and apply scan only
    the lines a change appends, so they leave it False.
    """
    path = source.path
    if not path.startswith(MEMZOI_DIR + "/") and not (path == MEMZOI_DIR and source.is_symlink):
        return
    report.files_checked += 1
    if path == MEMZOI_DIR:
        report.problems.append(
            Problem(
                path, 1, "symlink", f"{MEMZOI_DIR} must be a real folder, not a symlink; git memzoi does not follow it"
            )
        )
        return
    if source.is_symlink:
        report.problems.append(Problem(path, 1, "symlink", "memory files must be regular files, not symlinks"))
        return
    name = path.rsplit("/", 1)[-1]
    if name == LOG_FILE:  # no size limit: it only grows, and is read a piece at a time
        report.problems.extend(check_log(path, source, scan_secrets=scan_logs))
        return
    size = source.size() if source.size is not None else None
    if size is not None and size > MAX_FILE_BYTES:
        # refused by its size alone: a crafted file of a gigabyte is never read, decoded or scanned
        report.problems.append(too_large(path, size))
        return
    if name in RESERVED_FILES:
        report.problems.extend(check_reserved(path, source.read()))
        return
    if path == REPO_CONFIG or name == ".gitkeep" or name == GITATTRIBUTES:
        return
    if path.startswith(RECORDS + "/"):
        _check_record(report, source)
    elif any(path.startswith(folder) for folder in PACKET_FOLDERS):
        _check_packet(report, source, mode)
    elif path.endswith(SUFFIX):
        report.problems.append(
            Problem(
                path, 1, "stray-file", "Markdown outside records/ and proposals/ is not part of the profile", "warning"
            )
        )


def too_large(path: str, size: int) -> Problem:
    """The one wording of a file over the size limit, wherever its size is taken."""
    return Problem(path, 1, "file-too-large", f"file is {size} bytes; the limit is {MAX_FILE_BYTES}")


def secret_problems(path: str, text: str) -> list[Problem]:
    """A `secret` problem per secret-looking span of a memory file (any field); validate and the hooks use this."""
    return [secret_problem(path, found) for found in secrets.scan(text)]


def secret_problem(path: str, found: secrets.SecretFinding) -> Problem:
    """The one wording of a secret finding, for validate, the hooks and the lifecycle alike."""
    return Problem(path, found.line, "secret", f"{found.looks_like}; secrets must not enter repository memory")


def cross_check(report: TreeReport) -> None:
    """Add the rules that span files (unique IDs, supersedes targets, resolved packets) to `report`."""
    _cross_checks(report)


def _check_record(report: TreeReport, source: SourceFile) -> None:
    path = source.path
    rel = path[len(RECORDS) + 1 :]
    if not rel.endswith(SUFFIX):
        report.problems.append(Problem(path, 1, "stray-file", "files under records/ must be .md records", "warning"))
        return
    try:
        concept_id.from_record_path(rel)
    except FormatError as exc:
        report.problems.append(Problem(path, 1, exc.code, exc.message))
    raw = source.read()
    report.problems.extend(secret_problems(path, raw.decode("utf-8", "replace")))
    report.scanned.add(path)
    try:
        report.records[path] = read_record(raw, path)
    except InvalidDocument as exc:
        report.problems.extend(exc.problems)


def _check_packet(report: TreeReport, source: SourceFile, mode: Mode) -> None:
    path = source.path
    folder = next(f for f in PACKET_FOLDERS if path.startswith(f))
    rel = path[len(folder) :]
    if "/" in rel or not rel.endswith(SUFFIX):
        report.problems.append(
            Problem(path, 1, "stray-file", f"only <proposal-id>.md files belong in {folder}", "warning")
        )
        return
    raw = source.read()
    report.problems.extend(secret_problems(path, raw.decode("utf-8", "replace")))
    report.scanned.add(path)
    try:
        parsed = read_packet(raw, path)
    except InvalidDocument as exc:
        report.problems.extend(exc.problems)
        return
    packet = parsed.packet
    expected = PACKET_FOLDERS[folder]
    if packet.status != expected:
        report.problems.append(
            Problem(
                path,
                parsed.doc.line_of(("status",)),
                "packet-status",
                f"packets in {folder} must have status: {expected}, not {packet.status}",
            )
        )
    if packet.receipt is not None:
        # a receipt: block is no pass: the file must be exactly the hash-only receipt reject writes
        report.problems.extend(receipt_problems(parsed))
    elif not packet.repo_safe:
        declared = packet.sensitivity if packet.sensitivity_declared else "unknown (not declared)"
        line = parsed.doc.line_of(("sensitivity",)) if packet.sensitivity_declared else 1
        if mode == "committed" or expected != "proposed":
            report.problems.append(
                Problem(path, line, "sensitivity", f"sensitivity {declared} must not be committed to repository memory")
            )
        else:
            report.problems.append(
                Problem(
                    path,
                    line,
                    "sensitivity",
                    f"sensitivity {declared} is not repo-safe: this packet can only be rejected",
                    "warning",
                )
            )
    report.packets[path] = parsed


class Facts(NamedTuple):
    """What the cross-file rules read of one valid record or packet: its ID and the record IDs it names.

    Facts are a function of the file's path and bytes (and this validator), so they can be kept
    by blob ID and the cross-file rules re-run over a whole tree without parsing it again. The
    line a problem points at is looked up only when a rule finds one (see `cross_problems`).
    A tuple, so that a tree's worth is read back from a summary quickly.
    """

    kind: Literal["record", "packet"]
    id: str
    #: a record's supersedes target
    supersedes: str | None = None
    #: a packet: applied with a resolution block (whose records must exist), and the records it names
    applied: bool = False
    affected: tuple[str, ...] = ()
    #: a packet's proposal target (supersede, tombstone)
    target: str | None = None

    @property
    def refs(self) -> frozenset[str]:
        """The record IDs this file refers to: a change to one of them can change its cross-file errors."""
        if self.supersedes is None and self.target is None and not self.affected:
            return frozenset()
        found = set(self.affected)
        for ref in (self.supersedes, self.target):
            if ref is not None:
                found.add(ref)
        return frozenset(found)


def facts_of(path: str, report: TreeReport) -> Facts | None:
    """The facts of the record or packet `report` parsed at `path`; None for any other file."""
    if path in report.records:
        record = report.records[path].record
        return Facts("record", record.id, supersedes=record.supersedes)
    if path in report.packets:
        packet = report.packets[path].packet
        applied = packet.status == "applied" and packet.resolution is not None
        affected = tuple(packet.resolution.affected_record_ids) if packet.resolution is not None else ()
        return Facts("packet", packet.id, applied=applied, affected=affected, target=packet.target_id)
    return None


def doc_of(path: str, report: TreeReport) -> frontmatter.Document | None:
    """The parsed frontmatter of the record or packet `report` holds at `path` (for the line of a field)."""
    if path in report.records:
        return report.records[path].doc
    if path in report.packets:
        return report.packets[path].doc
    return None


#: The line of a field (('id',), ('resolution', 'affected_record_ids')) in the file at a path.
LineOf = Callable[[str, tuple[str, ...]], int]
#: Whether a problem of this severity at this path is wanted (the others are not built).
Wanted = Callable[[str, str], bool]


def _every(path: str, severity: str) -> bool:
    return True


def cross_problems(facts: Mapping[str, Facts], line_of: LineOf, wanted: Wanted = _every) -> list[Problem]:
    """The rules that span files (unique IDs, supersedes targets, resolved packets), over facts alone.

    `line_of` is asked only for the problems found and `wanted`, so a tree whose files are known
    by their facts is judged without parsing any of them unless a rule finds something there.
    """
    ids, problems = _owners(facts, "record", ("id-duplicate", "record"), line_of, wanted)
    for path, one in sorted(facts.items()):
        if (
            one.kind == "record"
            and one.supersedes is not None
            and one.supersedes not in ids
            and wanted(path, "warning")
        ):
            message = f"supersedes {one.supersedes!r}, which is not a record in this tree"
            problems.append(Problem(path, line_of(path, ("supersedes",)), "supersedes-missing", message, "warning"))
    problems.extend(_owners(facts, "packet", ("packet-id-collision", "proposal"), line_of, wanted)[1])
    for path, one in sorted(facts.items()):
        if one.kind == "packet" and one.applied and wanted(path, "error"):
            problems.extend(_orphans(path, one, ids, line_of))
    return problems


def _owners(
    facts: Mapping[str, Facts], kind: str, what: tuple[str, str], line_of: LineOf, wanted: Wanted
) -> tuple[dict[str, str], list[Problem]]:
    """Map each ID to the first path (in path order) that uses it; a problem for every later user."""
    code, noun = what
    owners: dict[str, str] = {}
    problems = []
    for path, one in sorted(facts.items()):
        if one.kind != kind:
            continue
        if one.id not in owners:
            owners[one.id] = path
        elif wanted(path, "error"):
            message = f"{noun} ID {one.id!r} is also used by {owners[one.id]}"
            problems.append(Problem(path, line_of(path, ("id",)), code, message))
    return owners, problems


def _orphans(path: str, packet: Facts, ids: Mapping[str, str], line_of: LineOf) -> list[Problem]:
    if not packet.affected:
        message = "an applied packet must name the records it affected"
        return [Problem(path, line_of(path, ("resolution",)), "resolution-orphan", message)]
    return [
        Problem(
            path,
            line_of(path, ("resolution", "affected_record_ids")),
            "resolution-orphan",
            f"applied packet names record {rid!r}, which is not in records/",
        )
        for rid in packet.affected
        if rid not in ids
    ]


def _cross_checks(report: TreeReport) -> None:
    facts = {path: f for path in [*report.records, *report.packets] if (f := facts_of(path, report)) is not None}

    def line_of(path: str, loc: tuple[str, ...]) -> int:
        doc = doc_of(path, report)
        return doc.line_of(loc) if doc is not None else 1

    report.problems.extend(cross_problems(facts, line_of))
