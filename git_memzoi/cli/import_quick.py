"""`git memzoi import --json` before click: the plan agents and scripts ask for, as the command prints it.

The plan itself is the command's (`importer.run.plan_import` with no option); only click and the
command's module are left unloaded. A plan that cannot be made (not a repository, a secret, a
source that fails to read) is left to the command, which reports it as every command does.
"""

from __future__ import annotations


def plan_document() -> str:
    """What `git memzoi import --json` prints: the plan, each entry on a line (raises what the command reports)."""
    from git_memzoi.cli.emit import rows_document
    from git_memzoi.importer.run import ImportRequest, plan_import
    from git_memzoi.runtime.workspace import Workspace

    ws = Workspace.open(None)  # as cli.common.workspace() opens it for the command
    ws.verify_runtime()
    request = ImportRequest(exclude=ws.config.import_.exclude)  # as the command adds [import] exclude
    return rows_document(plan_import(ws, request).as_json(), "entries")
