"""Verification throughput of generated tasks: instances per second, 1 job against 2 jobs.

    nice .venv/bin/python bench/taskgen_verify_bench.py [--per-family N] [--seed S]

On one instance of every family (by default): a bare sandbox start + close (the floor every
instance pays); the same tasks run through the eval harness with the gold agent, which
starts a fresh bash for every setup command and every check (the baseline); then
``verify_all`` with 1 and with 2 jobs (setup and checks batched, wrong answers checked
too), and once more from the verdict cache. Ratios are against the baseline measured in
the same run.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from shellagent.eval import RunConfig, run_eval
from shellagent.sandbox import Sandbox
from shellagent.taskgen import DEFAULT_SEED, GoldAgent, VerifyCache, generate, verify_all


def bare_start_ms(rounds: int = 20) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        Sandbox("ephemeral").close()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--per-family", type=int, default=1)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED + 7)
    args = parser.parse_args()
    tasks = generate(args.seed, args.per_family)
    print(f"{len(tasks)} generated tasks (seed {args.seed}), {os.cpu_count()} cores")
    print(f"  bare sandbox start+close      median {bare_start_ms():7.1f} ms")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("SHELLAGENT_DATA_DIR", tmp)
        config = RunConfig(transcripts_dir=Path(tmp) / "transcripts")
        run = run_eval(tasks, GoldAgent(), config, jobs=2)
        solved = sum(r.status == "solved" for r in run.results)
        baseline = len(run.results) / run.wall_s
        print(
            f"  eval --agent gold, 2 jobs     {baseline:7.2f} tasks/s "
            f"({run.wall_s:.1f} s, {solved}/{len(tasks)} solved)"
        )
        rates = {}
        for jobs in (1, 2):
            cache = VerifyCache(Path(tmp) / f"cache-{jobs}.jsonl")
            verified = verify_all(tasks, jobs=jobs, cache=cache)
            rates[jobs] = len(tasks) / verified.wall_s
            print(
                f"  verify, {jobs} job(s)              {rates[jobs]:7.2f} instances/s "
                f"({verified.wall_s:.1f} s, {len(verified.ok)}/{len(tasks)} verified)"
            )
        cached = verify_all(tasks, jobs=2, cache=VerifyCache(Path(tmp) / "cache-2.jsonl"))
        print(
            f"  verify again from the cache   {len(tasks) / max(cached.wall_s, 1e-6):7.0f} "
            f"instances/s ({cached.from_cache} cached)"
        )
    print(f"  verify 2 jobs / 1 job:              {rates[2] / rates[1]:.2f}x")
    print(f"  verify 2 jobs / eval gold 2 jobs:   {rates[2] / baseline:.2f}x")
    print(f"  5,000 instances at 2 jobs:          {5000 / rates[2] / 60:.0f} min")


if __name__ == "__main__":
    main()
