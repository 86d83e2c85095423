"""Find secret-looking content (private keys, cloud and API tokens, passwords in URLs).

Every field of a memory file is scanned, frontmatter and body alike: by `propose` (refuse
unless the proposal declares a non-repo-safe sensitivity), by every lifecycle step before it
writes a file under .memzoi/, by `validate` and by the hooks (the same scan: profile.tree).
Findings name a kind and a line, never the secret itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# Scanning costs time linear in the text, whatever the text, and little more than reading it: a
# crafted file must not cost more than it weighs (a push hook scans it). So:
# - every pattern starts with a literal, and is run only from a place its literal occurs (found by
#   a substring search, much faster than the regex engine's own; in a long window, a memchr from
#   one place of its rarest character to the next while that character is rare): a text without it
#   costs a search; a leading `\b` is checked after the literal by a lookbehind (`glpat-(?<=\bglpat-)`),
#   since a pattern that starts with `\b` is tried at every position of the text;
# - a pattern whose every match holds a second literal further on (`needs`: the JWT's `.eyJ`, the
#   URL's `@`) stops where that literal last occurs: no start after it can match (looked for only
#   once the pattern's own literal is found);
# - the case-insensitive ones run over the lower-cased text (a literal is no fast prefix under (?i));
# - an unbounded run is possessive (`++`, `{n,}+`: never backtracked into), and no pattern asks for
#   something after an unbounded run that a later start inside the same run would ask again (each
#   failed start would rescan the run): a token runs to the end of its run, not to a `\b` found by
#   backtracking; the JWT, whose run is followed by `.eyJ`, starts only where its run starts; an
#   assigned secret's value is the run after its `=` (its end found by memchr when it is long, a
#   character class being slow per character) and its digit is looked for in it afterwards;
# - a URL's password is found from its `://`; the scheme before it (at most 32 characters) is
#   checked afterwards, within those 32 characters;
# - the text is scanned in windows, each pattern over one window before any over the next, so that
#   the scan stops once MAX_FINDINGS findings are known to come before all that is left.
#: (kind, literal, pattern, case-insensitive, literals one of which every match holds after its start);
#: a pattern is compiled when its literal is first found where a match may start (`_compiled`): most
#: texts hold few of the literals, and compiling them all would cost a start-up what its scan costs
_PATTERNS: tuple[tuple[str, str, str, bool, tuple[str, ...]], ...] = (
    (
        "private-key",
        "-----BEGIN ",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
        False,
        ("PRIVATE KEY",),
    ),
    *(
        ("aws-access-key", word, rf"{word}(?<=\b{word})[0-9A-Z]{{16}}\b", False, ())
        for word in ("AKIA", "ASIA", "ABIA", "ACCA")
    ),
    (
        "aws-secret-key",
        "aws",
        r"aws_?secret_?access_?key\s*+[:=]\s*+['\"]?[a-z0-9/+=]{40}\b",
        True,
        (":", "="),
    ),
    ("github-token", "gh", r"gh(?<=\bgh)[pousr]_[A-Za-z0-9]{36,255}\b", False, ()),
    ("github-token", "github_pat_", r"github_pat_(?<=\bgithub_pat_)[A-Za-z0-9_]{22,255}\b", False, ()),
    ("gitlab-token", "glpat-", r"glpat-(?<=\bglpat-)[A-Za-z0-9_-]{20,}+", False, ()),
    ("slack-token", "xox", r"xox(?<=\bxox)[abposr]-[A-Za-z0-9-]{10,}+", False, ()),
    (
        "slack-webhook",
        "https://hooks.slack.com/services/",
        r"https://hooks\.slack\.com/services/[A-Za-z0-9/]{20,}+",
        False,
        (),
    ),
    ("google-api-key", "AIza", r"AIza(?<=\bAIza)[0-9A-Za-z_-]{35}\b", False, ()),
    ("stripe-key", "sk_", r"sk_(?<=\bsk_)(?:live|test)_[0-9A-Za-z]{16,}+", False, ()),
    ("stripe-key", "rk_", r"rk_(?<=\brk_)(?:live|test)_[0-9A-Za-z]{16,}+", False, ()),
    ("openai-key", "sk-", r"sk-(?<=\bsk-)(?:proj-|svcacct-|ant-)?[A-Za-z0-9_-]{32,}+", False, ()),
    ("npm-token", "npm_", r"npm_(?<=\bnpm_)[A-Za-z0-9]{36}\b", False, ()),
    (
        "jwt",
        "eyJ",
        r"eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]{8,}+\.eyJ[A-Za-z0-9_-]{8,}+\.[A-Za-z0-9_-]{8,}+",
        False,
        (".eyJ",),
    ),
    ("password-in-url", "://", r"://[^\s:/@]++:[^\s@/]++@[^\s/]", False, ("@",)),
    *(
        (
            # the value, `[^\s'"]{12,}+` after the lookahead, is found by _value_end
            "assigned-secret",
            word,
            rf"{word}(?<=\b{word}){rest}\s*+[:=]\s*+['\"]?(?=[a-z0-9/+_.-]{{12}})",
            True,
            (":", "="),
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
_compiled: list[re.Pattern[str] | None] = [None] * len(_PATTERNS)


def _pattern(index: int) -> re.Pattern[str]:
    """Pattern `index` of _PATTERNS, compiled on first use."""
    found = _compiled[index]
    if found is None:
        found = _compiled[index] = re.compile(_PATTERNS[index][2])
    return found


_HAS_DIGIT = re.compile(r"\d")
_VALUE = re.compile(r"[^\s'\"]*+")
#: what ends an assigned secret's value in an ASCII text: the characters `\s` matches, and quotes
_VALUE_ENDS = "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f '\""
_DIGITS = "0123456789"
#: a value or span longer than this is searched by memchr, not by a character class
_LONG = 256
_SCHEME = re.compile(r"\b[a-z][a-z0-9+.-]{0,31}+\Z")
#: a URL's password that stands for one in documentation, not one: dots, stars or x's (`...`, `***`, `xxxx`), an
#: ellipsis, a `<…>`, `{…}` or `[…]` slot, a shell or template variable (`$DB_PASS`, `${TOKEN}`, `%s`, `%(pw)s`)
_PLACEHOLDER = re.compile(
    r"[.*…]++|[xX]{3,}+|<[^<>]{0,64}+>|\{\{?[^{}]{0,64}+\}\}?|\[[^\[\]]{0,64}+\]|\$\{?[A-Za-z_][A-Za-z0-9_]{0,63}+\}?|%(?:\([a-z_]{1,32}\))?s"
)
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


#: characters from the most to the least common in memory files and code: in a long window a
#: literal is looked for only when each of its characters is there, its rarest tested first
_COMMON = " \netaoinsrhldcumfpgwybvkxjqz-:._/=TAISCEMPRNDOLBGHFUWYKVJXQZ0123456789"
_RAREST_FIRST = tuple(
    tuple(sorted(set(literal), key=lambda c: -(_COMMON.find(c) % (len(_COMMON) + 1)))) for _, literal, *_ in _PATTERNS
)
#: how far past a window a literal that starts inside it can reach
_PAD = max(len(literal) for _, literal, *_ in _PATTERNS) - 1
#: the first window is this long, each next one 4 times longer, to the largest
_FIRST_WINDOW = 1 << 12
_LARGEST_WINDOW = 1 << 20
#: a window this short is searched for each literal at once (its characters are not tested first)
_SMALL_WINDOW = 1 << 14


def _value_end(subject: str, start: int, ascii_text: bool) -> int:
    """Where the run of characters other than whitespace and quotes from `start` ends."""
    end = _VALUE.match(subject, start, start + _LONG).end()  # type: ignore[union-attr]  # `*+` always matches
    if end < start + _LONG or end >= len(subject):
        return end
    if not ascii_text:
        return _VALUE.match(subject, end).end()  # type: ignore[union-attr]
    size = _LONG
    while end < len(subject):  # a long run: each terminator by memchr, in growing chunks
        stop = end + size
        found = [i for i in (subject.find(c, end, stop) for c in _VALUE_ENDS) if i >= 0]
        if found:
            return min(found)
        end, size = min(stop, len(subject)), size * 4
    return end


class _Scan:
    """One pass over a text in windows: each pattern's matches are found as `finditer` would find them.

    A pattern's next match is searched from the first place its literal occurs in the current
    window (a literal is every match's start), or not at all when the window lacks the literal;
    a search may run on past the window (the regex engine's own loop over the literal's places),
    and its match is then kept for a later window: each pattern reads each part of the text at
    most once. The case-insensitive patterns run over the lower-cased text, made only when one of
    their literals is found; `lower()` keeps every character one character but U+0130 (two), so
    offsets in both texts are the same unless that character is there (then one window only).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.ascii = text.isascii()
        self.lowered: str | None = None if self.ascii else text.lower()
        self.aligned = self.lowered is None or len(self.lowered) == len(text)
        count = len(_PATTERNS)
        self.pos = [0] * count
        self.ahead: list[tuple[re.Match[str], int] | None] = [None] * count
        #: patterns that may still match: in a text of one window, those whose literal is in it
        self.live = [True] * count if len(text) > _FIRST_WINDOW else self.present_literals()
        self.added = [0] * count  # findings each pattern added: past MAX_FINDINGS it is no longer run
        self.last_needed: list[int | None] = [None] * count
        self.findings: set[SecretFinding] = set()
        #: (line, offset) of the running line count in the text, and in the lower-cased text when not aligned
        self.counts = {False: [1, 0], True: [1, 0]}
        self.seen: dict[tuple[str, bool], bool] = {}
        self.window_lowered: str | None = None

    def present_literals(self) -> list[bool]:
        """For a short text: whether each literal is in it (a substring test each costs less than per character)."""
        text, lowered = self.text, self.subject(True)  # lower-cased at once, whatever it holds: it is short
        return [literal in (lowered if folded else text) for _, literal, _, folded, _ in _PATTERNS]

    def windows(self) -> Iterator[tuple[int, int]]:
        if not self.aligned:
            yield 0, max(len(self.text), len(self.lowered or ""))
            return
        start, size = 0, _FIRST_WINDOW
        while start < len(self.text):
            yield start, start + size
            start, size = start + size, min(size * 4, _LARGEST_WINDOW)

    def subject(self, folded: bool) -> str:
        if not folded:
            return self.text
        if self.lowered is None:
            self.lowered = self.text.lower()
        return self.lowered

    def run(self) -> list[SecretFinding]:
        for start, end in self.windows():
            self.seen.clear()
            self.window_lowered = None
            hits: list[tuple[int, int, re.Match[str], int]] = []
            for index, live in enumerate(self.live):
                if live:
                    self.collect(index, start, end, hits)
            hits.sort(key=lambda hit: hit[0])
            for _, index, match, stop in hits:
                self.take(index, match, stop)
            if self.settled(end):
                break
        return sorted(self.findings, key=lambda f: (f.line, f.kind))[:MAX_FINDINGS]

    def collect(self, index: int, start: int, end: int, hits: list[tuple[int, int, re.Match[str], int]]) -> None:
        """Add the matches of pattern `index` that start in [start, end) to `hits`, with where each ends."""
        ahead, self.ahead[index] = self.ahead[index], None
        while True:
            if ahead is None:
                ahead = self.next_match(index, start, end)
                if ahead is None:
                    return
            match, stop = ahead
            if match.start() >= end:
                self.ahead[index] = ahead
                return
            hits.append((match.start(), index, match, stop))
            self.pos[index] = stop
            ahead = None

    def next_match(self, index: int, start: int, end: int) -> tuple[re.Match[str], int] | None:
        """Pattern `index`'s next match (and its end) from where its literal next occurs in the window, or None."""
        kind, _, _, folded, _ = _PATTERNS[index]
        # the literal first: where it does not occur, the needed literal is never looked for (a
        # search for it is a pass over the whole text, the cost of a text that holds neither)
        found = self.find(index, max(start, self.pos[index]), start, end)
        if found < 0:
            return None
        match = None if found > self.needed(index) else _pattern(index).search(self.subject(folded), found)
        if match is None:
            self.live[index] = False
            return None
        if kind == "assigned-secret":
            return match, _value_end(self.subject(True), match.end(), self.ascii)
        return match, match.end()

    def needed(self, index: int) -> int:
        """Where the last literal every match of pattern `index` holds starts (a match starts before it)."""
        last = self.last_needed[index]
        if last is None:
            _, _, _, folded, needs = _PATTERNS[index]
            subject = self.subject(folded)
            last = max((subject.rfind(word) for word in needs), default=len(subject))
            self.last_needed[index] = last
        return last

    def find(self, index: int, at: int, start: int, end: int) -> int:
        """Where pattern `index`'s literal first occurs from `at`, starting before `end`; -1 if nowhere."""
        _, literal, _, folded, _ = _PATTERNS[index]
        if end - start > _SMALL_WINDOW:  # a memchr per character is much cheaper than a substring search
            for char in _RAREST_FIRST[index]:
                if not self.has(char, folded, start, end):
                    return -1
        if folded and self.lowered is None:  # no lower-cased text yet: look in a lower-cased copy of the window
            if self.window_lowered is None:
                self.window_lowered = self.text[start : end + _PAD].lower()
            found = self.window_lowered.find(literal, at - start, end - start + len(literal) - 1)
            return found if found < 0 else start + found
        if not folded and end - start > _SMALL_WINDOW:
            return _find_by_rarest(self.text, literal, _RAREST_FIRST[index][0], at, end, (end - start) >> 11)
        return self.subject(folded).find(literal, at, end + len(literal) - 1)

    def has(self, char: str, folded: bool, start: int, end: int) -> bool:
        """Whether `char` occurs in the window (in either case in the text, for a case-insensitive literal)."""
        key = (char, folded)
        known = self.seen.get(key)
        if known is None:
            if folded and not self.ascii:
                known = self.subject(True).find(char, start, end + _PAD) >= 0
            else:
                known = self.text.find(char, start, end + _PAD) >= 0
                if not known and folded:
                    known = self.text.find(char.upper(), start, end + _PAD) >= 0
            self.seen[key] = known
        return known

    def take(self, index: int, match: re.Match[str], stop: int) -> None:
        """Record `match` of pattern `index` as a finding unless it is a near miss, or the pattern has enough."""
        kind, _, _, folded, _ = _PATTERNS[index]
        if self.added[index] >= MAX_FINDINGS or not self.real(kind, folded, match, stop):
            return
        found = SecretFinding(kind, self.line(match.start(), folded and not self.aligned))
        if found not in self.findings:
            self.findings.add(found)
            self.added[index] += 1
            if self.added[index] >= MAX_FINDINGS:
                self.live[index] = False  # its later lines cannot be among the first MAX_FINDINGS findings

    def real(self, kind: str, folded: bool, match: re.Match[str], stop: int) -> bool:
        subject = self.subject(folded)
        if kind == "assigned-secret":
            begin = match.end()
            if self.ascii and stop - begin > _LONG:  # a long value: a digit by memchr, not a \d per character
                return any(subject.find(digit, begin, stop) >= 0 for digit in _DIGITS)
            return _HAS_DIGIT.search(subject, begin, stop) is not None
        if kind == "password-in-url":
            start = match.start()
            if _SCHEME.search(subject, max(0, start - 32), start) is None:
                return False
            password = match.group().rpartition("@")[0].rpartition(":")[2]
            return _PLACEHOLDER.fullmatch(password) is None
        return True

    def line(self, offset: int, lowered: bool) -> int:
        """The 1-based line of `offset` (no smaller than the last one asked for) in the text or the lower-cased one."""
        count = self.counts[lowered]
        count[0] += self.subject(lowered).count("\n", count[1], offset)
        count[1] = offset
        return count[0]

    def settled(self, end: int) -> bool:
        """Whether MAX_FINDINGS findings come before anything at or after `end` (or no pattern is left)."""
        if not any(self.live):
            return True
        if len(self.findings) < MAX_FINDINGS or not self.aligned:
            return False
        here = self.line(min(end, len(self.text)), False)
        return sum(1 for f in self.findings if f.line < here) >= MAX_FINDINGS


def _find_by_rarest(text: str, literal: str, rare: str, at: int, end: int, budget: int) -> int:
    """`text.find(literal, at, end + len(literal) - 1)`, looked for where its rarest character occurs.

    A substring search reads every character; when that character is rare, a memchr from one
    place of it to the next reads almost none. After `budget` places that start no `literal`,
    the character is common here and the substring search takes over from the last of them.
    """
    offset = literal.index(rare)
    stop = end + len(literal) - 1
    place = text.find(rare, at + offset, stop - len(literal) + offset + 1)
    while place >= 0 and budget > 0:
        if text.startswith(literal, place - offset):
            return place - offset
        budget -= 1
        place = text.find(rare, place + 1, stop - len(literal) + offset + 1)
    return -1 if place < 0 else text.find(literal, place - offset, stop)


def scan(text: str) -> list[SecretFinding]:
    """The first MAX_FINDINGS secret-looking spans in `text`, in line order (one finding per kind and line)."""
    return _Scan(text).run()


#: what `scan_each` puts between two texts: a line no match can run into or out of (a match that
#: spans lines needs `:` or `=` after its whitespace, a value or key character after that; NUL is neither)
_BETWEEN = "\n\x00\n"


def scan_each(texts: list[str]) -> list[list[SecretFinding]]:
    """`[scan(text) for text in texts]`, found by one scan of them all while they hold fewer than MAX_FINDINGS.

    A scan's cost is mostly per pattern and window: twenty files of a few kilobytes cost twenty
    times what one of their length does. Past MAX_FINDINGS in all, each text is scanned alone,
    so that no text's findings are cut short by another's.
    """
    if len(texts) < 2:
        return [scan(text) for text in texts]
    found = scan(_BETWEEN.join(texts))
    if len(found) >= MAX_FINDINGS:
        return [scan(text) for text in texts]
    out: list[list[SecretFinding]] = [[] for _ in texts]
    if not found:
        return out
    import bisect  # only here: pre-commit's fast path loads this module and nothing else

    starts: list[int] = []  # the joined text's line at which each text starts
    line = 1
    for text in texts:
        starts.append(line)
        line += text.count("\n") + _BETWEEN.count("\n")
    for finding in found:
        index = bisect.bisect_right(starts, finding.line) - 1
        out[index].append(SecretFinding(finding.kind, finding.line - starts[index] + 1))
    return out


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
