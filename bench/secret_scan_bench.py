"""What the home directory's secret scans cost a sandbox start when their cache has expired:
the name scan (``secrets.scan``) and the content scan of tools' settings
(``secrets.content_scan``), on a synthetic home of ``--tools`` tools with ``--files``
settings files each (a few holding a token), cold (no verdicts kept) and warm (verdicts
kept, nothing changed), and the real home of this user, cold and warm.

Usage: .venv/bin/python bench/secret_scan_bench.py [--tools N] [--files N] [--runs N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from shellagent.sandbox import secrets


def build(home: Path, tools: int, files: int) -> int:
    """A home with ``tools`` tools under ~/.config and as ~/.TOOL, each with ``files``
    settings files; every tenth tool keeps a token. The number of token files."""
    tokens = 0
    for t in range(tools):
        for base in (home / ".config" / f"tool{t}", home / f".tool{t}"):
            for f in range(files):
                sub = base / ("sub" if f % 2 else "")
                sub.mkdir(parents=True, exist_ok=True)
                text = f"[section]\noption{f} = value{f}\ncolour = blue\n" * 8
                if t % 10 == 0 and f == 0:
                    text += "api_key = Zx81-TOKEN-abcdef\n"
                    tokens += 1
                (sub / f"settings{f}.conf").write_text(text)
    (home / ".cache" / "big").mkdir(parents=True)
    for i in range(2000):  # a cache the scan must not walk
        (home / ".cache" / "big" / f"{i}.bin").write_bytes(b"x" * 64)
    return tokens


def timed(home: Path, known: secrets.Verdicts | None) -> tuple[float, secrets.ContentScan]:
    start = time.perf_counter()
    found = secrets.content_scan(home, known=known)
    return time.perf_counter() - start, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tools", type=int, default=60)
    parser.add_argument("--files", type=int, default=6)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="sa-scan-bench-"))
    try:
        home = base / "home"
        tokens = build(home, args.tools, args.files)
        cold, warm, name, rounds = [], [], [], []
        for _ in range(args.runs):
            start = time.perf_counter()
            secrets.scan(home, depth=secrets.HOME_SCAN_DEPTH)
            name.append(time.perf_counter() - start)
            took, first = timed(home, None)
            cold.append(took)
            known, scans, found = dict(first.verdicts), 1, first
            while not found.complete and scans < 20:  # later starts go on from the verdicts
                _, found = timed(home, known)
                known |= found.verdicts
                scans += 1
            rounds.append(scans)
            took, again = timed(home, known)
            warm.append(took)
        print(
            f"synthetic home: {args.tools * 2} tool folders x {args.files} files "
            f"({args.tools * 2 * args.files} settings files, {tokens} with a token)"
        )
        print(f"  name scan (as before)           {statistics.median(name) * 1000:8.1f} ms")
        print(
            f"  content scan, first             {statistics.median(cold) * 1000:8.1f} ms "
            f"({first.read} files read, complete={first.complete}); complete after "
            f"{statistics.median(rounds):.0f} scans"
        )
        print(
            f"  content scan, verdicts kept     {statistics.median(warm) * 1000:8.1f} ms "
            f"({again.read} files read, complete={again.complete}, "
            f"{len(again.secrets)} found)"
        )
        real = Path.home()
        took, first = timed(real, None)
        took_warm, again = timed(real, first.verdicts)
        print(
            f"this user's home ({real}): cold {took * 1000:.1f} ms ({first.read} read), "
            f"verdicts kept {took_warm * 1000:.1f} ms ({again.read} read), "
            f"{len(first.secrets)} found"
        )
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
