"""Sync memory back into the files agents read: a marked block of AGENTS.md or CLAUDE.md, and Cursor rules.

`--into FILE` rewrites only the `<!-- memzoi:start -->` … `<!-- memzoi:end -->` block (the Rust
Memzoi's markers, so both tools can share a file) and never the hand-written text around it; records
imported from that very file (and, for Claude Code, from the files its `@path` imports bring in) are
left out of its block, since the file already says them. `cursor-rules` owns
`.cursor/rules/memzoi/`: one `.mdc` per rule, globs and activation restored from the record's
source_ref. `import` treats both as generated, so export → import plans nothing.
"""

from __future__ import annotations

import os
import posixpath
import stat
from pathlib import Path

from git_memzoi.errors import FormatError, MemzoiError, Refused, UsageError
from git_memzoi.export import common, instructions
from git_memzoi.export.common import BUDGETS, Budget, ExportReport
from git_memzoi.importer import identity, markdown
from git_memzoi.importer.sources import CURSOR_DIR
from git_memzoi.layout import MEMZOI_DIR
from git_memzoi.recall.models import IndexedRecord
from git_memzoi.runtime.atomic import read_inside, refuse_symlinks, write_inside
from git_memzoi.runtime.workspace import Workspace

#: Why --into refuses a link on the way: the clone, not the person, chose what a committed link names.
_THROUGH_LINKS = "export --into takes a regular file reached through real folders of the work tree, never a link"


def _inside(root: Path, full: Path, into: str, what: str) -> str:
    """`full`'s path relative to the work tree `root`; UsageError when it lies outside."""
    try:
        return full.relative_to(root).as_posix()
    except ValueError:
        raise UsageError(f"{into}: {what}", field="into") from None


def _repo_path(ws: Workspace, into: str) -> tuple[Path, str]:
    """The work-tree file `into` names and its repository path, checked before anything is read.

    Refused: a path outside the work tree (absolute or through `..`), a `..` taken through a
    symlinked folder, a symlink in any folder on the way (one shared component check), a file
    symlink that leaves the work tree, and anything under `.memzoi/` or the git directory.
    """
    root = Path(os.path.abspath(ws.repo.require_workdir()))
    full = Path(os.path.abspath(into))
    rel = _inside(root, full, into, "outside the work tree")
    if rel == ".":
        raise UsageError(f"{into}: the work tree itself, not a file", field="into")
    folder = rel.rpartition("/")[0]
    if folder:
        refuse_symlinks(root, folder, _THROUGH_LINKS)
    # `docs/../CLAUDE.md` with `docs` a link: the kernel takes `..` from where the link leads
    if os.path.realpath(os.path.dirname(os.path.join(os.getcwd(), into))) != str(full.parent):
        raise Refused(f"{into}: a `..` on the way follows a symlink; {_THROUGH_LINKS}", code="symlink")
    if full.is_symlink():  # CLAUDE.md -> AGENTS.md: the file the link names, if it is in the work tree
        full = Path(os.path.realpath(full))
        rel = _inside(root, full, into, "a symlink that leaves the work tree")
    # A block written into a record, index.md or .git/config would corrupt memory or the repository.
    git_dirs = {Path(os.path.abspath(d)) for d in (ws.repo.git_dir, ws.repo.common_dir)}
    top = rel.split("/", 1)[0]
    if top in (MEMZOI_DIR, ".git") or any(full == d or d in full.parents for d in git_dirs):
        where = f"{MEMZOI_DIR}/" if top == MEMZOI_DIR else "the git directory"
        raise UsageError(
            f"{into}: inside {where}; --into writes an instruction file such as AGENTS.md or CLAUDE.md",
            field="into",
        )
    return root, rel


def _from_file(record: IndexedRecord, said: set[str]) -> bool:
    ref = identity.parse_source_ref(record.citation.source_ref)
    return ref is not None and ref.path in said


#: How many `@path` hops Claude Code follows from the file it reads.
_IMPORT_HOPS = 5


def _imports(root: Path, path: str, text: str) -> list[tuple[str, str]]:
    """(repository path, text) of each file `path`'s `@path` imports bring in, outside its block; a link inside
    the work tree is taken to the file it names, and a file that cannot be read safely brings in no text."""
    out: list[tuple[str, str]] = []
    try:
        lines, _ = markdown.strip_blocks(path, text.split("\n"))
    except MemzoiError:
        return out
    for name in markdown.claude_imports(lines, posixpath.dirname(path)):
        real = os.path.relpath(os.path.realpath(root / name), os.path.realpath(root))
        if real.startswith(".."):
            continue
        try:
            data = read_inside(root, real, _THROUGH_LINKS)
        except MemzoiError:
            data = None
        out.append((real, "" if data is None else data.decode("utf-8", "replace")))
    return out


def _said(root: Path, rel: str, text: str, target: str) -> set[str]:
    """The files whose records the file `rel` already says: itself and, for Claude Code, every file its `@path`
    imports bring in, as far as Claude Code follows them."""
    said, todo = {rel}, [(rel, text)]
    for _ in range(_IMPORT_HOPS if target == "claude-md" else 0):
        todo = [(p, t) for path, body in todo for p, t in _imports(root, path, body) if p not in said]
        said.update(p for p, _ in todo)
    return said


def replace_block(text: str, block: str, path: str) -> str:
    """`text` with its marked block replaced by `block` (markers included), or with the block appended.

    Every hand-written line keeps its own line ending; the block's lines take the file's usual
    one (CRLF when most lines end so, else LF).
    """
    raw = text.split("\n")  # each line keeps its "\r" when it ended in CRLF
    lines = [line.removesuffix("\r") for line in raw]
    _, spans = markdown.strip_blocks(path, lines)
    if len(spans) > 1:
        raise FormatError("import-marker", "more than one memzoi block; keep one", path=path, line=spans[1][0])
    crlf = sum(line.endswith("\r") for line in raw[:-1])
    cr = "\r" if crlf > len(raw) - 1 - crlf else ""
    new = [line + cr for line in block.rstrip("\n").split("\n")]
    if spans:
        first, last = spans[0]
        return "\n".join([*raw[: first - 1], *new, *raw[last:]])
    if not text.strip():
        return block
    eol = cr + "\n"
    return text.rstrip("\r\n") + eol + eol + "\n".join(new) + "\n"


#: The file each client reads by name, and the export that carries that client's budget.
_READERS = {"AGENTS.md": "agents-md", "CLAUDE.md": "claude-md"}


def _budget(target: str, given: Path, full: Path) -> Budget:
    """The smallest budget of the clients that read the file `full` (reached as `given`): the target's, and each
    client's whose file name it has or whose file beside it is a link to it (CLAUDE.md -> AGENTS.md is read by
    Codex as well as by Claude Code, and Codex cuts it at its own budget)."""
    names, real = {given.name, full.name}, os.path.realpath(full)
    for folder in {given.parent, full.parent}:
        names.update(n for n in _READERS if os.path.islink(folder / n) and os.path.realpath(folder / n) == real)
    budgets = [BUDGETS[target], *(BUDGETS[_READERS[n]] for n in sorted(names) if n in _READERS)]
    return min(budgets, key=lambda b: b.limit)


def _room(budget: Budget, before: str, rel: str, into: str) -> tuple[int, str]:
    """(bytes, what they stand for): what the block may take so that the whole file stays within the client's
    budget (an instruction file the client reads past its budget is cut or warned about)."""
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
    root, rel = _repo_path(ws, into)
    # read and written one component at a time without following a link, a FIFO or a folder refused
    data = read_inside(root, rel, _THROUGH_LINKS)
    try:
        # Bytes, not read_text(): universal newlines would turn a CRLF file's hand-written lines into LF.
        before = "" if data is None else data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{into}: not UTF-8 text", field="into") from None
    said = _said(root, rel, before, target)
    records = [r for r in common.current_records(ws) if not _from_file(r, said)]
    limit, asked = None, max_bytes
    budget = _budget(target, Path(os.path.abspath(into)), root / rel)
    if max_bytes is None:
        max_bytes, limit = _room(budget, before, rel, into)
    rendered = instructions.render(target, records, max_bytes, rule_text=True, limit=limit)
    block = f"{markdown.BLOCK_START}\n{rendered.data.decode('utf-8')}{markdown.BLOCK_END}\n"
    after = replace_block(before, block, rel)  # each hand-written line keeps its own ending
    if after != before:
        write_inside(root, rel, after.encode("utf-8"), _THROUGH_LINKS)
    return ExportReport(
        target=target,  # type: ignore[arg-type]
        path=root / rel,
        files=[rel],
        bytes=len(after.encode("utf-8")),
        characters=len(after),
        records=[r.record_id for r in rendered.included],
        budget=budget,
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
    """A record imported from a Cursor rule that is still there: Cursor reads it already.

    Looked up without following a link on the way (the one shared component check): a rule
    reached through a folder a clone made a link says nothing of the repository, and nothing
    outside it is looked at.
    """
    ref = identity.parse_source_ref(record.citation.source_ref)
    if ref is None or ref.fmt != "cursor-rule":
        return False
    try:
        full = refuse_symlinks(root, ref.path, _THROUGH_LINKS)
    except Refused:
        return False
    return stat.S_ISREG(os.lstat(full).st_mode) if os.path.lexists(full) else False


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
