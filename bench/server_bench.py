"""Logprob capture overhead per model turn through an OpenAI-compatible server, same run.

Starts llama-cpp-python's own server (``python -m llama_cpp.server``) with the default model
(embedded SmolLM2 + the shipped adapter) on 127.0.0.1 and sends the agent's turn (the
action grammar, greedy) through ``OpenAIBackend``, alternating requests with and without
``logprobs`` (ABBA order, so drift on a busy machine falls on both). Both kinds of request
give the same reply, so the difference is the capture alone. A second server started
without ``logits_all`` (which llama_cpp.server needs for any logprobs) gives the baseline of
a server that never captures. Prints medians per turn and per generated token, and ratios.

Loads the model: run it under the model lock.

Usage: flock /tmp/shellagent-model.lock .venv/bin/python bench/server_bench.py [--rounds R]
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from isolated import private_env  # noqa: E402

TASKS = (
    "how much disk space is free?",
    "count the lines of /etc/passwd",
    "list the files in /tmp, newest first",
)


def _turns(url: str, alias: str) -> tuple[Callable[[str, bool], tuple[float, int, bool]], str]:
    from shellagent.agent.actions import ACTION_FORMAT
    from shellagent.agent.prompts import Environment, system_prompt
    from shellagent.model.openai import OpenAIBackend

    backend = OpenAIBackend(url, model=alias, constraint="grammar")
    system = system_prompt(Environment(cwd="/home/user", writable=("/home/user",)))

    def turn(task: str, logprobs: bool) -> tuple[float, int, bool]:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": task}]
        started = time.perf_counter()
        generation = backend.generate(
            messages, reply_format=ACTION_FORMAT, max_tokens=200, capture_logprobs=logprobs
        )
        elapsed = time.perf_counter() - started
        return elapsed, generation.generated_tokens, generation.logprobs is not None

    return turn, system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6, help="ABBA rounds (default: 6)")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    _, env = private_env()
    os.environ.update(env)

    from shellagent.testing import LlamaServer

    samples: dict[str, list[tuple[float, int]]] = {
        "logits_all server, no logprobs": [],
        "logits_all server, logprobs": [],
        "plain server (baseline)": [],
    }
    with tempfile.TemporaryDirectory() as tmp:
        with LlamaServer(f"{tmp}/all.log", threads=args.threads) as server:
            turn, _ = _turns(server.url, server.ALIAS)
            for task in TASKS:  # warm up: first prompt evaluation, allocations
                turn(task, False)
            for round_ in range(args.rounds):
                order = (
                    (False, True, True, False) if round_ % 2 == 0 else (True, False, False, True)
                )
                for logprobs in order:
                    for task in TASKS:
                        elapsed, tokens, captured = turn(task, logprobs)
                        assert captured == logprobs, "the server gave no logprobs"
                        key = f"logits_all server, {'logprobs' if logprobs else 'no logprobs'}"
                        samples[key].append((elapsed, tokens))
        with LlamaServer(f"{tmp}/plain.log", threads=args.threads, logits_all=False) as server:
            turn, _ = _turns(server.url, server.ALIAS)
            for task in TASKS:
                turn(task, False)
            for _ in range(args.rounds):
                for _ in range(2):
                    for task in TASKS:
                        elapsed, tokens, _captured = turn(task, False)
                        samples["plain server (baseline)"].append((elapsed, tokens))

    base_turn = statistics.median(s for s, _ in samples["plain server (baseline)"])
    base_token = statistics.median(s / max(n, 1) for s, n in samples["plain server (baseline)"])
    print(
        f"llama_cpp.server, embedded model + adapter, {args.threads} threads, "
        f"{len(TASKS)} agent turns x {args.rounds} ABBA rounds, greedy, action grammar"
    )
    print(f"{'':34} {'ms/turn':>8} {'ms/token':>9} {'tokens':>7} {'x baseline':>11}")
    for name, values in samples.items():
        per_turn = statistics.median(s for s, _ in values)
        per_token = statistics.median(s / max(n, 1) for s, n in values)
        median_tokens = statistics.median(n for _, n in values)
        print(
            f"{name:34} {per_turn * 1000:8.1f} {per_token * 1000:9.2f} {median_tokens:7.0f} "
            f"{per_turn / base_turn:10.2f}x"
        )
    with_lp = statistics.median(s for s, _ in samples["logits_all server, logprobs"])
    without = statistics.median(s for s, _ in samples["logits_all server, no logprobs"])
    print(
        f"capture overhead on the same server: {(with_lp - without) * 1000:+.1f} ms/turn "
        f"({with_lp / without:.2f}x); per token {base_token * 1000:.2f} ms baseline"
    )


if __name__ == "__main__":
    main()
