"""The checksum of a kept runtime file: its CRC-32 and its size, read from one open file.

Kept databases (a validated tree's summary, hooks/treeimage.py; a records tree's citations,
index/citation_store.py) are named in a header by this checksum, so a torn write, a flipped bit
or a truncation is found before a row is read.
"""

from __future__ import annotations

import os
import zlib


def file_checksum(fd: int, size: int) -> str:
    """The checksum of the `size` bytes open at `fd`: their CRC-32 and their number.

    Read a MiB at a time (not mapped: a file truncated meanwhile by another process is a short
    read, where a mapping faults with SIGBUS), in C; a file longer or shorter than `size` fails.
    """
    crc, done, chunk = 0, 0, bytearray(1 << 20)
    view = memoryview(chunk)
    while (got := os.readv(fd, [chunk])) > 0:
        crc, done = zlib.crc32(view[:got], crc), done + got
    return f"{crc:08x}-{size if done == size else -1}"
