"""A turn budget where nothing progresses: the free loop of a small model ends at a turn
that shows no progress.

A turn progresses when a command it proposed ran, succeeded and printed something that
command had not printed before. A reply that is no command, a command that failed, one
that was not run (the policy denied it, it named a path that exists nowhere, it was
refused before, it ran twice with the same output) or that printed what it printed
before shows nothing new. The 135M model decodes greedily: told why its command failed,
it proposes the same command or one like it, and on the dev set none of the free-loop
tasks it solved (8 in two runs of 300) had a turn without progress before the end, while
the turns after one cost a second each (docs/results.md). So after
``AgentConfig.stall_limit`` such turns in a row the session ends, not claimed, saying what
the last turn did in plain words (after a denial, what the policy does not allow and
why). A user's refusal and the first-turn ``done`` nudge are
neither progress nor its absence. A model that writes commands well (``writes_commands``:
a served model, a billion parameters or more) keeps the ordinary limits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shellagent.agent.actions import RunAction, parse_action
from shellagent.agent.session import SessionEnd, SessionState
from shellagent.agent.support import succeeded
from shellagent.errors import InputError

__all__ = ["Mark", "mark", "stop_if_stalled"]

_SHOWN = 120  # characters of a command or an error line the ending quotes
_NOT_RUN = re.compile(r"^(?:This command was not run|Not run):\s*")


@dataclass(frozen=True)
class Mark:
    """Where a session stood when a turn began."""

    commands: int
    refusals: int
    nudged: bool
    denials: int


def mark(state: SessionState) -> Mark:
    return Mark(len(state.commands), len(state.refusals), state.nudged, state.denials)


def stop_if_stalled(state: SessionState, before: Mark) -> None:
    """Count the turn that began at ``before``; end the session (``SessionEnd``) when the
    small model's free loop has gone ``stall_limit`` turns in a row without progress."""
    limit = state.config.stall_limit
    if limit <= 0 or state.origin != "free" or getattr(state.backend, "writes_commands", False):
        return
    if len(state.refusals) > before.refusals or state.nudged != before.nudged:
        return  # the user's choice, or the nudge: says nothing about the model's progress
    if _progressed(state, before):
        state.stalls = 0
        return
    state.stalls += 1
    if state.stalls >= limit:
        if state.denials > before.denials:  # the policy said no, and says why
            raise SessionEnd("repeated_failure", state.denial, plain=True)
        what = _last_turn(state, before)
        raise SessionEnd(
            "repeated_failure",
            f"stopped: the model's last turn made no progress ({what})",
            ran=what,
            claimed=False,
        )


def _progressed(state: SessionState, before: Mark) -> bool:
    for result in state.commands[before.commands :]:
        if not succeeded(result.command, result.exit_code, result.timed_out):
            continue
        key = result.command.strip()
        runs, _ = state.outputs.get(key, (0, ""))
        if runs == 1:  # the first run of it, or one that printed something else
            return True
    return False


def _last_turn(state: SessionState, before: Mark) -> str:
    """What the turn did, in plain words."""
    ran = state.commands[before.commands :]
    if ran:
        result = ran[-1]
        command = _clip(result.command.strip())
        if succeeded(result.command, result.exit_code, result.timed_out):
            return f"`{command}` printed the same as before"
        if result.timed_out:
            return f"`{command}` timed out"
        return f"`{command}` failed (exit {result.exit_code}{_first_line(result.output)})"
    reply = next(
        (m["content"] for m in reversed(state.conversation) if m["role"] == "assistant"), ""
    )
    try:
        action = parse_action(reply)
    except InputError:
        return "the model's reply was not a command"
    if not isinstance(action, RunAction):
        return "the model's reply was not a command"
    told = next((m["content"] for m in reversed(state.conversation) if m["role"] == "user"), "")
    return f"`{_clip(action.cmd.strip())}` was not run{_first_line(told)}"


def _first_line(text: str) -> str:
    line = next((x.strip() for x in text.splitlines() if x.strip()), "")
    line = _NOT_RUN.sub("", line)
    return f": {_clip(line)}" if line else ""


def _clip(text: str) -> str:
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"
