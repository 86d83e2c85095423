"""The one query pipeline `search`, `context` and the agent hooks share: words in, a safe FTS5 query out.

A text's words (as the index's tokenizer splits them) lose stopwords, one-letter words (not digits) and the
filler of requests ("please add a…"); each word left becomes a group of itself and its synonyms
from VOCABULARY and CONCEPTS (plus `[recall] synonyms` in config.toml), quoted, so `db` also finds
`database`; `concept_terms` gives the concepts' other words alone, for a pass that ranks below the
words as written. A CamelCase identifier (`validateSession`) also searches its words together, as the
index adds them to a record's tags text (`index.fts.identifier_words`).
FTS5's porter tokenizer stems both sides (`migrations` finds `migration`); bm25 weighs title,
description, tags and body by `index.queries.WEIGHTS`, so a word in a record's tags or title
counts more than one in its body. A trailing `*` keeps its prefix meaning, as in `index.fts`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from git_memzoi.index import fts

#: The field's abbreviations and their long forms; each word finds the others of its group.
VOCABULARY: tuple[tuple[str, ...], ...] = (
    ("db", "database", "databases"),
    ("auth", "authentication", "authn", "login"),
    ("authz", "authorization", "permissions"),
    ("k8s", "kubernetes"),
    ("env", "environment"),
    ("config", "configuration", "settings"),
    ("repo", "repository"),
    ("deps", "dependencies", "dependency", "package"),
    ("release", "ship", "publish"),
    ("migration", "migrations", "schema"),
    ("session", "logged", "logout", "sign-in"),
    ("i18n", "internationalization", "translations", "translation"),
    ("l10n", "localization"),
    ("ci", "pipeline", "workflow"),
    ("cd", "deployment", "deploy"),
    ("pr", "pull-request"),
    ("e2e", "end-to-end"),
    ("a11y", "accessibility"),
    ("perf", "performance"),
    ("msg", "message"),
    ("tz", "timezone"),
    ("pii", "personal-data"),
    ("js", "javascript"),
    ("ts", "typescript"),
    ("py", "python"),
)
#: Concepts of the field: words that name the same thing in different words, so a prompt in plain words finds a
#: record in the project's terms (and back). General vocabulary only, never one project's names.
CONCEPTS: tuple[tuple[str, ...], ...] = (
    ("dependency", "library", "package", "third-party", "vendor", "lib"),
    ("phone", "mobile", "ios", "android", "handset", "iphone", "smartphone"),
    ("crash", "exception", "panic", "traceback", "stacktrace"),
    ("tenant", "customer", "account", "isolation", "multi-tenant"),
    ("clock", "time", "timestamp", "skew", "timezone", "utc"),
    ("deploy", "release", "ship", "rollout", "rollback"),
    ("secret", "credential", "password", "token", "api-key"),
    ("delete", "remove", "erase", "purge", "erasure", "wipe", "forget"),
    ("privacy", "gdpr", "pii", "personal-data"),
    ("duplicate", "dedupe", "deduplication", "twice", "idempotent", "idempotency"),
    ("slow", "latency", "timeout", "performance", "perf"),
    ("upgrade", "bump", "update", "version"),
    ("flag", "feature-flag", "toggle"),
    ("invoice", "billing", "payment", "charge", "statement"),
    ("money", "currency", "price", "amount", "cents", "penny", "rounding", "decimal"),
    ("retry", "backoff", "redelivery"),
    ("queue", "topic", "broker", "stream"),
    ("log", "logging", "logger"),
    ("test", "testing", "spec", "fixture"),
    ("cert", "certificate", "tls", "ssl", "mtls"),
    ("container", "docker"),
    ("cache", "caching", "memoize"),
    ("cost", "bill", "overage", "quota", "spend"),
    ("offline", "connectivity", "network"),
    ("notification", "alert", "pager"),
    ("location", "gps", "position", "coordinates"),
    ("battery", "power"),
    ("oom", "out-of-memory", "ram"),
    ("backup", "snapshot", "restore"),
    ("lock", "locked", "stuck", "deadlock"),
    ("rejection", "rejected", "bounce"),
    ("expire", "expiry", "expiration", "lapse"),
    ("cron", "scheduler", "scheduled", "timer"),
    ("shard", "partition"),
    ("warehouse", "olap", "columnar"),
    ("superuser", "admin", "privileged"),
    ("spreadsheet", "csv", "excel"),
    ("dataframe", "tabular", "pandas", "polars"),
    ("iac", "terraform", "infrastructure-as-code"),
    ("artifact", "artefact", "build-cache"),
    ("replay", "backfill", "reprocess", "rerun"),
    ("stopped", "halted", "idle", "stationary"),
    ("volume", "disk", "pvc"),
    ("pseudonymise", "pseudonymize", "anonymise", "anonymize", "scramble", "redact"),
    ("polygon", "shape"),
    ("retention", "retain"),
    ("truncate", "truncation", "clip", "shorten", "ellipsis", "overflow"),
    ("inbox", "mailbox", "mail"),
)
#: Words of requests and questions that say nothing about which memory applies.
FILLER = frozenset(
    """add adding make making fix fixing new please want need needs get set sometimes
just also like let lets would could really some more most very way ok okay thanks thank""".split()
)


def synonyms(extra: Sequence[Sequence[str]] = (), *, concepts: bool = True) -> dict[str, tuple[str, ...]]:
    """word -> every word of its groups (VOCABULARY, CONCEPTS unless `concepts` is False, then `extra` groups from
    config), itself first."""
    out: dict[str, list[str]] = {}
    for group in (*VOCABULARY, *(CONCEPTS if concepts else ()), *extra):
        words = [w.lower() for w in group]
        for word in words:
            known = out.setdefault(word, [word])
            known.extend(w for w in words if w not in known)
    return {word: tuple(group) for word, group in out.items()}


def query_words(text: str) -> list[str]:
    """The words that select records: no stopwords, filler or one-letter words (digits stay), each once, in order."""
    return [w for w in fts.significant(text) if w not in FILLER]


def concept_terms(text: str, extra: Sequence[Sequence[str]] = ()) -> list[str]:
    """The text as FTS5 terms of its concepts alone: for each selecting word, the other words of its CONCEPTS
    groups (not the word itself, nor its abbreviations' long forms); words without a concept give no term."""
    plain, wide = synonyms(extra, concepts=False), synonyms(extra)
    out: list[str] = []
    for word in query_words(text):
        others = [_quoted(w) for w in wide.get(word, ()) if w not in plain.get(word, (word,)) and fts.words(w)]
        term = "" if not others else others[0] if len(others) == 1 else "(" + " OR ".join(dict.fromkeys(others)) + ")"
        if term and term not in out:
            out.append(term)
    return out[: fts.MAX_TERMS]


def _identifiers(text: str) -> dict[str, list[str]]:
    """Each CamelCase identifier of the text, lowercased as the tokenizer sees it, with its words."""
    out: dict[str, list[str]] = {}
    for word in fts.raw_words(text):
        parts = fts.identifier_parts(word)
        if parts:
            out.setdefault(word.lower(), parts)
    return out


def _quoted(word: str) -> str:
    # Each part of a hyphenated synonym must be a word the tokenizer knows: quote it as a phrase.
    return '"' + " ".join(fts.words(word)) + '"'


def terms(text: str, vocabulary: Mapping[str, Sequence[str]] | None = None) -> list[str]:
    """The text as FTS5 terms: one per selecting word, each OR-ed with its synonyms (`("db" OR "database")`)."""
    table = synonyms() if vocabulary is None else vocabulary
    prefixes = {t.strip('"*') for t in fts.terms(text) if t.endswith("*")}
    camel = _identifiers(text)
    out: list[str] = []
    for word in query_words(text):
        if word in prefixes:
            out.append(f'"{word}"*')
            continue
        group = [_quoted(w) for w in table.get(word, (word,)) if fts.words(w)]
        if word in camel:  # `validateSession` also finds a record that says "validate the session"
            group.append("(" + " AND ".join(f'"{part}"' for part in camel[word]) + ")")
        term = group[0] if len(group) == 1 else "(" + " OR ".join(dict.fromkeys(group)) + ")"
        if term not in out:
            out.append(term)
    return out[: fts.MAX_TERMS]
