"""How many threads llama.cpp gets: the cores idle now, not the cores the machine has.

llama.cpp's threads meet at a barrier after every layer and spin while they wait. With a
busy program on each of two cores, two model threads get a core only part of the time, and
each layer waits for the slower one: a short task took 3-5x its idle time where a fair share
of the CPU would give 2x. One thread per core that is idle *now* avoids that. The figure is
taken from ``/proc/stat`` over a short window (the cores this process may run on, from
``sched_getaffinity``), falling back to ``/proc/loadavg``; it is re-checked at the start of
every task. ``model.threads`` in config.toml overrides it.
"""

from __future__ import annotations

import os
import time

__all__ = ["choose_threads", "idle_cores", "usable_cores"]

MAX_THREADS = 8  # more rarely helps a small model and costs on big machines
WINDOW_S = 0.1


def usable_cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _cpu_times() -> dict[int, tuple[int, int]]:
    """cpu number -> (idle jiffies incl. iowait, total jiffies)."""
    times: dict[int, tuple[int, int]] = {}
    with open("/proc/stat", encoding="ascii") as f:
        for line in f:
            if not line.startswith("cpu") or line.startswith("cpu "):
                continue
            name, *fields = line.split()
            values = [int(v) for v in fields[:8]]
            idle = values[3] + (values[4] if len(values) > 4 else 0)
            times[int(name[3:])] = (idle, sum(values))
    return times


def idle_cores(window_s: float = WINDOW_S) -> float:
    """How many of this process's cores were idle over the last ``window_s`` seconds."""
    try:
        allowed = os.sched_getaffinity(0)
    except (AttributeError, OSError):
        allowed = set(range(os.cpu_count() or 1))
    try:
        before = _cpu_times()
        time.sleep(window_s)
        after = _cpu_times()
    except (OSError, ValueError):
        return _idle_from_loadavg(len(allowed))
    idle = 0.0
    for cpu in allowed:
        if cpu not in before or cpu not in after:
            continue
        d_idle = after[cpu][0] - before[cpu][0]
        d_total = after[cpu][1] - before[cpu][1]
        if d_total > 0:
            idle += max(0.0, min(1.0, d_idle / d_total))
        else:
            idle += 1.0  # no tick counted: nothing ran there
    return idle


def _idle_from_loadavg(cores: int) -> float:
    try:
        with open("/proc/loadavg", encoding="ascii") as f:
            load = float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return float(cores)
    return max(0.0, cores - load)


def choose_threads(configured: int | None = None, *, idle: float | None = None) -> int:
    """``configured`` when set (``model.threads``); else one thread per idle core (a core
    counts from half idle), at least 1, at most the usable cores and ``MAX_THREADS``."""
    if configured:
        return configured
    usable = usable_cores()
    free = idle_cores() if idle is None else idle
    return max(1, min(usable, MAX_THREADS, int(free + 0.5)))
