"""Trying a command that changes files on a throwaway copy of the working directory.

The recipe step (``recipe_step``) tries the renderings it is unsure between before it shows
one. A read-only rendering runs confined in the session's own shell; a writer runs here: in
a new sandbox where the working directory is an overlay whose upper layer is a fresh
temporary directory, so every write lands in that directory and is thrown away with it.
The real files are the overlay's lower layer: read, never written. Each trial gets its own
sandbox and its own upper layer, so one trial cannot see another's changes.

Nobody approved what a trial runs, so its sandbox is tighter than a session's: its upper
layer may hold ``TRIAL_CAP_BYTES`` at most (less when the session cap is lower; enforced
while the command runs, ``sandbox/diskcap.py``); a trial that needs more is reported as not
tried, like a writer with no copy to try it on. No command in it may open a Unix socket
(read-only binds do not stop a ``connect`` to a host socket). Its folder,
``/var/tmp/shellagent-trial-*``, is locked while the trial runs and removed after it;
what a killed process left behind is removed by ``sweep`` (the daemon's start and stop),
only this user's and only folders no trial holds.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import logging
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from shellagent.sandbox import CommandResult

__all__ = ["TRIAL_CAP_BYTES", "OverlayTrial", "TriedOnACopy", "changed", "remove_tree", "sweep"]

log = logging.getLogger("shellagent.agent")

PREFIX = "shellagent-trial-"
SCRATCH = Path("/var/tmp")
TRIAL_CAP_BYTES = 256 << 20


@dataclass(frozen=True)
class TriedOnACopy(CommandResult):
    """A trial's result with what its command changed on the copy: one line per path of
    the overlay's upper layer (``file:PATH:SIZE:SHA256``, ``dir:PATH``, ``deleted:PATH``,
    ``link:PATH:TARGET``), sorted. Two commands that changed the same paths to the same
    contents have the same lines."""

    changed: tuple[str, ...] = ()


@dataclass(frozen=True)
class OverlayTrial:
    """A ``recipe_step.WriterTrial``: runs a command on an overlay copy of ``cwd``.

    ``scratch`` is where the upper layers go (a directory on disk outside every tree that
    is overlaid: overlayfs refuses an upper layer inside its lower one)."""

    scratch: Path = SCRATCH

    def __call__(self, command: str, cwd: str, timeout: float) -> CommandResult | None:
        from shellagent.sandbox import DiskCap, Overlay, Sandbox, changes_cap_bytes, get_profile

        here = Path(cwd or ".").resolve()
        if here == Path("/") or not here.is_dir():
            return None  # the whole file system cannot be one overlay's lower layer
        try:
            top = Path(tempfile.mkdtemp(prefix=PREFIX, dir=self.scratch))
        except OSError:  # no room for a copy: not tried
            return None
        held = _hold(top)  # ``sweep`` in another process leaves it alone
        try:
            upper, work = top / "upper", top / "work"
            try:
                upper.mkdir()
                work.mkdir()
            except OSError:  # swept by a daemon starting this very moment
                return None
            # The default profile with no write grant: the overlay is the only writable tree.
            profile = dataclasses.replace(
                get_profile("default", cwd=here),
                writable=(),
                workdir=here,
                overlays=(Overlay(here, upper, work),),
                host_view=False,
                disk_cap=DiskCap(min(changes_cap_bytes(), TRIAL_CAP_BYTES)),
                unix_sockets=False,
            )
            with Sandbox(profile, timeout=timeout) as session:
                result = session.run(command, timeout=timeout)
                stopped = session.disk_stopped
            if stopped:  # too big to try on a copy: as a writer that could not be tried
                return None
            # read once the sandbox is gone: nothing it started can change the layer now
            made = {f.name: getattr(result, f.name) for f in dataclasses.fields(result)}
            return TriedOnACopy(**made, changed=_fingerprint(upper))
        finally:
            if not remove_tree(top):
                log.warning("could not remove the trial folder %s", top)
            if held is not None:
                os.close(held)


def changed(result: CommandResult) -> tuple[str, ...] | None:
    """What the trial that gave ``result`` changed on its copy (``TriedOnACopy.changed``);
    None when ``result`` is no trial's on a copy."""
    return result.changed if isinstance(result, TriedOnACopy) else None


# Bytes of each changed file hashed: enough to tell two changes apart, cheap for a large one
HASHED = 1 << 20


def _fingerprint(upper: Path) -> tuple[str, ...]:
    """``TriedOnACopy.changed`` of an overlay's upper layer. What the trial's command left
    there is read as data: no link is followed, nothing but a regular file is opened, and
    that without blocking (a FIFO made in its place cannot stall the host)."""
    import hashlib

    lines = []
    for path in sorted(upper.rglob("*")):
        rel = path.relative_to(upper)
        try:
            info = path.lstat()
        except OSError:
            continue
        if stat.S_ISCHR(info.st_mode) and info.st_rdev == 0:
            lines.append(f"deleted:{rel}")  # an overlay whiteout
        elif stat.S_ISDIR(info.st_mode):
            lines.append(f"dir:{rel}")
        elif stat.S_ISLNK(info.st_mode):
            lines.append(f"link:{rel}:{os.readlink(path)}")
        elif stat.S_ISREG(info.st_mode):
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
            try:
                fd = os.open(path, flags)
            except OSError:
                continue
            with os.fdopen(fd, "rb") as f:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    continue
                digest = hashlib.sha256(f.read(HASHED)).hexdigest()
            lines.append(f"file:{rel}:{info.st_size}:{digest}")
    return tuple(lines)


def _hold(top: Path) -> int | None:
    """An exclusive lock on the folder ``top``, held by the returned fd."""
    try:
        fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def remove_tree(top: Path) -> bool:
    """Remove ``top`` with everything in it; whether it is gone. overlayfs leaves its
    work directory's ``work/`` with mode 000, which an ordinary user cannot enter or
    empty: every directory is opened up (owner rwx) before it is walked into."""
    for dirpath, dirnames, _ in os.walk(top):
        for name in dirnames:
            with contextlib.suppress(OSError):
                os.chmod(os.path.join(dirpath, name), 0o700, follow_symlinks=False)
    shutil.rmtree(top, ignore_errors=True)
    return not os.path.lexists(top)


def sweep(scratch: Path = SCRATCH) -> list[Path]:
    """Remove this user's trial folders in ``scratch`` that no trial holds (left by a
    process killed mid-trial); the ones removed. Another user's folders, symlinks and
    anything else by that name are never touched."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(scratch))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(PREFIX):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            continue
        path = Path(entry.path)
        fd = _hold(path)
        if fd is None:
            continue  # a trial is running in it (or it went)
        try:
            if (os.fstat(fd).st_dev, os.fstat(fd).st_ino) != (st.st_dev, st.st_ino):
                continue  # replaced meanwhile
            if remove_tree(path):
                removed.append(path)
        finally:
            os.close(fd)
    return removed
