"""The disk cap of a sandbox whose writes land in overlay upper layers on the host's disk.

An ``ask`` session, a job's preview and a recipe trial see their trees through overlays;
every write lands in an upper directory below ``/var/tmp`` (or wherever the caller put it),
on the host's disk. Checking the size between commands came too late: one command could
fill the disk. Here the cap holds **while commands run**, for root and for an ordinary user
alike, with nothing but what an ordinary user has:

- a **watcher** thread (``DiskWatch``) reads ``statvfs`` of each upper layer's file system
  every ``POLL_S`` while a command runs and for a second after (``IDLE_POLL_S`` while the
  session sits idle: a writer a command left running is caught a little later). Space used
  there grows by what the session writes (ext4 and XFS count delayed allocations at once)
  and by what anyone else writes; only when it has grown by the room left under the cap
  does the watcher walk the upper layers to count exactly (a walk is rate-limited, so a
  busy disk cannot turn it into a loop). Past the cap, or with less than the reserve free
  on that disk while the session writes, it stops the session's processes (``on_trip``:
  every process but the sandbox's init);
- a seccomp rule (``seccomp.program(allocate=False)``) refuses every ``fallocate`` that
  reserves space (EOPNOTSUPP, as on a file system without it: libc's ``posix_fallocate``
  then writes the blocks, which the watcher sees; punching holes still works). ext4
  reserved 64 MiB in 0.2 ms here, some 300 GiB a second: faster than any poll;
- no one file may outgrow the cap (``RLIMIT_FSIZE``, ``Limits.file_bytes``).

What it cannot do: stop a write before it lands. Between two polls a command writes what
the disk takes in ``POLL_S`` (about 6 MiB at 300 MB/s here, 60 MiB on a fast NVMe), plus
the pages a copy-up or a write call has in flight when SIGKILL arrives. Why not a capped
file system: an ordinary user can mount only tmpfs (memory, and the sessions' changes may
be gigabytes), FUSE (no overlay-capable server shipped) or overlayfs itself in a user
namespace; loop devices and project quotas need root and a prepared disk.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

GiB = 1 << 30
MiB = 1 << 20
CHANGES_CAP_BYTES = 8 * GiB
DISK_RESERVE_BYTES = 1 * GiB  # free space always left on the disk, or 5 % of a small one
POLL_S = 0.02
IDLE_POLL_S = 0.1  # a poll costs ~40 µs: 1 % of a core at POLL_S, measured under load
BUSY_TAIL_S = 1.0  # after a command, as if it still ran (what it started in the background)
WALK_GAP_S = 0.02  # between two walks at least, or four times the last walk's length
SLACK = 1 * MiB  # growth below this is not the session writing (metadata, noise)


def changes_cap_bytes() -> int:
    """The most a session's upper layers may hold (``SHELLAGENT_CHANGES_CAP_GB``)."""
    try:
        return int(float(os.environ["SHELLAGENT_CHANGES_CAP_GB"]) * GiB)
    except (KeyError, ValueError):
        return CHANGES_CAP_BYTES


def disk_reserve_bytes(st: os.statvfs_result) -> int:
    """The free space to leave on the file system ``st`` describes."""
    return min(DISK_RESERVE_BYTES, st.f_blocks * st.f_frsize // 20)


def stored_bytes(uppers: list[Path]) -> int:
    """Disk space the trees take (allocated blocks: a sparse file counts for what it
    holds, an ``fallocate`` for what it reserved)."""
    total = 0
    for upper in uppers:
        for dirpath, dirnames, filenames in os.walk(upper):
            for name in (*dirnames, *filenames):
                with contextlib.suppress(OSError):
                    total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
    return total


def gib(n: int) -> str:
    return f"{n / GiB:.1f} GiB" if n >= GiB else f"{n / MiB:.0f} MiB"


@dataclass(frozen=True)
class DiskCap:
    """How much a sandbox's upper layers may hold (``limit``, bytes); the disk under them
    always keeps ``disk_reserve_bytes`` free as well."""

    limit: int

    @classmethod
    def default(cls) -> DiskCap:
        return cls(changes_cap_bytes())


class DiskWatch:
    """Watches the upper layers ``uppers`` of one sandbox against ``cap`` until ``stop``;
    ``on_trip(reason)`` is called (from the watcher's thread) each time they pass it."""

    def __init__(self, uppers: list[Path], cap: DiskCap, on_trip: Callable[[str], None]):
        self.uppers = uppers
        self.cap = cap
        self.on_trip = on_trip
        self.trips = 0
        self.reason = ""
        self._busy_until = 0.0  # poll fast until then (``busy``)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="diskcap", daemon=True)
        # One path per file system holding an upper layer (statvfs is per file system).
        devices: dict[int, Path] = {}
        for upper in uppers:
            with contextlib.suppress(OSError):
                devices.setdefault(os.stat(upper).st_dev, upper)
        self._places = list(devices.values())

    @property
    def started(self) -> bool:
        return self._thread.ident is not None

    def start(self) -> None:
        self._thread.start()

    def busy(self, running: bool) -> None:
        """A command starts (True) or has ended (False): poll fast while it runs and for
        ``BUSY_TAIL_S`` after."""
        tail = time.monotonic() + BUSY_TAIL_S
        self._busy_until = float("inf") if running else tail

    def stop(self) -> None:
        self._stop.set()
        if self.started and self._thread is not threading.current_thread():
            self._thread.join()

    def _used(self) -> tuple[int, int | None]:
        """Space used on the upper layers' file systems, and the free space of one that
        is below its reserve (or None)."""
        used, low = 0, None
        for place in self._places:
            try:
                st = os.statvfs(place)
            except OSError:
                continue
            used += (st.f_blocks - st.f_bfree) * st.f_frsize
            free = st.f_bavail * st.f_frsize
            if free < disk_reserve_bytes(st):
                low = free if low is None else min(low, free)
        return used, low

    def _watch(self) -> None:
        limit = self.cap.limit
        stored = stored_bytes(self.uppers)
        last, _ = self._used()
        grew = 0  # space gained on those file systems since the last walk: an upper bound
        walked_at, walk_s = -WALK_GAP_S, 0.0
        # Growth past these marks trips: the cap's (an upper layer already past the cap
        # when the sandbox starts is the review's to report, not a reason to kill) and
        # the reserve's (set when the disk is first seen nearly full).
        cap_mark = max(limit, stored)
        low_mark: int | None = None
        while not self._stop.wait(POLL_S if time.monotonic() < self._busy_until else IDLE_POLL_S):
            used, low = self._used()
            # Only gains count: space another process frees must not hide the session's.
            grew += max(0, used - last)
            last = used
            if low is None:
                low_mark = None
            elif low_mark is None:
                low_mark = stored
            due = grew >= cap_mark - stored or (low is not None and grew > SLACK)
            now = time.monotonic()
            if not due or now - walked_at < max(WALK_GAP_S, 4 * walk_s):
                continue
            stored, grew = stored_bytes(self.uppers), 0
            walked_at = time.monotonic()
            walk_s = walked_at - now
            if stored > cap_mark:
                self._trip(
                    f"the session's changes take {gib(stored)}, more than the {gib(limit)} "
                    "a session may keep (SHELLAGENT_CHANGES_CAP_GB sets it)"
                )
            elif low is not None and low_mark is not None and stored > low_mark + SLACK:
                self._trip(f"only {gib(low)} is left on the disk that holds the session's changes")
            else:
                continue
            # What the killed processes wrote up to the kill counts toward the mark, not as
            # growth of the next command: otherwise the walk after it trips again and
            # kills a command that wrote nothing.
            time.sleep(POLL_S)
            stored, grew = stored_bytes(self.uppers), 0
            last, _ = self._used()
            walked_at = time.monotonic()
            cap_mark = max(cap_mark, stored + SLACK)
            if low_mark is not None:
                low_mark = max(low_mark, stored)

    def _trip(self, reason: str) -> None:
        self.reason = reason
        self.trips += 1
        self.on_trip(reason)
