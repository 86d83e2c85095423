"""Turn one record file's bytes into an index payload (or its problems), independent of where it lives.

The payload is what the parse cache stores under the file's blob OID, so it must not depend on
the file's path: problems carry no path until they are placed, and the body is kept as an
offset into the document text rather than a second copy.
"""

from __future__ import annotations

import hashlib
from typing import Any

from git_memzoi.profile.document import InvalidDocument, read_record
from git_memzoi.profile.frontmatter import FENCE


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
    front = doc.frontmatter_text
    match = 0 if front.startswith("id:") else front.find("\nid:") + 1
    id_line = front.count("\n", 0, match) + 2 if match >= 0 else 2
    return {
        "ok": {
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
            # the body follows "---\n" + frontmatter + "---\n" (a record's body is never empty)
            "body_start": len(front) + 2 * (len(FENCE) + 1),
            "id_line": id_line,
        }
    }
