"""Reading a source file: at most the limit's bytes of a regular file, however its size changes under the reader."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from git_memzoi.importer import sources
from git_memzoi.importer.sources import read_regular


def _data(size: int) -> bytes:
    return (bytes(range(256)) * (size // 256 + 1))[:size]


@pytest.mark.parametrize("size", [0, 1, 99, 100, 101, 5000])
@pytest.mark.parametrize("limit", [1, 100, 101, 4096])
def test_at_most_limit_bytes_of_the_file(tmp_path: Path, size: int, limit: int) -> None:
    path = tmp_path / "AGENTS.md"
    path.write_bytes(_data(size))
    assert read_regular(path, limit) == _data(size)[:limit]


@pytest.mark.parametrize("said", [0, 10, 99])
def test_a_file_larger_than_its_stat_said_is_read_to_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, said: int
) -> None:
    # the file grew between the stat and the read: what is there is read, up to the limit
    path = tmp_path / "AGENTS.md"
    path.write_bytes(_data(5000))
    real_fstat = os.fstat

    def smaller(fd: int) -> os.stat_result:
        info = real_fstat(fd)
        return os.stat_result((*info[:6], said, *info[7:10]))

    monkeypatch.setattr(sources.os, "fstat", smaller)
    assert read_regular(path, 4096) == _data(4096)
    assert read_regular(path, 6000) == _data(5000)


def test_a_folder_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        read_regular(tmp_path, 100)
