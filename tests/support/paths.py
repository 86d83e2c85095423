"""Where things are: the checkout, its fixtures, the venv the tests run in, and the scripts as modules."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent.parent
FIXTURES = ROOT / "fixtures"
SHARED = ROOT.parent / "shared"
VENV_BIN = Path(sys.executable).parent


def load_script(name: str) -> ModuleType:
    """The module of scripts/NAME.py (the generators and benchmarks are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def interop_dir() -> Path:
    """The published memory of another implementation (verbatim), shipped as a fixture."""
    return FIXTURES / "interop" / "memzoi-self-memory"
