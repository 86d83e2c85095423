"""Closed standard streams, opened on /dev/null as git opens them (its sanitize_stdfds) before anything runs.

A program started with file descriptor 0, 1 or 2 closed (`git memzoi hook check R >&-`, a
daemon's hook runner) gets None for sys.stdin, sys.stdout or sys.stderr from Python, and the
first read, write or flush would be an AttributeError: a traceback and exit 1, a "no" the check
never gave. git itself opens /dev/null in their place, so that nothing else can take those
numbers; so does this, first thing in cli.entry and cli.main: a closed stdin reads as empty, what
goes to a closed stdout or stderr is dropped, and the exit code is the command's own.
Standard library only (cli.entry loads it on every run).
"""

from __future__ import annotations

import os
import sys

_NAMES = ("stdin", "stdout", "stderr")


def open_closed_streams() -> None:
    """Give each standard stream Python found closed an open /dev/null, at its own file descriptor."""
    if sys.stdin is not None and sys.stdout is not None and sys.stderr is not None:
        return
    fd = os.open(os.devnull, os.O_RDWR)
    while 0 <= fd < 2:  # as git: the lowest free numbers are the closed ones among 0, 1 and 2
        fd = os.dup(fd)
    if fd > 2:
        os.close(fd)
    for number, name in enumerate(_NAMES):
        if getattr(sys, name) is None:
            # the process's own stream, open until it exits; UTF-8, and nothing it is given can fail to encode
            mode = "r" if number == 0 else "w"
            setattr(sys, name, open(number, mode, encoding="utf-8", errors="surrogateescape", closefd=False))  # noqa: SIM115
