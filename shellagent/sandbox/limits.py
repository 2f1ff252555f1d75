"""Resource limits of a sandbox session, so no command can take the host down.

Three layers, each used where it works:

- **rlimits**, set by the sandbox's first process before anything else runs, so every
  command inherits them and none may raise them (no ``CAP_SYS_RESOURCE``): processes
  (``ulimit -u``; counted per user inside the sandbox's user namespace, and ignored by the
  kernel for host root), the size of any one file written (``-f``), the private writable
  memory of one process (``-d``, not ``-v``: the address space counts mere reservations,
  and a JVM's heap or Node's WebAssembly guard regions reserve many GiB they never use),
  no core dumps. A confined (read-only) command, which runs without a prompt, gets a
  smaller ``-d`` (``confined_bytes``, 1 GiB unless the session's is smaller): a jq or bc
  program from free text (``[range(1e9)]``) stops there, not at half the machine's RAM.
- **tmpfs sizes**: ``/tmp``, ``/var/tmp`` and ``/run`` (and the empty directories of a
  throwaway root) are capped (bwrap >= 0.10 ``--size``), so ``cat /dev/zero > /tmp/x``
  stops at the cap with "No space left on device" instead of eating the host's memory.
- **a cgroup** with ``pids.max`` and a memory ceiling for the whole session, when this
  process may make one: run by root (cgroup v1 or v2), or inside a delegated cgroup v2
  subtree of an ordinary user (systemd user sessions delegate ``user@UID.service``).
  ``shellagent doctor`` says which layers are in force.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

GiB = 1 << 30
MiB = 1 << 20
CONFINED_BYTES = GiB  # bench/confined_memory_bench.py: the everyday corpus needs < 64 MiB
CGROUP_ROOT = Path("/sys/fs/cgroup")


def _ram_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 8 * GiB


@dataclass(frozen=True)
class Limits:
    processes: int
    memory_bytes: int  # the whole session (cgroup), and any one process's data (rlimit)
    tmp_bytes: int  # each private tmpfs
    file_bytes: int  # any one file written
    confined_bytes: int | None = None  # any one process of a confined command (None: default)

    @classmethod
    def default(cls) -> Limits:
        ram = _ram_bytes()
        return cls(
            processes=1024,
            memory_bytes=max(512 * MiB, ram // 2),
            tmp_bytes=max(64 * MiB, min(4 * GiB, ram // 4)),
            file_bytes=16 * GiB,
        )

    @property
    def confined_data(self) -> int:
        """The private writable memory of one process of a confined command."""
        if self.confined_bytes is not None:
            return min(self.confined_bytes, self.memory_bytes)
        return min(CONFINED_BYTES, self.memory_bytes)

    def rlimits(self) -> str:
        """What the sandbox's driver sets before it starts any shell, as
        ``name=bytes-or-count`` pairs (``driver.apply_rlimits``); ``confined`` is set in
        each confined command's shell only."""
        return (
            f"core=0,nproc={self.processes},fsize={self.file_bytes},data={self.memory_bytes},"
            f"confined={self.confined_data}"
        )


class Cgroup:
    """A session's cgroup (v2, or the pids and memory hierarchies of v1), removed on close."""

    def __init__(self, dirs: list[Path], *, v1: bool = False) -> None:
        self.dirs = dirs
        self.v1 = v1

    @classmethod
    def create(cls, limits: Limits) -> Cgroup | None:
        """A fresh cgroup with the limits applied, or None where none can be made."""
        name = f"shellagent-{os.getpid()}-{secrets.token_hex(4)}"
        try:
            if (CGROUP_ROOT / "cgroup.controllers").exists():
                return cls._v2(name, limits)
            return cls._v1(name, limits)
        except OSError:
            return None

    @classmethod
    def _v2(cls, name: str, limits: Limits) -> Cgroup | None:
        parent = _v2_parent()
        if parent is None:
            return None
        enabled = (parent / "cgroup.subtree_control").read_text().split()
        if "pids" not in enabled or "memory" not in enabled:
            available = (parent / "cgroup.controllers").read_text().split()
            wanted = [c for c in ("pids", "memory") if c in available and c not in enabled]
            if wanted:
                (parent / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in wanted))
        group = parent / name
        group.mkdir()
        made = cls([group])
        try:
            (group / "pids.max").write_text(str(limits.processes))
            (group / "memory.max").write_text(str(limits.memory_bytes))
            with contextlib.suppress(OSError):
                (group / "memory.swap.max").write_text("0")
        except OSError:
            made.release()
            return None
        return made

    @classmethod
    def _v1(cls, name: str, limits: Limits) -> Cgroup | None:
        """Below this process's own cgroup in the pids and memory hierarchies, so the
        session stays inside whatever limits its caller already lives under."""
        own = _own_cgroups()
        pids, memory = (CGROUP_ROOT / c / own.get(c, "").lstrip("/") for c in ("pids", "memory"))
        if not (os.access(pids, os.W_OK) and os.access(memory, os.W_OK)):
            return None
        made = cls([pids / name, memory / name], v1=True)
        try:
            for d in made.dirs:
                _sweep_leftovers(d.parent)
                d.mkdir()
            (pids / name / "pids.max").write_text(str(limits.processes))
            (memory / name / "memory.limit_in_bytes").write_text(str(limits.memory_bytes))
        except OSError:
            made.release()
            return None
        return made

    def wrap(self, argv: list[str]) -> list[str]:
        """``argv`` run by a shell that first moves itself into this cgroup.

        In v1 the shell moves its one thread by writing ``0`` to ``tasks``: the kernel then
        skips the global lock that writing a pid to ``cgroup.procs`` takes, whose first
        use waits for an RCU grace period (12 ms of a 31 ms start-up, measured here).
        Its children, bwrap and everything in the sandbox, are born in the cgroup."""
        join = 'echo 0 > "{}/tasks"' if self.v1 else 'echo $$ > "{}/cgroup.procs"'
        joins = " && ".join(join.format(d) for d in self.dirs)
        return ["/bin/sh", "-c", f'{joins} && exec "$@"', "shellagent-cgroup", *argv]

    def release(self) -> None:
        """Remove the cgroup once its processes are gone (they die with the sandbox)."""
        deadline = time.monotonic() + 2.0
        for d in self.dirs:
            while d.exists():
                try:
                    d.rmdir()
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.01)


def _own_cgroups() -> dict[str, str]:
    """This process's cgroup per v1 controller, and per ``""`` its v2 cgroup."""
    own: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return own
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            own[controller] = path
    return own


def _sweep_leftovers(parent: Path) -> None:
    """Remove empty session cgroups whose creator died without removing them."""
    with contextlib.suppress(OSError):
        for entry in parent.iterdir():
            pid = entry.name.split("-")[1] if entry.name.startswith("shellagent-") else ""
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                with contextlib.suppress(OSError):
                    entry.rmdir()


def _v2_parent() -> Path | None:
    """Where this process may make a child cgroup: next to its own (a process cannot sit
    in a cgroup whose children have controllers), in a delegated subtree or, as root, in
    the caller's own slice; never the root itself unless the caller lives there."""
    rel = _own_cgroups().get("")
    if rel is None:
        return None
    own = CGROUP_ROOT / rel.strip().lstrip("/")
    parent = own.parent if own != CGROUP_ROOT else CGROUP_ROOT
    candidate = parent / "shellagent"
    try:
        candidate.mkdir(exist_ok=True)
    except OSError:
        return None
    if not os.access(candidate, os.W_OK):
        return None
    _sweep_leftovers(candidate)
    return candidate


def describe(limits: Limits) -> list[str]:
    """What is in force for a new session, for ``shellagent doctor``."""
    from shellagent.sandbox.diskcap import DISK_RESERVE_BYTES, changes_cap_bytes, gib

    lines = [
        f"rlimits: {limits.processes} processes (not for root), files up to "
        f"{limits.file_bytes // GiB} GiB, {limits.memory_bytes // MiB} MiB per process "
        f"({limits.confined_data // MiB} MiB in a read-only command)",
        f"tmpfs: /tmp, /var/tmp and /run capped at {limits.tmp_bytes // MiB} MiB each",
        f"changes on overlays: at most {gib(changes_cap_bytes())} a session, "
        f"{gib(DISK_RESERVE_BYTES)} (or 5 %) left free on their disk, held while commands "
        "run (SHELLAGENT_CHANGES_CAP_GB)",
    ]
    group = Cgroup.create(limits)
    if group is None:
        lines.append(
            "cgroup: none (not root and no delegated cgroup v2): the session as a whole "
            "has no memory ceiling; run under systemd-run --user --scope for one"
        )
    else:
        lines.append(
            f"cgroup: {group.dirs[0].parent}: {limits.processes} processes, "
            f"{limits.memory_bytes // MiB} MiB for the whole session"
        )
        group.release()
    return lines
