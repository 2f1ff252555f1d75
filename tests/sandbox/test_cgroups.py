"""Where a session's cgroup goes (M6): inside the caller's own, never beside the limits the
caller lives under, and no cgroup of a dead process is left behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shellagent.sandbox import Sandbox, get_profile, procs
from shellagent.sandbox.limits import CGROUP_ROOT, Cgroup, Limits, MiB


def _can_make_one() -> bool:
    group = Cgroup.create(Limits.default()) if os.getuid() == 0 else None
    if group is not None:
        group.release()
    return group is not None


pytestmark = pytest.mark.skipif(
    not _can_make_one(), reason="needs a cgroup this process may make (root here)"
)


def _cgroups(pid: int) -> dict[str, str]:
    found = {}
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            found[controller] = path
    return found


def _v2() -> bool:
    return (CGROUP_ROOT / "cgroup.controllers").exists()


def test_every_process_of_a_session_is_in_a_cgroup_below_the_callers(workspace: Path) -> None:
    mine = _cgroups(os.getpid())
    with Sandbox(get_profile("default", cwd=workspace), timeout=10) as s:
        s.run("sleep 30 &")
        assert s.pid is not None
        pidns = procs.child_pidns(s.pid)
        assert pidns is not None
        members = [pid for pid, _ in procs.members(pidns)]
        assert len(members) >= 2  # the driver (pid 1), sleep, any shell waiting
        checked = 0
        for pid in members:
            try:  # a spare shell made stale by the command may be gone, or a zombie, which
                # cgroup v1 shows in the root cgroup
                if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
                theirs = _cgroups(pid)
            except FileNotFoundError:
                continue
            checked += 1
            for controller in [""] if _v2() else ["pids", "memory"]:
                own = mine[controller].rstrip("/")
                session = theirs[controller]
                expected_parent = str(Path(own).parent) if _v2() else own
                assert session.startswith(expected_parent.rstrip("/") + "/"), (session, own)
                assert session != mine[controller]  # a cgroup of its own, not the caller's
        assert checked >= 2


def test_the_session_cgroup_carries_the_limits_and_goes_away(workspace: Path) -> None:
    limits = Limits(processes=77, memory_bytes=300 * MiB, tmp_bytes=16 * MiB, file_bytes=MiB)
    group = Cgroup.create(limits)
    assert group is not None
    try:
        pids_dir = group.dirs[0]
        assert (pids_dir / "pids.max").read_text().strip() == "77"
        memory = group.dirs[0] / "memory.max" if _v2() else group.dirs[1] / "memory.limit_in_bytes"
        assert int(memory.read_text()) == 300 * MiB
    finally:
        group.release()
    assert not any(d.exists() for d in group.dirs)


def test_an_empty_cgroup_left_by_a_dead_process_is_removed() -> None:
    probe = Cgroup.create(Limits.default())
    assert probe is not None
    parents = [d.parent for d in probe.dirs]
    probe.release()
    dead = [parent / "shellagent-999999999-feedface" for parent in parents]
    alive = [parent / f"shellagent-{os.getpid()}-feedface" for parent in parents]
    for d in dead + alive:
        d.mkdir()
    try:
        group = Cgroup.create(Limits.default())
        assert group is not None
        group.release()
        assert not any(d.exists() for d in dead)
        assert all(d.exists() for d in alive)  # its creator still runs: kept
    finally:
        for d in dead + alive:
            if d.exists():
                d.rmdir()
