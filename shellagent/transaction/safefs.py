"""File operations for the apply that a swapped directory cannot redirect.

The apply runs outside the sandbox with the user's rights (or root's). Between the preview
and the apply, whoever can write a parent directory could replace it with a symlink to
somewhere else; a path-based ``rename`` or ``open`` would then follow it. So every parent is
opened from ``/`` one component at a time with ``O_NOFOLLOW | O_DIRECTORY``, and every
operation is relative to those directory fds (``dir_fd=``: ``openat``, ``renameat``,
``unlinkat``, ``mkdirat``). New files are made ``O_CREAT | O_EXCL`` under an unpredictable
name. Run by root, a parent directory that another user could change (owned by someone
else, or group- or world-writable without the sticky bit) is refused.

Durability: instead of an fsync per file, ``sync_fs`` flushes each file system the batch
touched once (``syncfs``), which is what ``sync -f`` does after ``cp -a``; after the
renames, ``sync_dirs`` fsyncs the directories they changed.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import hashlib
import os
import secrets
import stat
from collections import OrderedDict
from pathlib import Path

from shellagent.transaction.changeset import open_regular

__all__ = [
    "DirWalker",
    "UnsafeParent",
    "chmod_at",
    "copy_into",
    "sync_dirs",
    "sync_fs",
    "temp_name",
]

# O_PATH: a directory the user may search but not list (mode 0711) can still be walked.
DIR_FLAGS = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
CHUNK = 1 << 20
FDS_KEPT = 64


class UnsafeParent(OSError):
    """A parent directory is a symlink, not a directory, or writable by another user."""


def temp_name(name: str) -> str:
    return f".{name[:40]}.shellagent-{secrets.token_hex(8)}"


class DirWalker:
    """Directory fds, opened from ``/`` without following a symlink; the most recent
    ones are kept open (a batch lands many files in few directories)."""

    def __init__(self) -> None:
        self.root_only = os.geteuid() == 0
        self._fds: OrderedDict[Path, int] = OrderedDict()

    def close(self) -> None:
        for fd in self._fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._fds.clear()

    def __enter__(self) -> DirWalker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check(self, fd: int, path: Path) -> None:
        if not self.root_only:
            return
        st = os.fstat(fd)
        others = st.st_uid != 0 or (st.st_mode & 0o020 and st.st_gid != 0)
        if others or (st.st_mode & 0o002 and not st.st_mode & stat.S_ISVTX):
            raise UnsafeParent(
                errno.EPERM,
                "another user can change this directory; root does not apply into it",
                str(path),
            )

    def _keep(self, path: Path, fd: int) -> None:
        self._fds[path] = fd
        self._fds.move_to_end(path)
        while len(self._fds) > FDS_KEPT:
            _, old = self._fds.popitem(last=False)
            os.close(old)

    def forget(self, path: Path) -> None:
        """``path`` was removed or replaced: never reuse an fd for it (or below it)."""
        if path in self._fds:
            os.close(self._fds.pop(path))
        prefix = f"{path}/"
        for kept in [p for p in self._fds if str(p).startswith(prefix)]:
            os.close(self._fds.pop(kept))

    def open_dir(self, path: Path) -> int:
        """An fd of the directory ``path`` (absolute, with no symlink in it); owned by
        the walker: do not close it."""
        if not path.is_absolute():
            raise ValueError(f"not an absolute path: {path}")
        if path in self._fds:
            self._fds.move_to_end(path)
            return self._fds[path]
        base = next((p for p in path.parents if p in self._fds), None)
        if base is None:
            fd = os.open("/", DIR_FLAGS)
            try:
                self._check(fd, Path("/"))
            except BaseException:
                os.close(fd)
                raise
            base = Path("/")
            self._keep(base, fd)
        here = base
        fd = self._fds[base]
        for name in path.relative_to(base).parts:
            here = here / name
            try:
                nxt = os.open(name, DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise UnsafeParent(
                        exc.errno, "not a directory (a symlink or a file now)", str(here)
                    ) from None
                raise OSError(exc.errno, exc.strerror, str(here)) from None
            try:
                self._check(nxt, here)
            except BaseException:
                os.close(nxt)
                raise
            self._keep(here, nxt)
            fd = nxt
        return fd

    def parent(self, path: Path) -> tuple[int, str]:
        """(fd of the parent directory, the last component) of ``path``."""
        return self.open_dir(path.parent), path.name


def chmod_at(dir_fd: int, name: str, mode: int) -> None:
    """Set the mode of the regular file or directory ``name`` in ``dir_fd``: never through
    a symlink, never opening a fifo or a device."""
    fd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
            raise OSError(errno.EPERM, "not a regular file or a directory", name)
        os.chmod(f"/proc/self/fd/{fd}", mode)  # the inode the O_PATH fd holds
    finally:
        os.close(fd)


def copy_into(source: Path, dir_fd: int, name: str, mode: int) -> tuple[str, int, str]:
    """Copy the regular file ``source`` to a new, unpredictable name in ``dir_fd``, with
    ``mode`` (set-id and sticky bits already stripped by the caller) and ``source``'s access
    and modification times; (temp name, size, sha256). Never follows a symlink, never opens
    a fifo or a device, never fsyncs (see ``sync_fs``)."""
    src = open_regular(source)
    try:
        temp = temp_name(name)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        dst = os.open(temp, flags, 0o600, dir_fd=dir_fd)
        try:
            digest = hashlib.sha256()
            size = 0
            while chunk := os.read(src, CHUNK):
                digest.update(chunk)
                view = memoryview(chunk)
                while view:
                    written = os.write(dst, view)
                    view = view[written:]
                size += len(chunk)
            os.fchmod(dst, mode)
            st = os.fstat(src)
            os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))
        except BaseException:
            os.close(dst)
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=dir_fd)
            raise
        os.close(dst)
    finally:
        os.close(src)
    return temp, size, digest.hexdigest()


_libc: list[ctypes.CDLL | None] = []


def _syncfs(fd: int) -> bool:
    if not _libc:
        try:
            _libc.append(ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6"))
        except OSError:
            _libc.append(None)
    libc = _libc[0]
    if libc is None:
        return False
    try:
        return int(libc.syncfs(fd)) == 0
    except AttributeError:
        return False


def sync_dirs(fds: list[int]) -> None:
    """Make the entries of the directories ``fds`` durable (renames, unlinks): an fsync of
    each, or a ``syncfs`` where one cannot be opened for it."""
    seen: set[tuple[int, int]] = set()
    for fd in fds:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) in seen:
            continue
        seen.add((st.st_dev, st.st_ino))
        try:
            real = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=fd)
        except OSError:
            sync_fs([fd])
            continue
        try:
            os.fsync(real)
        finally:
            os.close(real)


def sync_fs(fds: list[int]) -> set[int]:
    """Make everything written on the file systems of ``fds`` durable: one ``syncfs``
    per file system (``os.sync`` where that cannot be done); the devices synced."""
    seen: set[int] = set()
    for fd in fds:
        dev = os.fstat(fd).st_dev
        if dev in seen:
            continue
        seen.add(dev)
        try:  # syncfs needs an fd that is not O_PATH
            real = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=fd)
        except OSError:
            os.sync()
            continue
        try:
            if not _syncfs(real):
                os.sync()
        finally:
            os.close(real)
    return seen
