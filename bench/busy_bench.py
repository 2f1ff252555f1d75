"""A short task's time when the machine is busy, with threads fixed (before) and chosen for
the load (after), same run.

The task is two model turns of a real session (the system prompt with worked examples, the
task, an observation), the prompt evaluated afresh as at a task's start, the action grammar
on. Conditions: idle (what else runs on the machine is printed), a busy loop on every core,
and next to another model process generating in a loop. Each condition's median is divided
by the idle median of the same thread policy. Target: busy / idle <= 3x with the policy of
``shellagent/model/threads.py``. Prints figures; asserts nothing.

Run it alone on the model lock: ``flock /tmp/shellagent-model.lock python bench/busy_bench.py``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from shellagent.agent.actions import ACTION_FORMAT
from shellagent.agent.loop import opening
from shellagent.agent.prompts import Environment
from shellagent.model.embedded import embedded_model_path
from shellagent.model.llama import LlamaBackend
from shellagent.model.threads import idle_cores, usable_cores

TASK = "find the five largest files in ~/Downloads"
OBSERVATION = "exit 0\n4.0G movie.mkv\n1.2G backup.tar\n300M photos.zip\n12M notes.pdf\n1.1M a.txt"

NEIGHBOUR = """
import sys, time
from shellagent.model.llama import LlamaBackend
b = LlamaBackend(sys.argv[1], n_threads=int(sys.argv[2]))
msgs = [{"role": "user", "content": "Explain every option of tar, rsync and find in detail."}]
print("ready", flush=True)
while True:
    b.reset()
    b.generate(msgs, max_tokens=64)
"""


def messages() -> list[dict[str, str]]:
    from shellagent.agent.examples import default_library

    env = Environment(cwd=str(Path.home()), overlaid=(str(Path.home()),))
    chosen = default_library().search(TASK, 2)
    system, user = opening(env, TASK, chosen)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def short_task(backend: LlamaBackend, adapt: bool) -> float:
    """Two turns from a cold prompt; seconds, the thread choice included."""
    start = time.perf_counter()
    if adapt:
        backend.adapt_threads()
    backend.reset()
    convo = messages()
    first = backend.generate(convo, reply_format=ACTION_FORMAT, max_tokens=48)
    convo += [
        {"role": "assistant", "content": first.text},
        {"role": "user", "content": OBSERVATION},
    ]
    backend.generate(convo, reply_format=ACTION_FORMAT, max_tokens=48)
    return time.perf_counter() - start


def busy_loops(n: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def neighbour(model: str, threads: int) -> list[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", NEIGHBOUR, model, str(threads)],
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert proc.stdout is not None
    proc.stdout.readline()  # loaded: from now on it generates
    return [proc]


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


def others() -> str:
    """What else runs: the load average and the busiest other processes."""
    load = Path("/proc/loadavg").read_text().split()[:3]
    top = subprocess.run(
        ["ps", "-eo", "pcpu,comm", "--sort=-pcpu"], capture_output=True, text=True
    ).stdout.splitlines()[1:6]
    return f"loadavg {' '.join(load)}; busiest: " + ", ".join(" ".join(t.split()) for t in top)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", default=str(embedded_model_path()))
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    cores = usable_cores()
    fixed = LlamaBackend(args.model, n_threads=min(8, os.cpu_count() or 1))  # before
    adaptive = LlamaBackend(args.model)  # after: threads.py
    policies: dict[str, tuple[LlamaBackend, bool]] = {
        "before": (fixed, False),
        "after": (adaptive, True),
    }
    conditions: dict[str, Callable[[], list[subprocess.Popen[bytes]]]] = {
        "idle": list,
        "busy": lambda: busy_loops(cores),
        "model": lambda: neighbour(args.model, min(8, os.cpu_count() or 1)),
    }
    for backend, adapt in policies.values():
        short_task(backend, adapt)  # warm: pages in, caches filled
    print(f"cores {cores}; before: {fixed.threads} threads fixed; {others()}", flush=True)
    times: dict[str, dict[str, list[float]]] = {c: {p: [] for p in policies} for c in conditions}
    threads_used: dict[str, list[int]] = {c: [] for c in conditions}
    for condition, start in conditions.items():
        procs = start()
        try:
            time.sleep(0.5)
            seen = idle_cores(0.3)
            for _ in range(args.reps):
                for policy, (backend, adapt) in policies.items():  # interleaved
                    times[condition][policy].append(short_task(backend, adapt))
                threads_used[condition].append(adaptive.threads)
        finally:
            stop(procs)
        print(f"{condition}: {seen:.2f} cores idle before it ran; {others()}", flush=True)
    result: dict[str, object] = {}
    for policy in policies:
        base = statistics.median(times["idle"][policy])
        for condition in conditions:
            median = statistics.median(times[condition][policy])
            result[f"{policy}/{condition}"] = {
                "median_s": round(median, 3),
                "ratio": round(median / base, 2),
                "runs": [round(t, 3) for t in times[condition][policy]],
            }
    result["after_threads"] = threads_used
    if args.json:
        print(json.dumps(result, indent=2))
        return
    for key, value in result.items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    main()
