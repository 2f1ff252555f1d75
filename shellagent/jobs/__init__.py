"""Recurring jobs: approved command lists that the OS scheduler replays in the sandbox.

``Installer`` is the agent's ``JobInstaller``: the daemon hands it to the agent, which gives
it a job the user approved in a conversation.
"""

from __future__ import annotations

from shellagent.agent.proposal import InstalledJob, JobProposal
from shellagent.jobs.runner import RunResult, run_job
from shellagent.jobs.scheduler import CronScheduler, Scheduler, SystemdScheduler, detect
from shellagent.jobs.store import Job, all_jobs, load, make_job, save
from shellagent.schedule import Schedule

__all__ = [
    "CronScheduler",
    "Installer",
    "Job",
    "RunResult",
    "Schedule",
    "Scheduler",
    "SystemdScheduler",
    "all_jobs",
    "detect",
    "install",
    "load",
    "make_job",
    "run_job",
    "save",
    "uninstall",
]


def install(job: Job, scheduler: Scheduler | None = None) -> list[object]:
    """Save the job and hand it to the scheduler; nothing is left behind if that fails."""
    _refuse_secrets(job)
    scheduler = scheduler or detect()
    path = save(job)
    try:
        return [path, *scheduler.install(job)]
    except Exception:
        path.unlink(missing_ok=True)
        raise


def _refuse_secrets(job: Job) -> None:
    """A job's commands are kept on disk to be replayed, so they cannot be redacted: a
    command that holds a secret (``mysql -pX``, a token) is refused."""
    from shellagent.errors import InputError
    from shellagent.transcript.redact import Redactor

    redactor = Redactor.from_environment()
    for n, command in enumerate(job.commands, 1):
        hits = redactor.find(command)
        if hits:
            raise InputError(
                f"job command {n} holds a secret ({hits[0].kind}); a job's commands are kept "
                "on disk, so it was not installed",
                hint="let the command read the secret from a file or an environment variable "
                "(e.g. ~/.my.cnf, ~/.netrc, --password-file)",
            )


def uninstall(job_id: str, scheduler: Scheduler | None = None) -> None:
    from shellagent.jobs import store

    (scheduler or detect()).remove(job_id)
    store.remove(job_id)


class Installer:
    """Installs a job the user approved in a conversation: the job file, then the timer or
    crontab line of ``scheduler`` (default: the one ``detect`` finds)."""

    def __init__(self, scheduler: Scheduler | None = None) -> None:
        self.scheduler = scheduler

    def problem(self) -> str | None:
        """Why no job can be installed on this machine (no scheduler), with the fix; None
        when one can."""
        if self.scheduler is not None:
            return None
        from shellagent.errors import EnvironmentProblem
        from shellagent.jobs.scheduler import detect

        try:
            detect()
        except EnvironmentProblem as exc:
            return exc.text()
        return None

    def install(self, proposal: JobProposal) -> InstalledJob:
        job = make_job(
            proposal.name,
            list(proposal.commands),
            proposal.schedule,
            workdir=proposal.workdir,
            writable=list(proposal.writable),
            network=proposal.network,
            created_from=proposal.created_from,
        )
        return InstalledJob(job.id, tuple(str(w) for w in install(job, self.scheduler)))
