"""How a process that gave its one answer ends: standard library only (cli.entry imports it before click)."""

from __future__ import annotations

import atexit
import os
import sys

TYPE_CHECKING = False  # typing itself costs a no-op rebuild two milliseconds
if TYPE_CHECKING:
    from typing import NoReturn


def leave(code: int) -> NoReturn:
    """End a process whose one answer is given: flush what it wrote, exit with `code`.

    When nothing is registered to run at exit (a coverage run registers its writer, logging its
    flush) and no other thread runs, the interpreter's teardown is skipped: freeing the few
    hundred modules a gate imports (pydantic's, pygit2's) takes about as long as checking a
    one-record change (BENCHMARKS.md, "Hook checks cost the change"), and even a no-op rebuild's
    few modules take milliseconds. The callers (cli.gate, and cli.entry's no-op rebuild and
    client hooks' early exits) close and rename every file they write before they answer, so
    there is nothing left to do.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    callbacks = getattr(atexit, "_ncallbacks", None)
    threading = sys.modules.get("threading")
    if callbacks is not None and callbacks() == 0 and (threading is None or threading.active_count() == 1):
        os._exit(code)
    sys.exit(code)
