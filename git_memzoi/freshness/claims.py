"""Near-duplicates and likely contradictions among current records (pure: text in, groups out).

Both rules are meant to be read by a reviewer and to cost a reviewer little when wrong, so they
are narrow (docs/freshness.md, "maintenance"):

- **duplicate**: two records whose bodies' word sets agree by `NEAR` (Jaccard) or more, or are the
  same set (a short rule copied whole). Candidates come from the rarest words of each record
  (prefix filtering): a pair that can reach `NEAR` must share one of them, so no pair of bodies is
  compared unless it can qualify (no O(n²) over bodies).
- **contradiction**: two records whose scopes overlap (one covers the whole repository, or one's
  folder holds the other's) and that give opposite instructions about one subject: the same verb
  and object, once required ("always use `X`", "use `X`" opening a sentence or a bullet) and once
  forbidden ("never use `X`", "don't use `X`", "avoid `X`"); or two different tools of one kind
  that cannot both be the project's choice (package managers: npm, pnpm, yarn, bun; Python project
  managers: poetry, uv, pipenv, pdm; JavaScript test runners: jest, vitest, mocha).
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import NamedTuple

#: Two bodies whose word sets share this much (Jaccard) are near-duplicates (as import's plan judges them).
NEAR = 0.6
#: Bodies with fewer distinct words are near-duplicates only when their word sets are equal.
MIN_WORDS = 8
#: ... and bodies with fewer than this are never compared.
MIN_EQUAL = 3

_WORD = re.compile(r"[a-z0-9][a-z0-9_./-]{2,}")

_NEG = r"never|don'?t|do\s+not|must\s+not|mustn'?t|should\s+not|shouldn'?t|no\s+longer"
_POS = r"always|must|should|only"
_VERBS = r"use|run|install|push|commit|merge|rebase|deploy|publish|call|import|edit|modify|delete"
_OBJECT = r"(?P<object>`[^`\n]{1,60}`|[\w./@+-]{2,60})"
_LEAD = r"(?:\s+(?:directly\s+)?(?:to|into|on|from|with|the)?\s*)?"
_MARKED = re.compile(rf"\b(?:(?P<neg>{_NEG})|{_POS})\s+(?:directly\s+)?(?P<verb>{_VERBS})\b{_LEAD}{_OBJECT}", re.I)
_AVOID = re.compile(rf"\bavoid\s+(?:using\s+)?{_OBJECT}", re.I)
_OPENING = r"(?:^|(?<=[.!?;:])\s+|^[ \t]*(?:[-*+]|\d+[.)])[ \t]+)"  # a sentence or a list item begins
_BARE = re.compile(rf"{_OPENING}(?P<verb>use|prefer)\s+{_OBJECT}", re.I | re.M)
_FILLER = frozenset({"a", "an", "it", "its", "this", "that", "these", "those", "them", "any", "all", "same", "your"})

#: Tools of one kind, one of which a project picks.
FAMILIES: dict[str, frozenset[str]] = {
    "package manager": frozenset({"npm", "pnpm", "yarn", "bun"}),
    "Python project manager": frozenset({"poetry", "uv", "pipenv", "pdm"}),
    "JavaScript test runner": frozenset({"jest", "vitest", "mocha"}),
}
_FAMILY_OF = {tool: family for family, tools in FAMILIES.items() for tool in tools}


class Memory(NamedTuple):
    """What the rules read of one current record."""

    record_id: str
    body: str
    applies_to: tuple[str, ...]
    timestamp: str


class Group(NamedTuple):
    """Records a reviewer should look at together, and why: `records` in the order the proposal reads them."""

    kind: str  # duplicate | contradiction
    records: tuple[str, ...]
    reason: str
    keep: tuple[str, ...]  # the records the proposal keeps (the others are retired)


# --- duplicates ------------------------------------------------------------------------------------------


def _words(body: str) -> frozenset[str]:
    words = (word.rstrip("./-") for word in _WORD.findall(body.lower()))
    return frozenset(word for word in words if len(word) >= 3)


def _prefix(words: Sequence[str], size: int) -> Sequence[str]:
    """The rarest words a set must share with any other set it agrees with by NEAR or more."""
    return words[: size - math.ceil(NEAR * size) + 1]


def _similar(mine: frozenset[str], theirs: frozenset[str]) -> float | None:
    """Their Jaccard share when it reaches NEAR, else None (both are MIN_WORDS or more)."""
    share = len(mine & theirs) / len(mine | theirs)
    return share if share >= NEAR else None


def _pairs(sets: Sequence[frozenset[str]]) -> list[tuple[int, int, float]]:
    """(i, j, share) linking every near-duplicate: records with the same word set are linked to the first of
    them (a dict, not a comparison); sets of MIN_WORDS or more are compared only with the sets they share one
    of their rarest words with (prefix filtering: a pair that agrees by NEAR must share one)."""
    first: dict[frozenset[str], int] = {}
    out: list[tuple[int, int, float]] = []
    distinct: list[int] = []
    for i, words in enumerate(sets):
        if len(words) < MIN_EQUAL:
            continue
        if words in first:
            out.append((i, first[words], 1.0))
        else:
            first[words] = i
            if len(words) >= MIN_WORDS:
                distinct.append(i)
    counts = Counter(word for i in distinct for word in sets[i])
    index: dict[str, list[int]] = defaultdict(list)
    for i in distinct:
        ordered = sorted(sets[i], key=lambda w: (counts[w], w))
        seen: set[int] = set()
        for word in _prefix(ordered, len(ordered)):
            for j in index[word]:
                share = None if j in seen else _similar(sets[i], sets[j])
                seen.add(j)
                if share is not None:
                    out.append((i, j, share))
            index[word].append(i)
    return out


def duplicates(memories: Sequence[Memory]) -> list[Group]:
    """Groups of near-duplicate records (connected by pairs that agree by NEAR or more)."""
    sets = [_words(m.body) for m in memories]
    parent = list(range(len(memories)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    pairs = _pairs(sets)
    for i, j, _ in pairs:
        parent[root(i)] = root(j)
    least: dict[int, float] = {}
    clusters: dict[int, list[int]] = defaultdict(list)
    for i, _, share in pairs:
        least[root(i)] = min(least.get(root(i), 1.0), share)
    for i in range(len(memories)):
        clusters[root(i)].append(i)
    out = []
    for head, members in clusters.items():
        if len(members) < 2:
            continue
        keep = max(members, key=lambda i: (len(sets[i]), _newer(memories[i])))
        kept = memories[keep].record_id
        others = sorted(memories[i].record_id for i in members if i != keep)
        share = least.get(head, 1.0)
        agree = "the same words" if share == 1.0 else f"{share:.0%} or more of their words agree"
        reason = f"{len(members)} records say the same thing ({agree}); {kept} says the most"
        out.append(Group("duplicate", (kept, *others), reason, (kept,)))
    return sorted(out, key=lambda g: g.records)


def _newer(memory: Memory) -> tuple[str, str]:
    return memory.timestamp, memory.record_id


# --- contradictions --------------------------------------------------------------------------------------


def _clean(text: str) -> str:
    return text.strip("`'\".,;:!?()").lower()


def instructions(body: str) -> set[tuple[str, bool, str]]:
    """(verb, forbidden, object) of each instruction in `body`: "never use `npm`" is (use, True, npm).

    Fenced code blocks are left out."""
    text = re.sub(r"^```.*?^```", "", body, flags=re.M | re.S)
    found = {(m["verb"].lower(), m["neg"] is not None, _clean(m["object"])) for m in _MARKED.finditer(text)}
    found |= {("use", True, _clean(m["object"])) for m in _AVOID.finditer(text)}
    bare = {("use", False, _clean(m["object"])) for m in _BARE.finditer(text)}
    found |= {claim for claim in bare if ("use", True, claim[2]) not in found}
    return {(verb, neg, obj) for verb, neg, obj in found if obj and obj not in _FILLER}


def _base(scope: str) -> str:
    parts = []
    for part in scope.strip("/").removeprefix("./").split("/"):
        if any(c in part for c in "*?[{"):
            break
        parts.append(part)
    return "/".join(parts)


def overlap(mine: Iterable[str], theirs: Iterable[str]) -> bool:
    """Whether two `applies_to` lists can govern one file: either is the whole repository, or one's folder
    holds the other's."""
    a, b = [_base(s) for s in mine], [_base(s) for s in theirs]
    if not a or not b or "" in a or "" in b:
        return True
    return any(x == y or x.startswith(y + "/") or y.startswith(x + "/") for x in a for y in b)


def _say(verb: str, forbidden: bool, obj: str) -> str:
    return f"{'never ' if forbidden else ''}{verb} `{obj}`"


def contradictions(memories: Sequence[Memory]) -> list[Group]:
    """Groups of records whose instructions oppose on one subject, their scopes overlapping."""
    sides: dict[tuple[str, str], dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for i, memory in enumerate(memories):
        for verb, forbidden, obj in instructions(memory.body):
            sides[(verb, obj)][_say(verb, forbidden, obj)].append(i)
            tool = obj.split()[0] if obj else obj
            if not forbidden and verb in ("use", "prefer") and tool in _FAMILY_OF:
                sides[("family", _FAMILY_OF[tool])][f"use `{tool}`"].append(i)
    out = []
    for (verb, subject), said in sides.items():
        if len(said) < 2:
            continue
        group = _opposed(memories, said)
        if group is None:
            continue
        records, keep, what = group
        where = f"{subject}: " if verb == "family" else ""
        out.append(Group("contradiction", records, where + what, keep))
    return sorted(set(out), key=lambda g: g.records)


_Opposed = tuple[tuple[str, ...], tuple[str, ...], str]


def _opposed(memories: Sequence[Memory], said: dict[str, list[int]]) -> _Opposed | None:
    """(records, the newest record's side, reason) of records on different sides whose scopes overlap."""
    involved: dict[str, set[int]] = defaultdict(set)
    keys = sorted(said)
    for n, one in enumerate(keys):
        for other in keys[n + 1 :]:
            for i in said[one]:
                for j in said[other]:
                    if i != j and overlap(memories[i].applies_to, memories[j].applies_to):
                        involved[one].add(i)
                        involved[other].add(j)
    if not involved:
        return None
    everyone = {i for members in involved.values() for i in members}
    newest = max(everyone, key=lambda i: _newer(memories[i]))
    kept_side = next(side for side in sorted(involved) if newest in involved[side])
    keep = tuple(sorted(memories[i].record_id for i in involved[kept_side]))
    records = keep + tuple(sorted({memories[i].record_id for i in everyone} - set(keep)))
    what = " / ".join(
        f"{side} ({', '.join(sorted(memories[i].record_id for i in involved[side]))})" for side in sorted(involved)
    )
    return records, keep, what
