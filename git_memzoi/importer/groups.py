"""What a reviewer should see first in a plan (pure): near-duplicates across files, likely contradictions.

Near-duplicates: two planned items of different files whose words mostly agree (the same rule
copied into CLAUDE.md and AGENTS.md, reworded a little). Likely contradictions: two standing items
(whole-repository, always given) of different files on the same subject with opposite or differing
instructions: "never X" beside "always X", or two branch policies ("never push to `develop`" and
"never push to `main`"; "PRs from `rebuild`" and "PRs from `feature/*`").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from git_memzoi.importer.plan import Entry

#: Two bodies whose word sets share this much (Jaccard) are near-duplicates.
NEAR = 0.6
#: ... or when this much of the smaller one's words are in the larger (a section copied into a rule file).
HELD = 0.85
#: Items with fewer distinct words are too short to compare.
MIN_WORDS = 15
#: At most this many groups of each kind are shown (the first in plan order).
MAX_GROUPS = 50

_WORD = re.compile(r"[a-z0-9][a-z0-9_./-]{2,}")
_NEGATIVE = r"(?:never|don'?t|do not|must not|mustn'?t|should not|shouldn'?t|avoid|no)"
_VERBS = r"(?:push|commit|merge|rebase|force-push|deploy|release|publish|use|run|install|edit|modify|delete)"
_RULE = re.compile(
    rf"\b(?:(?P<neg>{_NEGATIVE})\s+(?:directly\s+)?|(?:always|must|should|only)\s+)(?P<verb>{_VERBS})\b"
    r"(?:\s+(?:directly\s+)?(?:to|into|on|from|with|the)?\s*)?(?P<object>`[^`]{1,60}`|[\w./*@-]{2,60})",
    re.I,
)
_BRANCH = re.compile(
    r"\b(?:PRs?|pull requests?)\s+(?:from|against|to|into|target(?:ing)?)\s+(?P<object>`[^`]{1,60}`|[\w./*-]{2,60})",
    re.I,
)
_BRANCH_VERBS = ("push", "merge", "force-push", "pr")


@dataclass(frozen=True)
class Group:
    """Items a reviewer should look at together: their plan lines and why."""

    kind: str  # near-duplicate | contradiction
    wheres: tuple[str, ...]
    why: str

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "entries": list(self.wheres), "why": self.why}


def groups(entries: list[Entry]) -> list[Group]:
    """The near-duplicate and likely-contradiction groups among the planned items of `entries`."""
    planned = [e for e in entries if e.item is not None and e.action in ("create", "supersede", "unchanged")]
    return near_duplicates(planned) + contradictions([e for e in planned if _standing(e)])


def _file(entry: Entry) -> str:
    return entry.where.rsplit(":", 1)[0]


def _words(entry: Entry) -> frozenset[str]:
    assert entry.item is not None
    return frozenset(_WORD.findall(entry.item.body.lower()))


def near_duplicates(entries: list[Entry]) -> list[Group]:
    """Pairs of items of different files whose word sets overlap by NEAR or more (each item in one group)."""
    words = [(e, _words(e)) for e in entries]
    words = [(e, w) for e, w in words if len(w) >= MIN_WORDS]
    out: list[Group] = []
    for index, (entry, mine) in enumerate(words):
        for other, theirs in words[index + 1 :]:
            if _file(other) == _file(entry):
                continue
            common = len(mine & theirs)
            share, held = common / len(mine | theirs), common / min(len(mine), len(theirs))
            if share >= NEAR:
                why = f"{share:.0%} of their words agree"
            elif held >= HELD:
                why = f"{held:.0%} of the shorter one's words are in the other"
            else:
                continue
            out.append(Group("near-duplicate", (entry.where, other.where), why))
            if len(out) >= MAX_GROUPS:
                return out
    return out


def _standing(entry: Entry) -> bool:
    """Given at every session start: whole-repository, and no glob, description or manual activation."""
    item = entry.item
    if item is None or entry.applies_to:
        return False
    activation = item.activation
    if "alwaysApply" in activation:
        return activation["alwaysApply"].lower() == "true"
    return not (activation.get("globs") or activation.get("paths") or activation.get("applyTo"))


def _clean(text: str) -> str:
    return text.strip("`'\".,;:").lower()


def rules(text: str) -> list[tuple[str, bool, str]]:
    """(verb, negative, object) of each imperative in `text`: `never push to develop` is (push, True, develop)."""
    found = [
        (m.group("verb").lower(), m.group("neg") is not None, _clean(m.group("object"))) for m in _RULE.finditer(text)
    ]
    found += [("pr", False, _clean(m.group("object"))) for m in _BRANCH.finditer(text)]
    return [(verb, neg, obj) for verb, neg, obj in found if obj]


def contradictions(entries: list[Entry]) -> list[Group]:
    """Pairs of standing items of different files that say opposite things of one subject."""
    said = []
    for entry in entries:
        assert entry.item is not None
        said.append((entry, rules(entry.item.body)))
    out: list[Group] = []
    seen: set[tuple[str, str]] = set()
    for index, (entry, mine) in enumerate(said):
        for other, theirs in said[index + 1 :]:
            if _file(other) == _file(entry) or (entry.where, other.where) in seen:
                continue
            why = _opposed(mine, theirs)
            if why is not None:
                seen.add((entry.where, other.where))
                out.append(Group("contradiction", (entry.where, other.where), why))
            if len(out) >= MAX_GROUPS:
                return out
    return out


def _opposed(mine: list[tuple[str, bool, str]], theirs: list[tuple[str, bool, str]]) -> str | None:
    """Why two lists of rules look opposed, or None."""
    for verb, neg, obj in mine:
        for their_verb, their_neg, their_obj in theirs:
            if verb != their_verb:
                continue
            if obj == their_obj and neg != their_neg:
                return f"{_say(verb, neg, obj)} / {_say(verb, their_neg, obj)}"
            if verb in _BRANCH_VERBS and neg == their_neg and obj != their_obj:
                return f"{_say(verb, neg, obj)} / {_say(verb, their_neg, their_obj)}"
    return None


def _say(verb: str, negative: bool, obj: str) -> str:
    if verb == "pr":
        return f"PRs from/to `{obj}`"
    return f"{'never ' if negative else ''}{verb} `{obj}`"
