"""Transactions: what working on a copy of the user's files costs, measured in one run.

1. Sandbox start-up with the home and working directory as overlays against the same
   session with direct write grants (median ms), and the per-command overhead of each.
2. Change-set computation for 10, 1,000 and 100,000 created files in an upper layer.
3. Apply and undo of 1,000 files of 16 KiB against ``cp -a`` of the same files (files/s,
   MB/s); every file goes through the journal, the undo store and an fsync.

Everything runs in a scratch home under ``$HOME/.cache`` (not /tmp: the sandbox gives every
command a private /tmp). Prints ratios against the baseline of the same run.

Usage: .venv/bin/python bench/transaction_bench.py [--runs N] [--large N]
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def startup_and_commands(home: Path, runs: int) -> None:
    from shellagent.sandbox import Sandbox, get_profile
    from shellagent.transaction import Workspace

    work = home / "project"
    work.mkdir(exist_ok=True)
    direct = get_profile("default", cwd=work)
    starts: dict[str, list[float]] = {"direct": [], "overlay": []}
    per_command: dict[str, list[float]] = {"direct": [], "overlay": []}
    for i in range(runs):
        for kind in ("direct", "overlay"):
            ws = None
            profile = direct
            if kind == "overlay":
                ws = Workspace.create(f"bench-{os.getpid()}-{i}", [home, work])
                profile = dataclasses.replace(direct, writable=(), overlays=ws.overlays())
            start = time.perf_counter()
            session = Sandbox(profile, timeout=10)
            session.run("true")
            starts[kind].append(time.perf_counter() - start)
            for _ in range(5):
                t = time.perf_counter()
                session.run("echo x > f.txt")
                per_command[kind].append(time.perf_counter() - t)
            session.close()
            if ws is not None:
                ws.remove()
    base, over = _median_ms(starts["direct"]), _median_ms(starts["overlay"])
    print(f"session start (to the first command's result), median of {runs}:")
    print(f"  direct grants {base:7.1f} ms   overlays {over:7.1f} ms   ratio {over / base:.2f}")
    base, over = _median_ms(per_command["direct"]), _median_ms(per_command["overlay"])
    print(f"per command (a write), median of {runs * 5}:")
    print(f"  direct grants {base:7.2f} ms   overlays {over:7.2f} ms   ratio {over / base:.2f}")


def fill(upper: Path, files: int, size: int = 64) -> None:
    """``files`` new files in 100-file directories of an upper layer, as overlayfs stores
    files the session created."""
    payload = b"x" * size
    for i in range(files):
        d = upper / "new" / f"d{i // 100:04d}"
        if i % 100 == 0:
            d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i:06d}.txt").write_bytes(payload)


CHANGESET_ONCE = r"""
import json, os, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.dirname(sys.argv[4]))
from transaction_bench import fill
from shellagent.transaction import Workspace, compute
home, n = Path(sys.argv[2]), int(sys.argv[3])
ws = Workspace.create(f"bench-cs-{n}-{os.getpid()}", [home])
fill(ws.trees[0].upper, n)
start = time.perf_counter()
changes = compute(ws)
took = time.perf_counter() - start
start = time.perf_counter()
lines = changes.render()
shown = time.perf_counter() - start
ws.remove()
print(json.dumps({"compute": took, "render": shown, "first": lines[0]}))
"""


def changeset(home: Path, sizes: list[int], before: Path | None) -> None:
    """Change-set computation and its summary, in a fresh process each, for this checkout
    and (``--before``) an earlier one, one after the other."""
    import json

    here = Path(__file__).resolve().parents[1]
    print("change-set computation (created files in 100-file folders):")
    for n in sizes:
        for label, code in (("now", here), ("before", before)):
            if code is None:
                continue
            proc = subprocess.run(
                [sys.executable, "-c", CHANGESET_ONCE, str(code), str(home), str(n),
                 str(Path(__file__).resolve())],
                capture_output=True, text=True, check=False,
                env={**os.environ, "PYTHONPATH": str(code)},
            )  # fmt: skip
            if proc.returncode != 0:
                raise SystemExit(f"change-set bench failed ({code}): {proc.stderr[-2000:]}")
            r = json.loads(proc.stdout.splitlines()[-1])
            print(
                f"  {label:<6} {n:>7} files: {r['compute'] * 1000:9.1f} ms "
                f"({n / r['compute']:,.0f} files/s); the summary {r['render'] * 1000:.1f} ms "
                f"({r['first']})"
            )


APPLY_ONCE = r"""
import json, os, subprocess, sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.dirname(sys.argv[5]))
from transaction_bench import fill
from shellagent.transaction import Workspace, compute
from shellagent.transaction.apply import Baseline, apply, undo
home, files, size = Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
ws = Workspace.create(f"bench-apply-{os.getpid()}", [home])
fill(ws.trees[0].upper, files, size)
changes = compute(ws)
Baseline(ws).note(changes)
subprocess.run(["sync"], check=True)
start = time.perf_counter()
result = apply(ws, changes)
apply_s = time.perf_counter() - start
release = getattr(ws, "release", None)
if release:
    release()
start = time.perf_counter()
undo(ws.session)
undo_s = time.perf_counter() - start
ws.remove()
print(json.dumps({"apply": apply_s, "undo": undo_s, "applied": result.applied}))
"""


def _apply_once(code: Path, home: Path, files: int, size: int) -> dict[str, float]:
    """One apply and undo by the package at ``code`` (this checkout, or an earlier one),
    in a fresh process."""
    import json

    proc = subprocess.run(
        [sys.executable, "-c", APPLY_ONCE, str(code), str(home), str(files), str(size),
         str(Path(__file__).resolve())],
        capture_output=True, text=True, check=False, env={**os.environ, "PYTHONPATH": str(code)},
    )  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"apply bench failed ({code}): {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def _cp_once(home: Path, files: int, size: int) -> float:
    src, dst = home.parent / "copy-src", home.parent / "copy-dst"
    fill(src, files, size)
    subprocess.run(["sync"], check=True)
    start = time.perf_counter()
    subprocess.run(["cp", "-a", f"{src}/.", str(dst)], check=True)
    subprocess.run(["sync", "-f", str(dst)], check=True)
    took = time.perf_counter() - start
    shutil.rmtree(src)
    shutil.rmtree(dst)
    return took


def apply_and_undo(home: Path, files: int, size: int, runs: int, before: Path | None) -> None:
    """Apply (and undo) of ``files`` new files against ``cp -a`` + ``sync -f`` of the same
    files, and against an earlier checkout's apply (``--before``), interleaved, medians."""
    here = Path(__file__).resolve().parents[1]
    cp, now, old = [], [], []
    for _ in range(runs):
        cp.append(_cp_once(home, files, size))
        now.append(_apply_once(here, home, files, size))
        if before is not None:
            old.append(_apply_once(before, home, files, size))
    mb = files * size / 1e6
    cp_s = statistics.median(cp)
    print(f"apply and undo of {files} files of {size // 1024} KiB ({mb:.1f} MB), median of {runs}:")
    print(f"  cp -a + sync   {files / cp_s:9,.0f} files/s {mb / cp_s:7.1f} MB/s")
    for label, samples in (("apply (now)", now), ("apply (before)", old)):
        if not samples:
            continue
        apply_s = statistics.median(s["apply"] for s in samples)
        undo_s = statistics.median(s["undo"] for s in samples)
        print(
            f"  {label:<14} {files / apply_s:9,.0f} files/s {mb / apply_s:7.1f} MB/s  "
            f"throughput {cp_s / apply_s:.2f}x of cp -a + sync"
        )
        print(f"  {'undo':<14} {files / undo_s:9,.0f} files/s {mb / undo_s:7.1f} MB/s")


def copy_up(home: Path, megabytes: int) -> None:
    """Appending one line to a big file: overlayfs copies the whole file up first."""
    import dataclasses

    from shellagent.sandbox import Sandbox, get_profile
    from shellagent.transaction import Workspace

    big = home / "project" / "big.bin"
    with big.open("wb") as f:
        f.truncate(0)
        block = os.urandom(1 << 20)
        for _ in range(megabytes):
            f.write(block)
    times = {}
    for kind in ("direct", "overlay"):
        ws = None
        profile = get_profile("default", cwd=home / "project")
        if kind == "overlay":
            ws = Workspace.create(f"bench-big-{os.getpid()}", [home])
            profile = dataclasses.replace(profile, writable=(), overlays=ws.overlays())
        with Sandbox(profile, timeout=600) as session:
            start = time.perf_counter()
            result = session.run(f"echo appended >> {big}", timeout=600)
            times[kind] = time.perf_counter() - start
            assert result.exit_code == 0, result.output
        if ws is not None:
            ws.remove()
    print(f"appending a line to a {megabytes} MiB file (overlayfs copies it up first):")
    print(
        f"  direct grants {times['direct'] * 1000:8.1f} ms   overlays "
        f"{times['overlay'] * 1000:8.1f} ms ({megabytes / times['overlay']:.0f} MiB/s copy-up)"
    )
    big.unlink()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--large", type=int, default=100_000, help="the biggest change set")
    parser.add_argument("--copy-up-mb", type=int, default=1024, help="the big file, MiB")
    parser.add_argument(
        "--before", type=Path, help="an earlier checkout whose apply to measure alongside"
    )
    parser.add_argument(
        "--only", choices=("startup", "changeset", "apply", "copy-up"), action="append"
    )
    args = parser.parse_args()
    scratch_root = Path.home() / ".cache" / "shellagent-bench"
    scratch_root.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=scratch_root))
    home = scratch / "home"
    home.mkdir()
    (home / "Documents").mkdir()
    (home / "Documents" / "notes.txt").write_text("hello\n")
    for name in ("CONFIG", "DATA", "STATE", "CACHE"):
        os.environ[f"SHELLAGENT_{name}_DIR"] = str(scratch / name.lower())
    os.environ["SHELLAGENT_WORKSPACES_DIR"] = str(scratch / "workspaces")
    real_home = os.environ.get("HOME")
    os.environ["HOME"] = str(home)
    try:
        print(f"load average at start: {os.getloadavg()[0]:.2f}")
        only = set(args.only or ("startup", "changeset", "apply", "copy-up"))
        if "startup" in only:
            startup_and_commands(home, args.runs)
        if "changeset" in only:
            changeset(home, [10, 1000, args.large], args.before)
        if "apply" in only:
            apply_and_undo(home, 1000, 16 * 1024, max(3, args.runs // 2), args.before)
        if "copy-up" in only:
            copy_up(home, args.copy_up_mb)
        print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    finally:
        if real_home is not None:
            os.environ["HOME"] = real_home
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
