"""Property test: the one-pass secret scan finds what one `finditer` per pattern over the whole text finds.

The oracle below is the scan as it was before the text was read in windows: each pattern run
by `finditer` over the whole text (the case-insensitive ones over the lower-cased text), one
pattern after another. It is slow on crafted input, and plainly what the patterns say.
"""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_memzoi.profile import secrets

# ---- the oracle: profile/secrets.py as it was, one finditer per pattern ----
_ORACLE_PATTERNS: tuple[tuple[str, str, re.Pattern[str], bool], ...] = (
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
#: every character of every literal; one `in` test of a single character is a memchr, many
#: times faster than a substring test, so a literal with a character the text lacks costs nothing
_LITERAL_CHARS = frozenset("".join(literal for _, literal, _, _ in _ORACLE_PATTERNS))


def _absent_chars(text: str) -> set[str]:
    """The literals' characters that `text` lacks (in either case, for the case-insensitive ones)."""
    if not text.isascii():
        return set()  # lower-casing can make ASCII letters of other characters (U+212A KELVIN SIGN)
    return {c for c in _LITERAL_CHARS if c not in text and (not c.isalpha() or c.swapcase() not in text)}


def oracle(text: str) -> list[secrets.SecretFinding]:
    """The scan as it was: one finditer per pattern over the whole text."""
    lowered: str | None = None
    absent = _absent_chars(text)
    findings: set[secrets.SecretFinding] = set()
    for kind, literal, pattern, folded in _ORACLE_PATTERNS:
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
            password = match.group().rpartition("@")[0].rpartition(":")[2]
            if kind == "password-in-url" and secrets._PLACEHOLDER.fullmatch(password):
                continue  # a documentation placeholder (`...`, `<token>`, `${PW}`), the scan's own rule
            line += subject.count("\n", offset, start)
            offset = start
            found = secrets.SecretFinding(kind, line)
            if found not in findings:
                findings.add(found)
                lines += 1
                if lines >= secrets.MAX_FINDINGS:
                    break  # this kind's later lines cannot be among the first secrets.MAX_FINDINGS findings
    return sorted(findings, key=lambda f: (f.line, f.kind))[: secrets.MAX_FINDINGS]


#: pieces of texts: key shapes, their near misses, what ends a token or a line, and characters
#: that lower-casing changes (U+0130 becomes two characters; U+212A becomes an ASCII `k`)
PIECES = [
    "AKIAABCDEFGHIJKLMNOP",
    "ASIA1234567890ABCDEF",
    "AKIA",
    "aws_secret_access_key = " + "a" * 40,
    "AWS_SECRET_ACCESS_KEY=",
    "ghp_" + "a1" * 18,
    "github_pat_" + "A" * 22,
    "glpat-" + "x" * 20,
    "glpat-",
    "xoxb-1234567890-abc",
    "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXX",
    "AIza" + "B" * 35,
    "sk_live_" + "a" * 24,
    "rk_test_" + "b" * 20,
    "sk-" + "c" * 32,
    "sk-proj-",
    "npm_" + "d" * 36,
    "eyJ" + "a" * 10 + ".eyJ" + "b" * 10 + "." + "c" * 10,
    "eyJ-",
    "https://user:pa55@host",
    "ftp://a:b@c",
    "a://b:",
    "password=abc123def456ghi",
    "PASSWORD: 'abcdefghijkl1'",
    "secret=aaaaaaaaaaaa/",
    "Secret = 123456789012345",
    "api_key=abcdef1234567890",
    "auth-token: zzzzzzzzzzzz9",
    "client_secret=",
    "secret=" + "b" * 300 + "7",
    "secret=" + "b" * 600,
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----BEGIN A ",
    "PRIVATE KEY-----",
    "AKIAABCDEFGHIJKLMNOP\n" * 60,
    "\n",
    "\n" * 40,
    " ",
    "'",
    '"',
    "_",
    "-",
    ".",
    "/",
    "=",
    ":",
    "@",
    "a",
    "0",
    "x" * 300,
    "\x1c",
    "\t",
    "\u00e9",
    "\u0130",
    "\u212a",
    "\u0663",
]

texts = st.builds(
    lambda parts, repeat: "".join(parts) * repeat,
    st.lists(st.sampled_from(PIECES), max_size=40),
    st.sampled_from([1, 1, 1, 2, 30, 300]),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_scan_finds_what_one_finditer_per_pattern_finds(text: str) -> None:
    assert secrets.scan(text) == oracle(text)


def test_findings_past_the_first_window_and_the_cap_are_the_oracles() -> None:
    # key-shaped lines past the cap, other kinds on lines the cap keeps and on lines it drops,
    # over many windows of a long text: the scan stops early and still returns the first findings
    text = (
        "x\n" * 5000 + ("AKIAABCDEFGHIJKLMNOP " + "ghp_" + "a1" * 18 + "\n") * 40 + "AKIAABCDEFGHIJKLMNOP\n" * 100_000
    )
    found = secrets.scan(text)
    assert found == oracle(text)
    assert len(found) == secrets.MAX_FINDINGS and secrets.SecretFinding("github-token", 5001) in found


def test_the_scan_does_not_stop_inside_the_line_a_window_ends_in() -> None:
    # 99 key-shaped lines, then a line whose key starts in the first window and whose assignment
    # (a kind that sorts first) starts in the next: the 100th finding is the assignment
    keys = "AKIAABCDEFGHIJKLMNOP\n" * 99
    pad = "x" * (secrets._FIRST_WINDOW - len(keys) - 30)
    text = keys + pad + "\nAKIAABCDEFGHIJKLMNOP " + " " * 40 + "secret=abcdefghijkl1\n" + "AKIAABCDEFGHIJKLMNOP\n" * 10
    found = secrets.scan(text)
    assert found == oracle(text)
    assert found[-1] == secrets.SecretFinding("assigned-secret", 101)


def test_a_needed_literal_right_after_the_start_is_enough() -> None:
    # each match's second literal as close to its start as a match allows
    for text in (
        "https://a:b@c",
        "ftp://u:p@h/x",
        "secret:abcdefghijkl1",
        "-----BEGIN PRIVATE KEY-----",
        "eyJaaaaaaaa.eyJbbbbbbbb.cccccccc",
    ):
        assert secrets.scan(text) == oracle(text) != []


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(texts, max_size=6))
def test_scan_each_finds_what_a_scan_of_each_text_finds(many: list[str]) -> None:
    # one scan of the texts joined: no match runs from one text into the next, lines are each text's own
    assert secrets.scan_each(many) == [oracle(text) for text in many]


def test_scan_each_keeps_each_texts_findings_past_the_cap_of_all() -> None:
    # the first text alone holds more than MAX_FINDINGS findings: the second's are still found
    keys = "AKIAABCDEFGHIJKLMNOP\n" * (secrets.MAX_FINDINGS + 5)
    tail = ["client_secret =", "abcdefghijkl1 ghp_" + "a1" * 18]
    found = secrets.scan_each([keys, "x\n" * 3 + "password=abc123def456ghi", *tail])
    assert [len(f) for f in found] == [secrets.MAX_FINDINGS, 1, 0, 1]
    assert found[1] == [secrets.SecretFinding("assigned-secret", 4)]
    assert found[3] == [secrets.SecretFinding("github-token", 1)]


def test_a_literal_found_by_its_rarest_character_common_or_not() -> None:
    # past the first windows a literal is looked for where its rarest character occurs: here that
    # character is rare, then so common that the substring search takes over, then next to near misses
    key = "AKIAABCDEFGHIJKLMNOP"
    for filler in ("x y\n", "K AKI AKIAx\n", "KKKK KKKK\n"):
        text = filler * 20_000 + key + "\n" + filler * 10 + " eyJ" + "a" * 10 + ".eyJ" + "b" * 10 + "." + "c" * 10
        found = secrets.scan(text)
        assert found == oracle(text)
        assert [f.kind for f in found] == ["aws-access-key", "jwt"]
