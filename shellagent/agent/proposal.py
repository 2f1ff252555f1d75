"""A recurring job as the agent proposes it, the installer it hands an approved one to, and
the one way a job is described to a person.

The agent never installs anything itself: ``run_task`` takes a ``JobInstaller`` (the daemon
passes ``shellagent.jobs.Installer``, which writes the job file and the systemd timer or
crontab line). Without one, a schedule action is answered with a note and nothing else.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from shellagent.schedule import Schedule

if TYPE_CHECKING:
    from shellagent.policy import Evaluation

__all__ = [
    "InstalledJob",
    "JobInstaller",
    "JobProposal",
    "NoJobs",
    "describe_job",
    "job_facts",
    "job_grants",
]


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


class NoJobs:
    """An installer that installs nothing and says why (``problem``): what a dry run is
    given, so a recurring request is run once and shown, never scheduled."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def problem(self) -> str:
        return self.reason

    def install(self, proposal: JobProposal) -> InstalledJob:
        from shellagent.errors import InputError

        raise InputError(f"the job was not installed: {self.reason}")


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


# Where a word of a written path stops being known before it runs: an expansion, a quote,
# a glob ("~/Backups/"$n-$(date +%F).tar.gz" is written somewhere in ~/Backups).
_UNKNOWN = re.compile(r"[$\"'`*?\[{]")


def job_grants(
    evaluations: Iterable[Evaluation],
    cwd: Path,
    given: Iterable[Path] = (),
    home: Path | None = None,
) -> tuple[Path, ...]:
    """The folders a job must be allowed to write: ``given`` (the session's own write
    grants) and what the policy's readings of its commands (``evaluations``) say they
    write: a folder ``mkdir`` makes, the folder a written file is in. Never the home
    directory itself or ``/`` (a job that writes there is refused when it runs, loudly);
    a folder inside another one is left out."""
    home = home or Path(os.path.expanduser("~"))
    found: list[Path] = list(given)
    for evaluation in evaluations:
        for segment in evaluation.segments:
            for written in segment.writes:
                path = _folder(written, segment.program, cwd, home)
                if path is not None and path not in (home, Path("/")):
                    found.append(path)
    kept: list[Path] = []
    for path in sorted(set(found), key=lambda p: len(p.parts)):
        if not any(path == k or k in path.parents for k in kept):
            kept.append(path)
    return tuple(kept)


def _folder(written: str, program: str, cwd: Path, home: Path) -> Path | None:
    cut = _UNKNOWN.search(written)
    known = written[: cut.start()] if cut else written
    if not known:
        return None
    if known == "~" or known.startswith("~/"):
        known = str(home) + known[1:]
    path = Path(os.path.normpath(cwd / known))
    if cut is not None:  # a name made when it runs: the folder it is made in
        return path if known.endswith("/") else path.parent
    if program == "mkdir" or path.is_dir():
        return path
    return path.parent
