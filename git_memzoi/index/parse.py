"""Turn one record file's bytes into an index payload (or its problems), independent of where it lives.

The payload is what the parse cache stores under the file's blob OID, so it must not depend on
the file's path: problems carry no path until they are placed, and the body is kept as an
offset into the document text rather than a second copy.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from git_memzoi.profile.document import InvalidDocument, Problem, read_record

_ID_LINE = re.compile(r"^id:", re.MULTILINE)


def blob_oid(data: bytes) -> str:
    """The git blob OID of `data` (what `git hash-object` prints)."""
    digest = hashlib.sha1(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


def parse_payload(raw: bytes, where: str) -> dict[str, Any]:
    """Validate a record file; return {"ok": fields…} or {"problems": [...]} (problems without a path)."""
    try:
        parsed = read_record(raw, where)
    except InvalidDocument as exc:
        return {"problems": [[p.line, p.code, p.message, p.severity] for p in exc.problems]}
    record, doc = parsed.record, parsed.doc
    text_len = len(raw.decode("utf-8"))
    match = _ID_LINE.search(doc.frontmatter_text)
    id_line = doc.frontmatter_text.count("\n", 0, match.start()) + 2 if match else 2
    return {"ok": {
        "id": record.id,
        "type": record.type,
        "lane": record.lane,
        "status": record.status,
        "visibility": record.visibility,
        "scope": record.scope,
        "title": record.title,
        "description": record.description,
        "tags": list(record.tags or []),
        "applies_to": list(record.applies_to or []),
        "source": record.source,
        "source_ref": record.source_ref,
        "proposal_id": record.proposal_id,
        "supersedes": record.supersedes,
        "timestamp": record.timestamp,
        "confidence": float(record.confidence),
        "retention": record.retention.model_dump(exclude_none=True),
        "body_start": text_len - len(doc.body),
        "id_line": id_line,
    }}


def problems_of(payload: dict[str, Any], path: str) -> list[Problem]:
    """The payload's problems, placed at `path`."""
    return [Problem(path, line, code, message, severity) for line, code, message, severity in payload["problems"]]
