"""Find secret-looking content (private keys, cloud and API tokens, passwords in URLs).

Every field of a memory file is scanned, frontmatter and body alike: by `propose` (refuse
unless the proposal declares a non-repo-safe sensitivity), by every lifecycle step before it
writes a file under .memzoi/, by `validate` and by the hooks (the same scan: profile.tree).
Findings name a kind and a line, never the secret itself.
"""

from __future__ import annotations

import re

# Scanning costs time linear in the text, whatever the text, and little more than reading it: a
# crafted file must not cost more than it weighs (a push hook scans it). So:
# - every pattern starts with a literal; a pattern whose literal the text lacks (a substring test,
#   much faster than the regex engine's own search) is not run at all;
#   a leading `\b` is checked after the literal by a lookbehind (`glpat-(?<=\bglpat-)`), since a
#   pattern that starts with `\b` is tried at every position of the text;
# - the case-insensitive ones run over the lower-cased text (a literal is no fast prefix under (?i));
# - an unbounded run is possessive (`++`, `{n,}+`: never backtracked into), and no pattern asks for
#   something after an unbounded run that a later start inside the same run would ask again (each
#   failed start would rescan the run): a token runs to the end of its run, not to a `\b` found by
#   backtracking; the JWT, whose run is followed by `.eyJ`, starts only where its run starts; an
#   assigned secret's digit is looked for in the matched value, not by a lookahead from each start;
# - a URL's password is found from its `://`; the scheme before it (at most 32 characters) is
#   checked afterwards, within those 32 characters.
_PATTERNS: tuple[tuple[str, str, re.Pattern[str], bool], ...] = (
    ("private-key", "-----BEGIN ", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"), False),
    *(
        ("aws-access-key", word, re.compile(rf"{word}(?<=\b{word})[0-9A-Z]{{16}}\b"), False)
        for word in ("AKIA", "ASIA", "ABIA", "ACCA")
    ),
    (
        "aws-secret-key",
        "aws",
        re.compile(r"aws_?secret_?access_?key\s*+[:=]\s*+['\"]?[a-z0-9/+=]{40}\b"),
        True,
    ),
    ("github-token", "gh", re.compile(r"gh(?<=\bgh)[pousr]_[A-Za-z0-9]{36,255}\b"), False),
    ("github-token", "github_pat_", re.compile(r"github_pat_(?<=\bgithub_pat_)[A-Za-z0-9_]{22,255}\b"), False),
    ("gitlab-token", "glpat-", re.compile(r"glpat-(?<=\bglpat-)[A-Za-z0-9_-]{20,}+"), False),
    ("slack-token", "xox", re.compile(r"xox(?<=\bxox)[abposr]-[A-Za-z0-9-]{10,}+"), False),
    (
        "slack-webhook",
        "https://hooks.slack.com/services/",
        re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/]{20,}+"),
        False,
    ),
    ("google-api-key", "AIza", re.compile(r"AIza(?<=\bAIza)[0-9A-Za-z_-]{35}\b"), False),
    ("stripe-key", "sk_", re.compile(r"sk_(?<=\bsk_)(?:live|test)_[0-9A-Za-z]{16,}+"), False),
    ("stripe-key", "rk_", re.compile(r"rk_(?<=\brk_)(?:live|test)_[0-9A-Za-z]{16,}+"), False),
    ("openai-key", "sk-", re.compile(r"sk-(?<=\bsk-)(?:proj-|svcacct-|ant-)?[A-Za-z0-9_-]{32,}+"), False),
    ("npm-token", "npm_", re.compile(r"npm_(?<=\bnpm_)[A-Za-z0-9]{36}\b"), False),
    (
        "jwt",
        "eyJ",
        re.compile(r"eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]{8,}+\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+"),
        False,
    ),
    ("password-in-url", "://", re.compile(r"://[^\s:/@]++:[^\s@/]++@[^\s/]"), False),
    *(
        (
            "assigned-secret",
            word,
            re.compile(
                rf"{word}(?<=\b{word}){rest}\s*+[:=]\s*+['\"]?(?=[a-z0-9/+_.-]{{12}})(?P<value>[^\s'\"]{{12,}}+)"
            ),
            True,
        )
        for word, rest in (
            ("passw", "(?:or)?d"),
            ("secret", ""),
            ("api", "[_-]?key"),
            ("access", "[_-]?token"),
            ("auth", "[_-]?token"),
            ("client", "[_-]?secret"),
        )
    ),
)
_HAS_DIGIT = re.compile(r"\d")
_SCHEME = re.compile(r"\b[a-z][a-z0-9+.-]{0,31}+\Z")
#: findings kept per file: past these the file is refused all the same, and a file of key-shaped
#: lines would otherwise cost a finding (and an object) per line
MAX_FINDINGS = 100


_LABELS = {
    "aws-access-key": "AWS access key",
    "aws-secret-key": "AWS secret key",
    "github-token": "GitHub token",
    "gitlab-token": "GitLab token",
    "slack-token": "Slack token",
    "slack-webhook": "Slack webhook URL",
    "google-api-key": "Google API key",
    "stripe-key": "Stripe key",
    "openai-key": "API secret key",
    "npm-token": "npm token",
    "jwt": "JSON web token",
    "password-in-url": "password in a URL",
    "assigned-secret": "password or secret assignment",
}


class SecretFinding:
    """A secret-looking span: what kind it looks like and the 1-based line it is on.

    A plain value class, not a dataclass: pre-commit's fast path scans log.md with this module
    before anything else is loaded, and importing dataclasses (with inspect) would be a large
    part of that path's cost (BENCHMARKS.md, "Client hooks": `git commit` adding one record).
    """

    __slots__ = ("kind", "line")

    def __init__(self, kind: str, line: int) -> None:
        self.kind = kind
        self.line = line

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SecretFinding) and (self.kind, self.line) == (other.kind, other.line)

    def __hash__(self) -> int:
        return hash((self.kind, self.line))

    def __repr__(self) -> str:
        return f"SecretFinding(kind={self.kind!r}, line={self.line!r})"

    @property
    def looks_like(self) -> str:
        """`looks like an AWS access key`: the kind in words, with its article."""
        label = _LABELS.get(self.kind, self.kind.replace("-", " "))
        article = "an" if label[0].lower() in "aeiou" else "a"
        return f"looks like {article} {label}"

    def describe(self) -> str:
        return f"line {self.line}: {self.looks_like}"


#: every character of every literal; one `in` test of a single character is a memchr, many
#: times faster than a substring test, so a literal with a character the text lacks costs nothing
_LITERAL_CHARS = frozenset("".join(literal for _, literal, _, _ in _PATTERNS))


def _absent_chars(text: str) -> set[str]:
    """The literals' characters that `text` lacks (in either case, for the case-insensitive ones)."""
    if not text.isascii():
        return set()  # lower-casing can make ASCII letters of other characters (U+212A KELVIN SIGN)
    return {c for c in _LITERAL_CHARS if c not in text and (not c.isalpha() or c.swapcase() not in text)}


def scan(text: str) -> list[SecretFinding]:
    """The first MAX_FINDINGS secret-looking spans in `text`, in line order (one finding per kind and line)."""
    lowered: str | None = None
    absent = _absent_chars(text)
    findings: set[SecretFinding] = set()
    for kind, literal, pattern, folded in _PATTERNS:
        if not absent.isdisjoint(literal):
            continue  # a character of the literal is nowhere in the text
        if folded and lowered is None:
            lowered = text.lower()  # the same newlines as text: line numbers are counted in it
        subject = lowered if folded and lowered is not None else text
        if literal not in subject:
            continue
        # Line numbers by one running count from the previous match: counting from the start of
        # the text for each match would cost (matches x text).
        line, offset, lines = 1, 0, 0
        for match in pattern.finditer(subject):
            start = match.start()
            value = match.groupdict().get("value")
            if value is not None and not _HAS_DIGIT.search(value):
                continue
            if kind == "password-in-url" and not _SCHEME.search(subject, max(0, start - 32), start):
                continue
            line += subject.count("\n", offset, start)
            offset = start
            found = SecretFinding(kind, line)
            if found not in findings:
                findings.add(found)
                lines += 1
                if lines >= MAX_FINDINGS:
                    break  # this kind's later lines cannot be among the first MAX_FINDINGS findings
    return sorted(findings, key=lambda f: (f.line, f.kind))[:MAX_FINDINGS]


def field_at(text: str, line: int) -> str:
    """The frontmatter key whose value holds `line` of a memory file's `text`, or `body`."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return "body"
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        end = len(lines)
    if line - 1 >= end:
        return "body"
    for index in range(min(line - 1, end - 1), 0, -1):
        match = _KEY.match(lines[index])
        if match:
            return match.group(1)
    return "frontmatter"


_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)\s*:")
