"""Time from typing ``ask`` to the first proposed command: warm daemon vs ``--no-daemon``.

Same embedded model, same task, both in ``--json --dry-run -y`` mode so nothing runs and
no prompt waits. The daemon is started first and left to load its model; the in-process
run loads it itself, which is exactly the cost the daemon saves. Prints figures.

    python bench/warm_vs_cold_bench.py [--task "list the files here"] [--runs 3]
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

FIRST = {"proposed", "summary"}  # the same protocol events with and without the daemon


def first_proposal_ms(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        argv,
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    found, kind = 0.0, "none"
    for line in proc.stdout:
        try:
            kind = json.loads(line).get("type", "")
        except ValueError:
            continue
        if kind in FIRST:
            found = (time.perf_counter() - t0) * 1000
            break
    proc.kill()
    proc.communicate()
    return found, kind


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", default="list the files in this directory")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--model", default="default")
    args = parser.parse_args()
    base, env = private_env()
    work = base / "work"
    work.mkdir()
    ask = [
        sys.executable,
        "-m",
        "shellagent.cli.ask",
        "--json",
        "--dry-run",
        "-y",
        "--max-turns",
        "1",
        "--model",
        args.model,
        args.task,
    ]
    cold = [
        first_proposal_ms([*ask[:3], "--no-daemon", *ask[3:]], env, work) for _ in range(args.runs)
    ]
    daemon = subprocess.Popen(
        [sys.executable, "-m", "shellagent", "daemon", "run", "--quiet", "--model", args.model],
        env=env,
        stderr=subprocess.DEVNULL,
    )
    try:
        status = [sys.executable, "-m", "shellagent", "daemon", "status", "--json"]
        t0 = time.perf_counter()
        while True:
            out = subprocess.run(status, env=env, capture_output=True, text=True).stdout
            if out and json.loads(out).get("model", {}).get("loaded"):
                break
            time.sleep(0.1)
        load_ms = (time.perf_counter() - t0) * 1000
        warm = [first_proposal_ms(ask, env, work) for _ in range(args.runs)]
    finally:
        daemon.terminate()
        daemon.wait()
    c = statistics.median(ms for ms, _ in cold)
    w = statistics.median(ms for ms, _ in warm)
    print(f"model: {args.model}   task: {args.task!r}   runs: {args.runs}")
    print(f"--no-daemon (loads the model)   first proposal {c:8.0f} ms  ({[k for _, k in cold]})")
    print(f"daemon warm-up (model load)                    {load_ms:8.0f} ms, once")
    print(f"warm daemon                     first proposal {w:8.0f} ms  ({[k for _, k in warm]})")
    print(f"speed-up: {c / w:.1f}x (target >= 5x)")


if __name__ == "__main__":
    main()
