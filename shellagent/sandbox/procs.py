"""Finding and killing the processes of one sandbox from the host, through /proc.

A sandbox has its own pid namespace. Every process in it is found by comparing
``/proc/PID/ns/pid`` with the namespace of the sandbox's init, and its pid inside the
sandbox is the last entry of ``NSpid`` in ``/proc/PID/status``. A timed-out command is
stopped by killing every process of the namespace whose pid is above the namespace's last
pid before the command started (pids are handed out in order), except the supervisor and
the driver shell: background jobs, double forks and ``setsid`` children included, while
servers started by earlier commands live on.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator


def _ns(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}/ns/pid").st_ino
    except OSError:
        return None


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def child_pidns(pid: int) -> int | None:
    """The pid namespace of the first descendant of ``pid`` that is not in ours."""
    mine = _ns(os.getpid())
    queue = _children(pid)
    while queue:
        child = queue.pop(0)
        ns = _ns(child)
        if ns is not None and ns != mine:
            return ns
        queue += _children(child)
    return None


def members(pidns: int) -> Iterator[tuple[int, int]]:
    """(host pid, pid inside) of every process in ``pidns``."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        if _ns(pid) != pidns:
            continue
        try:
            with open(f"/proc/{pid}/status") as f:
                nspid = next(line for line in f if line.startswith("NSpid:"))
        except (OSError, StopIteration):
            continue
        yield pid, int(nspid.split()[-1])


def kill_new(pidns: int | None, first_new: int, spare: set[int]) -> int:
    """SIGKILL every process of the namespace whose pid inside is ``first_new`` or above."""
    if pidns is None:
        return 0
    killed = 0
    for pid, inner in list(members(pidns)):
        if inner in spare or inner < first_new:
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
            killed += 1
    return killed


def sweep_range(pidns: int | None, first: int, last: int) -> None:
    """Kill what is left of a timed-out command: every process whose pid inside is between
    the first the command could have had and the last one handed out when it was done
    (the driver starts the next spare shell only after that). A fork under way when the
    first kill came finishes after it; its child shows up on the next pass."""
    if pidns is None:
        return
    for _ in range(50):
        left = [pid for pid, inner in members(pidns) if first <= inner <= last and not _zombie(pid)]
        if not left:
            return
        for pid in left:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True  # gone
