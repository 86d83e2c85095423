"""Several processes refreshing one worktree's index at once: every read answers, no write is lost."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from support import interop_dir, memzoi_exe

pytestmark = pytest.mark.slow


def test_concurrent_refreshes_and_full_rebuilds_never_collide(repo) -> None:
    records = repo.path / ".memzoi" / "records"
    shutil.copytree(interop_dir() / ".memzoi" / "records", records, dirs_exist_ok=True)
    exe = memzoi_exe()
    subprocess.run([exe, "rebuild"], cwd=repo.path, check=True, capture_output=True)
    template = (records / "rust-msrv-is-1-96-1.md").read_text()
    for round_no in range(5):
        new_id = f"concurrent-{round_no}"
        (records / f"{new_id}.md").write_text(template.replace("id: rust-msrv-is-1-96-1", f"id: {new_id}"))
        procs = [
            subprocess.Popen(
                [exe, "search", "msrv", "--json"],
                cwd=repo.path,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(3)
        ]
        procs.append(
            subprocess.Popen(
                [exe, "rebuild", "--full"], cwd=repo.path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
        )
        for proc in procs:
            _out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
            assert "Traceback" not in err and "internal error" not in err
        found = subprocess.run(
            [exe, "search", "msrv", "--all", "--limit", "50", "--json"],
            cwd=repo.path,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        for earlier in range(round_no + 1):
            assert f'"concurrent-{earlier}"' in found
