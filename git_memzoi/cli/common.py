"""Helpers every command module shares: the workspace, --json output, problem printing."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import click

from git_memzoi.cli.emit import emit_json as emit_json  # every command's --json, kept here for them
from git_memzoi.cli.emit import emit_rows as emit_rows
from git_memzoi.errors import UsageError
from git_memzoi.runtime.workspace import Workspace

json_option = click.option("--json", "as_json", is_flag=True, help="Print one JSON document on stdout.")


def workspace(ctx: click.Context | None = None, *, bound: bool = True) -> Workspace:
    """The command's Workspace, opened once from the current directory.

    `bound`: the command reads or writes this repository's runtime state, so it is refused
    (exit 3) when that state belongs to another repository; validate, the hooks, init and
    doctor pass False.
    """
    ctx = ctx or click.get_current_context()
    root = ctx.find_root()
    root.ensure_object(dict)
    if "workspace" not in root.obj:
        root.obj["workspace"] = Workspace.open(root.obj.get("repo"))
    ws: Workspace = root.obj["workspace"]
    if bound and not root.obj.get("bound"):
        ws.verify_runtime()
        root.obj["bound"] = True
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


def one_line(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Option callback: refuse control characters (a newline, ESC, a line separator) in a one-line value.

    Raised as the package's UsageError (exit 2) so the refusal is one `git memzoi:` line like every other.
    """
    from git_memzoi.profile.oneline import first_control  # off the read commands (Command start-up: search)

    for item in value if isinstance(value, tuple) else (value,):
        bad = first_control(item) if isinstance(item, str) else None
        if bad is not None:
            raise UsageError(f"{_flag(param)} {item!r} holds the control character {bad!r}; give one line of text")
    return value


def non_blank_line(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Option callback: one line of text that is not empty or only spaces."""
    one_line(ctx, param, value)
    if isinstance(value, str) and not value.strip():
        raise UsageError(f"{_flag(param)} must not be empty")
    return value


class UnitInterval(click.FloatRange):
    """A number from 0.0 to 1.0; click's FloatRange lets `nan` through (no comparison with it is true)."""

    name = "float range"

    def __init__(self) -> None:
        super().__init__(0.0, 1.0)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if math.isnan(number):
            self.fail(f"{value!r} is not a number from 0.0 to 1.0", param, ctx)
        return number


def _flag(param: click.Parameter) -> str:
    return param.opts[0] if param.opts else str(param.name)


def say(message: str) -> None:
    """A message for the person: stderr, so stdout stays data."""
    click.echo(message, err=True)


def human_time(text: str | None) -> str:
    """An RFC 3339 timestamp as people read it: to the second (`--json` keeps every digit); '' for none."""
    if not text:
        return ""
    head, dot, rest = text.partition(".")
    if not dot:
        return text
    zone = rest.lstrip("0123456789")  # Z or +hh:mm after the fraction
    return head + zone
