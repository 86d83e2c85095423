#!/usr/bin/env python3
"""Benchmark import and recall on real repositories' instruction files, against labels fixed by meaning.

    .venv/bin/python scripts/bench_realrepos.py [--quick]      # prints the Markdown section

fixtures/import/real/<name>/ holds one public repository's instruction files verbatim (`files/`, symlinks
kept; NOTICE.md names each repository, commit and licence) and `labels.yaml`, written from the files alone
before any run: every section's verdict (memory, meta: about the instruction files themselves, or empty), where
it governs as the clients read it, and when it should reach the agent (standing, on-path, by-relevance,
on-request); groups of sections that say the same thing; and tasks (prompts, edits, commands) with the
sections an expert wants the agent to see. Repositories marked `held_out`: they are never tuned on and
are reported apart.

For each repository the files are committed to a fresh repository, `git memzoi import --json` plans, `--apply`
applies, and a second plan must plan nothing. A label section maps to the record whose `source_ref` names its
file and whose line span holds its heading. Then each moment is run through the real hooks (in process, on the
JSON the clients send): SessionStart for Claude Code and Codex, then for each task a Claude Code session that
starts (SessionStart) and gets UserPromptSubmit for a prompt, PreToolUse for an edit (Write) or a command.
Figures: items planned and skipped, meta records (records holding only meta or empty sections), scopes unlike the
label's, standing sections at SessionStart, sections that are not standing given there, records given in full at
SessionStart although the client loads their file itself (Claude Code: CLAUDE.md files and `.claude/rules`; Codex:
AGENTS.md files), and recall of the task gold with its tokens: what the agent holds at that moment (the task's hook
answer, the session start's records in full, the files Claude Code has loaded itself; `_tasks`), and what the
task's hook names alone.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pygit2
import yaml

ROOT = Path(__file__).resolve().parent.parent
for extra in (ROOT, ROOT / "scripts"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

REAL = ROOT / "fixtures" / "import" / "real"
STAMP = 1767225600  # 2026-01-01, the commit's date
#: A --quick run takes only these (one tuned on, one held out): a smoke run of the same code.
QUICK = ("gemini-cli", "langfuse")
_SOURCE_REF = re.compile(r"^import:(?P<path>[^?]+)\?.*?\blines=(?P<first>\d+)-(?P<last>\d+)")
_FULL = re.compile(r"^#{2,3} [^\n]*\((?P<id>[^()\s]+)\)\s*$", re.M)


def repositories(quick: bool = False) -> list[Path]:
    """Every labelled repository folder, in name order (only QUICK's with `quick`)."""
    found = sorted(p for p in REAL.iterdir() if (p / "labels.yaml").is_file())
    return [p for p in found if p.name in QUICK] if quick else found


def labels(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((folder / "labels.yaml").read_text(encoding="utf-8"))
    return data


def memzoi(*args: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("git-memzoi", path=str(Path(sys.executable).parent)) or "git-memzoi"
    env = {**os.environ, "MEMZOI_HOME": str(home)}
    return subprocess.run([exe, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def build(root: Path, folder: Path) -> None:
    """A committed repository holding the instruction files as the public repository has them, and memory's tree."""
    from git_memzoi.runtime.init import init_tree

    shutil.copytree(folder / "files", root, symlinks=True)
    repo = pygit2.init_repository(str(root), initial_head="main")
    init_tree(root)
    index = repo.index
    index.add_all()
    index.write()
    sig = pygit2.Signature("Bench", "bench@example.com", STAMP, 0)
    repo.create_commit("HEAD", sig, sig, "instruction files", index.write_tree(), [])


def heading_line(root: Path, file: str, heading: str, occurrence: int = 1) -> int | None:
    """The 1-based line of `heading` in `file` (outside code fences), 1 for the preamble or a whole file."""
    if heading in ("(preamble)", "(whole file)"):
        return 1
    try:
        lines = (root / file).read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    seen, fenced = 0, False
    for number, text in enumerate(lines, 1):
        if text.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        match = re.match(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$", text)
        if not fenced and match and match.group(1).strip() == heading.strip():
            seen += 1
            if seen == occurrence:
                return number
    return None


class Records:
    """The repository's current records after the import: ID, source file, line span, applies_to."""

    def __init__(self, root: Path) -> None:
        from git_memzoi.index.queries import Filter, records
        from git_memzoi.index.rebuild import open_index
        from git_memzoi.recall.records import now
        from git_memzoi.runtime.workspace import Workspace

        conn = open_index(Workspace.open(root))
        try:
            rows = records(conn, Filter(now=now()[1]))
        finally:
            conn.close()
        self.spans: list[tuple[str, str, int, int, tuple[str, ...]]] = []
        for row in rows:
            match = _SOURCE_REF.match(row.source_ref or "")
            if match:
                applies = tuple(json.loads(row.applies_json or "[]"))
                first, last = int(match["first"]), int(match["last"])
                self.spans.append((row.record_id, match["path"], first, last, applies))
        self.ids = [span[0] for span in self.spans]

    def of(self, root: Path, section: dict[str, Any]) -> str | None:
        """The record holding a label section: its file (or a link to it) and a span around its heading."""
        line = heading_line(root, section["file"], section["heading"], section.get("occurrence", 1))
        if line is None:
            return None
        target = os.path.realpath(root / section["file"])
        for rid, path, first, last, _ in self.spans:
            if os.path.realpath(root / path) == target and first <= line <= last:
                return rid
        return None


def _hook(root: Path, client: str, name: str, session: str, **extra: Any) -> str:
    """Every text an agent receives from one hook event, as one string."""
    from git_memzoi.cli.agent_hook import answer_text

    event = {"session_id": session, "cwd": str(root), "hook_event_name": name, "transcript_path": "/dev/null"}
    out, _ = answer_text(json.dumps(event | extra).encode(), client)
    return "" if out is None else texts_in(json.loads(out))


def texts_in(value: Any) -> str:
    """Every string of a hook's JSON answer, in order, one per line: all the text the agent is handed."""
    if isinstance(value, str):
        return value
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return "\n".join(text for item in items if (text := texts_in(item)))


#: The moments whose recall of the task gold is measured.
SURFACES = ("UserPromptSubmit", "PreToolUse path", "PreToolUse command")


class Figures:
    """One repository's figures."""

    def __init__(self, name: str, held_out: bool) -> None:
        self.name = name
        self.held_out = held_out
        self.values: dict[str, Any] = {}
        self.recall: dict[str, list[float]] = {
            f"{surface}{alone}": [] for surface in SURFACES for alone in ("", ", hook alone")
        }
        self.tokens: dict[str, list[float]] = {key: [] for key in self.recall}


def _client_loads(root: Path, path: str, last: int, client: str) -> bool:
    """Whether the client reads this file (up to line `last`) into its context by itself when a session starts in
    the root folder (so its hooks need not send it again): Claude Code every CLAUDE.md and `.claude/rules`; Codex the
    root's AGENTS.override.md, else its AGENTS.md (or a link to either), in its first 32 KiB."""
    name = path.rsplit("/", 1)[-1]
    if client == "claude":
        return name in ("CLAUDE.md", "CLAUDE.local.md") or path.startswith(".claude/rules/") or "/.claude/" in path
    chain = [f for f in ("AGENTS.override.md", "AGENTS.md") if (root / f).is_file() and (root / f).read_bytes().strip()]
    if not chain or os.path.realpath(root / chain[0]) != os.path.realpath(root / path):
        return False
    return len(b"".join((root / path).read_bytes().splitlines(keepends=True)[:last])) <= 32 * 1024


def _import(root: Path, home: Path, fig: Figures) -> bool:
    plan = memzoi("import", "--json", cwd=root, home=home)
    fig.values["plan exit"] = plan.returncode
    if plan.returncode not in (0, 1) or not plan.stdout.strip():
        return False
    data = json.loads(plan.stdout)
    counts = data.get("counts", {})
    fig.values["planned"] = sum(counts.get(k, 0) for k in ("create", "supersede", "tombstone"))
    fig.values["skipped"] = sum(v for k, v in counts.items() if k not in ("create", "supersede", "tombstone"))
    applied = memzoi("import", "--apply", cwd=root, home=home)
    fig.values["apply exit"] = applied.returncode
    again = memzoi("import", "--json", cwd=root, home=home)
    second = json.loads(again.stdout) if again.stdout.strip() else {}
    fig.values["second plan changes"] = sum(
        second.get("counts", {}).get(k, 0) for k in ("create", "supersede", "tombstone")
    )
    fig.values["second plan warnings"] = sum(len(e.get("warnings") or []) for e in second.get("entries", []))
    return applied.returncode == 0


def _key(section: dict[str, Any]) -> str:
    return f"{section['file']}#{section['heading']}#{section.get('occurrence', 1)}"


def _scope(entries: list[str] | tuple[str, ...]) -> list[str]:
    return sorted(entries)


def _sections(root: Path, spec: dict[str, Any], records: Records, fig: Figures) -> dict[str, str | None]:
    """Each label section's record (by `_key`), with the meta-record, lost-section and scope figures.

    A record's scope is judged against the label of the first section it holds (the heading it opens with)."""
    record_of: dict[str, str | None] = {}
    held: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for section in spec["sections"]:
        rid = record_of[_key(section)] = records.of(root, section)
        line = heading_line(root, section["file"], section["heading"], section.get("occurrence", 1)) or 0
        if rid is not None:
            held.setdefault(rid, []).append((line, section))
    scope_of = {rid: applies for rid, _, _, _, applies in records.spans}
    fig.values["records"] = len(records.ids)
    fig.values["meta records"] = sum(1 for found in held.values() if all(s["verdict"] != "memory" for _, s in found))
    fig.values["memory sections in no record"] = sum(
        1 for s in spec["sections"] if s["verdict"] == "memory" and record_of[_key(s)] is None
    )
    fig.values["scopes unlike the label"] = sum(
        1
        for rid, found in held.items()
        if (opening := min(found, key=lambda item: item[0])[1])["verdict"] == "memory"
        and _scope(scope_of[rid]) != _scope(opening["applies_to"])
    )
    return record_of


def _session_start(
    root: Path, spec: dict[str, Any], record_of: dict[str, str | None], records: Records, fig: Figures
) -> None:
    path_of = {rid: (path, last) for rid, path, _, last, _ in records.spans}
    for client in ("claude", "codex"):
        text = _hook(root, client, "SessionStart", f"start-{client}", source="startup")
        given = {rid for rid in records.ids if re.search(rf"(?<![\w-]){re.escape(rid)}(?![\w-])", text)}
        full = {m["id"] for m in _FULL.finditer(text)} & set(records.ids)
        fig.values[f"SessionStart tokens ({client})"] = round(len(text) / 4)
        fig.values[f"given twice ({client})"] = sum(1 for rid in full if _client_loads(root, *path_of[rid], client))
        if client == "claude":
            memory = [s for s in spec["sections"] if s["verdict"] == "memory"]
            standing = {record_of[_key(s)] for s in memory if s["moment"] == "standing"} - {None}
            other = {record_of[_key(s)] for s in memory if s["moment"] != "standing"} - {None}
            other -= standing
            fig.values["standing at SessionStart"] = f"{len(standing & given)}/{len(standing)}"
            fig.values["not standing, at SessionStart"] = len(other & given)


def _claude_holds(root: Path, path: str, touched: str | None) -> bool:
    """Whether Claude Code holds the file `path` in its context when a tool call in the root folder touches
    `touched`: every CLAUDE.md from the root to the working folder and each `.claude/rules` file without `paths:`
    from the start; a nested CLAUDE.md and a rule with `paths:` once it reads a file there, which it does before
    changing a file that exists (a new file is written unread)."""
    folder, name = posixpath.dirname(path), posixpath.basename(path)
    read = touched is not None and (root / touched).is_file()
    if name in ("CLAUDE.md", "CLAUDE.local.md"):
        return not folder or (read and touched is not None and touched.startswith(folder + "/"))
    if path.startswith(".claude/rules/"):
        head = (root / path).read_text(encoding="utf-8", errors="replace")
        scoped = head.startswith("---") and re.search(r"^paths\s*:", head.split("\n---", 1)[0], re.M) is not None
        return not scoped or read
    return False


def _gold(spec: dict[str, Any], task: dict[str, Any], record_of: dict[str, str | None]) -> list[set[str]]:
    """Each gold section's acceptable records: its own, and those of the sections labelled as saying the same."""
    twins: dict[str, set[str]] = {}
    for group in spec.get("duplicates") or []:
        members = {record_of.get(_key(m)) for m in group} - {None}
        for member in group:
            twins[_key(member)] = {str(m) for m in members}
    wants: list[set[str]] = []
    for gold in task["gold"]:
        key = _key(gold)
        rid = record_of.get(key)
        wants.append(({rid} if rid else set()) | twins.get(key, set()))
    return wants


def _task_hook(root: Path, task: dict[str, Any], session: str) -> tuple[str, str, str | None]:
    """(surface, what the hook answers the task with in `session`, the path it touches)."""
    kind = task["kind"]
    if kind == "prompt":
        return "UserPromptSubmit", _hook(root, "claude", "UserPromptSubmit", session, prompt=task["text"]), None
    if kind == "edit":
        tool = {"file_path": str(root / task["text"]), "content": "x"}
        text = _hook(root, "claude", "PreToolUse", session, tool_name="Write", tool_input=tool, tool_use_id="t1")
        return "PreToolUse path", text, task["text"]
    command = f"cd {task['cwd']} && {task['text']}" if task.get("cwd") else task["text"]
    tool = {"command": command, "description": "run it"}
    text = _hook(root, "claude", "PreToolUse", session, tool_name="Bash", tool_input=tool, tool_use_id="t1")
    return "PreToolUse command", text, None


def _named(text: str, rid: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(rid)}(?![\w-])", text) is not None


def _tasks(root: Path, spec: dict[str, Any], record_of: dict[str, str | None], records: Records, fig: Figures) -> None:
    """Recall in a session (Claude Code's): a gold section counts as given when the task's hook names its record,
    when the session's start gave it in full, or when Claude Code holds its file itself at that moment
    (`_claude_holds`). "hook alone" counts only what the task's hook names in a session of its own."""
    path_of = {rid: path for rid, path, _, _, _ in records.spans}
    for number, task in enumerate(spec["tasks"]):
        wants = _gold(spec, task, record_of)
        session = f"task-{number:03d}"
        start = _hook(root, "claude", "SessionStart", session, source="startup")
        started = {m["id"] for m in _FULL.finditer(start)}
        surface, text, touched = _task_hook(root, task, session)
        _, alone, _ = _task_hook(root, task, f"alone-{number:03d}")

        def given(rid: str, text: str = text, started: set[str] = started, touched: str | None = touched) -> bool:
            return _named(text, rid) or rid in started or _claude_holds(root, path_of[rid], touched)

        hit = sum(1 for want in wants if any(given(r) for r in want))
        fig.recall[surface].append(hit / len(wants) if wants else 1.0)
        fig.tokens[surface].append(len(text) / 4)
        hit_alone = sum(1 for want in wants if any(_named(alone, r) for r in want))
        fig.recall[f"{surface}, hook alone"].append(hit_alone / len(wants) if wants else 1.0)
        fig.tokens[f"{surface}, hook alone"].append(len(alone) / 4)


#: The root instruction files an edit is made in, first found first: the ones Claude Code and Codex load.
EDITED = ("CLAUDE.md", "AGENTS.md")


def _edit_one_section(root: Path, records: Records) -> bool:
    """Change one line of the last section imported from the first of EDITED (a link: the file it points to), and
    commit; False when no such record exists."""
    for name in EDITED:
        real = Path(os.path.realpath(root / name))
        spans = [
            (first, last) for _, path, first, last, _ in records.spans if Path(os.path.realpath(root / path)) == real
        ]
        if not spans or not real.is_file():
            continue
        lines = real.read_text(encoding="utf-8").split("\n")
        last = max(spans)[1]
        lines[last - 1] += " Check this with the maintainers first."
        real.write_text("\n".join(lines), encoding="utf-8")
        repo = pygit2.Repository(str(root))
        index = repo.index
        index.add_all()
        index.write()
        sig = pygit2.Signature("Bench", "bench@example.com", STAMP + 60, 0)
        repo.create_commit("HEAD", sig, sig, f"{name}: one section edited", index.write_tree(), [repo.head.target])
        return True
    return False


def _after_edit(root: Path, home: Path, fig: Figures) -> None:
    """Edit one section of the root CLAUDE.md (else AGENTS.md), re-import with --prune, then count again what
    SessionStart gives in full that the client loads itself: the records of the sections left alone keep the
    source_ref of the first import (their text did not change), and must not come back in full."""
    if not _edit_one_section(root, Records(root)):
        return
    plan = memzoi("import", "--prune", "--json", cwd=root, home=home)
    counts = json.loads(plan.stdout).get("counts", {}) if plan.stdout.strip() else {}
    fig.values["re-import changes after an edit"] = sum(counts.get(k, 0) for k in ("create", "supersede", "tombstone"))
    memzoi("import", "--prune", "--apply", cwd=root, home=home)
    records = Records(root)
    path_of = {rid: (path, last) for rid, path, _, last, _ in records.spans}
    for client in ("claude", "codex"):
        text = _hook(root, client, "SessionStart", f"edited-{client}", source="startup")
        full = {m["id"] for m in _FULL.finditer(text)} & set(records.ids)
        twice = sum(1 for rid in full if _client_loads(root, *path_of[rid], client))
        fig.values[f"given twice after an edit and re-import ({client})"] = twice


def measure(workdir: Path, folder: Path) -> Figures:
    spec = labels(folder)
    fig = Figures(folder.name, bool(spec.get("held_out")))
    root, home = workdir / folder.name, workdir / f"{folder.name}-home"
    build(root, folder)
    os.environ["MEMZOI_HOME"] = str(home)
    if not _import(root, home, fig):
        return fig
    records = Records(root)
    record_of = _sections(root, spec, records, fig)
    _session_start(root, spec, record_of, records, fig)
    _tasks(root, spec, record_of, records, fig)
    _after_edit(root, home, fig)
    return fig


COLUMNS = (
    "plan exit", "planned", "skipped", "records", "meta records", "memory sections in no record",
    "scopes unlike the label", "standing at SessionStart", "not standing, at SessionStart",
    "SessionStart tokens (claude)", "given twice (claude)", "SessionStart tokens (codex)", "given twice (codex)",
    "second plan changes", "second plan warnings", "re-import changes after an edit",
    "given twice after an edit and re-import (claude)", "given twice after an edit and re-import (codex)",
)  # fmt: skip


def _mean(values: list[float]) -> str:
    return f"{sum(values) / len(values):.2f}" if values else "-"


def _tokens(values: list[float]) -> str:
    return f"{sum(values) / len(values):,.0f}" if values else "-"


def _table(figures: list[Figures]) -> list[str]:
    out = ["| figure | " + " | ".join(f.name for f in figures) + " |", "|---|" + "---:|" * len(figures)]
    for column in COLUMNS:
        out.append(f"| {column} | " + " | ".join(str(f.values.get(column, "-")) for f in figures) + " |")
    for surface in [f"{surface}{alone}" for surface in SURFACES for alone in ("", ", hook alone")]:
        cells = [
            f"{_mean(f.recall[surface])} ({len(f.recall[surface])}, {_mean(f.tokens[surface])[:-3] or '-'} tok)"
            for f in figures
        ]
        out.append(f"| {surface} recall (tasks, mean tokens) | " + " | ".join(cells) + " |")
    return out


def section(workdir: Path, quick: bool = False) -> str:
    workdir.mkdir(parents=True, exist_ok=True)
    figures = [measure(workdir, folder) for folder in repositories(quick)]
    tuned = [f for f in figures if not f.held_out]
    held = [f for f in figures if f.held_out]
    lines = [
        "## Real repositories: their instruction files imported, and what the agent then receives",
        "",
        "fixtures/import/real/: the instruction files of public repositories (NOTICE.md), labelled by meaning before "
        'any run (scripts/bench_realrepos.py says how each figure is taken). "planned" counts create, supersede and '
        'tombstone items; "meta records" are records holding only sections about the instruction files themselves; '
        '"given twice" counts records SessionStart gives in full although the client loads their file itself; '
        '"after an edit and re-import": once more after one line of the last section of the root CLAUDE.md (else '
        "AGENTS.md) is changed and `import --prune --apply` run again; "
        "recall is the share of each task's gold sections the agent holds at that moment in a Claude Code session: "
        "named by the task's hook, given in full at the session's start, or in a file Claude Code has loaded "
        "itself by then (each CLAUDE.md from the root to its working folder and each `.claude/rules` file without "
        "`paths:`; a nested CLAUDE.md and a `paths:` rule once it has read a file there, which it does before "
        'changing a file that exists); "hook alone" counts only what the task\'s hook names, in a session of its '
        "own. Tokens are the task hook's characters / 4.",
        "",
        "### Tuned on",
        "",
        *_table(tuned),
        "",
        "### Held out (never tuned on)",
        "",
        *_table(held),
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="memzoi-bench-real-") as tmp:
        print(section(Path(tmp), quick="--quick" in sys.argv[1:]), end="")
