"""Human-readable views of transcripts: the ``logs list`` table and the ``logs show`` page."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence

from shellagent.transcript.events import EVENT_TYPES
from shellagent.transcript.reader import SessionSummary, Transcript
from shellagent.transcript.steps import conversation

OUTPUT_LINES = 20
"""Output lines shown per command by ``logs show`` (head and tail); ``--full`` shows all."""


def when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts is not None else "?"


def outcome_label(outcome: str, success: bool | None) -> str:
    if success is None:
        return outcome
    return f"{outcome} ({'ok' if success else 'failed'})"


def _clip(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def render_table(sessions: Sequence[SessionSummary]) -> str:
    """One row per session: when, id, task, turns, outcome, model."""
    header = ("WHEN", "ID", "TASK", "TURNS", "OUTCOME", "MODEL")
    rows = [
        (
            when(s.started),
            s.session_id,
            _clip(s.task, 40),
            str(s.turns),
            outcome_label(s.outcome, s.success),
            _clip(s.model, 24),
        )
        for s in sessions
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    ]
    return "\n".join(lines)


def _indent(text: str, full: bool, prefix: str = "    ") -> list[str]:
    lines = text.rstrip("\n").splitlines() or [""]
    if not full and len(lines) > OUTPUT_LINES:
        half = OUTPUT_LINES // 2
        hidden = len(lines) - 2 * half
        lines = [*lines[:half], f"[… {hidden} lines not shown, use --full …]", *lines[-half:]]
    return [prefix + line for line in lines]


def render_transcript(transcript: Transcript, *, full: bool = False) -> str:
    """A readable page for one session: header, each turn, the check and the end."""
    start = transcript.start or {}
    out = [
        f"session  {transcript.session_id}",
        f"started  {when(transcript.started)}",
        f"task     {transcript.task}",
    ]
    for key in ("model", "backend", "policy", "profile", "cwd", "source", "task_id"):
        if start.get(key):
            out.append(f"{key:<8} {start[key]}")
    conv = conversation(transcript)
    for step in conv.steps:
        out.append("")
        out.append(f"── turn {step.turn} ({step.status}) " + "─" * 30)
        action = step.action
        if action is None:
            out.append("  reply (not a valid action):")
            out.extend(_indent(step.reply, full))
        else:
            why = action.get("why") or action.get("thought")
            if why:
                out.append(f"  why: {why}")
            if step.command is not None:
                out.append(f"  $ {step.command}")
            done = action.get("done") or action.get("answer")
            if done:
                out.append(f"  done: {done}")
        if step.policy is not None:
            reasons = "; ".join(str(r) for r in step.policy.get("reasons") or [])
            out.append(
                f"  policy: {step.policy['decision']}" + (f" ({reasons})" if reasons else "")
            )
        if step.approval is not None:
            line = f"  user: {step.approval['decision']}"
            if step.approval.get("edited_command"):
                line += f" → $ {step.approval['edited_command']}"
            if step.approval.get("reason"):
                line += f" ({step.approval['reason']})"
            out.append(line)
        if step.execution is not None:
            ex = step.execution
            flags = [f for f in ("timed_out", "truncated", "shell_restarted") if ex.get(f)]
            duration = ex.get("duration_s")
            timing = f", {duration:.2f}s" if isinstance(duration, int | float) else ""
            out.append(
                f"  exit {ex.get('exit_code')}{timing}"
                + (f" [{', '.join(flags)}]" if flags else "")
            )
            if str(ex.get("output") or "").strip():
                out.extend(_indent(str(ex["output"]), full))
    for check in transcript.of_type("check"):
        out.append("")
        verdict = "passed" if check["success"] else "failed"
        out.append(f"check {verdict} (exit {check.get('exit_code')}): {check.get('command', '')}")
    out.append("")
    end = transcript.end
    if end is None:
        out.append("end: incomplete (the session was interrupted)")
    else:
        out.append(f"end: {outcome_label(transcript.outcome, transcript.success)}")
        if end.get("summary"):
            out.append(f"summary: {end['summary']}")
    unknown = sorted({e["type"] for e in transcript.events} - set(EVENT_TYPES))
    if unknown:
        out.append(f"(also holds events this version does not show: {', '.join(unknown)})")
    for problem in transcript.problems:
        out.append(f"warning: {problem}")
    return "\n".join(out)


def render_json(transcript: Transcript) -> str:
    """The events as JSON lines (already redacted on disk)."""
    return "\n".join(json.dumps(e, ensure_ascii=False) for e in transcript.events)
