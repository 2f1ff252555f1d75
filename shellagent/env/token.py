"""``env serve``'s token file: written where no other local user can read, plant or swap it.

The token lets whoever holds it run the task's setup commands as this user, so its file is
only ever written into a directory that this user (or root) owns and nobody else can
write, below parents that nobody else can rename (each one owned by this user or root, and
writable by others only with the sticky bit, as /tmp). Anything else is refused before the
server starts, with the reason and the fix.

The directory is opened once and everything after goes through that descriptor, so a
symbolic link swapped in after the check changes nothing. The token goes into a fresh file
(``O_EXCL``, 0600) that is then renamed over the name: a file already there (one left by a
server killed with SIGKILL, or anyone's) is replaced, never opened or written through.
At exit the name is removed only if it is still the file this server wrote.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from shellagent import paths
from shellagent.errors import EnvironmentProblem, InputError

__all__ = ["DEFAULT_NAME", "TokenFile"]

DEFAULT_NAME = "env-token"


class TokenFile:
    """The place the token goes: checked by ``open``, filled by ``write``, emptied by
    ``remove`` (always call it: it also closes the directory)."""

    def __init__(self, path: Path, dir_fd: int) -> None:
        self.path = path
        self._dir_fd = dir_fd
        self._written: tuple[int, int] | None = None  # (device, inode) of our file

    @classmethod
    def open(cls, path: Path | None) -> TokenFile:
        """Check where the token will go: ``path``, or ``env-token`` in the runtime dir."""
        default = path is None
        if path is None:
            directory = paths.private_runtime_dir()
            path = directory / DEFAULT_NAME
            flags = os.O_NOFOLLOW  # the runtime dir itself is never a link (checked above)
            hint = "set XDG_RUNTIME_DIR or SHELLAGENT_RUNTIME_DIR to a directory only you can write"
        else:
            path = Path(os.path.abspath(path))
            directory = path.parent
            flags = 0
            hint = "give --token-file a file in a directory only you can write, such as your home"
        if not path.name or path.name in (".", ".."):
            raise InputError(f"--token-file {path} names no file", hint=hint)
        try:
            dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | flags)
        except OSError as exc:
            raise InputError(
                f"cannot use {directory} for the token: {(exc.strerror or str(exc)).lower()}",
                hint=hint,
            ) from None
        problem = _unsafe(dir_fd)
        if problem is not None:
            os.close(dir_fd)
            where = f"will not write the token into {directory}: {problem}"
            raise (EnvironmentProblem if default else InputError)(where, hint=hint)
        return cls(path, dir_fd)

    def write(self, token: str) -> None:
        """Put ``token`` at the path: a new 0600 file, renamed over whatever was there."""
        name = self.path.name
        temp = f".{name}.{secrets.token_hex(8)}"
        fd = os.open(
            temp,
            os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
            dir_fd=self._dir_fd,
        )
        try:
            with os.fdopen(fd, "w") as f:
                f.write(token + "\n")
            os.replace(temp, name, src_dir_fd=self._dir_fd, dst_dir_fd=self._dir_fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=self._dir_fd)
            raise InputError(
                f"cannot write the token to {self.path}: {(exc.strerror or str(exc)).lower()}",
                hint="give --token-file the path of a file (not a directory)",
            ) from None
        st = os.stat(name, dir_fd=self._dir_fd, follow_symlinks=False)
        self._written = (st.st_dev, st.st_ino)

    def remove(self) -> None:
        """Remove the token if the name still holds the file ``write`` made; close."""
        try:
            if self._written is not None:
                st = os.stat(self.path.name, dir_fd=self._dir_fd, follow_symlinks=False)
                if (st.st_dev, st.st_ino) == self._written:
                    os.unlink(self.path.name, dir_fd=self._dir_fd)
        except OSError:
            pass  # already gone
        finally:
            self._written = None
            with contextlib.suppress(OSError):
                os.close(self._dir_fd)


def _unsafe(dir_fd: int) -> str | None:
    """Why the directory open at ``dir_fd`` (or a parent of it) lets another user at the
    token, or None."""
    st = os.fstat(dir_fd)
    uid = os.getuid()
    if st.st_uid not in (uid, 0):
        return f"it belongs to uid {st.st_uid}"
    if st.st_mode & 0o022:
        return f"other users can write it (mode {stat.S_IMODE(st.st_mode):04o})"
    real = Path(os.readlink(f"/proc/self/fd/{dir_fd}"))
    for parent in real.parents:
        try:
            up = os.stat(parent)
        except OSError as exc:
            return f"{parent}: {(exc.strerror or str(exc)).lower()}"
        if up.st_uid not in (uid, 0):
            return f"its parent {parent} belongs to uid {up.st_uid}"
        if up.st_mode & 0o022 and not up.st_mode & stat.S_ISVTX:
            return (
                f"other users can write its parent {parent} (mode {stat.S_IMODE(up.st_mode):04o})"
            )
    return None
