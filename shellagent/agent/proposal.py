"""A recurring job as the agent proposes it, the installer it hands an approved one to, and
the one way a job is described to a person.

The agent never installs anything itself: ``run_task`` takes a ``JobInstaller`` (the daemon
passes ``shellagent.jobs.Installer``, which writes the job file and the systemd timer or
crontab line). Without one, a schedule action is answered with a note and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from shellagent.schedule import Schedule

__all__ = ["InstalledJob", "JobInstaller", "JobProposal", "describe_job", "job_facts"]


@dataclass(frozen=True)
class JobProposal:
    """What the user is asked to approve: commands, when they run, and with which grants."""

    name: str
    commands: tuple[str, ...]
    schedule: Schedule
    workdir: Path
    writable: tuple[Path, ...] = ()
    network: bool = False
    created_from: str = ""
    """The session the job was made in."""


@dataclass(frozen=True)
class InstalledJob:
    """An installed job: its id and what was written (the job file, timer or crontab line)."""

    job_id: str
    written: tuple[str, ...]


class JobInstaller(Protocol):
    """Installs an approved job; raises ``ShellagentError`` (with its fix) when it cannot."""

    def install(self, proposal: JobProposal) -> InstalledJob: ...


def job_facts(job: JobProposal) -> list[tuple[str, str]]:
    """(label, text) of what a person needs to judge a job: when, where, what it may touch."""
    spec = job.schedule
    return [
        ("runs", f"{spec.words()} (systemd OnCalendar={spec.on_calendar()}; cron {spec.cron()})"),
        ("in", str(job.workdir)),
        ("writes", ", ".join(str(p) for p in job.writable) or "nothing outside its sandbox"),
        ("network", "yes" if job.network else "no"),
    ]


def describe_job(job: JobProposal, *, title: str | None = None) -> str:
    """One line (the approval prompt's reason), or with a ``title`` a block listing the
    commands (``shellagent jobs show``)."""
    facts = dict(job_facts(job))
    if title is None:
        return (
            f"recurring job '{job.name}': {facts['runs']}; runs in {facts['in']}; "
            f"may write {facts['writes']}; network {facts['network']}"
        )
    lines = [title, *(f"  {label:<10}{text}" for label, text in job_facts(job)), "  commands:"]
    lines += [f"    {i}. {c}" for i, c in enumerate(job.commands, 1)]
    return "\n".join(lines)
