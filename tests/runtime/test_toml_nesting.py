"""TOML nested past any person's writing is refused before tomllib reads it: Codex's config.toml, memzoi's own."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from git_memzoi.errors import ConfigError
from git_memzoi.runtime.config import TOML_MAX_NESTING, loads_toml
from support import Repo, memzoi_exe
from support.hooks import Remote

N = 100_000
#: Each nests N deep; tomllib took minutes and gigabytes over the dotted ones, and recursed over the rest.
DEEP = {
    "dotted key": "a" + ".a" * N + " = 1\n",
    "table header": "[a" + ".a" * N + "]\nb = 1\n",
    "arrays": "x = " + "[" * N + "]" * N + "\n",
    "inline tables": "x = " + "{a=" * N + "1" + "}" * N + "\n",
    "dotted key in an inline table": "x = {" + "a." * N + "b = 1}\n",
    "under a harmless first line": "# Codex\nmodel = 'o3'\n" + "a" + ".a" * N + " = 1\n",
}


def run(cwd: Path, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run([memzoi_exe(), *args], cwd=cwd, capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("name", list(DEEP))
def test_agent_install_codex_refuses_a_deep_config_naming_it(repo: Repo, name: str) -> None:
    config = repo.path / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(DEEP[name])
    digest = hashlib.sha256(config.read_bytes()).hexdigest()
    done = run(repo.path, "agent", "install", "codex")  # the old code: minutes, gigabytes, or exit 0
    assert done.returncode == 2, done.stderr
    line = 3 if name == "under a harmless first line" else 1
    assert done.stderr.splitlines()[0] == (
        f"git memzoi: {config}:{line}: nested deeper than {TOML_MAX_NESTING} levels (tables, arrays or dotted keys)"
    )
    assert hashlib.sha256(config.read_bytes()).hexdigest() == digest
    assert not (config.parent / "hooks.json").exists()


def test_agent_install_codex_global_refuses_it_too(repo: Repo, tmp_path: Path) -> None:
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text(DEEP["table header"])
    done = subprocess.run(
        [memzoi_exe(), "agent", "install", "codex", "--global"],
        cwd=repo.path,
        env={**os.environ, "CODEX_HOME": str(home)},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2 and f"{home / 'config.toml'}:1: nested deeper than" in done.stderr


@pytest.mark.parametrize(
    "text",
    [
        'url = "' + "a.[{" * 1000 + '"\n',  # in a string
        "# " + "a.[{" * 1000 + "\n",  # in a comment
        'notes = """\n' + "a.b.c.[{\n" * 500 + '"""\n',  # in a multi-line string
        "x = [" + "1.5, " * 1000 + "]\n",  # floats are no keys
        "a" + ".a" * (TOML_MAX_NESTING - 2) + " = 1\n" + "x = " + "[" * TOML_MAX_NESTING + "]" * TOML_MAX_NESTING,
    ],
)
def test_what_a_person_writes_is_read(text: str) -> None:
    loads_toml("config.toml", text)


def test_the_limit_is_exact() -> None:
    with pytest.raises(ConfigError, match=r"^c:1: nested deeper"):
        loads_toml("c", "x = " + "[" * (TOML_MAX_NESTING + 1) + "]" * (TOML_MAX_NESTING + 1))
    with pytest.raises(ConfigError, match=r"^c:2: nested deeper"):
        loads_toml("c", "\n" + "a" + ".a" * TOML_MAX_NESTING + " = 1")


@pytest.mark.slow
def test_a_push_of_a_deep_memzoi_config_is_refused_at_once(remote: Remote) -> None:
    remote.commit({".memzoi/config.toml": DEEP["dotted key"]})
    before = remote.refs()
    pushed = remote.push()
    assert pushed.returncode != 0
    assert f"nested deeper than {TOML_MAX_NESTING} levels" in pushed.stderr
    assert remote.refs() == before
    checked = run(remote.work.path, "hook", "check", "origin/main..HEAD")
    assert checked.returncode == 1 and ".memzoi/config.toml" in checked.stderr
