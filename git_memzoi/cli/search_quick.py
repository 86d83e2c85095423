"""`git memzoi search WORDS… [--json]` before click loads, and a search's hits as text for both ways in.

Agents and scripts run `search` with words and perhaps `--json`, many times a session; click and
the command group cost about a third of such a run. That shape is answered here, by the command's
own core (`recall.search`) inside the same `cli.failures.guarded` the click CLI runs in, and printed
by `show`, which the click command prints through too, so both write the same bytes. Any other
argument (an option, `--help`, a word that starts with `-`) goes to click.
"""

from __future__ import annotations

from typing import Any

from git_memzoi.cli.output import emit_json, err, line

JSON_FLAG = "--json"


def takes(args: list[str]) -> bool:
    """`search` and at least one word, none starting with `-`, and `--json` at most once."""
    if args[:1] != ["search"]:
        return False
    words = [a for a in args[1:] if a != JSON_FLAG]
    return bool(words) and len(args) - 1 - len(words) <= 1 and not any(w.startswith("-") for w in words)


def main(args: list[str]) -> int:
    """Answer `args` (as `takes` accepts them); the exit code."""
    from git_memzoi.cli.failures import debug_asked, guarded

    return guarded(lambda: _search(args), debug=debug_asked(args))


def _search(args: list[str]) -> int:
    from git_memzoi.recall.search import search
    from git_memzoi.runtime.workspace import Workspace

    ws = Workspace.open(None)
    ws.verify_runtime()
    result = search(ws, " ".join(a for a in args[1:] if a != JSON_FLAG))
    show(result, as_json=JSON_FLAG in args)
    return 0


def show(result: Any, *, as_json: bool) -> None:
    """A search's hits on stdout: the JSON document, or four lines a hit ("no matching records" on stderr)."""
    if as_json:
        emit_json(result.model_dump())
        return
    if not result.hits:
        err("no matching records")
        return
    for number, hit in enumerate(result.hits, 1):
        flag = (
            ""
            if hit.current
            else "  [query-only: retention boundary passed]"
            if hit.status == "active"
            else f"  [query-only: {hit.status}]"
        )
        flag += unverified(hit.freshness)
        line(f"{number}. {hit.title}  ({hit.type}, {hit.lane}){flag}")
        line(
            f"   id: {hit.record_id}  score: {hit.score:.3f}"
            + (f"  applies_to: {', '.join(hit.applies_to)}" if hit.applies_to else "")
        )
        if hit.snippet:
            line(f"   {hit.snippet}")
        line(f"   {cite(hit.citation)}")


def none(value: str | None) -> str:
    """How text output shows a missing value: `(none)` for people; --json keeps it null."""
    return "(none)" if value is None else value


def cite(c: Any) -> str:
    """A hit's evidence as one line: source, source_ref, proposal_id and the record's file."""
    return f"source: {none(c.source)}  source_ref: {none(c.source_ref)}  proposal_id: {none(c.proposal_id)}  ({c.path})"


def unverified(freshness: dict[str, Any]) -> str:
    """ "  [unverified: ...]" after a record whose cited code changed since it was written, else ""."""
    if freshness["state"] == "current":
        return ""
    changes = freshness["evidence"]
    first = changes[0] if changes else {}
    what = first.get("identifier") or first.get("path") or "its evidence"
    more = f" +{len(changes) - 1}" if len(changes) > 1 else ""
    return f"  [unverified: {what} {first.get('change', 'changed')}{more}]"
