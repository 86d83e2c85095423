"""The repository ID: a random value in the common git directory that binds runtime state to one repository.

The repository key names a folder by the repository's path; the ID says which repository made
what is in it. A repository deleted and replaced at the same path (a CI workspace, a scratch
folder) gets a new common directory and so no ID, or another one; a repository moved elsewhere
keeps its ID under a new key. Standard library only: every command reads it at start-up.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from git_memzoi.errors import StateError
from git_memzoi.layout import REPOSITORY_ID_FILE

#: 128 random bits as lowercase hex.
ID_LENGTH = 32
_HEX = frozenset("0123456789abcdef")


def id_path(common_dir: Path) -> Path:
    """`<common git dir>/memzoi-id`."""
    return common_dir / REPOSITORY_ID_FILE


def valid(value: str) -> bool:
    """True for a well-formed repository ID."""
    return len(value) == ID_LENGTH and set(value) <= _HEX


def read(common_dir: Path) -> str | None:
    """This repository's ID, or None when it has none yet; a damaged file fails closed, naming it."""
    path = id_path(common_dir)
    try:
        with open(path, "rb") as handle:
            raw = handle.read(ID_LENGTH + 2)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StateError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    value = raw.decode("ascii", errors="replace").strip()
    if not valid(value):
        raise StateError(
            f"{path}: not a memzoi repository ID (32 lowercase hex digits)",
            hint="it is written once by git memzoi; remove it only together with this repository's runtime state",
        )
    return value


def ensure(common_dir: Path) -> str:
    """This repository's ID, made on first need: written whole beside the file, then linked into place.

    os.link never replaces an existing file, so two processes racing to make the ID agree on
    the one that landed first.
    """
    found = read(common_dir)
    if found is not None:
        return found
    path = id_path(common_dir)
    tmp = common_dir / f".{REPOSITORY_ID_FILE}-{os.getpid()}-{secrets.token_hex(4)}.tmp"
    try:
        with open(tmp, "x", encoding="ascii") as handle:
            handle.write(secrets.token_hex(ID_LENGTH // 2) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
    except OSError as exc:
        raise StateError(f"{path}: cannot be written: {exc.strerror or exc}") from None
    finally:
        tmp.unlink(missing_ok=True)
    made = read(common_dir)
    assert made is not None
    return made
