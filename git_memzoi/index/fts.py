"""Turn any text a person or agent types into a safe FTS5 query.

FTS5 has its own query language (quotes, `AND`/`OR`/`NOT`, `*`, `^`, column filters, NEAR),
so raw text is never passed to MATCH. The text is split into words the way the index's
tokenizer splits them (letters and digits; everything else separates), each word becomes a
quoted string (a trailing `*` right after a word keeps its prefix meaning), and the words are
joined with AND for the precise query and with OR for the fallback. Operators typed by the
user are just words.
"""

from __future__ import annotations

import re

MAX_TERMS = 32
_WORD = re.compile(r"([^\W_]+)(\*?)")


def terms(text: str) -> list[str]:
    """The query's words as quoted FTS5 strings (`"auth"`, prefix `"auth"*`), duplicates dropped."""
    out: list[str] = []
    for match in _WORD.finditer(text):
        word, star = match.group(1), match.group(2)
        term = f'"{word}"' + ("*" if star else "")
        if term not in out:
            out.append(term)
        if len(out) == MAX_TERMS:
            break
    return out


def words(text: str) -> list[str]:
    """The query's words, lowercased, as the tokenizer sees them."""
    return [m.group(1).lower() for m in _WORD.finditer(text)]


def all_of(query_terms: list[str]) -> str:
    """Every word must match."""
    return " AND ".join(query_terms)


def any_of(query_terms: list[str]) -> str:
    """Any word may match."""
    return " OR ".join(query_terms)
