"""Turn any text a person or agent types into a safe FTS5 query.

FTS5 has its own query language (quotes, `AND`/`OR`/`NOT`, `*`, `^`, column filters, NEAR),
so raw text is never passed to MATCH. The text is split into words the way the index's
tokenizer splits them (letters and digits; everything else separates), each word becomes a
quoted string (a trailing `*` right after a word of three or more letters keeps its prefix
meaning), and the words are
joined with AND for the precise query and with OR for the fallback. Operators typed by the
user are just words.
"""

from __future__ import annotations

import re

MAX_TERMS = 32
#: A prefix search needs this many letters; `a*` would rank every record (it searches for `a`).
PREFIX_MIN = 3
_WORD = re.compile(r"([^\W_]+)(\*?)")


#: A word with a capital inside it (`validateSession`, `HTTPServer`, `queryKeys`): an identifier in CamelCase.
_CAMEL = re.compile(r"[^\W_]*[a-z0-9][A-Z][^\W_]*|[^\W_]*[A-Z]{2}[a-z][^\W_]*")
#: Where a CamelCase identifier splits: before a capital after a lowercase letter or digit, and before the last
#: capital of a run followed by a lowercase letter (`HTTPServer` -> HTTP Server).
_SPLIT = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def identifier_parts(word: str) -> list[str]:
    """A CamelCase identifier's words, lowercased (`validateSession` -> validate, session); [] for any other word.

    The tokenizer already splits snake_case, kebab-case, dotted names and paths (`_`, `-`, `.` and `/`
    separate words); only a capital inside a word hides one."""
    if not _CAMEL.fullmatch(word):
        return []
    parts = [p.lower() for p in _SPLIT.split(word) if p]
    return parts if len(parts) > 1 and min(map(len, parts)) > 1 else []  # `iOS` is a name, not i + os


def identifier_words(*texts: str | None) -> str:
    """The words of every CamelCase identifier in `texts`, each identifier's in order (so they match as a phrase),
    each identifier once: what the index adds to a record's tags so that `validate session` finds `validateSession`."""
    seen: dict[str, None] = {}
    for text in texts:
        for match in _WORD.finditer(text or ""):
            word = match.group(1)
            if word not in seen and identifier_parts(word):
                seen[word] = None
    return " ".join(" ".join(identifier_parts(word)) for word in seen)


def terms(text: str) -> list[str]:
    """The query's words as quoted FTS5 strings (`"auth"`, prefix `"auth"*`), duplicates dropped."""
    out: list[str] = []
    for match in _WORD.finditer(text):
        word, star = match.group(1), match.group(2)
        term = f'"{word}"' + ("*" if star and len(word) >= PREFIX_MIN else "")
        if term not in out:
            out.append(term)
        if len(out) == MAX_TERMS:
            break
    return out


def raw_words(text: str) -> list[str]:
    """The query's words as typed (case kept), as the tokenizer splits them."""
    return [m.group(1) for m in _WORD.finditer(text)]


def words(text: str) -> list[str]:
    """The query's words, lowercased, as the tokenizer sees them."""
    return [m.group(1).lower() for m in _WORD.finditer(text)]


#: Words too common in tasks, commands and sentences to select records on their own.
STOPWORDS = frozenset(
    """a an and are as at be been by can do does for from has have how i if in into is it its
me my of on or our should so that the their then there these this those to up use we what when where which
while who why will with without you your not no all any via than""".split()
)


def significant(text: str) -> list[str]:
    """The query's words without stopwords and one-letter words (a digit stays: "rule 7"), in order, each once."""
    return [w for w in dict.fromkeys(words(text)) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())][:MAX_TERMS]


def all_of(query_terms: list[str]) -> str:
    """Every word must match."""
    return " AND ".join(query_terms)


def any_of(query_terms: list[str]) -> str:
    """Any word may match."""
    return " OR ".join(query_terms)
