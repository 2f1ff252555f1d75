"""Resource limits (M6): a fork bomb, a memory hog, a full /tmp and a huge file are each
stopped inside the sandbox, with small limits and probes that stop themselves, beside
positive controls under the same limits; as root (cgroup) and as an unprivileged user
(rlimits counted in the sandbox's user namespace)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from shellagent.sandbox import Sandbox, get_profile
from shellagent.sandbox.limits import Limits, MiB

Runner = Callable[..., list[dict[str, Any]]]
SMALL = Limits(processes=64, memory_bytes=256 * MiB, tmp_bytes=16 * MiB, file_bytes=48 * MiB)

# Forks children that sleep briefly and exit; stops at the first refusal or at 400.
FORK_BOMB = (
    'python3 -c "import os, time\nn = 0\ntry:\n    for _ in range(400):\n'
    "        if os.fork() == 0:\n            time.sleep(2); os._exit(0)\n        n += 1\n"
    "except OSError as e:\n    print('refused after', n)\nelse:\n    print('all', n)\""
)
FEW_PROCESSES = "for i in 1 2 3 4 5 6 7 8; do sleep 0.2 & done; wait; echo eight-ok"
MEMORY_HOG = "python3 -c 'b = bytearray(1024 * 1024 * 1024); print(len(b))'"
SOME_MEMORY = "python3 -c 'b = bytearray(64 * 1024 * 1024); print(\"64MiB-ok\")'"
FILL_TMP = "head -c 32M /dev/zero > /tmp/fill; du -m /tmp/fill | cut -f1; rm -f /tmp/fill"
SMALL_TMP = "head -c 4M /dev/zero > /tmp/small && echo tmp-ok"
# Written where no tmpfs cap applies: the workspace, or a throwaway root's /var.
HUGE_FILE = "head -c 64M /dev/zero > {}/huge; echo rc=$?"
SMALL_FILE = "head -c 8M /dev/zero > {}/small && echo file-ok"
PROBES = [FORK_BOMB, FEW_PROCESSES, MEMORY_HOG, SOME_MEMORY, FILL_TMP, SMALL_TMP]


def _check(outputs: list[str], codes: list[int]) -> None:
    bomb, few, hog, some, fill, small_tmp = outputs[:6]
    assert bomb.startswith("refused after"), bomb
    assert int(bomb.split()[-1]) < SMALL.processes
    assert "eight-ok" in few
    assert codes[2] != 0 and "1073741824" not in hog
    assert "64MiB-ok" in some
    assert "No space left on device" in fill and int(fill.split()[-1]) <= 16
    assert "tmp-ok" in small_tmp


@pytest.mark.parametrize("profile", ["default", "ephemeral"])
def test_limits_stop_each_exhaustion_probe(workspace: Path, profile: str) -> None:
    session_profile = dataclasses.replace(get_profile(profile, cwd=workspace), limits=SMALL)
    with Sandbox(session_profile, timeout=20) as s:
        results = [s.run(probe) for probe in PROBES]
        _check([r.output for r in results], [r.exit_code for r in results])
        where = "/var" if profile == "ephemeral" else "."
        huge, small = s.run(HUGE_FILE.format(where)), s.run(SMALL_FILE.format(where))
    assert "File size limit exceeded" in huge.output and "rc=153" in huge.output
    assert "file-ok" in small.output


def test_limits_hold_for_an_unprivileged_user(as_nobody: Runner) -> None:
    limits = dataclasses.asdict(SMALL)
    big = [HUGE_FILE.format("."), SMALL_FILE.format(".")]
    results = as_nobody([*PROBES, *big], timeout=20, limits=limits)
    _check([r["output"] for r in results], [r["exit_code"] for r in results])
    assert "File size limit exceeded" in results[6]["output"]
    assert "file-ok" in results[7]["output"]


# Review 3, L3: a read-only (confined) command runs without a prompt, so one process of it
# gets less memory than an approved command: a jq or bc program from free text stops there.
CAPPED = Limits(
    processes=64,
    memory_bytes=512 * MiB,
    tmp_bytes=16 * MiB,
    file_bytes=48 * MiB,
    confined_bytes=128 * MiB,
)
GROWS = "python3 -c 'b = bytearray(300 * 1024 * 1024); print(\"300MiB-ok\")'"


def test_a_confined_command_gets_the_smaller_memory_cap(workspace: Path) -> None:
    profile = dataclasses.replace(get_profile("default", cwd=workspace), limits=CAPPED)
    with Sandbox(profile, timeout=20) as s:
        confined = s.run(GROWS, confined=True)
        some = s.run(SOME_MEMORY, confined=True)
        approved = s.run(GROWS)
        cap = s.run("ulimit -d", confined=True)
    assert "MemoryError" in confined.output and confined.exit_code != 0
    assert "64MiB-ok" in some.output  # the positive control under the cap
    assert "300MiB-ok" in approved.output
    assert cap.output == f"{128 * 1024}\n"


def test_an_unprivileged_confined_command_gets_the_smaller_memory_cap(as_nobody: Runner) -> None:
    limits = dataclasses.asdict(CAPPED)
    results = as_nobody(
        [GROWS, SOME_MEMORY, GROWS, "id -u"], limits=limits, confined=[True, True, False, True]
    )
    confined, some, approved, who = (r["output"] for r in results)
    assert "MemoryError" in confined and "64MiB-ok" in some and "300MiB-ok" in approved
    assert who == "65534\n"
