"""The seal on a job's approval: an HMAC under a key that only shellagent itself can read.

A plain hash stored beside the commands proves nothing: whatever can edit the job file can
recompute it. The seal is ``hmac-sha256:<hex>`` under a per-user 256-bit key in
``<state>/jobs.key``, created 0600 on first use. shellagent's own directories are never
visible inside a sandbox (``paths.own_dirs``), so no command a job or the agent runs can
read the key, and a job file changed by anything but ``shellagent jobs approve`` no longer
matches its seal. A digest without the prefix comes from an older shellagent (an unkeyed
sha256) and is never trusted: such a job runs again once ``jobs approve`` has shown it.

Removing the key makes every job unapproved (each needs ``jobs approve`` again); it is
never recreated over a file that exists but cannot be read.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import os
import re
import secrets
import stat
from pathlib import Path

from shellagent import paths
from shellagent.errors import ConfigError, EnvironmentProblem

__all__ = ["PREFIX", "is_keyed", "key_path", "seal"]

PREFIX = "hmac-sha256:"
KEY_NAME = "jobs.key"
_KEY_TEXT = re.compile(r"[0-9a-f]{64}\n?")


def key_path() -> Path:
    return paths.state_dir() / KEY_NAME


def seal(material: bytes) -> str:
    """The seal of ``material`` under this user's key (created on first use)."""
    return PREFIX + hmac.new(_key(), material, hashlib.sha256).hexdigest()


def is_keyed(digest: str) -> bool:
    """Whether ``digest`` is a seal at all (not an older, unkeyed sha256)."""
    return digest.startswith(PREFIX)


def _key() -> bytes:
    path = key_path()
    try:
        return _read(path)
    except FileNotFoundError:
        pass
    paths.ensure_private_dir(path.parent)
    _create(path)
    return _read(path)


def _read(path: Path) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as exc:  # a symbolic link (ELOOP), a directory, no permission
        raise EnvironmentProblem(
            f"cannot read the job key {path}: {exc.strerror}",
            hint="remove it; shellagent then makes a new key and each job needs "
            "`shellagent jobs approve ID` again",
        ) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            raise EnvironmentProblem(
                f"{path} is not a file of yours",
                hint="remove it; shellagent then makes a new key and each job needs "
                "`shellagent jobs approve ID` again",
            )
        if st.st_mode & 0o077:
            raise EnvironmentProblem(
                f"{path} can be read by other users (mode {stat.S_IMODE(st.st_mode):04o})",
                hint=f"chmod 600 {path}",
            )
        text = os.read(fd, 128).decode("ascii", errors="replace")
    finally:
        os.close(fd)
    if not _KEY_TEXT.fullmatch(text):
        raise ConfigError(
            "the job key is not 64 hexadecimal digits",
            path=str(path),
            hint="remove it; each job then needs `shellagent jobs approve ID` again",
        )
    return bytes.fromhex(text.strip())


def _create(path: Path) -> None:
    """Write a new key beside ``path`` and link it into place: a concurrent first use
    keeps whichever key was linked first, and nobody ever reads a half-written key."""
    tmp = path.with_name(f".{KEY_NAME}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, (secrets.token_hex(32) + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    try:
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        tmp.unlink()
