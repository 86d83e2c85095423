"""Sync memory back into the files agents read: a marked block of AGENTS.md or CLAUDE.md, and Cursor rules.

`--into FILE` rewrites only the `<!-- memzoi:start -->` … `<!-- memzoi:end -->` block (the Rust
Memzoi's markers, so both tools can share a file) and never the hand-written text around it;
records imported from that very file are left out of its block, since the file already says
them. `cursor-rules` owns `.cursor/rules/memzoi/`: one `.mdc` per rule, globs and activation
restored from the record's source_ref. `import` treats both as generated, so export → import
plans nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

from git_memzoi.errors import FormatError, UsageError
from git_memzoi.export import common, instructions
from git_memzoi.export.common import BUDGETS, ExportReport
from git_memzoi.importer import identity, markdown
from git_memzoi.importer.sources import CURSOR_DIR
from git_memzoi.layout import MEMZOI_DIR
from git_memzoi.recall.models import IndexedRecord
from git_memzoi.runtime.workspace import Workspace


def _repo_path(ws: Workspace, into: str) -> tuple[Path, str]:
    """The work-tree file `into` names and its repository path; refused outside the work tree."""
    root = ws.repo.require_workdir()
    full = Path(os.path.abspath(into))
    try:
        rel = full.relative_to(root).as_posix()
    except ValueError:
        raise UsageError(f"{into}: outside the work tree", field="into") from None
    if full.is_symlink():
        full = Path(os.path.realpath(full))
        try:
            rel = full.relative_to(root).as_posix()
        except ValueError:
            raise UsageError(f"{into}: a symlink that leaves the work tree", field="into") from None
    # A block written into a record, index.md or .git/config would corrupt memory or the repository.
    git_dirs = {Path(os.path.abspath(d)) for d in (ws.repo.git_dir, ws.repo.common_dir)}
    top = rel.split("/", 1)[0]
    if top in (MEMZOI_DIR, ".git") or any(full == d or d in full.parents for d in git_dirs):
        where = f"{MEMZOI_DIR}/" if top == MEMZOI_DIR else "the git directory"
        raise UsageError(
            f"{into}: inside {where}; --into writes an instruction file such as AGENTS.md or CLAUDE.md",
            field="into",
        )
    return full, rel


def _from_file(record: IndexedRecord, rel: str) -> bool:
    ref = identity.parse_source_ref(record.citation.source_ref)
    return ref is not None and ref.path == rel


def replace_block(text: str, block: str, path: str) -> str:
    """`text` with its marked block replaced by `block` (markers included), or with the block appended."""
    lines = text.split("\n")
    _, spans = markdown.strip_blocks(path, lines)
    if len(spans) > 1:
        raise FormatError("import-marker", "more than one memzoi block; keep one", path=path, line=spans[1][0])
    if spans:
        first, last = spans[0]
        return "\n".join([*lines[: first - 1], block.rstrip("\n"), *lines[last:]])
    if not text.strip():
        return block
    return text.rstrip("\n") + "\n\n" + block


def _room(target: str, before: str, rel: str, into: str) -> tuple[int, str]:
    """(bytes, what they stand for): what the block may take so that the whole file stays within the client's
    budget (an instruction file the client reads past its budget is cut or warned about)."""
    budget = BUDGETS[target]
    own = len(replace_block(before, "", rel).encode("utf-8"))  # the file's text outside the block
    markers = len(f"{markdown.BLOCK_START}\n{markdown.BLOCK_END}\n\n".encode())
    room = budget.limit - own - markers
    if room <= 0:
        raise UsageError(
            f"{into}: its own text takes {own:,} bytes of the {budget.limit:,}-{budget.unit.rstrip('s')} "
            f"{budget.tool} budget; give --max-bytes to write the block anyway",
            field="into",
        )
    return room, f"the {budget.limit:,}-{budget.unit.rstrip('s')} {budget.tool} budget with {rel}'s own text"


def export_into(ws: Workspace, target: str, into: str, max_bytes: int | None = None) -> ExportReport:
    """Rewrite the marked block of the work-tree file `into` with the instruction export for `target`: each
    record's rule text, most severe first, within `max_bytes` or else the client's budget for the whole file."""
    full, rel = _repo_path(ws, into)
    records = [r for r in common.current_records(ws) if not _from_file(r, rel)]
    try:
        # Bytes, not read_text(): universal newlines would turn a CRLF file's hand-written lines into LF.
        before = full.read_bytes().decode("utf-8")
    except FileNotFoundError:
        before = ""
    except UnicodeDecodeError:
        raise UsageError(f"{into}: not UTF-8 text", field="into") from None
    limit, asked = None, max_bytes
    if max_bytes is None:
        max_bytes, limit = _room(target, before.replace("\r\n", "\n"), rel, into)
    rendered = instructions.render(target, records, max_bytes, rule_text=True, limit=limit)
    block = f"{markdown.BLOCK_START}\n{rendered.data.decode('utf-8')}{markdown.BLOCK_END}\n"
    after = replace_block(before.replace("\r\n", "\n"), block, rel)
    if "\r\n" in before:
        after = after.replace("\n", "\r\n")
    if after != before:
        common.write_file(full, after.encode("utf-8"))
    data = after.encode("utf-8")
    return ExportReport(
        target=target,  # type: ignore[arg-type]
        path=full,
        files=[rel],
        bytes=len(data),
        characters=len(after),
        records=[r.record_id for r in rendered.included],
        budget=BUDGETS[target],
        max_bytes=asked,
        omitted=rendered.omitted,
    )


def _value(text: str) -> str:
    """A front matter value on one line, quoted when YAML-minded readers would misread it."""
    flat = " ".join(text.split())
    return f'"{flat}"' if flat[:1] in "\"'[{&*!|>%@`#" or ": " in flat else flat


def render_rule(record: IndexedRecord) -> bytes:
    """One Cursor rule: description, globs and alwaysApply (the source's when it was a Cursor rule), then the body."""
    ref = identity.parse_source_ref(record.citation.source_ref)
    given = dict(ref.activation) if ref is not None else {}
    description = given.get("description") or record.description or record.title
    source_globs = given.get("globs") or given.get("applyTo") or given.get("paths")
    globs = source_globs or ",".join(a if a.endswith("/**") else a + "/**" for a in record.applies_to)
    always = given.get("alwaysApply", "false" if globs else "true")
    head = f"---\ndescription: {_value(description)}\nglobs: {globs}\nalwaysApply: {always}\n---\n"
    return (head + record.body.strip("\n") + "\n").encode("utf-8")


def _still_a_cursor_rule(record: IndexedRecord, root: Path) -> bool:
    """A record imported from a Cursor rule that is still there: Cursor reads it already."""
    ref = identity.parse_source_ref(record.citation.source_ref)
    return ref is not None and ref.fmt == "cursor-rule" and (root / ref.path).is_file()


def export_cursor_rules(ws: Workspace, output: str | None = None) -> ExportReport:
    """Write `.cursor/rules/memzoi/<record-id>.mdc` for every rule (the folder is replaced as a whole)."""
    workdir = ws.repo.require_workdir()
    # the checks every export's --output gets (no link on the way inside the work tree, nothing
    # under .memzoi/), for the work tree itself too: a clone chooses what .cursor/ is
    folder = common.destination(workdir, workdir if output is None else output, CURSOR_DIR, workdir)
    root = Path(output).resolve() if output is not None else workdir
    chosen = [r for r in instructions.select(common.current_records(ws)) if not _still_a_cursor_rule(r, root)]
    files = {f"{record.record_id}.mdc": render_rule(record) for record in chosen}
    common.write_bundle(folder, files)
    size = sum(len(data) for data in files.values())
    return ExportReport(
        target="cursor-rules",
        path=folder,
        files=sorted(files),
        bytes=size,
        characters=size,
        records=[r.record_id for r in chosen],
    )
