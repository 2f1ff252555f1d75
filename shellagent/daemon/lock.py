"""The daemon's place on disk: a private runtime dir, a pid lock, and the socket.

Safety rules (checklist G2, G5):

* The runtime dir must be a real directory (never a symlink) owned by this user; it is
  made 0700 before anything is created in it (``paths.private_runtime_dir``).
* ``daemon.lock`` is held with ``fcntl.flock`` for the daemon's whole life, so two daemons
  never run; it is opened with ``O_NOFOLLOW``, must be ours (another user's is replaced,
  and never read for a pid to signal) and holds the pid for ``daemon stop``.
* Whatever sits at the socket path is looked at with ``lstat``, never followed: a stale
  socket or a symlink is unlinked (the link itself, not its target); anything else is an
  error the user must resolve.
* The socket is bound under a umask of 0o177 inside the 0700 dir and chmod'ed 0600, so no
  other user can reach it at any instant, whatever the caller's umask.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import socket
import stat
from dataclasses import dataclass
from pathlib import Path

from shellagent import paths
from shellagent.errors import EnvironmentProblem
from shellagent.protocol import SOCKET_NAME

LOCK_NAME = "daemon.lock"
log = logging.getLogger("shellagent.daemon")


class DaemonRunning(EnvironmentProblem):
    """Another daemon holds the lock."""


def socket_path(runtime: Path) -> Path:
    return runtime / SOCKET_NAME


def private_runtime_dir(path: Path) -> Path:
    """Create ``path`` 0700 (parents as needed) and check it is ours and not a link."""
    return paths.private_runtime_dir(path)


@dataclass
class PidLock:
    """An exclusive ``flock`` on ``daemon.lock``, released when the process ends."""

    path: Path
    fd: int

    @classmethod
    def acquire(cls, runtime: Path) -> PidLock:
        path = runtime / LOCK_NAME
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(path, flags, 0o600)
            if os.fstat(fd).st_uid != os.getuid():
                # Planted while the directory was not yet private: never lock (or wait on)
                # a file someone else controls; ours replaces it.
                os.close(fd)
                os.unlink(path)
                fd = os.open(path, flags | os.O_EXCL, 0o600)
        except OSError as exc:
            raise EnvironmentProblem(
                f"cannot open {path}: {exc.strerror}", hint="remove it if it is a link"
            ) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            pid = read_pid(runtime)
            raise DaemonRunning(
                f"a shellagent daemon is already running (pid {pid})",
                hint="`shellagent daemon stop` stops it",
            ) from None
        os.fchmod(fd, 0o600)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        return cls(path, fd)

    def release(self) -> None:
        with contextlib.suppress(OSError):
            os.ftruncate(self.fd, 0)
        with contextlib.suppress(OSError):
            os.close(self.fd)


def read_pid(runtime: Path) -> int | None:
    """The pid written by a running daemon, if the lock is held; None otherwise."""
    path = runtime / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if os.fstat(fd).st_uid != os.getuid():
            return None  # not our daemon's: its pid is not one to signal
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.read(fd, 64).decode(errors="replace").strip()
            return int(text) if text.isdigit() else None
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None  # nobody holds it: no daemon
    finally:
        os.close(fd)


def clear_socket_path(path: Path) -> None:
    """Remove a stale socket or a symlink at ``path`` without following it."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        log.warning("removing a symbolic link at the socket path %s (not followed)", path)
        os.unlink(path)
    elif stat.S_ISSOCK(st.st_mode):
        # We hold the lock, so no live daemon owns it.
        os.unlink(path)
    else:
        raise EnvironmentProblem(
            f"{path} exists and is not a socket", hint="move it away and start again"
        )


def bind_socket(path: Path) -> socket.socket:
    """A listening Unix socket at ``path``, 0600 from its first instant."""
    clear_socket_path(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(str(path))
    except OSError:
        sock.close()
        raise
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(64)
    sock.setblocking(False)
    return sock


def peer_credentials(sock: socket.socket) -> tuple[int, int]:
    """(pid, uid) of the process at the other end, from ``SO_PEERCRED``."""
    import struct

    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, _gid = struct.unpack("3i", creds)
    return pid, uid
