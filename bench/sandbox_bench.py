"""Sandbox figures, measured in one run so the ratios hold on a noisy machine.

1. Per-command overhead: a trivial command in the persistent session vs a fresh
   ``bwrap … bash -c CMD`` per command, with the same profile and mounts.
2. Start-up time of the default and ephemeral profiles.

Usage: .venv/bin/python bench/sandbox_bench.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from shellagent.sandbox import Session, find_bwrap, get_profile, mounts
from shellagent.sandbox.profiles import bwrap_argv

COMMANDS = ("true", "echo hello", "pwd")


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def persistent(workdir: Path, runs: int) -> list[float]:
    samples = []
    with Session(get_profile("default", cwd=workdir)) as session:
        for _ in range(runs):
            for command in COMMANDS:
                start = time.perf_counter()
                session.run(command)
                samples.append(time.perf_counter() - start)
    return samples


def fresh(workdir: Path, runs: int) -> list[float]:
    profile = get_profile("default", cwd=workdir)
    samples = []
    for _ in range(runs):
        for command in COMMANDS:
            start = time.perf_counter()
            # Same work the session does per sandbox: plan the mounts, build argv, start.
            plan = mounts.default_plan(profile.writable, profile.workdir, profile.network)
            argv = bwrap_argv(find_bwrap(), profile, plan)
            subprocess.run(
                [*argv, "--", "/bin/bash", "--noprofile", "--norc", "-c", command],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                check=True,
            )
            samples.append(time.perf_counter() - start)
            plan.remove_created()
    return samples


def startup(profile: str, workdir: Path, runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        with Session(get_profile(profile, cwd=workdir)) as session:
            samples.append(time.perf_counter() - start)
            session.run("true")
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=Path.home()) as tmp:
        workdir = Path(tmp)
        Session("ephemeral").close()  # build the skeleton cache (non-root) before timing
        warm = persistent(workdir, args.runs)
        cold = fresh(workdir, args.runs)
        default = startup("default", workdir, args.runs)
        ephemeral = startup("ephemeral", workdir, args.runs)
    print(f"bwrap {find_bwrap().version_text}; {args.runs} runs x {len(COMMANDS)} commands")
    print(f"persistent session, median per command : {median_ms(warm):8.3f} ms")
    print(f"fresh bwrap per command, median        : {median_ms(cold):8.3f} ms")
    print(
        f"ratio (fresh / persistent)             : {median_ms(cold) / median_ms(warm):8.1f}x"
        "  (target >= 10x)"
    )
    print(f"start-up, default profile, median      : {median_ms(default):8.1f} ms")
    print(f"start-up, ephemeral profile, median    : {median_ms(ephemeral):8.1f} ms")


if __name__ == "__main__":
    main()
