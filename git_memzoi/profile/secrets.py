"""Find secret-looking content (private keys, cloud and API tokens, passwords in URLs).

Every field of a memory file is scanned, frontmatter and body alike: by `propose` (refuse
unless the proposal declares a non-repo-safe sensitivity), by every lifecycle step before it
writes a file under .memzoi/, by `validate` and by the hooks (the same scan: profile.tree).
Findings name a kind and a line, never the secret itself.
"""

from __future__ import annotations

import re

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("private-key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b")),
    ("aws-secret-key", re.compile(r"(?i)aws_?secret_?access_?key\s*[:=]\s*['\"]?[A-Za-z0-9/+=]{40}\b")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b")),
    ("gitlab-token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}\b")),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b")),
    ("slack-webhook", re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/]{20,}")),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("stripe-key", re.compile(r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}\b")),
    ("openai-key", re.compile(r"\bsk-(?:proj-|svcacct-|ant-)?[A-Za-z0-9_-]{32,}\b")),
    ("npm-token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b")),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\b")),
    ("password-in-url", re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s:/@]+:[^\s@/]+@[^\s/]+")),
    (
        "assigned-secret",
        re.compile(
            r"(?i)\b(?:password|passwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret)"
            r"\s*[:=]\s*['\"]?(?=[A-Za-z0-9/+_.-]{12,})(?=[^\s'\"]*\d)[^\s'\"]{12,}"
        ),
    ),
)


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


def scan(text: str) -> list[SecretFinding]:
    """Every secret-looking span in `text`, in line order (one finding per kind and line)."""
    findings: set[SecretFinding] = set()
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(text):
            findings.add(SecretFinding(kind, text.count("\n", 0, match.start()) + 1))
    return sorted(findings, key=lambda f: (f.line, f.kind))


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
