"""`git memzoi import --json` before click: the plan agents and scripts ask for, as the command prints it.

The plan itself is the command's (`importer.run.plan_import` with no option); only click and the
command's module are left unloaded. A plan that cannot be made (not a repository, a secret, a
source that fails to read) is left to the command, which reports it as every command does; so is
a plan with refused items, which the command prints, names on stderr and ends with exit 1.
"""

from __future__ import annotations


def plan_document() -> str | None:
    """What `git memzoi import --json` prints: the plan, each entry on a line (raises what the command reports).

    None for a plan with refused items: the command says more than the plan.
    """
    from git_memzoi.cli.emit import rows_document
    from git_memzoi.importer.run import ImportRequest, plan_import
    from git_memzoi.runtime.workspace import Workspace

    ws = Workspace.open(None)  # as cli.common.workspace() opens it for the command
    ws.verify_runtime()
    plan = plan_import(ws, ImportRequest(exclude=ws.config.import_.exclude))  # as the command adds [import] exclude
    if any(entry.action == "refused" for entry in plan.entries):
        return None  # the command reports each refused item and exits 1
    return rows_document(plan.as_json(), "entries")
