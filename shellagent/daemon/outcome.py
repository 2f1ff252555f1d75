"""What ``ask`` says of a finished task: the verdict of its last line and its exit status.

One table, used for every ``ask`` (through the daemon and ``--no-daemon`` alike: both run
the task here), so a script can tell from the status alone whether the task was done:

    0    done: you confirmed it, or the result was presented as done (``claimed``) and
         nothing in the session contradicts it (also when its changes are kept for later
         with -y, and for a dry run); a job it asked for was installed (whatever became
         of the first run's change set)
    1    not done, or not known to be: you said it did not do it; you discarded its
         changes; it is not shown to be done (the last command failed, or the summary
         claims what nothing shows); a command was refused and nothing ran; the result is
         not claimed (commands the model wrote itself that nobody confirmed, a recipe's
         result the evidence does not hold up, "~/Downloads does not exist"); its changes
         could not be applied; it gave up, ran out of turns, you quit, or the model's
         replies were unusable
    2    usage or input error: bad arguments, an empty task, a working directory or a
         session to follow up that does not exist, a config file that cannot be read
    3    environment problem: no sandbox, no model (also when the model fails mid-task),
         no daemon that can be trusted or understood
    4    internal error: a bug (an unexpected exception in the task or in ``ask``, a
         daemon that went away mid-task)
    130  cancelled (Ctrl-C, as a shell reports SIGINT)

The errors (2, 3, 4) come from ``shellagent.errors``; this module decides 0, 1 and 130.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shellagent.agent import Outcome

__all__ = ["DONE", "NOT_DONE", "exit_status", "verdict"]

DONE = 0
NOT_DONE = 1


def verdict(outcome: Outcome, *, dry_run: bool = False) -> str:
    """What is known of the task's outcome, for the screen's last line: the user's answer
    first; then, unasked, what became of its change set (discarded or kept: nothing of it
    reached the files, whatever the model said; a dry run changed nothing); else
    unverified or failed."""
    if outcome.success is not None:
        return "confirmed" if outcome.success else "failed"
    if outcome.reason != "finished":
        return "failed"
    if outcome.scheduled:
        return "scheduled"  # the job was what was asked; the first run's copy was a preview
    if dry_run:
        return "dry_run"
    if outcome.changes in ("discarded", "kept"):
        return outcome.changes
    return "unverified"


def exit_status(outcome: Outcome, verdict: str, *, refused: int = 0) -> int:
    """The exit status of ``ask`` for ``outcome`` (the module's table); ``verdict`` is
    ``verdict(outcome)``, ``refused`` how many commands the user (or nobody at a
    terminal) refused."""
    if outcome.environment_problem:
        return 3
    if outcome.reason == "cancelled":
        return 130
    if outcome.reason != "finished":
        return NOT_DONE
    if verdict in ("confirmed", "scheduled"):
        return DONE  # the user's word over everything the session shows; a job installed
    if verdict in ("failed", "discarded") or outcome.changes == "refused":
        return NOT_DONE
    if refused and not outcome.commands:
        return NOT_DONE  # what was asked for never ran: a refusal is not a result
    if outcome.unsupported or not outcome.claimed:
        return NOT_DONE
    return DONE
