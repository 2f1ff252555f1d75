"""How fast ``ask`` reaches the daemon: start-up to socket connected, and what it imports.

Runs a throwaway daemon (scripted model) in a temporary runtime dir, then times fresh
``python`` processes that import ``shellagent.cli.ask`` and connect, against a bare
``python -c pass`` baseline measured in the same run. Prints figures; asserts nothing.

    python bench/ask_startup_bench.py [--runs 20]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

from isolated import private_env

PROBE = r"""
import sys, time, json
t0 = time.perf_counter()
startup = set(sys.modules)
from shellagent.cli import ask
from shellagent.cli.ask_client import connect
s = connect(); s.close()
t1 = time.perf_counter()
new = sorted(set(sys.modules) - startup)
print(json.dumps({"ms": (t1 - t0) * 1000, "imports": new}))
"""


def _wall(argv: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, check=True, capture_output=True)
    return (time.perf_counter() - t0) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    base, env = private_env()
    script = base / "script.json"
    script.write_text('["{\\"done\\": \\"ok\\"}"]')
    env["SHELLAGENT_BACKEND"] = f"scripted:{script}"
    daemon = subprocess.Popen(
        [sys.executable, "-m", "shellagent", "daemon", "run", "--quiet"], env=env
    )
    try:
        sock = base / "runtime" / "daemon.sock"
        while not sock.exists():
            time.sleep(0.02)
        bare = [_wall([sys.executable, "-c", "pass"], env) for _ in range(args.runs)]
        whole = [_wall([sys.executable, "-c", PROBE], env) for _ in range(args.runs)]
        inner = []
        imports: list[str] = []
        for _ in range(args.runs):
            out = subprocess.run(
                [sys.executable, "-c", PROBE], env=env, check=True, capture_output=True, text=True
            ).stdout
            report = json.loads(out)
            inner.append(report["ms"])
            imports = report["imports"]
    finally:
        daemon.terminate()
        daemon.wait()
    med = statistics.median
    print(f"runs: {args.runs}")
    print(f"python -c pass (baseline)              {med(bare):7.1f} ms wall")
    print(
        f"ask import + connect, whole process   {med(whole):7.1f} ms wall "
        f"(+{med(whole) - med(bare):.1f} ms over baseline)"
    )
    print(f"ask import + connect, inside Python    {med(inner):7.1f} ms")
    own = [m for m in imports if m.startswith("shellagent")]
    other = [
        m
        for m in imports
        if m.split(".")[0] not in sys.stdlib_module_names and not m.startswith("shellagent")
    ]
    print(f"modules imported: {len(imports)} ({len(own)} shellagent, {len(other)} third-party)")
    print("shellagent:", ", ".join(own))
    print("third-party:", ", ".join(other) or "none")
    print("stdlib:", ", ".join(m for m in imports if m not in own and m not in other))


if __name__ == "__main__":
    main()
