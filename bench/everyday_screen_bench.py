"""How often the last line ``ask -y`` shows is right about the outcome, over an eval run.

Reads the transcripts of ``shellagent eval TASKS --out DIR`` (each has the task's answer
check), rebuilds the summary ``ask`` would have been sent (the session's commands, exit
codes and outputs, and what the session does not support of the model's summary,
``agent/support.py``), and renders its last line with ``AskUI.verdict_line``. A line is
right when it says done for a task whose check passed, and anything but done for one whose
check failed ("unverified, the model says" claims neither). "before" is the line of the
previous version (``done (unverified)`` for every finished task), same transcripts.

    python bench/everyday_screen_bench.py DIR [--show]
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from shellagent.agent.support import Ran, last_failed, unsupported
from shellagent.cli.ask_ui import AskUI
from shellagent.events import Check, Execution, Summary
from shellagent.transcript.reader import read_transcript


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("out", type=Path, help="the --out directory of an eval run")
    parser.add_argument("--show", action="store_true", help="print every task's line")
    args = parser.parse_args()
    ui = AskUI()
    right_after = right_before = total = passed = flagged = 0
    for path in sorted((args.out / "transcripts").glob("*.jsonl")):
        t = read_transcript(path)
        end, checks = t.end, t.of_type(Check)
        if end is None or not checks:
            continue
        ok = checks[-1].success
        ran = [Ran(e.command, e.output, e.exit_code) for e in t.of_type(Execution)]
        problems: list[str] = []
        if end.reason == "finished":
            failed = last_failed(ran)
            if failed is not None:
                problems.append(f"the last command failed (exit {failed.exit_code})")
            # a throwaway sandbox: no change set, nothing on the host to look at
            problems += unsupported(end.summary or "", t.task, ran, None)
        summary = Summary(
            reason=end.reason,
            summary=end.summary or "",
            turns=end.turns or 0,
            session=t.session_id,
            commands=tuple(r.command for r in ran),
            exit_codes=tuple(r.exit_code for r in ran),
            error=end.error,
            exit_code=0,
            transcript=str(path),
            verdict="unverified" if end.reason == "finished" else "failed",
            unsupported=tuple(problems),
        )
        after = ui.verdict_line(summary)
        before = ui.verdict_line(dataclasses.replace(summary, unsupported=())).replace(
            "unverified, the model says", "done (unverified)"
        )
        total += 1
        passed += ok
        right_after += _right(after, ok)
        right_before += _right(before, ok)
        flagged += not ok and not after.startswith(("done", "unverified"))
        if args.show:
            print(f"{'pass' if ok else 'FAIL'}  {t.start.task_id if t.start else ''}: {t.task}")
            print(f"      before: {before[:150]}")
            print(f"      after:  {after[:150]}")
    if not total:
        raise SystemExit(f"no checked transcripts in {args.out / 'transcripts'}")
    print(
        f"{total} tasks, {passed} passed their check; last line right about the outcome: "
        f"before {right_before}/{total} ({100 * right_before / total:.0f} %), "
        f"after {right_after}/{total} ({100 * right_after / total:.0f} %); "
        f"failed tasks the session itself flags: {flagged}/{total - passed}"
    )


def _right(line: str, passed: bool) -> bool:
    """Right about the outcome: never "done" for a task that failed its check, never
    "failed" or "not shown to be done" for one that passed ("unverified" claims neither)."""
    if passed:
        return line.startswith(("done", "unverified"))
    return not line.startswith("done")


if __name__ == "__main__":
    main()
