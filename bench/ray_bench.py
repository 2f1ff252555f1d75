"""Episodes per second through Ray against the local thread pool, same run.

The gold agent (each task's verified gold commands, no model) on the first N tasks of the
shipped library: `shellagent eval --jobs 2` (threads) against `--ray` with a local cluster
of 2 CPUs (one episode per CPU), alternating, with the Ray cluster started once (its
start-up is reported separately). The difference per episode is what Ray adds: pickling the
task and the result, a worker process per CPU, the transcript shipped back.

Usage: .venv/bin/python bench/ray_bench.py [--tasks N] [--rounds R]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

sys.path.insert(0, str(Path(__file__).resolve().parent))
from isolated import private_env  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    _, env = private_env()
    os.environ.update(env)

    import ray

    from shellagent.cli.main import main as cli
    from shellagent.taskgen.library import library_path

    started = time.perf_counter()
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        object_store_memory=100 * 1024 * 1024,
    )
    startup = time.perf_counter() - started
    rates: dict[str, list[float]] = {"--jobs 2": [], "--ray (2 CPUs)": []}
    base = [str(library_path()), "--limit", str(args.tasks), "--agent", "gold", "--json"]
    with open(os.devnull, "w") as devnull:
        _rounds(args, base, rates, devnull, cli)
    ray.shutdown()
    local = statistics.median(rates["--jobs 2"])

    print(f"gold agent, {args.tasks} library tasks, {args.rounds} rounds (median)")
    print(f"  ray cluster start-up     {startup:6.1f} s (once)")
    for name, values in rates.items():
        rate = statistics.median(values)
        print(
            f"  {name:16} {rate:6.2f} episodes/s  {1000 / rate:7.1f} ms/episode  "
            f"{rate / local:4.2f}x --jobs 2"
        )


def _rounds(
    args: argparse.Namespace,
    base: list[str],
    rates: dict[str, list[float]],
    devnull: TextIO,
    cli: Callable[[list[str]], int],
) -> None:
    for _ in range(args.rounds):
        for name, extra in (("--jobs 2", ["--jobs", "2"]), ("--ray (2 CPUs)", ["--ray"])):
            out = tempfile.mkdtemp(prefix="ray-bench-")
            t0 = time.perf_counter()
            stdout, stderr = sys.stdout, sys.stderr
            sys.stdout = sys.stderr = devnull
            try:
                cli(["eval", *base, *extra, "--out", out])
            finally:
                sys.stdout, sys.stderr = stdout, stderr
            rates[name].append(args.tasks / (time.perf_counter() - t0))


if __name__ == "__main__":
    main()
