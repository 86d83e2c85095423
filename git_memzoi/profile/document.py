"""Read one memory file into a validated model, turning every failure into located problems."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from git_memzoi.errors import FormatError
from git_memzoi.profile import frontmatter, oneline, vocab

if TYPE_CHECKING:  # pydantic (tens of ms to import) loads with the first file validated, not with this module
    from pydantic import ValidationError

    from git_memzoi.profile.models import Packet, Record

Severity = Literal["error", "warning"]

_PYDANTIC_CODES = {
    "missing": "field-missing",
    "extra_forbidden": "field-unknown",
    "literal_error": "invalid-value",
    "enum": "invalid-value",
    "string_type": "field-type",
    "float_type": "field-type",
    "int_type": "field-type",
    "list_type": "field-type",
    "dict_type": "field-type",
    "model_type": "field-type",
    "model_attributes_type": "field-type",
    "bool_type": "field-type",
    "greater_than_equal": "out-of-range",
    "less_than_equal": "out-of-range",
    "string_pattern_mismatch": "invalid-value",
}


@dataclass(frozen=True)
class Problem:
    """One finding: `path:line: code: message`, an error or a warning."""

    path: str
    line: int
    code: str
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        prefix = "warning: " if self.severity == "warning" else ""
        return f"{self.path}:{self.line}: {prefix}{self.code}: {self.message}"

    def as_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "code": self.code,
            "message": self.message,
            "severity": self.severity,
        }


class InvalidDocument(Exception):
    """A file failed validation; `problems` says where and why."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(str(p) for p in problems))
        self.problems = problems


@dataclass(frozen=True)
class ParsedRecord:
    record: Record
    doc: frontmatter.Document


@dataclass(frozen=True)
class ParsedPacket:
    packet: Packet
    doc: frontmatter.Document


def problem_from(error: FormatError, path: str) -> Problem:
    return Problem(error.path or path, error.line or 1, error.code, error.message)


def _field_loc(data: Any, loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """Keep the parts of a pydantic error location that name fields in `data` (drop union branches)."""
    out: list[Any] = []
    node = data
    for part in loc:
        if isinstance(node, dict) and isinstance(part, str) and part in node:  # noqa: SIM114  (mypy narrows each)
            out.append(part)
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            out.append(part)
            node = node[part]
        elif (
            isinstance(node, dict)
            and isinstance(part, str)
            and out[-1:] != [part]
            and not re.match(r"[a-z-]+\[|(?:float|int|str|list|dict|bool|none)\Z", part)
        ):
            out.append(part)  # a missing field: name it
            node = None
    return tuple(out)


def _problems(exc: ValidationError, doc: frontmatter.Document) -> list[Problem]:
    out = []
    for err in exc.errors(include_url=False):
        loc = _field_loc(doc.data, tuple(err["loc"]))
        kind = err["type"]
        code = kind if "-" in kind else _PYDANTIC_CODES.get(kind, "invalid-field")
        where = ".".join(str(p) for p in loc)
        message = err["msg"]
        if kind == "missing":
            message = f"required field {where!r} is missing"
        elif kind == "extra_forbidden":
            message = f"unknown field {where!r}"
        elif where:
            message = f"{where}: {message}"
        if len(loc) <= 1 and code in _MODEL_LEVEL_CODES:
            loc = _locate(code, doc.data) or loc
        out.append(Problem(doc.path, doc.line_of(loc), code, message))
    return _dedupe(out)


_MODEL_LEVEL_CODES = {
    "proposal-target",
    "proposal-reason",
    "proposal-action",
    "resolution-invalid",
    "receipt-invalid",
    "retention-invalid",
    "legacy-format",
}


def _locate(code: str, data: dict[str, Any]) -> tuple[Any, ...]:
    """Where a whole-model rule points, since pydantic gives it no field location."""
    raw_proposal = data.get("proposal")
    proposal: dict[str, Any] = raw_proposal if isinstance(raw_proposal, dict) else {}
    if code == "proposal-target":
        if "target" in proposal:
            return ("proposal", "target")
        if data.get("supersedes"):
            return ("supersedes",)
        return ("proposal", "action") if "action" in proposal else ("proposal",)
    if code in ("proposal-reason", "proposal-action"):
        return ("proposal", "action") if "action" in proposal else ("proposal",)
    if code == "resolution-invalid":
        return ("resolution",) if "resolution" in data else ("status",)
    if code == "legacy-format":
        for key in vocab.LEGACY_KEYS:
            if key in data:
                return (key,)
        return ("profile",) if "profile" in data else ()
    return {"receipt-invalid": ("receipt",), "retention-invalid": ("retention",)}.get(code, ())


def _dedupe(problems: list[Problem]) -> list[Problem]:
    seen: set[tuple[int, str, str]] = set()
    out = []
    for p in problems:
        key = (p.line, p.code, p.message)
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


#: frontmatter fields that hold prose over several lines; every other string is one line
_MULTI_LINE_FIELDS = frozenset({"reason"})


def _strings(node: Any, loc: tuple[Any, ...]) -> Any:
    """(field path, string) for every key and string value in a frontmatter mapping, depth first."""
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(key, str):
                yield (*loc, key), key
            yield from _strings(value, (*loc, key))
    elif isinstance(node, list):
        for index, item in enumerate(node):
            yield from _strings(item, (*loc, index))
    elif isinstance(node, str):
        yield loc, node


def _check_controls(doc: frontmatter.Document) -> list[Problem]:
    """control-character: a frontmatter string (title, tags, IDs...) or the body holding a control character.

    YAML's escapes (`"\\e"`, `"\\x9b"`, `"\\r"`) put them in a value without a raw byte in the
    file; printed, they rewrite the terminal of whoever reads the memory.
    """
    out = []
    for loc, text in _strings(doc.data, ()):
        where = ".".join(str(p) for p in loc)
        if loc and loc[-1] in _MULTI_LINE_FIELDS:
            hit = oneline.first_text_control(text)
            bad = hit[1] if hit else None
            rule = "a text field may hold newlines and tabs, no other control character"
        else:
            bad = oneline.first_control(text)
            rule = "one-line fields take printable text only (a block scalar ends in a newline: use >- or |-)"
        if bad is not None:
            message = f"{where}: holds the control character {oneline.shown(bad)}; {rule}"
            out.append(Problem(doc.path, doc.line_of(loc), "control-character", message))
    hit = oneline.first_text_control(doc.body)
    if hit is not None:
        line = doc.body_line + doc.body.count("\n", 0, hit[0])
        message = (
            f"the body holds the control character {oneline.shown(hit[1])}; "
            "the body may hold newlines and tabs, no other control character"
        )
        out.append(Problem(doc.path, line, "control-character", message))
    return out


def _check_body(doc: frontmatter.Document) -> list[Problem]:
    if not doc.body.strip():
        return [
            Problem(
                doc.path,
                doc.body_line,
                "body-empty",
                "the Markdown body is empty; it must hold the human-readable memory",
            )
        ]
    return []


def _load(raw: bytes, path: str) -> frontmatter.Document:
    try:
        return frontmatter.parse(raw, path)
    except FormatError as exc:
        raise InvalidDocument([problem_from(exc, path)]) from None


M = TypeVar("M", "Record", "Packet")


def _validated(
    raw: bytes, path: str, model: type[M], wrong_kind: str, code: str, message: str
) -> tuple[M, frontmatter.Document]:
    """Parse `raw`, refuse the other kind of file, validate frontmatter and body together."""
    from pydantic import ValidationError

    doc = _load(raw, path)
    if doc.data.get("kind") == wrong_kind:
        raise InvalidDocument([Problem(path, doc.line_of(("kind",)), code, message)])
    try:
        parsed = model.model_validate(doc.data)
    except ValidationError as exc:
        raise InvalidDocument(_problems(exc, doc) + _check_controls(doc) + _check_body(doc)) from None
    more = _check_controls(doc) + _check_body(doc)
    if more:
        raise InvalidDocument(more)
    return parsed, doc


def read_record(raw: bytes, path: str) -> ParsedRecord:
    """Parse and validate a canonical record file (raises InvalidDocument)."""
    from git_memzoi.profile.models import Record

    record, doc = _validated(
        raw, path, Record, "proposal", "record-kind", "a file under records/ must be kind: memory, not a proposal"
    )
    return ParsedRecord(record, doc)


def read_packet(raw: bytes, path: str) -> ParsedPacket:
    """Parse and validate a proposal packet file (raises InvalidDocument)."""
    from git_memzoi.profile.models import Packet

    packet, doc = _validated(
        raw,
        path,
        Packet,
        "memory",
        "packet-kind",
        "a file under proposals/ must be kind: proposal, not a memory record",
    )
    return ParsedPacket(packet, doc)
