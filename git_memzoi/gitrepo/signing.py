"""Sign a commit the way git does when `commit.gpgsign` is on: gpg (openpgp), gpgsm (x509) or ssh-keygen (ssh)."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from git_memzoi.errors import Refused
from git_memzoi.gitrepo.config import config_bool, config_value
from git_memzoi.gitrepo.repo import GitRepo

_FORMATS = ("openpgp", "x509", "ssh")


def wants_signature(repo: GitRepo) -> bool:
    """Whether git would sign a commit here (`commit.gpgsign`)."""
    return config_bool(repo, "commit.gpgsign")


def sign(repo: GitRepo, payload: str, committer: str) -> str:
    """The signature git would attach to `payload` (the commit object's text); Refused when signing fails.

    `committer` is `Name <email>`, the key gpg and gpgsm sign with when `user.signingkey` is unset.
    """
    fmt = (config_value(repo, "gpg.format") or "openpgp").lower()
    if fmt not in _FORMATS:
        raise Refused(f"gpg.format = {fmt}: unknown signing format (git knows {', '.join(_FORMATS)})")
    key = config_value(repo, "user.signingkey")
    if fmt == "ssh":
        return _ssh(repo, payload, key)
    default = "gpg" if fmt == "openpgp" else "gpgsm"
    program = (
        config_value(repo, f"gpg.{fmt}.program")
        or (config_value(repo, "gpg.program") if fmt == "openpgp" else None)
        or default
    )
    args = [program, "--status-fd=2", "-bsau", key or committer]
    done = _run(args, payload.encode("utf-8"))
    # git trusts only gpg's machine-readable status line, not the exit code alone
    if done.returncode != 0 or "\n[GNUPG:] SIG_CREATED " not in "\n" + done.stderr.decode("utf-8", "replace"):
        raise Refused(
            f"{program} failed to sign the commit: {_last_line(done.stderr)}",
            hint="check user.signingkey and that the key is usable (gpg --list-secret-keys)",
        )
    return done.stdout.decode("utf-8")


def _ssh(repo: GitRepo, payload: str, key: str | None) -> str:
    if not key:
        raise Refused("gpg.format = ssh needs user.signingkey (a key file or a literal public key)")
    program = config_value(repo, "gpg.ssh.program") or "ssh-keygen"
    with tempfile.TemporaryDirectory(prefix="memzoi-sign-") as tmp:
        buffer = Path(tmp) / "buffer"
        buffer.write_bytes(payload.encode("utf-8"))
        literal = key.startswith("key::") or key.startswith("ssh-")
        if literal:
            # a literal public key: its private half is in the ssh agent (-U), as git does it
            keyfile = Path(tmp) / "key.pub"
            keyfile.write_text(key.removeprefix("key::") + "\n")
            args = [program, "-Y", "sign", "-n", "git", "-f", str(keyfile), "-U", str(buffer)]
        else:
            args = [program, "-Y", "sign", "-n", "git", "-f", os.path.expanduser(key), str(buffer)]
        done = _run(args, None)
        signature = Path(f"{buffer}.sig")
        if done.returncode != 0 or not signature.is_file():
            raise Refused(
                f"{program} failed to sign the commit: {_last_line(done.stderr)}",
                hint="check user.signingkey (a private key file, or a public key whose key is in ssh-agent)",
            )
        return signature.read_text()


def _run(args: list[str], stdin: bytes | None) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            args, input=stdin, capture_output=True, check=False, stdin=None if stdin is not None else subprocess.DEVNULL
        )
    except OSError as exc:
        raise Refused(
            f"cannot run {args[0]} to sign the commit: {exc.strerror or exc}",
            hint="install it, or set gpg.program / gpg.ssh.program",
        ) from None


def _last_line(stderr: bytes) -> str:
    lines = [
        line.strip()
        for line in stderr.decode("utf-8", "replace").splitlines()
        if line.strip() and not line.startswith("[GNUPG:]")
    ]
    return lines[-1] if lines else "no message"
