"""Read-only, id-shifted views of host trees: the lower layers of a throwaway root whose
root is not host root.

With the shifted mapping (``userns.py``) root inside the sandbox is host uid
``HOST_BASE``. A lower layer seen directly would show every host-root file as unmapped
(65534): root inside could not edit ``/etc/hosts`` in place (overlayfs refuses the
copy-up), nor create files below root-owned directories. An *idmapped mount* fixes that
without copying anything: a view of the tree in which a file owned by host id N appears
owned by ``HOST_BASE + N``, which is id N again inside the sandbox.

A view is a bind mount made with ``open_tree`` and ``mount_setattr(MOUNT_ATTR_IDMAP |
MOUNT_ATTR_RDONLY | NOSUID | NODEV)``, attached below ``VIEWS_DIR`` (``/run/shellagent-
lower``, mode 0711: the sandbox's uid must traverse it, nobody can list it) and reused by
every later session. It is read-only and shows files with owners no host user has, so a
host user who finds it can do less there than in the original tree. A view whose source
is gone (an old snapshot generation) is detached by ``prune``.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import functools
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

from shellagent.errors import SandboxUnavailable
from shellagent.sandbox import userns

# Syscall numbers of the new mount API: the same on every architecture (>= 424).
SYS_OPEN_TREE, SYS_MOVE_MOUNT, SYS_MOUNT_SETATTR = 428, 429, 442
AT_FDCWD = -100
AT_EMPTY_PATH = 0x1000
OPEN_TREE_CLONE = 0x1
OPEN_TREE_CLOEXEC = os.O_CLOEXEC
MOVE_MOUNT_F_EMPTY_PATH = 0x4
MOUNT_ATTR_RDONLY, MOUNT_ATTR_NOSUID, MOUNT_ATTR_NODEV = 0x1, 0x2, 0x4
MOUNT_ATTR_IDMAP = 0x100000
MNT_DETACH = 2
VIEW_ATTRS = MOUNT_ATTR_IDMAP | MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV

DEFAULT_VIEWS_DIR = Path("/run/shellagent-lower")


class _MountAttr(ctypes.Structure):
    _fields_ = [
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    ]


_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")
    return result


def views_dir() -> Path:
    return Path(os.environ.get("SHELLAGENT_VIEWS_DIR") or DEFAULT_VIEWS_DIR)


def enabled() -> bool:
    """Shifted ids are used unless ``SHELLAGENT_IDMAP=off`` asks for the identity mapping."""
    return os.environ.get("SHELLAGENT_IDMAP", "on").lower() not in ("off", "0", "no")


@functools.lru_cache(maxsize=1)
def available() -> str | None:
    """None when this kernel and file system can make id-shifted views, else why not."""
    if os.getuid() != 0:
        return "only root may make idmapped mounts"
    try:
        namespace = userns.prepare(shifted=True)
    except SandboxUnavailable as exc:
        return exc.message
    assert namespace is not None  # root
    try:
        ns_fd = namespace.open_fd()
        try:
            os.close(_clone_shifted(Path("/usr"), ns_fd))
        finally:
            os.close(ns_fd)
    except OSError as exc:
        return f"idmapped mounts do not work here ({exc.strerror})"
    finally:
        namespace.release()
    return None


def _clone_shifted(source: Path, ns_fd: int) -> int:
    """A detached, read-only, id-shifted copy of the mount at ``source`` (its fd)."""
    fd = _check(
        _libc.syscall(
            SYS_OPEN_TREE, AT_FDCWD, os.fsencode(source), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC
        ),
        f"open_tree {source}",
    )
    attr = _MountAttr(VIEW_ATTRS, 0, 0, ns_fd)
    try:
        _check(
            _libc.syscall(
                SYS_MOUNT_SETATTR, fd, b"", AT_EMPTY_PATH, ctypes.byref(attr), ctypes.sizeof(attr)
            ),
            f"mount_setattr {source}",
        )
    except OSError:
        os.close(fd)
        raise
    return fd


def _name(source: Path) -> str:
    digest = hashlib.sha256(os.fsencode(source)).hexdigest()[:16]
    return f"{source.name or 'root'}-{digest}"


def _is_view_of(target: Path, source: Path) -> bool:
    """``target`` is mounted with ``source``'s root, its owner shifted."""
    try:
        seen, real = os.stat(target), os.stat(source)
    except OSError:
        return False
    same = (seen.st_dev, seen.st_ino) == (real.st_dev, real.st_ino)
    if real.st_uid >= userns.SHIFTED_COUNT:  # shows as the overflow id; the inode decides
        return same
    return same and seen.st_uid == userns.host_id(real.st_uid)


def view(source: Path) -> Path:
    """The path of a read-only, id-shifted view of ``source``, made on first use."""
    base = views_dir()
    target = base / _name(source)
    if _is_view_of(target, source):
        return target
    with _locked(base):
        if _is_view_of(target, source):
            return target
        _detach(target)
        target.mkdir(mode=0o755, exist_ok=True)
        try:
            namespace = userns.prepare(shifted=True)
        except SandboxUnavailable as exc:
            raise OSError(exc.message) from exc
        assert namespace is not None  # root
        try:
            ns_fd = namespace.open_fd()
            try:
                tree = _clone_shifted(source, ns_fd)
            finally:
                os.close(ns_fd)
        finally:
            namespace.release()
        try:
            _check(
                _libc.syscall(
                    SYS_MOVE_MOUNT,
                    tree,
                    b"",
                    AT_FDCWD,
                    os.fsencode(target),
                    MOVE_MOUNT_F_EMPTY_PATH,
                ),
                f"move_mount {target}",
            )
        finally:
            os.close(tree)
        (base / f"{target.name}.source").write_bytes(os.fsencode(source))
    return target


def prune(*, under: Path | None = None) -> list[Path]:
    """Detach the views whose source no longer exists (deleted snapshot generations) or,
    given ``under``, lies below it (a test run's snapshots, at the run's end)."""
    base = views_dir()
    if not base.is_dir():
        return []
    dropped = []
    for record in base.glob("*.source"):
        try:  # another session may be pruning the same record right now
            source = Path(os.fsdecode(record.read_bytes()))
        except FileNotFoundError:
            continue
        if source.exists() and not (under is not None and source.is_relative_to(under)):
            continue
        with _locked(base):
            if not record.exists():
                continue
            target = base / record.name.removesuffix(".source")
            _detach(target)
            with contextlib.suppress(OSError):
                target.rmdir()
            record.unlink(missing_ok=True)
            dropped.append(target)
    return dropped


def _detach(target: Path) -> None:
    """Lazily unmount everything stacked on ``target`` (sessions using it keep their copy)."""
    for _ in range(16):
        if _libc.umount2(os.fsencode(target), MNT_DETACH) != 0:
            return


@contextlib.contextmanager
def _locked(base: Path) -> Iterator[None]:
    base.mkdir(mode=0o711, parents=True, exist_ok=True)
    base.chmod(0o711)
    fd = os.open(base / ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def describe() -> tuple[str, str]:
    """Who root is inside a throwaway root, and the fix when it is host root (doctor)."""
    if os.getuid() != 0:
        return "one id: uid 0 inside is you outside (chown to other users fails)", ""
    top = userns.host_id(userns.SHIFTED_COUNT - 1)
    if not enabled():
        return "identity map: root inside is host root (SHELLAGENT_IDMAP=off)", (
            "unset SHELLAGENT_IDMAP to map root inside to an unprivileged host uid"
        )
    why = available()
    if why is not None:
        return f"identity map: root inside is host root ({why})", (
            "Linux 5.12 or newer and an ext4, xfs, btrfs or tmpfs root give shifted ids"
        )
    return (
        f"shifted: ids 0-65535 inside are host {userns.HOST_BASE}-{top}, root inside is not "
        f"host root; lower layers through idmapped views in {views_dir()}"
    ), ""
