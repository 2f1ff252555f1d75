"""Time from the key press to a command in the buffer: ``ask --propose`` on a warm daemon.

What the shell binding runs when the key is pressed, end to end (start ``ask``, connect,
the model's first proposal, the verdict), against ``ask --version``-like start-up of the
same executable measured in the same run as the baseline.

    python bench/propose_bench.py [--task "largest files here"] [--runs 5] [--model default]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from isolated import private_env


def timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    return (time.perf_counter() - t0) * 1000, proc.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", default="show the five largest files here")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--model", default="default")
    args = parser.parse_args()
    base, env = private_env()
    work = base / "work"
    work.mkdir()
    daemon = subprocess.Popen(
        [sys.executable, "-m", "shellagent", "daemon", "run", "--quiet", "--model", args.model],
        env=env,
        stderr=subprocess.DEVNULL,
    )
    try:
        status = [sys.executable, "-m", "shellagent", "daemon", "status", "--json"]
        while True:
            out = subprocess.run(status, env=env, capture_output=True, text=True).stdout
            if out and json.loads(out).get("model", {}).get("loaded"):
                break
            time.sleep(0.1)
        ask = [sys.executable, "-m", "shellagent.cli.ask"]
        start = [timed([*ask, "--help"], env, work)[0] for _ in range(args.runs)]
        proposals = [
            timed([*ask, "--propose", "--", args.task], env, work) for _ in range(args.runs)
        ]
    finally:
        daemon.terminate()
        daemon.wait()
    p = statistics.median(ms for ms, _ in proposals)
    s = statistics.median(start)
    print(f"model: {args.model}   task: {args.task!r}   runs: {args.runs}")
    print(f"ask start-up (--help), baseline        {s:7.0f} ms")
    print(f"key press -> command in the buffer     {p:7.0f} ms  ({p / s:.1f}x the start-up)")
    print(f"proposed: {proposals[-1][1]!r}")


if __name__ == "__main__":
    main()
