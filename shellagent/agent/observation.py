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
    "claim_refuted",
    "sigpipe",
    "cut",
    "cut_reply",
    "denied",
    "done_without_commands",
    "echoed_instructions",
    "dry_run",
    "executed",
    "invalid_reply",
    "not_rerun",
    "refused",
    "refused_before",
    "repeated",
]


def cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters: head and tail kept, the cut said in between.
    The cut never keeps part of a secret without what identifies it (``redaction.cuts``)."""
    if limit <= 0 or len(text) <= limit:
        return text
    from shellagent.redaction.cuts import cut_text

    note_room = 40
    keep = max(limit - note_room, 2)
    head = keep * 2 // 3
    kept = cut_text(text, head, keep - head)
    dropped = len(text) - len(kept.head) - len(kept.tail)
    return f"{kept.head}\n[... {dropped} characters cut ...]\n{kept.tail}"


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


def sigpipe() -> str:
    """Said after a pipeline exited 141 because its reader stopped reading early."""
    return (
        "(exit 141 means an earlier command of the pipeline was stopped because the next "
        "one had read all it needed: the command worked.)"
    )


def claim_refuted() -> str:
    """Said after a command the policy allowed as read-only was caught changing something."""
    return (
        "The policy had allowed this command because it only reads, but the kernel stopped "
        "it changing something. If it must change things, propose it again: it will be "
        "judged as a command that changes things, and the user may be asked."
    )


def denied(reasons: Sequence[str], *, edited: bool = False) -> str:
    """Why a command was not run: the distinct reasons, each without the command it quotes.

    A small model copies what it reads into its next command, so the reasons are short and
    do not repeat the denied command back at it.
    """
    who = "The user's edit of your command" if edited else "This command"
    plain = [r.split(": ", 1)[1] if ": " in r else r for r in reasons]
    why = "; ".join(dict.fromkeys(plain)) or "the policy forbids it"
    return f"{who} was not run: the policy denies it ({why}). Try another way."


def invented(paths: Sequence[str], here: str) -> str:
    """Said when a command reads paths that exist nowhere: not shown, not run."""
    held = f" The working directory holds: {here}." if here else ""
    return (
        f"Not run: {', '.join(paths)} does not exist here.{held} "
        "Use a path that exists, or look first (ls, find)."
    )


def refused(reason: str) -> str:
    """Said after the user refused a command: with their reason, and that it is final."""
    why = f" (their reason: {reason.rstrip('.')})" if reason else ""
    return (
        f"Not run: the user refused this command{why}. Do not propose it again; "
        "try another way, or reply done and say what was not done."
    )


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


def not_rerun(times: int) -> str:
    """Said instead of running a command that already ran ``times`` times with one output."""
    return (
        f"Not run: you ran this exact command {times} times and it printed the same each "
        "time. Use that output, do the next step, or reply done."
    )


def refused_before() -> str:
    """Said instead of asking the user again about a command they refused in this task."""
    return (
        "Not run and not shown: the user already refused this exact command in this task. "
        "Propose a different command, or reply done and say what was not done."
    )


def echoed_instructions() -> str:
    """Said after a ``done`` whose summary only repeats the text of the instructions."""
    return (
        "Your summary repeats the text of your instructions: it is not an answer. Reply "
        "done with what the commands' output showed for this task, in your own words."
    )


def done_without_commands() -> str:
    """The one nudge after ``done`` on the first turn with no command run."""
    return (
        "You replied done without running any command. Run a command that does the task, "
        "or that shows the answer, first; then reply done with what its output showed."
    )
