"""What the model is told after each reply: the observation texts, in one place.

An executed command becomes ``exit N`` and its output, cut to a budget (head and tail kept,
the cut said in the middle) because a small context cannot hold a long listing and the first
and last lines carry most of the signal (headers, errors, totals). Everything else the loop
tells the model (a denial and its reasons, a refusal, a reply that was not an action) is one
short sentence that says what to do next.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = [
    "cut",
    "cut_reply",
    "denied",
    "dry_run",
    "executed",
    "invalid_reply",
    "refused",
    "repeated",
]


def cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters: head and tail kept, the cut said in between."""
    if limit <= 0 or len(text) <= limit:
        return text
    note_room = 40
    keep = max(limit - note_room, 2)
    head = keep * 2 // 3
    tail = keep - head
    dropped = len(text) - head - tail
    return f"{text[:head]}\n[... {dropped} characters cut ...]\n{text[len(text) - tail :]}"


def executed(result: Any, limit: int, *, edited_from: str | None = None) -> str:
    """The observation for a command that ran (a ``CommandResult`` or anything shaped so)."""
    lines: list[str] = []
    if edited_from is not None:
        lines.append(f"The user changed your command to: {result.command}")
    if result.timed_out:
        lines.append(f"timed out after {result.duration_s:.0f}s; the command was stopped")
    lines.append(f"exit {result.exit_code}")
    output = result.output.rstrip("\n")
    if output:
        lines.append(cut(output, limit))
    if getattr(result, "note", ""):
        lines.append(f"({result.note})")
    return "\n".join(lines)


def denied(reasons: Sequence[str], *, edited: bool = False) -> str:
    """Why a command was not run: the distinct reasons, each without the command it quotes.

    A small model copies what it reads into its next command, so the reasons are short and
    do not repeat the denied command back at it.
    """
    who = "The user's edit of your command" if edited else "This command"
    plain = [r.split(": ", 1)[1] if ": " in r else r for r in reasons]
    why = "; ".join(dict.fromkeys(plain)) or "the policy forbids it"
    return f"{who} was not run: the policy denies it ({why}). Try another way."


def refused(reason: str) -> str:
    if reason:
        return f"The user refused this command: {reason}. Try another way, or finish."
    return "The user refused this command. Try another way, or finish."


def dry_run(decision: str) -> str:
    return f"Dry run: not run (the policy would {decision} it). Continue as if it had worked."


_EXAMPLE = (
    'Reply with one JSON object, for example {"cmd": "ls", "why": "list files"} or '
    '{"done": "finished"}.'
)


def invalid_reply(problem: str) -> str:
    return f"That reply was not an action ({problem}). {_EXAMPLE}"


def cut_reply(stop: str, tokens: int) -> str:
    """The observation for a reply that did not end: it looped, or hit the token limit."""
    why = "it kept repeating itself" if stop == "repeat" else "it reached the reply limit"
    return f"That reply was cut after {tokens} tokens: {why}. Use one short command. {_EXAMPLE}"


def repeated(command: str, times: int) -> str:
    return f"You ran this command {times} times already. Do the next step, or finish."
