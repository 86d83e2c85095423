"""--json output: one JSON document on stdout (click-free, for the commands answered before click too)."""

from __future__ import annotations

import json
import sys
from typing import Any


def emit_json(data: Any) -> None:
    """One JSON document on stdout."""
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False) + "\n")


def rows_document(data: dict[str, Any], rows: str) -> str:
    """`data` as emit_json writes it, but each item of the list `data[rows]` on one line (and a final newline).

    For a document of a thousand rows: indenting every field of every row is done by json's
    pure-Python encoder, one row a line by its C encoder, many times faster.
    """
    marker = "\x00rows\x00"
    head = json.dumps({**data, rows: marker}, indent=2, sort_keys=False, ensure_ascii=False)
    encode = json.JSONEncoder(ensure_ascii=False).encode  # what json.dumps(row, ensure_ascii=False) builds per row
    items = [encode(row) for row in data[rows]]
    body = "[\n    " + ",\n    ".join(items) + "\n  ]" if items else "[]"
    return head.replace(json.dumps(marker), body, 1) + "\n"


def emit_rows(data: dict[str, Any], rows: str) -> None:
    """One JSON document on stdout, as emit_json, with each item of the list `data[rows]` on one line."""
    sys.stdout.write(rows_document(data, rows))
