"""What the disk cap of overlay sessions costs, before and after, measured in one run.

Two worker processes, one per tree (this checkout, and the package at ``--before REV``,
extracted with ``git archive``), are driven in lockstep: each sample is taken by one, then
the other, in alternating order, so both see the same load on a shared machine, and the
figure is the median of the paired ratios (after / before). On a session whose working
directory is an overlay with its upper layer in /var/tmp (as an ``ask`` session's):

- write-heavy commands: one 256 MiB file, 2,000 small files, a copy of /usr/share/doc,
  each undone (not timed) before the next sample;
- the CPU the host process spends while the session sits idle for two seconds (the
  watcher's polls), in % of one core;
- start-up, ``Sandbox()`` until the shell is ready, on the overlay profile and on the plain
  ``default`` profile (the host's socket files are looked up at every start).

Usage: .venv/bin/python bench/diskcap_bench.py [--runs N] [--before REV]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from isolated import private_env
from sandbox_bench import extract

REPO = Path(__file__).resolve().parent.parent
BEFORE = "65355d5"  # main before the disk cap

# One tree on its import path; reads a measurement's name per line, answers its value.
WORKER = r"""
import dataclasses, itertools, json, resource, shutil, sys, tempfile, time
from pathlib import Path
from shellagent.sandbox import Overlay, Sandbox, get_profile

writes = {
    "big": ("head -c 256M /dev/zero > big", "rm -f big"),
    "small": ("for i in $(seq 2000); do echo x > f$i; done", "rm -f f*"),
    "copy": ("cp -r /usr/share/doc doc", "rm -rf doc"),
}
lower = Path(tempfile.mkdtemp(dir=Path.home()))
scratch = Path(tempfile.mkdtemp(dir="/var/tmp"))
names = itertools.count()

def overlay_profile():
    n = next(names)
    upper, work = scratch / f"u{n}", scratch / f"w{n}"
    upper.mkdir()
    work.mkdir()
    return dataclasses.replace(
        get_profile("default", cwd=lower), writable=(), overlays=(Overlay(lower, upper, work),))

def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime

Sandbox(get_profile("default", cwd=lower)).close()  # warm caches (scans)
box = Sandbox(overlay_profile(), timeout=300)
box.run("true")
print("ready", flush=True)
for line in sys.stdin:
    what = line.strip()
    if what in writes:
        command, undo = writes[what]
        start = time.perf_counter()
        box.run(command)
        value = time.perf_counter() - start
        box.run(undo)
    elif what == "idle":
        before = cpu()
        time.sleep(2.0)
        value = (cpu() - before) / 2.0
    else:
        profile = overlay_profile() if what == "start_overlay" else get_profile(
            "default", cwd=lower)
        start = time.perf_counter()
        fresh = Sandbox(profile)
        value = time.perf_counter() - start
        fresh.close()
    print(json.dumps(value), flush=True)
box.close()
shutil.rmtree(lower, ignore_errors=True)
shutil.rmtree(scratch, ignore_errors=True)
"""

MEASURES = (
    ("256 MiB into one file (ms)", "big", 1000),
    ("2,000 small files (ms)", "small", 1000),
    ("cp -r /usr/share/doc (ms)", "copy", 1000),
    ("host CPU while idle (% of one core)", "idle", 100),
    ("start-up, overlay profile (ms)", "start_overlay", 1000),
    ("start-up, default profile (ms)", "start_default", 1000),
)


def start_worker(tree: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", WORKER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**env, "PYTHONPATH": str(tree)},
        cwd=tree,
    )
    assert proc.stdout is not None
    if proc.stdout.readline().strip() != "ready":
        raise SystemExit(f"the worker for {tree} did not start")
    return proc


def sample(proc: subprocess.Popen[str], what: str) -> float:
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(what + "\n")
    proc.stdin.flush()
    return float(json.loads(proc.stdout.readline()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=9, help="paired samples per measure")
    parser.add_argument("--before", default=BEFORE, help="git revision to compare against")
    args = parser.parse_args()
    base, env = private_env()
    samples: dict[str, dict[str, list[float]]] = {"after": {}, "before": {}}
    with tempfile.TemporaryDirectory() as tmp:
        workers = {"after": start_worker(REPO, env)}
        workers["before"] = start_worker(extract(args.before, Path(tmp)), env)
        try:
            for n in range(args.runs):
                order = ["after", "before"] if n % 2 == 0 else ["before", "after"]
                for _, key, _ in MEASURES:
                    for name in order:
                        samples[name].setdefault(key, []).append(sample(workers[name], key))
        finally:
            for proc in workers.values():
                assert proc.stdin is not None
                proc.stdin.close()
                proc.wait(60)
    subprocess.run(["rm", "-rf", str(base)], check=False)
    print(f"{args.runs} paired samples; uid {os.getuid()}; before = {args.before}; medians")
    print(f"{'':40} {'before':>9} {'after':>9} {'after/before (paired)':>22}")
    for label, key, scale in MEASURES:
        before, after = samples["before"][key], samples["after"][key]
        pairs = [a / b for a, b in zip(after, before, strict=True) if b > 0]
        ratio = f"{statistics.median(pairs):21.2f}x" if pairs else f"{'-':>22}"
        print(
            f"{label:40} {statistics.median(before) * scale:9.2f} "
            f"{statistics.median(after) * scale:9.2f} {ratio}"
        )


if __name__ == "__main__":
    main()
