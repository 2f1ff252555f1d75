"""Sandbox figures before and after a change, measured in one run so the ratios hold on a
noisy machine.

For each tree (this checkout, and the package as it was at ``--before REV``, extracted
with ``git archive``), a worker process measures, in alternating rounds:

1. per-command overhead: a trivial command in the persistent session, back to back and
   with a 50 ms pause before each (an agent's case: the model takes far longer than that
   between commands), and a fresh ``bwrap … bash -c CMD`` per command with the same
   profile and mounts;
2. start-up of the ``default`` and ``ephemeral`` profiles (``Sandbox()`` until the shell
   is ready); the ephemeral profile also with ``SHELLAGENT_IDMAP=off`` (run by root: root
   inside is host root, no id-shifted views; the ``before`` tree ignores the switch, it
   always used that mapping); and the ``default`` profile with nothing cached (the home
   directory's secret scans, by name and by content, and the login shell's PATH: what a
   start pays every ten minutes, or after a startup file changed).

A plain ``bwrap --ro-bind / / --proc /proc --dev /dev --unshare-all true`` is the
baseline of what any bwrap start costs here, measured in the same rounds.

Usage: .venv/bin/python bench/sandbox_bench.py [--runs N] [--rounds R] [--before REV]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from isolated import private_env

REPO = Path(__file__).resolve().parent.parent
BEFORE = "f094550"  # main before the second sandbox pass (C1, H1, H3, M1, M5, M6, item 9)

# Runs inside a worker with one tree on its import path; prints samples (seconds) as JSON.
WORKER = r"""
import json, os, subprocess, sys, tempfile, time
from pathlib import Path
from shellagent.sandbox import Sandbox, find_bwrap, get_profile, mounts
from shellagent.sandbox.profiles import bwrap_argv

runs = int(sys.argv[1])
commands = ("true", "echo hello", "pwd")
out = {"persistent": [], "paused": [], "fresh": [], "default": [], "ephemeral": []}
with tempfile.TemporaryDirectory(dir=Path.home()) as tmp:
    workdir = Path(tmp)
    for name in ("default", "ephemeral"):  # warm caches (snapshot, scans) before timing
        Sandbox(get_profile(name, cwd=workdir)).close()
    with Sandbox(get_profile("default", cwd=workdir)) as session:
        for _ in range(runs):
            for command in commands:
                start = time.perf_counter()
                session.run(command)
                out["persistent"].append(time.perf_counter() - start)
        for _ in range(runs):
            for command in commands:
                time.sleep(0.05)
                start = time.perf_counter()
                session.run(command)
                out["paused"].append(time.perf_counter() - start)
    profile = get_profile("default", cwd=workdir)
    for _ in range(runs):
        start = time.perf_counter()
        plan = mounts.default_plan(profile.writable, profile.workdir, profile.network)
        argv = bwrap_argv(find_bwrap(), profile, plan)
        subprocess.run([*argv, "--", "/bin/bash", "--noprofile", "--norc", "-c", "true"],
                       stdin=subprocess.DEVNULL, capture_output=True, check=True,
                       env={"PATH": "/usr/bin:/bin"})
        out["fresh"].append(time.perf_counter() - start)
        plan.remove_created()
    from shellagent import paths
    for _ in range(runs):
        for cached in ("home-scan.json", "content-secrets.json", "login-path.json"):
            try:
                (paths.cache_dir() / cached).unlink()
            except OSError:
                pass
        try:
            from shellagent import loginpath
            loginpath._memory.clear()
        except ImportError:
            pass
        start = time.perf_counter()
        session = Sandbox(get_profile("default", cwd=workdir))
        out.setdefault("cold", []).append(time.perf_counter() - start)
        session.close()
    for name in ("default", "ephemeral", "ephemeral-identity"):
        os.environ["SHELLAGENT_IDMAP"] = "off" if name.endswith("identity") else "on"
        for _ in range(runs):
            start = time.perf_counter()
            session = Sandbox(get_profile(name.split("-")[0], cwd=workdir))
            out.setdefault(name, []).append(time.perf_counter() - start)
            session.close()
print(json.dumps(out))
"""


def extract(rev: str, into: Path) -> Path:
    """The ``shellagent`` package as it was at ``rev``."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", rev, "shellagent"],
        capture_output=True,
        check=True,
    ).stdout
    tar_path = into / "tree.tar"
    tar_path.write_bytes(archive)
    with tarfile.open(tar_path) as tar:
        tar.extractall(into, filter="data")
    return into


def worker(tree: Path, runs: int, env: dict[str, str]) -> dict[str, list[float]]:
    proc = subprocess.run(
        [sys.executable, "-c", WORKER, str(runs)],
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": str(tree)},
        cwd=tree,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"worker for {tree} failed:\n{proc.stderr[-2000:]}")
    result: dict[str, list[float]] = json.loads(proc.stdout)
    return result


def plain_bwrap(runs: int) -> list[float]:
    from shellagent.sandbox import find_bwrap

    argv = [
        find_bwrap().path,
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--unshare-all",
        "--die-with-parent",
        "--",
        "/bin/true",
    ]
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, stdin=subprocess.DEVNULL, check=True)
        samples.append(time.perf_counter() - start)
    return samples


def ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=10, help="samples per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", default=BEFORE, help="git revision to compare against")
    args = parser.parse_args()
    base, env = private_env()
    trees = {"after": REPO}
    with tempfile.TemporaryDirectory() as tmp:
        if args.before != "none":
            trees["before"] = extract(args.before, Path(tmp))
        samples: dict[str, dict[str, list[float]]] = {name: {} for name in trees}
        plain: list[float] = []
        for _ in range(args.rounds):
            plain += plain_bwrap(args.runs)
            for name, tree in trees.items():
                for key, values in worker(tree, args.runs, env).items():
                    samples[name].setdefault(key, []).extend(values)
    subprocess.run(["rm", "-rf", str(base)], check=False)

    from shellagent.sandbox import find_bwrap

    print(
        f"bwrap {find_bwrap().version_text}; {args.rounds} rounds x {args.runs} runs; "
        f"uid {os.getuid()}; before = {args.before}; medians in ms"
    )
    print(f"{'plain bwrap (--unshare-all, true)':36} {ms(plain):9.2f}")
    print(f"{'':36} {'before':>9} {'after':>9} {'after/before':>13}")
    rows = [
        ("persistent session, per command", "persistent"),
        ("  ... with a 50 ms pause before each", "paused"),
        ("fresh bwrap per command", "fresh"),
        ("start-up, default profile", "default"),
        ("  ... nothing cached (scans, login PATH)", "cold"),
        ("start-up, ephemeral profile", "ephemeral"),
        ("  ... with SHELLAGENT_IDMAP=off", "ephemeral-identity"),
    ]
    for label, key in rows:
        after = ms(samples["after"][key])
        before = ms(samples["before"][key]) if "before" in samples else None
        ratio = f"{after / before:12.2f}x" if before else f"{'-':>13}"
        shown = f"{before:9.2f}" if before else f"{'-':>9}"
        print(f"{label:36} {shown} {after:9.2f} {ratio}")
    for name, measured in samples.items():
        paused = ms(measured["fresh"]) / ms(measured["paused"])
        back_to_back = ms(measured["fresh"]) / ms(measured["persistent"])
        print(
            f"fresh / persistent ({name}): {paused:.1f}x with a pause before each command "
            f"(target >= 10x), {back_to_back:.1f}x back to back"
        )
    print("start-up target: <= 30 ms median")


if __name__ == "__main__":
    main()
