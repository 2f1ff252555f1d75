"""Harness cost per task and throughput, with the do-nothing agent, 1 job against 2 jobs.

    .venv/bin/python bench/eval_bench.py [TASKS.jsonl] [--limit N]

Per task: sandbox start + setup + the check before and after the agent (median and p95 ms),
next to a bare sandbox start + close measured in the same run (the floor every task pays).
Then the whole set with 1 job and with 2 jobs: tasks per minute and the 2-job / 1-job ratio.
The agent does nothing, so this is the harness alone; a model's turns come on top.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from shellagent.eval import NothingAgent, RunConfig, load_tasks, run_eval
from shellagent.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[1]
DEV_TASKS = ROOT.parent / "shared" / "tasks" / "shell-tasks-dev.jsonl"


def bare_start_ms(rounds: int = 30) -> list[float]:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        Sandbox("ephemeral").close()
        times.append((time.perf_counter() - start) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="?", type=Path, default=DEV_TASKS)
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    tasks = list(load_tasks(args.tasks).tasks)[: args.limit]
    print(f"{len(tasks)} tasks from {args.tasks.name}, do-nothing agent, {os.cpu_count()} cores")

    bare = bare_start_ms()
    print(f"  bare sandbox start+close   median {statistics.median(bare):6.1f} ms")

    rates = {}
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("SHELLAGENT_DATA_DIR", tmp)
        for jobs in (1, 2):
            config = RunConfig(transcripts_dir=Path(tmp) / f"transcripts-{jobs}")
            run = run_eval(tasks, NothingAgent(), config, jobs=jobs)
            per_task = [r.sandbox_s * 1000 for r in run.results]
            wall = [r.wall_s * 1000 for r in run.results]
            rates[jobs] = len(run.results) / run.wall_s * 60
            p95 = statistics.quantiles(per_task, n=20)[-1]
            print(
                f"  {jobs} job(s): sandbox+setup+checks median {statistics.median(per_task):6.1f}"
                f" ms  p95 {p95:6.1f} ms;  whole task median {statistics.median(wall):6.1f} ms;"
                f"  {rates[jobs]:7.0f} tasks/min ({run.wall_s:.1f} s)"
            )
    print(f"  2 jobs / 1 job throughput: {rates[2] / rates[1]:.2f}x")
    print(
        f"  sandbox+setup+checks / bare start: "
        f"{statistics.median(per_task) / statistics.median(bare):.1f}x (2-job run)"
    )


if __name__ == "__main__":
    main()
