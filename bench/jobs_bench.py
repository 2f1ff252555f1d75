"""`shellagent jobs run` overhead for a trivial job, against baselines from the same run.

Baselines: starting the CLI at all (`shellagent --version`) and running the same command
in a sandbox from the CLI (`shellagent sandbox run true`). The job run adds loading the job,
the policy check, the transcript and the run record.

Usage: .venv/bin/python bench/jobs_bench.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed(argv: list[str], env: dict[str, str], cwd: str, runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, env=env, cwd=cwd, check=True, capture_output=True)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    cli = [sys.executable, "-m", "shellagent"]
    with tempfile.TemporaryDirectory(dir=Path.home()) as tmp:
        env = {
            **os.environ,
            "SHELLAGENT_STATE_DIR": f"{tmp}/state",
            "SHELLAGENT_DATA_DIR": f"{tmp}/data",
            "SHELLAGENT_CONFIG_DIR": f"{tmp}/config",
            "SHELLAGENT_SCHEDULER": "cron",
            "SHELLAGENT_CRONTAB": "/bin/true",
        }
        added = subprocess.run(
            [*cli, "jobs", "add", "trivial", "--every", "day", "-y", "--", "true"],
            env=env,
            cwd=tmp,
            check=True,
            capture_output=True,
            text=True,
        )
        job_id = added.stdout.split()[1].rstrip(":")
        version = timed([*cli, "--version"], env, tmp, args.runs)
        sandbox = timed([*cli, "sandbox", "run", "true"], env, tmp, args.runs)
        job = timed([*cli, "jobs", "run", job_id], env, tmp, args.runs)
    print(f"shellagent --version           : {version:7.1f} ms (CLI start-up)")
    print(f"shellagent sandbox run true    : {sandbox:7.1f} ms")
    print(f"shellagent jobs run <trivial>  : {job:7.1f} ms")
    print(
        f"jobs run overhead over sandbox run: {job - sandbox:7.1f} ms "
        f"({job / sandbox:.2f}x); over CLI start-up: {job - version:7.1f} ms"
    )


if __name__ == "__main__":
    main()
