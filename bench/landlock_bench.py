"""Per-command figures of the driver design and the cost of Landlock, in one run.

1. Per-command overhead: a trivial command in the persistent session vs a fresh
   ``bwrap … bash -c CMD`` per command, with the same profile and mounts. The session
   runs each command in a bash started ahead of time; it is measured back to back (the
   next command arrives as soon as the last one ends, so it may wait for that bash) and
   with a pause before each command (an agent thinks for a while between commands).
2. Start-up time of the default and ephemeral profiles.
3. Landlock: a command confined read-only vs the same command unconfined, per command
   (with a pause before each) and for a session of 20 everyday read-only commands run
   back to back, in the same run.

Usage: .venv/bin/python bench/sandbox_bench.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from shellagent.sandbox import Sandbox, find_bwrap, get_profile, mounts
from shellagent.sandbox.profiles import bwrap_argv

COMMANDS = ("true", "echo hello", "pwd")
THINK_S = 0.05  # the pause before each command in the "pause" figures (50 ms)
# A session of everyday read-only commands, as the policy allows them.
SESSION = (
    "ls -la",
    "cat notes.txt",
    "wc -l notes.txt",
    "grep -n two notes.txt",
    "head -1 notes.txt",
    "cd sub",
    "pwd",
    "ls",
    "cd ..",
    "find . -name '*.txt'",
    "du -sh .",
    "stat -c %s notes.txt",
    "sort notes.txt",
    "uniq notes.txt",
    "tail -n 1 notes.txt",
    "echo done",
    "date +%Y",
    "sha256sum notes.txt",
    "diff notes.txt notes.txt",
    "printf '%s\\n' a b | sort -r",
)


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def persistent(workdir: Path, runs: int, pause: float = 0.0) -> list[float]:
    samples = []
    with Sandbox(get_profile("default", cwd=workdir)) as session:
        for _ in range(runs):
            for command in COMMANDS:
                time.sleep(pause)
                start = time.perf_counter()
                session.run(command)
                samples.append(time.perf_counter() - start)
    return samples


def confinement(workdir: Path, runs: int) -> tuple[list[float], list[float]]:
    """Per command with a pause before it: (unconfined, confined), alternating."""
    plain: list[float] = []
    confined: list[float] = []
    with Sandbox(get_profile("default", cwd=workdir)) as session:
        for _ in range(runs):
            for command in COMMANDS:
                for sink, flag in ((plain, False), (confined, True)):
                    time.sleep(THINK_S)
                    start = time.perf_counter()
                    session.run(command, confined=flag)
                    sink.append(time.perf_counter() - start)
    return plain, confined


def sessions(workdir: Path, runs: int) -> tuple[list[float], list[float]]:
    """Wall time of the 20-command SESSION, back to back: (unconfined, confined)."""
    (workdir / "notes.txt").write_text("one\ntwo\nthree\n")
    (workdir / "sub").mkdir(exist_ok=True)
    plain: list[float] = []
    confined: list[float] = []
    with Sandbox(get_profile("default", cwd=workdir)) as session:
        for _ in range(runs):
            for sink, flag in ((plain, False), (confined, True)):
                start = time.perf_counter()
                for command in SESSION:
                    result = session.run(command, confined=flag)
                    assert result.exit_code == 0 and not result.refused, result
                sink.append(time.perf_counter() - start)
    return plain, confined


def fresh(workdir: Path, runs: int) -> list[float]:
    profile = get_profile("default", cwd=workdir)
    samples = []
    for _ in range(runs):
        for command in COMMANDS:
            start = time.perf_counter()
            # Same work the session does per sandbox: plan the mounts, build argv, start.
            plan = mounts.default_plan(profile.writable, profile.workdir, profile.network)
            argv = bwrap_argv(find_bwrap(), profile, plan)
            subprocess.run(
                [*argv, "--", "/bin/bash", "--noprofile", "--norc", "-c", command],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                check=True,
            )
            samples.append(time.perf_counter() - start)
            plan.remove_created()
    return samples


def startup(profile: str, workdir: Path, runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        with Sandbox(get_profile(profile, cwd=workdir)) as session:
            samples.append(time.perf_counter() - start)
            session.run("true")
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=Path.home()) as tmp:
        workdir = Path(tmp)
        Sandbox("ephemeral").close()  # build the skeleton cache (non-root) before timing
        warm = persistent(workdir, args.runs)
        cold = fresh(workdir, args.runs)
        paused = persistent(workdir, args.runs, THINK_S)
        plain, confined = confinement(workdir, args.runs)
        plain_session, confined_session = sessions(workdir, max(3, args.runs // 3))
        default = startup("default", workdir, args.runs)
        ephemeral = startup("ephemeral", workdir, args.runs)
    print(f"bwrap {find_bwrap().version_text}; {args.runs} runs x {len(COMMANDS)} commands")
    print(f"persistent session, median per command : {median_ms(warm):8.3f} ms")
    print(f"fresh bwrap per command, median        : {median_ms(cold):8.3f} ms")
    print(
        f"ratio (fresh / persistent)             : {median_ms(cold) / median_ms(warm):8.1f}x"
        "  (back to back: the next command waits for its shell to start)"
    )
    print(f"persistent, pause before each, median  : {median_ms(paused):8.3f} ms")
    print(
        f"ratio (fresh / persistent with pause)  : {median_ms(cold) / median_ms(paused):8.1f}x"
        "  (target >= 10x)"
    )
    print(f"unconfined command (pause), median     : {median_ms(plain):8.3f} ms")
    print(f"confined (Landlock) command, median    : {median_ms(confined):8.3f} ms")
    print(
        f"confined - unconfined                  : "
        f"{median_ms(confined) - median_ms(plain):+8.3f} ms per command"
    )
    print(f"20-command session, unconfined, median : {median_ms(plain_session):8.1f} ms")
    print(f"20-command session, confined, median   : {median_ms(confined_session):8.1f} ms")
    print(
        f"session ratio (confined / unconfined)  : "
        f"{median_ms(confined_session) / median_ms(plain_session):8.2f}x"
    )
    print(f"start-up, default profile, median      : {median_ms(default):8.1f} ms")
    print(f"start-up, ephemeral profile, median    : {median_ms(ephemeral):8.1f} ms")


if __name__ == "__main__":
    main()
