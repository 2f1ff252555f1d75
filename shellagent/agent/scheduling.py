"""The schedule action: the session's approved commands, proposed as a recurring job.

The job is made of what the session already tried: the commands that changed something
(the policy said ``ask``), that the user approved and that exited 0, in order. A small
model only names the schedule; it never retypes the commands. The user sees the whole job
(commands, schedule in words, OnCalendar and cron, the paths it may write, network) and
approves, edits (one command per line, checked by the policy again), refuses or quits, as
for a command. An approved job is handed to the session's ``JobInstaller``; nothing is
installed by an automatic approver (``-y``, task-set runs), from a throwaway sandbox, or in
a session without an installer: a job must be a person's decision about their own machine.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from shellagent.agent.actions import ScheduleAction
from shellagent.agent.approval import ApprovalRequest, is_automatic
from shellagent.agent.proposal import InstalledJob, JobProposal, describe_job, job_grants
from shellagent.agent.session import SessionEnd, SessionState, ask, check, observe
from shellagent.errors import InputError, ShellagentError
from shellagent.events import JobInstalled
from shellagent.schedule import Schedule

__all__ = ["offer_job", "propose_job"]


def propose_job(state: SessionState, action: ScheduleAction, turn: int) -> None:
    grants = state.shell.grants
    if grants.anywhere_writable:
        observe(state, "Jobs cannot be made from a throwaway sandbox; finish the task instead.")
        return
    installer = state.job_installer
    if installer is None:
        observe(state, "Recurring jobs cannot be installed from here; finish the task instead.")
        return
    problem = getattr(installer, "problem", lambda: None)()
    if problem:
        # Said now, not after the user approved a job that cannot run (the daemon tells
        # the user the same with the fix).
        observe(
            state,
            f"Recurring jobs cannot be installed here ({problem}). Do not reply with a "
            "schedule again; reply done and say the task ran once and was not scheduled.",
        )
        return
    if not state.job_commands:
        observe(
            state,
            "Nothing to schedule yet: first run the commands that do the task "
            "(they need the user's approval), then reply with the schedule.",
        )
        return
    try:
        schedule = Schedule.parse(action.every, action.at, action.on)
    except InputError as exc:
        observe(state, f"That schedule is not valid: {exc.message}")
        return
    from shellagent.policy import ShellState

    cwd = Path(state.shell.cwd or grants.workdir or ".")
    read = [state.policy.check(c, ShellState(cwd=cwd)) for c in state.job_commands]
    job = JobProposal(
        name=action.name,
        commands=tuple(state.job_commands),
        schedule=schedule,
        workdir=cwd,
        # what the session may write, and where the commands write on a copy of the files
        writable=job_grants(read, cwd, grants.writable),
        network=grants.network,
        created_from=state.session_id,
    )
    if state.config.dry_run:
        observe(state, f"Not scheduled (dry run): {describe_job(job)}")
        return
    if is_automatic(state.approver):
        observe(
            state,
            "A recurring job needs a person's approval, and this run approves "
            "automatically: not scheduled. Finish the task instead.",
        )
        return
    outcome = offer_job(state, job, turn)
    if isinstance(outcome, str):
        observe(state, outcome)
        return
    raise SessionEnd(
        "finished",
        f"Scheduled job {outcome.job_id}: {job.schedule.words()}. "
        f"See it with `shellagent jobs show {outcome.job_id}`.",
        scheduled=outcome.job_id,
    )


def offer_job(state: SessionState, job: JobProposal, turn: int) -> InstalledJob | str:
    """Ask the user to approve ``job`` (its commands one per line, checked by the policy
    again; an edit is checked again) and install it on yes: the installed job, or why it
    was not installed (the policy denies it, the user said no) as a line to tell the
    model. Raises ``SessionEnd`` on quit and when installing fails. The caller has made
    sure that a person answers (never ``-y``) and that a scheduler exists."""
    installer = state.job_installer
    assert installer is not None
    decision = check(state, "\n".join(job.commands))
    if decision.decision == "deny":
        return "The policy denies one of these commands: " + "; ".join(decision.reasons)
    approval = ask(
        state, ApprovalRequest("\n".join(job.commands), describe_job(job), decision, turn, job=job)
    )
    if approval.kind == "quit":
        raise SessionEnd("user_quit", "stopped by the user")
    if approval.kind == "refuse":
        return "The user did not want this job" + (
            f": {approval.reason}" if approval.reason else "."
        )
    if approval.kind == "edit" and approval.command:
        commands = tuple(line.strip() for line in approval.command.splitlines() if line.strip())
        edited = check(state, "\n".join(commands))
        if edited.decision == "deny" or not commands:
            return "The edited job is denied by the policy: " + "; ".join(edited.reasons)
        job = dataclasses.replace(job, commands=commands)
    try:
        installed = installer.install(job)
    except ShellagentError as exc:
        raise SessionEnd("error", "the job could not be installed", exc.show()) from None
    schedule = job.schedule
    state.emit(
        JobInstalled(
            turn=turn,
            job_id=installed.job_id,
            name=job.name,
            commands=job.commands,
            schedule=schedule.words(),
            on_calendar=schedule.on_calendar(),
            cron=schedule.cron(),
            installed=installed.written,
        )
    )
    return installed
