"""Policy decision time over the everyday corpus, and allow/ask/deny counts of both corpora.

    .venv/bin/python bench/policy_bench.py

Prints the median and 95th percentile decision time per command (target: median <= 2 ms)
next to a baseline measured in the same run: tree-sitter parsing alone, the floor any
decision pays.
"""

from __future__ import annotations

import statistics
import time
from collections import Counter
from pathlib import Path

from shellagent.policy import PolicyEngine, ShellState, default_policy_path
from shellagent.policy.parse import BashParser

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT / "tests" / "policy"
HOME = Path("/home/user")
WORKSPACE = HOME / "project"
ROUNDS = 5


def corpus(name: str) -> list[str]:
    lines = (CORPORA / name).read_text(encoding="utf-8").splitlines()
    return [ln.removeprefix("deny:") for ln in lines if ln.strip() and not ln.startswith("#")]


def per_command_ms(fn: object, commands: list[str]) -> list[float]:
    times: list[float] = []
    for command in commands:
        best = float("inf")
        for _ in range(ROUNDS):
            start = time.perf_counter()
            fn(command)  # type: ignore[operator]
            best = min(best, time.perf_counter() - start)
        times.append(best * 1000)
    return times


def main() -> None:
    engine = PolicyEngine.load([default_policy_path()], home=HOME, workspace=WORKSPACE)
    state = ShellState(cwd=WORKSPACE)
    everyday = corpus("everyday.txt")
    adversarial = corpus("adversarial.txt")

    decide = per_command_ms(lambda c: engine.check(c, state), everyday)
    parser = BashParser(str(HOME))
    parse = per_command_ms(parser.parse, everyday)
    med, p95 = statistics.median(decide), statistics.quantiles(decide, n=20)[-1]
    base = statistics.median(parse)
    print(f"everyday corpus: {len(everyday)} commands, best of {ROUNDS} runs each")
    print(f"  decision time  median {med:.3f} ms   p95 {p95:.3f} ms   max {max(decide):.3f} ms")
    print(f"  parse only     median {base:.3f} ms   (decision = {med / base:.1f}x parse)")
    print(f"  target         median <= 2 ms: {'met' if med <= 2 else 'NOT met'}")
    for name, commands in (("everyday", everyday), ("adversarial", adversarial)):
        counts = Counter(engine.check(c, state).decision for c in commands)
        print(
            f"{name:12} allow {counts['allow']:4}   ask {counts['ask']:4}   "
            f"deny {counts['deny']:4}   (total {len(commands)})"
        )


if __name__ == "__main__":
    main()
