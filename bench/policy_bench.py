"""Policy decision time over the everyday corpus, and allow/ask/deny counts of both corpora,
for this checkout and for an earlier commit, in the same run.

    .venv/bin/python bench/policy_bench.py [--before REF]

Prints the median and 95th percentile decision time per command (target: median <= 2 ms)
next to a baseline measured in the same run: tree-sitter parsing alone, the floor any
decision pays. ``--before REF`` (default: where this branch left main, or the commit
before HEAD) exports that commit's package to a temporary directory and measures its engine
on the same corpora in a subprocess, so the two runs share the machine's state.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ROOT / "tests" / "policy"
HOME = Path("/home/user")
WORKSPACE = HOME / "project"
ROUNDS = 5


def corpus(name: str) -> list[str]:
    lines = (CORPORA / name).read_text(encoding="utf-8").splitlines()
    return [ln.removeprefix("deny:") for ln in lines if ln.strip() and not ln.startswith("#")]


def per_command_ms(fn: Callable[[str], object], commands: list[str]) -> list[float]:
    times: list[float] = []
    for command in commands:
        best = float("inf")
        for _ in range(ROUNDS):
            start = time.perf_counter()
            fn(command)
            best = min(best, time.perf_counter() - start)
        times.append(best * 1000)
    return times


def measure() -> dict[str, Any]:
    """The figures of whichever ``shellagent`` is importable (this one, or --before's)."""
    from shellagent.policy import PolicyEngine, ShellState, default_policy_path
    from shellagent.policy.parse import BashParser

    engine = PolicyEngine.load([default_policy_path()], home=HOME, workspace=WORKSPACE)
    state = ShellState(cwd=WORKSPACE)
    everyday = corpus("everyday.txt")
    decide = per_command_ms(lambda c: engine.check(c, state), everyday)
    parser = BashParser(str(HOME))
    parse = per_command_ms(parser.parse, everyday)
    counts = {}
    for name in ("everyday", "adversarial"):
        tally = Counter(engine.check(c, state).decision.word for c in corpus(f"{name}.txt"))
        counts[name] = {k: tally[k] for k in ("allow", "ask", "deny")}
    review = _review_section("# Security review 1")
    allowed = [c for c in review if engine.check(c, state).decision == "allow"]
    review2 = _review_section("# Security review 2")
    allowed2 = [c for c in review2 if engine.check(c, state).decision == "allow"]
    return {
        "median": statistics.median(decide),
        "p95": statistics.quantiles(decide, n=20)[-1],
        "max": max(decide),
        "parse": statistics.median(parse),
        "counts": counts,
        "review_allowed": len(allowed),
        "review_total": len(review),
        "review2_allowed": len(allowed2),
        "review2_total": len(review2),
    }


def _review_section(mark: str) -> list[str]:
    """The commands of one review's section of the adversarial corpus."""
    lines = (CORPORA / "adversarial.txt").read_text(encoding="utf-8").splitlines()
    marks = [i for i, ln in enumerate(lines) if ln.startswith(mark)]
    if not marks:
        return []
    rest = lines[marks[0] + 1 :]
    end = next((i for i, ln in enumerate(rest) if ln.startswith("# Security review")), len(rest))
    rest = rest[:end]
    return [ln.removeprefix("deny:") for ln in rest if ln.strip() and not ln.startswith("#")]


def _default_before() -> str:
    for args in (["merge-base", "HEAD", "main"], ["rev-parse", "HEAD~1"]):
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        if done.returncode == 0 and done.stdout.strip():
            head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True)
            if done.stdout.strip() != head.stdout.decode().strip():
                return done.stdout.strip()
    return ""


def measure_before(ref: str) -> dict[str, Any] | None:
    """Export ``ref``'s package and measure it on this checkout's corpora, in a subprocess."""
    tmp = Path(tempfile.mkdtemp(prefix="policy-before-"))
    try:
        archive = subprocess.run(
            ["git", "archive", ref, "shellagent"], cwd=ROOT, capture_output=True, check=False
        )
        if archive.returncode != 0:
            print(f"(cannot export {ref}: {archive.stderr.decode().strip()})")
            return None
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive.stdout, check=True)
        env = dict(os.environ, PYTHONPATH=str(tmp))
        done = subprocess.run(
            [sys.executable, __file__, "--measure-json"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        result: dict[str, Any] = json.loads(done.stdout)
        return result
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def show(label: str, r: dict[str, Any]) -> None:
    ratio = r["median"] / r["parse"]
    print(f"{label}: median {r['median']:.3f} ms   p95 {r['p95']:.3f} ms   max {r['max']:.3f} ms")
    print(f"  parse alone {r['parse']:.3f} ms   (decision = {ratio:.1f}x parse)")
    for name, c in r["counts"].items():
        total = sum(c.values())
        print(
            f"  {name:12} allow {c['allow']:4}   ask {c['ask']:4}   deny {c['deny']:4}"
            f"   (total {total})"
        )
    print(f"  review P1/M2/M3 commands allowed: {r['review_allowed']} of {r['review_total']}")
    if "review2_total" in r:
        print(f"  review 2 commands allowed: {r['review2_allowed']} of {r['review2_total']}")
    every = r["counts"]["everyday"]
    print(f"  everyday allow share: {every['allow'] / sum(every.values()):.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=None, metavar="REF", help="earlier commit to compare")
    parser.add_argument("--measure-json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure_json:
        print(json.dumps(measure()))
        return
    print(f"everyday corpus, best of {ROUNDS} runs per command; target median <= 2 ms")
    now = measure()
    ref = args.before if args.before is not None else _default_before()
    before = measure_before(ref) if ref else None
    if before is not None:
        show(f"before ({ref[:12]})", before)
    show("now", now)
    print(f"target median <= 2 ms: {'met' if now['median'] <= 2 else 'NOT met'}")
    if before is not None:
        ratio = now["median"] / before["median"]
        print(f"median decision time now / before: {ratio:.2f}x")


if __name__ == "__main__":
    main()
