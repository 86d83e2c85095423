"""A program on a real pseudo-terminal, as a user at a keyboard drives it (`git memzoi review`)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
from pathlib import Path

from support.running import memzoi_exe

#: review's prompt for each item
PROMPT = b"[y,n,a,d,r,e,q,?]"


class Terminal:
    """`git memzoi ARGS` on a pseudo-terminal: read until a prompt, answer it."""

    def __init__(self, cwd: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [memzoi_exe(), *args], cwd=cwd, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True
        )
        os.close(slave)
        self.seen = b""

    def until(self, marker: bytes, timeout: float = 60) -> bytes:
        start = len(self.seen)
        deadline = time.monotonic() + timeout
        while marker not in self.seen[start:]:
            left = deadline - time.monotonic()
            assert left > 0, f"no {marker!r} in:\n{self.seen.decode(errors='replace')}"
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:
                    chunk = b""
                assert chunk, f"the program ended before {marker!r}:\n{self.seen.decode(errors='replace')}"
                self.seen += chunk
        return self.seen[start:]

    def answer(self, text: str) -> None:
        os.write(self.master, text.encode() + b"\r")

    def finish(self) -> str:
        self.proc.wait(timeout=60)
        while True:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:
                break
            if not chunk:
                break
            self.seen += chunk
        os.close(self.master)
        return self.seen.decode(errors="replace").replace("\r\n", "\n")
