"""A frozen copy of the host's ``/etc`` and ``/var``: the lower layer of a throwaway root.

overlayfs over a live host directory shows the host's writes during a session (lock files
of the host's own user management appeared inside task-set episodes) and can list a file
it cannot open. A snapshot never changes once built: every ephemeral session mounts the
newest complete generation and holds a shared lock on it so an old generation is deleted
only when no session uses it. A generation is reused while the host's ``/etc`` has not
changed (a fingerprint of its directories: a file made, removed or renamed anywhere in it
changes one; looked at no more than every ``RECHECK_S``) and for at most ``MAX_AGE_S``
(which also picks up ``/var``, the host's running state, and edits made in place).

What a snapshot leaves out:
- contents of caches and package lists (``var/cache``, ``var/lib/apt/lists`` …): the
  directories stay, empty;
- files larger than ``MAX_FILE_BYTES`` (databases, journals, logs of the host);
- anything other users may not read: a file without the "others may read" bit, a
  directory others may not enter (``/etc/ssl/private``, ``/var/lib/private``, mail
  spools). Run by root, the sandbox's root can read any mapped file (it has
  ``CAP_DAC_OVERRIDE`` inside): what is not copied cannot leak. Their names stay, as
  empty files and directories, so paths a task expects still exist;
- sockets, fifos and device nodes.
Built by an ordinary user, the copy belongs to that user, so root inside the sandbox can
edit every file in place (on a live lower layer it could only replace them).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import stat
import time
from pathlib import Path

from shellagent import paths

TREES = ("etc", "var")
EMPTY_CONTENT = (
    "var/cache",
    "var/tmp",
    "var/lib/apt/lists",
    "var/lib/docker",
    "var/lib/containers",
    "var/lib/snapd",
    "var/lib/flatpak",
    "var/log/journal",
)
MAX_FILE_BYTES = 8 << 20
MAX_AGE_S = 3600.0
RECHECK_S = 30.0
WATCHED = "etc"
_DONE = ".complete"
_LOCK = ".in-use"
_FINGERPRINT = ".fingerprint"
_CHECKED = ".checked"


class Snapshot:
    """One generation, held (shared lock) until ``release``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._fd = os.open(root / _LOCK, os.O_RDONLY | os.O_CLOEXEC)
        fcntl.flock(self._fd, fcntl.LOCK_SH)

    def release(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def acquire(
    base: Path | None = None, *, now: float | None = None, source: Path = Path("/")
) -> Snapshot:
    """The newest complete generation of ``source``'s trees, built first if there is none
    fresh enough (``source`` other than ``/`` is for tests)."""
    base = paths.ensure_private_dir(base or paths.rootfs_dir())
    base.chmod(0o755)  # the sandbox's user must traverse it; contents are others-readable
    now = time.time() if now is None else now
    with _exclusive(base / ".build.lock"):
        fresh = [g for g in _generations(base) if now - _built_at(g) < MAX_AGE_S]
        root = fresh[-1] if fresh and _still_current(base, fresh[-1], now, source) else None
        root = root or _build(base, now, source)
        held = Snapshot(root)
        _remove_unused(base, keep=root)
    return held


def _generations(base: Path) -> list[Path]:
    found = [g for g in base.iterdir() if g.name.startswith("gen-") and (g / _DONE).exists()]
    return sorted(found, key=_built_at)


def _built_at(generation: Path) -> float:
    return (generation / _DONE).stat().st_mtime


def fingerprint(top: Path) -> str:
    """A digest of every directory below ``top`` (path, inode, modification time): any
    file made, removed or renamed there changes it. Directories others may not enter are
    not entered (their contents are not in a snapshot either)."""
    digest = hashlib.blake2b(digest_size=16)
    first = os.fspath(top)
    stack = [first]
    while stack:
        here = stack.pop()
        try:
            st = os.lstat(here)
            digest.update(b"%s\0%d\0%d\0" % (os.fsencode(here), st.st_ino, st.st_mtime_ns))
            if not st.st_mode & stat.S_IXOTH and here != first:
                continue
            with os.scandir(here) as entries:
                stack += [e.path for e in entries if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
    return digest.hexdigest()


def _still_current(base: Path, generation: Path, now: float, source: Path) -> bool:
    """False when the host's /etc changed since ``generation`` was built (checked at most
    every ``RECHECK_S``, by whichever session starts first)."""
    checked = base / _CHECKED
    with contextlib.suppress(OSError):
        if now - checked.stat().st_mtime < RECHECK_S:
            return True
    checked.touch(mode=0o644)
    os.utime(checked, (now, now))
    try:
        return (generation / _FINGERPRINT).read_text() == fingerprint(source / WATCHED)
    except OSError:
        return False


def _build(base: Path, now: float, source: Path) -> Path:
    work = base / f"building-{os.getpid()}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(mode=0o755)
    # Taken before copying: a change made meanwhile makes the next session rebuild.
    (work / _FINGERPRINT).write_text(fingerprint(source / WATCHED))
    for tree in TREES:
        _copy_tree(source / tree, work / tree, skip=base)
    (work / _LOCK).touch(mode=0o644)
    final = base / f"gen-{int(now * 1000)}"
    (work / _DONE).touch(mode=0o644)
    os.utime(work / _DONE, (now, now))
    work.rename(final)
    return final


def _others_may(mode: int, bit: int) -> bool:
    return bool(mode & bit)


def _copy_tree(src_root: Path, dst_root: Path, skip: Path | None = None) -> None:
    """Copy ``src_root`` into ``dst_root``, leaving out ``skip`` (the snapshot cache itself,
    when it lies inside the copied tree: a home under /var would copy itself forever)."""
    as_root = os.geteuid() == 0
    if not src_root.is_dir() or src_root.is_symlink():
        return
    skipped: tuple[int, int] | None = None
    if skip is not None:
        with contextlib.suppress(OSError):
            st_skip = skip.stat()
            skipped = (st_skip.st_dev, st_skip.st_ino)
    for dirpath, dirnames, filenames in os.walk(src_root):
        src = Path(dirpath)
        if skipped is not None:
            for name in dirnames[:]:
                with contextlib.suppress(OSError):
                    st_name = (src / name).lstat()
                    if (st_name.st_dev, st_name.st_ino) == skipped:
                        dirnames.remove(name)
        rel = src.relative_to(src_root.parent)
        dst = dst_root.parent / rel
        st = src.lstat()
        dst.mkdir(exist_ok=True)
        _copy_meta(src, dst, st, as_root)
        hidden = not _others_may(st.st_mode, stat.S_IXOTH) and src != src_root
        if hidden or any(str(rel) == e or str(rel).startswith(e + "/") for e in EMPTY_CONTENT):
            if hidden:
                os.chmod(dst, stat.S_IMODE(st.st_mode))
            dirnames[:] = [] if hidden else dirnames
            filenames = []
        for name in dirnames[:]:
            s = src / name
            if s.is_symlink():
                _copy_symlink(s, dst / name, as_root)
                dirnames.remove(name)
        for name in filenames:
            _copy_entry(src / name, dst / name, as_root)


def _copy_entry(src: Path, dst: Path, as_root: bool) -> None:
    try:
        st = src.lstat()
    except OSError:
        return
    if stat.S_ISLNK(st.st_mode):
        _copy_symlink(src, dst, as_root)
        return
    if not stat.S_ISREG(st.st_mode):
        return  # sockets, fifos, device nodes
    readable = _others_may(st.st_mode, stat.S_IROTH) and st.st_size <= MAX_FILE_BYTES
    if readable:
        try:
            shutil.copyfile(src, dst, follow_symlinks=False)
        except OSError:
            readable = False
    if not readable:
        dst.touch()
        os.truncate(dst, 0)
    _copy_meta(src, dst, st, as_root)


def _copy_symlink(src: Path, dst: Path, as_root: bool) -> None:
    with contextlib.suppress(OSError):
        os.symlink(os.readlink(src), dst)
        if as_root:
            st = src.lstat()
            os.lchown(dst, st.st_uid, st.st_gid)


def _copy_meta(src: Path, dst: Path, st: os.stat_result, as_root: bool) -> None:
    with contextlib.suppress(OSError):
        if as_root:
            os.chown(dst, st.st_uid, st.st_gid)
        mode = stat.S_IMODE(st.st_mode)
        if not as_root:
            mode |= stat.S_IRUSR | stat.S_IWUSR | (stat.S_IXUSR if stat.S_ISDIR(st.st_mode) else 0)
        os.chmod(dst, mode)
        os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))


def _remove_unused(base: Path, keep: Path) -> None:
    """Delete other generations (and leftovers of interrupted builds) no session holds."""
    for entry in base.iterdir():
        if entry == keep or entry.name.startswith("."):
            continue
        if entry.name.startswith("building-"):
            pid = entry.name.removeprefix("building-")
            if pid.isdigit() and Path(f"/proc/{pid}").exists():
                continue
            shutil.rmtree(entry, ignore_errors=True)
            continue
        lock = entry / _LOCK
        try:
            fd = os.open(lock, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            shutil.rmtree(entry, ignore_errors=True)
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # a running session uses it
        finally:
            os.close(fd)
        shutil.rmtree(entry, ignore_errors=True)


@contextlib.contextmanager
def _exclusive(lock: Path):  # type: ignore[no-untyped-def]
    fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)
