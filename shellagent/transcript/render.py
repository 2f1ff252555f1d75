"""Human-readable views of transcripts: the ``logs list`` table and the ``logs show`` page."""

from __future__ import annotations

import json
import re
import textwrap
import time
from collections.abc import Sequence

from shellagent.events import ChangeSetRecord, Check
from shellagent.transcript.reader import SessionSummary, Transcript
from shellagent.transcript.steps import conversation
from shellagent.transcript.store import stamp_event

OUTPUT_LINES = 20
"""Output lines shown per command by ``logs show`` (head and tail); ``--full`` shows all."""
WIDTH = 80  # long lines (policy reasons) wrap here, indented under their label
_EXIT_LINE = re.compile(r"^exit -?\d+$")


def when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts is not None else "?"


def outcome_label(outcome: str, success: bool | None) -> str:
    """``finished (confirmed)``, ``finished (unverified)``, ``turn_limit (failed)`` …"""
    if success is None:
        return f"{outcome} (unverified)" if outcome == "finished" else outcome
    return f"{outcome} ({'confirmed' if success else 'failed'})"


def _clip(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def short_outcome(outcome: str, success: bool | None) -> str:
    """One word for a table: ``confirmed``, ``unverified``, ``failed`` for a finished
    session, else how it ended (``turn_limit``, ``cancelled``, ``incomplete`` …)."""
    if outcome != "finished":
        return outcome
    return "unverified" if success is None else "confirmed" if success else "failed"


def render_table(sessions: Sequence[SessionSummary], width: int = 80) -> str:
    """One row per session in ``width`` columns: when, id, turns, outcome, task (the model
    is in ``logs show`` and ``logs list --json``)."""
    header = ("WHEN", "ID", "N", "OUTCOME", "TASK")
    rows = [
        (
            time.strftime("%m-%d %H:%M", time.localtime(s.started)) if s.started else "?",
            s.session_id,
            str(s.turns),
            short_outcome(s.outcome, s.success),
            s.task,
        )
        for s in sessions
    ]
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]
    room = max(width - sum(widths) - 2 * len(widths), 12)
    lines = [
        "  ".join(
            [
                *(cell.ljust(w) for cell, w in zip(row[:-1], widths, strict=True)),
                _clip(row[-1], room),
            ]
        ).rstrip()
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
    start = transcript.start
    out = [
        f"session  {transcript.session_id}",
        f"started  {when(transcript.started)}",
        f"task     {transcript.task}",
    ]
    for key in ("model", "backend", "policy", "profile", "cwd", "source", "task_id"):
        value = getattr(start, key) if start else None
        if value:
            out.append(f"{key:<8} {value}")
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
            reasons = "; ".join(step.policy.reasons)
            out.extend(
                _wrapped(f"  policy: {step.policy.decision}" + (f" ({reasons})" if reasons else ""))
            )
        if step.approval is not None:
            line = f"  user: {step.approval.decision}"
            if step.approval.edited_command:
                line += f" → $ {step.approval.edited_command}"
            if step.approval.reason:
                line += f" ({step.approval.reason})"
            out.append(line)
        if step.execution is not None:
            ex = step.execution
            flags = [
                name
                for name, on in (
                    ("timed_out", ex.timed_out),
                    ("truncated", ex.truncated),
                    ("shell_restarted", ex.shell_restarted),
                )
                if on
            ]
            timing = f", {ex.duration_s:.2f}s" if ex.duration_s is not None else ""
            out.append(
                f"  exit {ex.exit_code}{timing}" + (f" [{', '.join(flags)}]" if flags else "")
            )
            shown = _without_exit_line(ex.output)  # the line above says the exit already
            if shown.strip():
                out.extend(_indent(shown, full))
    for changes in transcript.of_type(ChangeSetRecord):
        out.append("")
        out.extend(_changes_lines(changes, transcript.session_id))
    for check in transcript.of_type(Check):
        out.append("")
        verdict = "passed" if check.success else "failed"
        out.append(f"check {verdict} (exit {check.exit_code}): {check.command or ''}")
    out.append("")
    end = transcript.end
    if end is None:
        out.append("end: incomplete (the session was interrupted)")
    else:
        out.append(f"end: {outcome_label(transcript.outcome, transcript.success)}")
        if end.summary:
            out.append(f"summary: {end.summary}")
        if end.unsupported:
            out.extend(_wrapped("not supported by what ran: " + "; ".join(end.unsupported)))
    if transcript.unknown:
        out.append(
            f"(also holds events this version does not show: {', '.join(transcript.unknown)})"
        )
    for problem in transcript.problems:
        out.append(f"warning: {problem}")
    return "\n".join(out)


def _wrapped(line: str) -> list[str]:
    """``line`` cut at ``WIDTH``, the rest indented under the text after its label."""
    colon = line.find(": ")
    label = colon + 2 if 0 < colon < 30 else len(line) - len(line.lstrip()) + 2
    wrapped = textwrap.wrap(line, WIDTH, subsequent_indent=" " * label, break_on_hyphens=False)
    return wrapped or [line]


def _without_exit_line(observation: str) -> str:
    """The recorded observation without its ``exit N`` line."""
    lines = observation.split("\n")
    for i, line in enumerate(lines[:2]):  # after "The user changed your command" at most
        if _EXIT_LINE.match(line):
            return "\n".join(lines[:i] + lines[i + 1 :])
    return observation


def _changes_lines(record: ChangeSetRecord, session: str) -> list[str]:
    """What became of the session's change set, and whether its apply was undone."""
    counts = [
        f"{n} {kind}"
        for kind, n in (
            ("created", record.created),
            ("modified", record.modified),
            ("deleted", record.deleted),
            ("renamed", record.renamed),
        )
        if n
    ]
    line = f"changes: {record.outcome}" + (f" ({', '.join(counts)})" if counts else "")
    if record.reason:
        line += f": {record.reason}"
    lines = _wrapped(line)
    lines += [f"  {p}" for p in record.paths[:10]]
    if len(record.paths) > 10:
        lines.append(f"  … {len(record.paths) - 10} more")
    if record.outcome == "applied":
        from shellagent.transcript.undone import undone_sessions

        try:
            undone = session in undone_sessions()
        except OSError:
            undone = False
        lines.append(
            "undone: `shellagent undo` took the apply back"
            if undone
            else f"undo with `shellagent undo {session}`"
        )
    return lines


def render_json(transcript: Transcript) -> str:
    """The events as JSON lines (already redacted on disk), in the stored layout."""
    return "\n".join(
        json.dumps(stamp_event(e, e.seq or 0), ensure_ascii=False) for e in transcript.events
    )
