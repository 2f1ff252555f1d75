"""Whether the everyday corpus still runs under the confined commands' memory cap, and how
much memory its commands take.

    .venv/bin/python bench/confined_memory_bench.py [--cap-mib 1024]

Every everyday-corpus line the default policy allows as read-only runs confined in a real
sandbox, twice: under the cap (``Limits.confined_bytes``) and with the session's own
per-process limit, in a workspace holding the files the corpus names (a 200k-line log, a
40 MB CSV, a 20 MB JSON, a git repository with history). Prints the lines whose exit code
or output differ between the two runs, and the peak resident size of the largest commands
(``/usr/bin/time -f %M`` around each, a separate run).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shlex
import subprocess
import tempfile
from pathlib import Path

from shellagent.policy import PolicyEngine, ShellState
from shellagent.sandbox import Sandbox, get_profile
from shellagent.sandbox.limits import GiB, Limits, MiB

ROOT = Path(__file__).resolve().parents[1]


def corpus() -> list[str]:
    lines = (ROOT / "tests" / "policy" / "everyday.txt").read_text().splitlines()
    return [line for line in lines if line.strip() and not line.startswith("#")]


def workspace(root: Path) -> Path:
    """A home with the files the everyday corpus names, and a project in it."""
    home = root / "home"
    ws = home / "project"
    for folder in ("Downloads", "Documents", ".local/share/app", "project/src"):
        (home / folder).mkdir(parents=True, exist_ok=True)
    log = "".join(f"2024-01-01 12:{i % 60:02d} INFO request {i} ok\n" for i in range(200_000))
    csv = "date,product,city,amount\n" + "".join(
        f"2024-01-{i % 28 + 1:02d},item{i % 500},city{i % 40},{i % 977}\n" for i in range(900_000)
    )
    records = [{"name": f"n{i}", "n": i, "tags": ["a", "b"]} for i in range(200_000)]
    files = {
        "app.log": log,
        "data.csv": csv,
        "report.csv": csv[:2_000_000],
        "expenses.csv": csv[:100_000],
        "data.json": json.dumps({"items": records}),
        "package.json": json.dumps({"name": "p", "version": "1.0.0"}),
        "notes.txt": "notes\n" * 1000,
        "names.txt": "".join(f"name{i % 300}\n" for i in range(10_000)),
        "README.md": "# readme\n",
    }
    for name in ("a.txt", "b.txt", "old.txt", "new.txt", "list.txt", "input.txt", "file.txt"):
        files[name] = "".join(f"line {i}\n" for i in range(2000))
    for name, text in files.items():
        (ws / name).write_text(text)
    (ws / "data.bin").write_bytes(os.urandom(1 << 20))
    (home / ".local/share/app/log.txt").write_text(log[:100_000])
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    git = ["git", "-C", str(ws), "-c", "user.name=t", "-c", "user.email=t@x"]
    for i in range(30):
        (ws / "src" / f"m{i}.py").write_text(f"x = {i}\n" * 100)
        subprocess.run([*git, "add", "-A"], check=True)
        subprocess.run([*git, "commit", "-qm", f"c{i}"], check=True)
    return ws


def run_all(ws: Path, limits: Limits, lines: list[str]) -> dict[str, tuple[int, str]]:
    profile = dataclasses.replace(get_profile("default", cwd=ws), limits=limits)
    out: dict[str, tuple[int, str]] = {}
    with Sandbox(profile, timeout=20) as session:
        for line in lines:
            result = session.run(line, confined=True, judged=judged[line])
            out[line] = (result.exit_code, result.output)
            session.run(f"cd {shlex.quote(str(ws))}")
    return out


def peaks(ws: Path, limits: Limits, lines: list[str]) -> list[tuple[int, str]]:
    profile = dataclasses.replace(get_profile("default", cwd=ws), limits=limits)
    found = []
    with Sandbox(profile, timeout=20) as session:
        for line in lines:
            wrapped = f"/usr/bin/time -f 'PEAK %M' bash -c {shlex.quote(line)} 2>&1 | tail -1"
            text = session.run(wrapped).output.strip()
            if text.startswith("PEAK "):
                found.append((int(text.split()[1]), line))
            session.run(f"cd {shlex.quote(str(ws))}")
    return sorted(found, reverse=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cap-mib", type=int, default=1024)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        ws = workspace(Path(tmp))
        os.environ["HOME"] = str(ws.parent)
        engine = PolicyEngine.load(workspace=ws, home=ws.parent)
        state = ShellState(cwd=ws)
        allowed = [line for line in corpus() if engine.check(line, state).read_only]
        global judged
        judged = {line: engine.check(line, state).substitutions for line in allowed}
        base = Limits.default()
        capped = dataclasses.replace(base, confined_bytes=args.cap_mib * MiB)
        roomy = dataclasses.replace(base, confined_bytes=base.memory_bytes)
        under, over = run_all(ws, capped, allowed), run_all(ws, roomy, allowed)
        codes = [line for line in allowed if under[line][0] != over[line][0]]
        texts = [line for line in allowed if line not in codes and under[line] != over[line]]
        print(f"everyday lines allowed read-only: {len(allowed)} of {len(corpus())}")
        print(f"cap {capped.confined_data // MiB} MiB vs {roomy.confined_data / GiB:.1f} GiB:")
        print(f"  lines whose exit code differs: {len(codes)}")
        for line in codes:
            print(f"    {line!r}: {under[line][0]} vs {over[line][0]}")
        print(f"  same exit code, other output (clocks, processes, randomness): {len(texts)}")
        print("    " + ", ".join(repr(line) for line in texts))
        memory_errors = [
            line for line in allowed if "memory" in under[line][1].lower() and under[line][0]
        ]
        print(f"  lines failing with a memory error under the cap: {len(memory_errors)}")
        top = peaks(ws, roomy, allowed)
        print("largest peak resident sizes (KiB):")
        for kib, line in top[:8]:
            print(f"  {kib:>8}  {line}")


judged: dict[str, tuple[tuple[int, str], ...]] = {}

if __name__ == "__main__":
    main()
