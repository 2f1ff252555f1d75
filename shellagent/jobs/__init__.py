"""Recurring jobs: approved command lists that the OS scheduler replays in the sandbox."""

from __future__ import annotations

from shellagent.jobs.runner import RunResult, run_job
from shellagent.jobs.schedule import Schedule
from shellagent.jobs.scheduler import CronScheduler, Scheduler, SystemdScheduler, detect
from shellagent.jobs.store import Job, all_jobs, load, make_job, save

__all__ = ["CronScheduler", "Job", "RunResult", "Schedule", "Scheduler", "SystemdScheduler",
           "all_jobs", "detect", "install", "load", "make_job", "run_job", "save", "uninstall"]


def install(job: Job, scheduler: Scheduler | None = None) -> list[object]:
    """Save the job and hand it to the scheduler; nothing is left behind if that fails."""
    scheduler = scheduler or detect()
    path = save(job)
    try:
        return [path, *scheduler.install(job)]
    except Exception:
        path.unlink(missing_ok=True)
        raise


def uninstall(job_id: str, scheduler: Scheduler | None = None) -> None:
    from shellagent.jobs import store

    (scheduler or detect()).remove(job_id)
    store.remove(job_id)
