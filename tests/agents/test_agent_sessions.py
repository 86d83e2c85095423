"""The hooks' per-session memory: bounded, pruned, private, and harmless when damaged."""

from __future__ import annotations

import os
import time
from pathlib import Path

from git_memzoi.agents import sessions
from git_memzoi.agents.sessions import SessionMemory


def test_a_session_remembers_what_it_was_given(tmp_path: Path) -> None:
    first = SessionMemory(tmp_path, "session-a")
    assert not first.seen("use-pnpm")
    first.add(["use-pnpm"])
    first.save()
    assert SessionMemory(tmp_path, "session-a").seen("use-pnpm")
    assert not SessionMemory(tmp_path, "session-b").seen("use-pnpm")
    (state,) = tmp_path.iterdir()
    assert "session-a" not in state.name and state.stat().st_mode & 0o077 == 0


def test_without_a_session_id_nothing_is_kept(tmp_path: Path) -> None:
    memory = SessionMemory(tmp_path / "sessions", None)
    memory.add(["x"])
    memory.save()
    assert not (tmp_path / "sessions").exists()


def test_state_is_bounded_and_old_sessions_are_pruned(tmp_path: Path) -> None:
    big = SessionMemory(tmp_path, "big")
    big.add([f"r{n}" for n in range(sessions.MAX_IDS + 50)])
    big.save()
    again = SessionMemory(tmp_path, "big")
    assert len(again.given) == sessions.MAX_IDS and again.seen(f"r{sessions.MAX_IDS + 49}") and not again.seen("r0")
    old = SessionMemory(tmp_path, "old")
    old.add(["x"])
    old.save()
    assert old.path is not None
    stale = time.time() - sessions.MAX_AGE - 60
    os.utime(old.path, (stale, stale))
    for n in range(sessions.MAX_SESSIONS + 5):
        memory = SessionMemory(tmp_path, f"s{n}")
        memory.add(["y"])
        memory.save()
    assert len(list(tmp_path.iterdir())) == sessions.MAX_SESSIONS
    assert not old.path.exists()


def test_damaged_state_is_treated_as_empty(tmp_path: Path) -> None:
    memory = SessionMemory(tmp_path, "s")
    assert memory.path is not None
    for damage in (b"{not json", b'{"given": "x"}', b'["a"]', b'{"given": [1, "ok"]}'):
        memory.path.write_bytes(damage)
        loaded = SessionMemory(tmp_path, "s")
        assert loaded.given == ({"ok": None} if b"ok" in damage else {})
    memory.path.write_bytes(b" " * (sessions.MAX_BYTES + 1))
    assert SessionMemory(tmp_path, "s").given == {}
