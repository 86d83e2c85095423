"""Record text as recall shows it: shared by context packs, search snippets, precheck and standing rules."""

from __future__ import annotations

import re

_HEADING = re.compile(r"^#{1,6}\s+(.*)$")


def clean_body(title: str, body: str) -> str:
    """The body without a leading `# Title` heading that repeats the title, whitespace trimmed."""
    text = body.strip()
    first, _, rest = text.partition("\n")
    heading = _HEADING.match(first)
    if heading and heading.group(1).strip().strip("*_`").lower() == title.strip().lower():
        text = rest.strip()
    return text
