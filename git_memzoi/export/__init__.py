"""Generated projections of the current, non-private records: an OKF bundle and agent instruction files.

Entry points (the CLI calls exactly these):

- `export.okf.export_okf(ws, output=None) -> ExportReport`
- `export.instructions.export_instructions(ws, target, output=None, max_bytes=None) -> ExportReport`
  for target `agents-md` (AGENTS.memory.md) or `claude-md` (CLAUDE.memory.md)

Renderers (`okf.build_bundle`, `instructions.render`) are pure: records in, bytes out.
"""
