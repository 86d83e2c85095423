"""Output without click: one JSON document on stdout, and a line for the person on stderr.

The server's gate (cli.gate) answers before click loads and the click commands print through
the same functions, so both write the same bytes. `err` writes as click.echo does for text
without ANSI styles: flushed at once, and as UTF-8 where the stream's encoding is ASCII (click
calls such a stream misconfigured and rewraps it); what it writes holds no control character
but newlines and tabs (oneline.escape_text), so click's stripping of styles finds nothing.
"""

from __future__ import annotations

import codecs
import json
import sys
from typing import Any

from git_memzoi.profile.oneline import escape, escape_text


def emit_json(data: Any) -> None:
    """One JSON document on stdout."""
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False) + "\n")


def err(message: str) -> None:
    """`message` and a newline on stderr, its control characters (but newline and tab) escaped."""
    _echo(sys.stderr, escape_text(message) + "\n")


def line(text: str) -> None:
    """One line of recalled text on stdout, every control character escaped: memory never drives the terminal."""
    _echo(sys.stdout, escape(text) + "\n")


def _echo(stream: Any, text: str) -> None:
    """Write `text` as click.echo does: flushed at once, as UTF-8 where the stream's encoding is ASCII."""
    if stream is None:  # no such stream at all (pythonw): click.echo writes nothing either
        return
    if _ascii(getattr(stream, "encoding", None)) and hasattr(stream, "buffer"):
        stream.flush()
        stream.buffer.write(text.encode("utf-8", "replace"))
        stream.buffer.flush()
        return
    stream.write(text)
    stream.flush()


def _ascii(encoding: str | None) -> bool:
    try:
        return codecs.lookup(encoding or "ascii").name == "ascii"
    except LookupError:
        return False
