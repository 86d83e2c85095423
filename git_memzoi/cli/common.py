"""Helpers every command module shares: the workspace, --json output, problem printing."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from collections.abc import Callable
from typing import Any, TypeVar

import click

from git_memzoi.errors import UsageError

from git_memzoi.runtime.workspace import Workspace

F = TypeVar("F", bound=Callable[..., Any])

json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")


def workspace(ctx: click.Context | None = None) -> Workspace:
    """The command's Workspace, opened once from the current directory."""
    ctx = ctx or click.get_current_context()
    root = ctx.find_root()
    root.ensure_object(dict)
    if "workspace" not in root.obj:
        root.obj["workspace"] = Workspace.open(root.obj.get("repo"))
    ws: Workspace = root.obj["workspace"]
    return ws


def read_text_arg(path: str, flag: str) -> str:
    """Text of a file named on the command line (`-` is stdin) as UTF-8, or a usage error naming it."""
    if path == "-":
        return sys.stdin.read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{flag} {path}: no such file") from None
    except UnicodeDecodeError:
        raise UsageError(f"{flag} {path}: not UTF-8 text") from None
    except OSError as exc:
        raise UsageError(f"{flag} {path}: cannot read: {exc.strerror}") from None


def emit_json(data: Any) -> None:
    """One JSON document on stdout."""
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False) + "\n")


def say(message: str) -> None:
    """A message for the person: stderr, so stdout stays data."""
    click.echo(message, err=True)
