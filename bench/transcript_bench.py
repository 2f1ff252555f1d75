"""Transcript write overhead per event and export throughput on synthetic sessions.

    .venv/bin/python bench/transcript_bench.py [--sessions 1000]

Prints figures; asserts nothing. Baselines measured in the same run: a bare ``json.dumps``
per event (what any JSONL log pays) and a bare ``fsync`` per event on the same filesystem,
so the writer's own cost (stamping, redaction) is visible apart from the disk's.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from shellagent.events import (
    ApprovalRecord,
    ChatMessage,
    Check,
    End,
    Execution,
    ModelTurn,
    PolicyVerdict,
    SessionStart,
    TranscriptEvent,
    to_dict,
)
from shellagent.transcript import Redactor, TranscriptWriter, export, iter_transcripts

OUTPUT = "\n".join(f"-rw-r--r-- 1 user user {i * 37} Nov 22 02:15 file{i}.txt" for i in range(40))


def session_events(n: int, turns: int = 6) -> list[TranscriptEvent]:
    """A realistic session: start, prompt, turns with policy/approval/execution, check, end."""
    events: list[TranscriptEvent] = [
        SessionStart(
            session=f"s{n}",
            task=f"task {n}",
            model="smollm2",
            backend="llama-cpp",
            policy="default",
            profile="default",
            cwd="/home/u",
            versions={"shellagent": "0.1.0"},
            source="eval",
            task_id=f"t{n}",
        ),
        ChatMessage(role="system", content="You run shell commands. " * 40),
        ChatMessage(role="user", content=f"task {n}: tidy the logs"),
    ]
    for t in range(1, turns + 1):
        raw = json.dumps({"cmd": f"ls -la /var/log/app{t}", "why": "look"}, separators=(", ", ": "))
        events += [
            ModelTurn(
                turn=t,
                raw=raw,
                action=json.loads(raw),
                valid=True,
                prompt_tokens=300 + 40 * t,
                evaluated_prompt_tokens=40,
                generated_tokens=20,
                duration_s=0.2,
                token_ids=tuple(range(20)),
                logprobs=(-0.1,) * 20,
            ),
            ChatMessage(role="assistant", content=raw, turn=t),
            PolicyVerdict(
                turn=t, command=f"ls -la /var/log/app{t}", decision="ask" if t == 2 else "allow"
            ),
        ]
        if t == 2:
            events.append(
                ApprovalRecord(turn=t, command="x", decision="edit", edited_command="ls /var/log")
            )
        events += [
            Execution(
                turn=t,
                command=f"ls -la /var/log/app{t}",
                output=OUTPUT,
                exit_code=0 if t % 3 else 1,
                duration_s=0.01,
            ),
            ChatMessage(role="user", content=f"exit code 0\n{OUTPUT}", turn=t),
        ]
    events += [
        ModelTurn(turn=turns + 1, raw='{"done": "ok"}', action={"done": "ok"}, valid=True),
        ChatMessage(role="assistant", content='{"done": "ok"}', turn=turns + 1),
        Check(command="test -d /var/log", exit_code=0, success=n % 4 != 0, output=""),
        End(reason="finished", summary="ok", turns=turns + 1),
    ]
    return events


def per_event_us(directory: Path, events: list[TranscriptEvent], **kwargs: Any) -> float:
    writer = TranscriptWriter(directory=directory, **kwargs)
    start = time.perf_counter()
    for event in events:
        writer.write(event)
    elapsed = time.perf_counter() - start
    writer.close()
    return elapsed / len(events) * 1e6


def baseline_us(directory: Path, events: list[TranscriptEvent], fsync: bool) -> float:
    objects = [to_dict(event) for event in events]  # a plain log has its dicts already
    fd = os.open(directory / f"baseline-{fsync}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    start = time.perf_counter()
    for obj in objects:
        os.write(fd, (json.dumps(obj) + "\n").encode())
        if fsync:
            os.fsync(fd)
    elapsed = time.perf_counter() - start
    os.close(fd)
    return elapsed / len(events) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=1000)
    parser.add_argument("--dir", help="where to write (default: a temp dir; try a real disk)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        root = Path(tmp)
        sample = [e for n in range(20) for e in session_events(n)]
        redactor = Redactor.from_environment()
        runs: dict[str, Callable[[], float]] = {
            "json.dumps + write (baseline)": lambda: baseline_us(root, sample, fsync=False),
            "json.dumps + write + fsync (baseline)": lambda: baseline_us(root, sample, fsync=True),
            "TranscriptWriter, no fsync": lambda: per_event_us(
                root / "a", sample, redactor=redactor, fsync=False
            ),
            "TranscriptWriter (fsync per event)": lambda: per_event_us(
                root / "b", sample, redactor=redactor
            ),
        }
        print(f"write overhead per event ({len(sample)} events, median of 5, µs):")
        for name, run in runs.items():
            print(f"  {name:<40} {statistics.median(run() for _ in range(5)):9.1f}")

        store = root / "store"
        start = time.perf_counter()
        for n in range(args.sessions):
            with TranscriptWriter(
                f"s{n:06d}", directory=store, redactor=redactor, fsync=False
            ) as writer:
                for event in session_events(n):
                    writer.write(event)
        written = time.perf_counter() - start
        size = sum(p.stat().st_size for p in store.iterdir()) / 1e6
        print(f"\nwrote {args.sessions} sessions ({size:.1f} MB) in {written:.2f}s (no fsync)")
        print(f"export throughput over {args.sessions} sessions (read + parse + convert + dump):")
        for fmt in ("sft", "dpo", "rl"):
            start = time.perf_counter()
            report = export(fmt, iter_transcripts(store), io.StringIO())
            elapsed = time.perf_counter() - start
            print(
                f"  {fmt:<4} {args.sessions / elapsed:8.0f} sessions/s "
                f"({report.records} records, {len(report.skipped)} skipped)"
            )


if __name__ == "__main__":
    main()
