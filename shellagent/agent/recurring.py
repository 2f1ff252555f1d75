"""A recurring request becomes a job: the *what* through the recipes, run once, the *when*
as its schedule.

"back up Documents weekly" is read apart by ``shellagent.recipes.recurrence`` into what to
do and when. The request goes through the recipe step like any task (the ranker reads the
whole request: the recipes made to be repeated, such as a dated archive that keeps the
newest few, say how often in their phrasings), so the model never writes anything but a
recipe's slots, whatever the model. The recipe's command is shown, approved and run once
like any command (on the session's copy of the files, so the user sees what it makes);
once it worked, the same command is proposed as a job: its schedule in words, where it
writes (the folders the policy reads it writing, granted to the job and nothing else),
and on yes it is installed with the system's scheduler through the session's
``JobInstaller``. Nothing is installed by an automatic approver (``-y``), in a dry run, or
where no scheduler exists: the session then ends having run it once, saying why it was
not scheduled (the daemon has told the user so before anything was asked).

A recurring request that names a cron file is not one ("add a line to /etc/cron.d/x"):
``split_recurrence`` leaves it to the recipes that edit such files.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from shellagent.agent.approval import is_automatic
from shellagent.agent.proposal import JobProposal, job_grants
from shellagent.agent.scheduling import offer_job
from shellagent.agent.session import SessionEnd, SessionState
from shellagent.agent.support import succeeded

if TYPE_CHECKING:
    from shellagent.agent.actions import RunAction
    from shellagent.agent.recipe_step import RecipeBook, RunCommand
    from shellagent.recipes.recurrence import Recurrence

__all__ = ["attempt", "job_name"]

NAME_MAX = 60  # as the schedule action's name


def attempt(state: SessionState, book: RecipeBook | None, run: RunCommand) -> bool:
    """Make a recurring request a job (see the module docstring); raises ``SessionEnd``
    when the session ends here. True when the recipes were tried and none did it (the
    model writes commands from here); False when the task is not a recurring request, or
    no job can be made in this session (a throwaway sandbox, no installer, no recipes:
    the daemon gives every model the book for a recurring request): the session goes on
    as any other."""
    from shellagent.agent import recipe_step
    from shellagent.recipes.recurrence import split_recurrence

    found = split_recurrence(state.task)
    if found is None or book is None or state.job_installer is None:
        return False
    if state.shell.grants.anywhere_writable:
        return False
    what, when = found

    def run_once(session: SessionState, action: RunAction, turn: int) -> None:
        ran = len(session.commands)
        run(session, action, turn)
        if len(session.commands) == ran or session.cancel.is_set():
            return  # refused, denied or cancelled: the recipe step goes on as it would
        result = session.commands[-1]
        if succeeded(result.command, result.exit_code, result.timed_out) and not result.refused:
            _schedule(session, result.command, what, when, turn)

    recipe_step.attempt(state, book, run_once)
    return True


def _schedule(state: SessionState, command: str, what: str, when: Recurrence, turn: int) -> None:
    """After the command ran once and worked: propose it as a job, and end the session."""
    grants = state.shell.grants
    once = "It ran once now" + (
        " on the copy (its result is in the change set)" if grants.overlaid else ""
    )
    if when.schedule is None:
        raise SessionEnd("finished", f"Not scheduled: {when.problem}. {once}.", claimed=False)
    why_not = _why_not(state)
    if why_not:
        raise SessionEnd("finished", f"Not scheduled: {why_not}. {once}.", claimed=False)
    from shellagent.policy import ShellState

    cwd = Path(state.shell.cwd or grants.workdir or ".")
    job = JobProposal(
        name=job_name(what),
        commands=(command,),
        schedule=when.schedule,
        workdir=cwd,
        writable=job_grants([state.policy.check(command, ShellState(cwd=cwd))], cwd),
        network=grants.network,
        created_from=state.session_id,
    )
    outcome = offer_job(state, job, turn)
    if isinstance(outcome, str):
        raise SessionEnd("finished", f"Not scheduled: {outcome} {once}.", claimed=False)
    where = ", ".join(str(p) for p in job.writable) or "nothing outside its sandbox"
    raise SessionEnd(
        "finished",
        f"Scheduled job {outcome.job_id}: {when.schedule.words()}, writing {where}. {once}. "
        f"See it with `shellagent jobs show {outcome.job_id}`; run it now with "
        f"`shellagent jobs run {outcome.job_id}`.",
        scheduled=outcome.job_id,
    )


def _why_not(state: SessionState) -> str | None:
    """Why no job may be installed from this session, or None."""
    installer = state.job_installer
    problem = getattr(installer, "problem", lambda: None)()
    if problem:
        return str(problem)
    if state.config.dry_run:
        return "this is a dry run"
    if is_automatic(state.approver):
        return (
            "a recurring job needs your own approval, and this run approves automatically "
            "(-y); ask again without -y to install it"
        )
    return None


def job_name(what: str) -> str:
    """A job's name from the request's what: one line, at most ``NAME_MAX`` characters."""
    text = re.sub(r"\s+", " ", what).strip()
    text = re.sub(r"^(?:please|can you|could you|would you)\s+", "", text, flags=re.I)
    text = text.rstrip(" .!?;:,") or "recurring job"
    if len(text) > NAME_MAX:
        text = text[: NAME_MAX - 1].rsplit(" ", 1)[0] + "…"
    return text
