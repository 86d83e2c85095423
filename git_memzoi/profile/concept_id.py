"""Path concept IDs: the name a record file's path gives its concept."""

from __future__ import annotations

import re
import unicodedata

from git_memzoi.errors import FormatError

_SEGMENT = re.compile(r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?")
#: every byte but a lowercase ASCII letter or a digit made a space: the words of a slug are what stays
_NOT_WORD = bytes(c if chr(c) in "abcdefghijklmnopqrstuvwxyz0123456789" else 32 for c in range(256))
RESERVED_NAMES = ("index", "log")
MAX_LENGTH = 200


def check(concept_id: str) -> str:
    """Return `concept_id` when it follows the profile's rules, else raise FormatError(concept-id)."""

    def bad(why: str) -> FormatError:
        return FormatError("concept-id", f"concept ID {concept_id!r} {why}")

    if not concept_id:
        raise bad("is empty")
    if len(concept_id) > MAX_LENGTH:
        raise bad(f"is longer than {MAX_LENGTH} characters")
    if concept_id.endswith(".md"):
        raise bad("must not include the .md extension")
    if concept_id.startswith("/") or concept_id.endswith("/"):
        raise bad("must not start or end with /")
    for segment in concept_id.split("/"):
        if segment in ("", ".", ".."):
            raise bad("has an empty, . or .. segment")
        if not _SEGMENT.fullmatch(segment):
            raise bad(
                "must use lowercase ASCII letters, digits and hyphens, each segment starting "
                "and ending with a letter or digit"
            )
    if concept_id.rsplit("/", 1)[-1] in RESERVED_NAMES:
        raise bad("ends in a reserved name (index, log)")
    return concept_id


def from_record_path(relpath: str) -> str:
    """The concept ID of a path relative to .memzoi/records/ (`a/b.md` -> `a/b`)."""
    if not relpath.endswith(".md"):
        raise FormatError("concept-id", f"record file {relpath!r} must end in .md")
    return check(relpath[:-3])


def slug(text: str, max_length: int = 80) -> str:
    """A concept-ID segment from free text: lowercase ASCII words joined by hyphens."""
    # NFKD leaves ASCII as it is, and an import names a thousand records by mostly ASCII headings
    ascii_text = (
        text if text.isascii() else unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    )
    words = ascii_text.lower().encode("ascii").translate(_NOT_WORD).decode("ascii").split()  # runs of [a-z0-9]
    out = "-".join(words)
    if len(out) > max_length:  # the words while they fit
        out = ""
        for word in words:
            candidate = f"{out}-{word}" if out else word
            if len(candidate) > max_length:
                break
            out = candidate
    if not out or out in RESERVED_NAMES:
        out = f"memory-{out}" if out else "memory"
    return out
