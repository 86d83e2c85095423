"""What the tests share besides fixtures: paths, real repositories, running the program.

The fixtures themselves live in conftest.py files (tests/conftest.py for all, tests/<package>/conftest.py
for one package's); everything a test imports comes from here. The core helpers are importable from
`support` itself; helpers that one package's tests share live in `support/<package>.py`
(`support.lifecycle`, `support.hooks`, ...).
"""

from support.paths import FIXTURES, ROOT, SHARED, VENV_BIN, interop_dir, load_script
from support.repos import AUTHOR, Repo, age, git, make_repo
from support.running import (
    CliResult,
    imported,
    memzoi_exe,
    python_importtime,
    run_bench,
    run_cli,
    run_importtime,
    teardown_probe_env,
)

__all__ = [
    "AUTHOR",
    "FIXTURES",
    "ROOT",
    "SHARED",
    "VENV_BIN",
    "CliResult",
    "Repo",
    "age",
    "git",
    "imported",
    "interop_dir",
    "load_script",
    "make_repo",
    "memzoi_exe",
    "python_importtime",
    "run_bench",
    "run_cli",
    "run_importtime",
    "teardown_probe_env",
]
