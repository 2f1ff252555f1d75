"""What a follow-up carries over in the daemon: the last sessions' final shell states (in
memory only, so they die with the daemon: ``agent.followup.ShellStates``), and the line
that tells the user what carried over."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shellagent.agent.followup import Earlier, ShellStates
    from shellagent.transaction.review import Review

__all__ = ["continuing", "shell_states"]

_shell_states: ShellStates | None = None
_shell_states_lock = threading.Lock()


def shell_states() -> ShellStates:
    """The daemon's one store of the last sessions' shell states."""
    global _shell_states
    with _shell_states_lock:
        if _shell_states is None:
            from shellagent.agent.followup import ShellStates

            _shell_states = ShellStates()
        return _shell_states


def continuing(earlier: Earlier | None, review: Review | None, seeded: bool) -> str | None:
    """The line telling the user what a follow-up carries over, or None."""
    if earlier is None:
        return None
    tasks = f"{earlier.tasks} earlier task{'s' if earlier.tasks != 1 else ''}"
    line = f"continuing session {earlier.session}: {tasks} in the model's context"
    if earlier.dropped:
        line += f" ({earlier.dropped} older ones left out: they no longer fit)"
    if seeded:
        line += "; its shell variables and functions carry over"
    if earlier.changes == "kept":
        if review is not None and review.resumed:
            line += "; its kept changes are in this copy"
        else:
            line += f"; its kept changes are not in this copy: `shellagent apply {earlier.session}`"
    return line
