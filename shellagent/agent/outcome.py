"""How a session ended: ``Outcome``, what ``run_task`` returns and ``Agent.run``'s hooks
complete. Below the loop and its parts, so both can name it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from shellagent.events import Alternative, ChangesOutcome, EndReason, exit_code

if TYPE_CHECKING:
    from shellagent.recipes import Recipe
    from shellagent.sandbox import CommandResult

__all__ = ["Outcome"]


@dataclass(frozen=True)
class Outcome:
    """How a session ended. ``commands`` are the results of the commands that ran.

    The last three are what ``Agent.run``'s hooks (``Hooks``) learn after the loop:
    whether the user said it did it (None: not asked, or no answer), what the session
    does not back of the summary, and what became of the change set."""

    reason: EndReason
    summary: str
    turns: int
    session_id: str
    commands: tuple[CommandResult, ...]
    error: str = ""
    environment_problem: bool = False
    cwd: str | None = None  # the shell's working directory at the end
    success: bool | None = None
    unsupported: tuple[str, ...] = ()
    changes: ChangesOutcome = "none"
    # "recipe NAME" when a verified recipe's command did the task; "free" or "" when the
    # model wrote the commands (``SessionState.origin``)
    origin: str = ""
    # the result was presented as done, with no stated doubt; when not, what ran in plain
    # words, why it may not be what was asked, and the next candidates
    claimed: bool = False
    ran: str = ""
    doubts: tuple[str, ...] = ()
    alternatives: tuple[Alternative, ...] = ()
    # the alternative the user picked, with its arguments (``SessionState.picked``)
    picked: tuple[Recipe, tuple[tuple[str, str], ...]] | None = None
    # the id of the job the session installed: what a recurring request asked for is done
    # whatever becomes of the first run's change set
    scheduled: str = ""

    @property
    def finished(self) -> bool:
        return self.reason == "finished"

    @property
    def exit_code(self) -> int:
        """0 finished, 130 cancelled, 3 the model or sandbox became unavailable, else 1."""
        if self.environment_problem:
            return 3
        return exit_code(self.reason)
