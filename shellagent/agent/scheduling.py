"""The schedule action: the session's approved commands, proposed as a recurring job.

The job is made of what the session already tried: the commands that changed something
(the policy said ``ask``), that the user approved and that exited 0, in order. A small
model only names the schedule; it never retypes the commands. The user sees the whole job
(commands, schedule in words, OnCalendar and cron, the paths it may write, network) and
approves, edits (one command per line, checked by the policy again), refuses or quits, as
for a command. Nothing is installed by an automatic approver (``-y``, task-set runs) or from
a throwaway sandbox: a job must be a person's decision about their own machine.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from shellagent.agent.actions import ScheduleAction
from shellagent.agent.approval import ApprovalRequest
from shellagent.errors import InputError, ShellagentError

if TYPE_CHECKING:
    from shellagent.agent.loop import _Session


def _grants(shell: Any) -> tuple[Path, list[Path], bool, bool]:
    """(workdir, writable, network, ephemeral) of the shell's sandbox profile."""
    profile = getattr(shell, "profile", None)
    workdir = Path(getattr(shell, "cwd", "") or getattr(profile, "workdir", None) or ".")
    writable = [Path(p) for p in getattr(profile, "writable", ())]
    return (workdir, writable, bool(getattr(profile, "network", False)),
            bool(getattr(profile, "ephemeral", False)))


def describe(job: Any) -> str:
    spec = job.schedule.schedule()
    writes = ", ".join(job.writable) or "nothing outside its sandbox"
    return (f"recurring job '{job.name}': {spec.words()} (systemd OnCalendar="
            f"{spec.on_calendar()}; cron {spec.cron()}); runs in {job.workdir}; may write "
            f"{writes}; network {'yes' if job.network else 'no'}")


def propose_job(state: _Session, action: ScheduleAction, turn: int) -> None:
    from shellagent.agent.loop import _ask, _check, _observe, _Stop
    from shellagent.jobs import Schedule, install, make_job

    workdir, writable, network, ephemeral = _grants(state.shell)
    if ephemeral:
        _observe(state, "Jobs cannot be made from a throwaway sandbox; finish the task instead.")
        return
    if not state.job_commands:
        _observe(state, "Nothing to schedule yet: first run the commands that do the task "
                        "(they need the user's approval), then reply with the schedule.")
        return
    try:
        schedule = Schedule.parse(action.every, action.at, action.on)
    except InputError as exc:
        _observe(state, f"That schedule is not valid: {exc.message}")
        return
    def job_of(commands: list[str]) -> Any:
        return make_job(action.name, commands, schedule, workdir=workdir, writable=writable,
                        network=network, created_from=str(state.session_id))

    commands = list(state.job_commands)
    job = job_of(commands)
    if state.config.dry_run:
        _observe(state, f"Not scheduled (dry run): {describe(job)}")
        return
    if getattr(state.approver, "automatic", False):
        _observe(state, "A recurring job needs a person's approval, and this run approves "
                        "automatically: not scheduled. Finish the task instead.")
        return
    decision = _check(state, "\n".join(commands))
    if decision.decision == "deny":
        _observe(state, "The policy denies one of these commands: " + "; ".join(decision.reasons))
        return
    approval = _ask(state, ApprovalRequest("\n".join(commands), describe(job), decision, turn,
                                           job=job))
    if approval.decision == "quit":
        raise _Stop("user_quit", "stopped by the user")
    if approval.decision == "refuse":
        _observe(state, "The user did not want this job"
                 + (f": {approval.reason}" if approval.reason else "."))
        return
    if approval.decision == "edit" and approval.command:
        commands = [line.strip() for line in approval.command.splitlines() if line.strip()]
        edited = _check(state, "\n".join(commands))
        if edited.decision == "deny" or not commands:
            _observe(state, "The edited job is denied by the policy: "
                     + "; ".join(edited.reasons))
            return
        job = job_of(commands)
    try:
        where = install(job)
    except ShellagentError as exc:
        raise _Stop("error", "the job could not be installed", exc.show()) from None
    state.emit({"type": "job", "turn": turn, "job_id": job.id, "name": job.name,
                "commands": job.commands, "schedule": schedule.words(),
                "on_calendar": schedule.on_calendar(), "cron": schedule.cron(),
                "installed": [str(w) for w in where]})
    raise _Stop("finished", f"Scheduled job {job.id}: {schedule.words()}. "
                f"See it with `shellagent jobs show {job.id}`.")
