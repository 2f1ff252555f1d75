"""``env serve`` round trip per step against the same command run in-process, same run.

A trainer drives episodes over HTTP (``shellagent env serve``); this measures what the HTTP
hop, the token check, the JSON and the policy check add to one step. In alternating rounds,
on one machine: ``Sandbox.run("true")`` in-process (the baseline: what the eval harness
pays), ``Episode.step("true")`` in-process (policy check + run), and ``EnvClient.step``
through a real server on 127.0.0.1. Prints the medians and the ratios to the baseline.

Usage: .venv/bin/python bench/env_bench.py [--rounds R] [--steps N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from isolated import private_env  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=40)
    args = parser.parse_args()
    _, env = private_env()
    os.environ.update(env)

    from shellagent.env import EnvClient, EnvServer, Episodes
    from shellagent.eval import Task
    from shellagent.sandbox import Sandbox

    task = Task(
        id="t",
        task="touch /data/x",
        setup_commands=("mkdir -p /data",),
        success_condition="[ -f /data/x ]",
    )
    server = EnvServer(Episodes({"t": task}, max_steps=10**9), port=0)
    server.start()
    client = EnvClient(server.url, server.token)
    session = Sandbox("ephemeral")
    local = server.episodes.reset("t")
    remote = client.reset("t")["episode"]
    samples: dict[str, list[float]] = {"in-process run": [], "in-process step": [], "http step": []}
    try:
        for _ in range(args.rounds):
            for name, step in (
                ("in-process run", lambda: session.run("true")),
                ("in-process step", lambda: local.step("true")),
                ("http step", lambda: client.step(remote, "true")),
            ):
                for _ in range(args.steps):
                    started = time.perf_counter()
                    step()
                    samples[name].append(time.perf_counter() - started)
    finally:
        session.close()
        server.shutdown()
    base = statistics.median(samples["in-process run"])
    print(f"{args.rounds} rounds x {args.steps} steps of `true` (median per step)")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"  {name:16} {median * 1000:7.2f} ms   {median / base:5.2f}x the in-process run")


if __name__ == "__main__":
    main()
