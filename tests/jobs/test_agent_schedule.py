"""A recurring job made from a conversation: the scripted model runs the backup once, then
asks for a weekly schedule; the user approves the job; the scheduler entry is written; a
later `jobs run` replays the approved command without any model."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from shellagent.agent import (
    Approval,
    ApprovalRequest,
    AutoApprover,
    Oversight,
    Parts,
    Recording,
    run_task,
)
from shellagent.events import ChatMessage, JobInstalled
from shellagent.jobs import Installer, all_jobs, load, run_job
from shellagent.policy import PolicyEngine
from shellagent.sandbox import Sandbox, get_profile
from shellagent.testing import MemorySink, ScriptedBackend

BACKUP = '{"cmd": "tar czf backups/docs.tgz -C ../Documents .", "why": "back up Documents"}'
SCHEDULE = '{"every": "week", "on": "sun", "at": "03:00", "name": "backup documents"}'
DONE = '{"done": "backed up once"}'


class Person:
    """Approves everything, and remembers what it was asked."""

    automatic = False

    def __init__(self, answer: str = "approve") -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> Approval:
        self.requests.append(request)
        if request.job is not None and self.answer != "approve":
            return Approval(self.answer, reason="not weekly")  # type: ignore[arg-type]
        return Approval("approve")


@pytest.fixture
def work(user_home: Path) -> Path:
    return user_home / "work"


def converse(work: Path, approver: object, profile: str = "default") -> tuple[object, MemorySink]:
    sink = MemorySink()
    with Sandbox(get_profile(profile, cwd=work), timeout=30) as shell:
        outcome = run_task(
            "back up Documents weekly",
            Parts(
                backend=ScriptedBackend([BACKUP, SCHEDULE, DONE]),
                shell=shell,
                policy=PolicyEngine.load(workspace=work),
            ),
            Oversight(approver=approver, job_installer=Installer()),  # type: ignore[arg-type]
            Recording(sink=sink),
        )
    return outcome, sink


def test_a_conversation_becomes_an_approved_job_that_replays_without_a_model(
    work: Path, fake_crontab: Path
) -> None:
    person = Person()
    outcome, sink = converse(work, person)
    assert outcome.reason == "finished" and "every Sunday at 03:00" in outcome.summary  # type: ignore[attr-defined]
    job_request = person.requests[-1]
    assert job_request.job is not None
    assert job_request.command == "tar czf backups/docs.tgz -C ../Documents ."
    assert "OnCalendar=Sun *-*-* 03:00:00" in job_request.why
    assert "cron 0 3 * * 0" in job_request.why
    jobs, _ = all_jobs()
    assert [j.commands for j in jobs] == [["tar czf backups/docs.tgz -C ../Documents ."]]
    assert jobs[0].writable == [str(work)]
    assert f"jobs run {jobs[0].id}" in fake_crontab.read_text()
    assert [e.job_id for e in sink.of_type(JobInstalled)] == [jobs[0].id]

    (work / "backups/docs.tgz").unlink()
    assert run_job(load(jobs[0].id)).success
    with tarfile.open(work / "backups/docs.tgz") as archive:
        assert "./letter.txt" in archive.getnames()


def test_a_refused_job_installs_nothing_and_the_model_is_told(
    work: Path, fake_crontab: Path
) -> None:
    outcome, sink = converse(work, Person("refuse"))
    assert all_jobs() == ([], [])
    assert not fake_crontab.exists()
    observations = [e.content for e in sink.of_type(ChatMessage) if e.role == "user"]
    assert any("did not want this job: not weekly" in text for text in observations)


def test_automatic_approval_never_installs_a_job(work: Path, fake_crontab: Path) -> None:
    converse(work, AutoApprover())
    assert all_jobs() == ([], [])
    assert not fake_crontab.exists()


def test_a_throwaway_sandbox_never_makes_a_job(work: Path, fake_crontab: Path) -> None:
    person = Person()
    converse(work, person, profile="ephemeral")
    assert all(r.job is None for r in person.requests)
    assert all_jobs() == ([], [])


def test_a_session_without_an_installer_asks_nobody_and_installs_nothing(
    work: Path, fake_crontab: Path
) -> None:
    person = Person()
    sink = MemorySink()
    with Sandbox(get_profile("default", cwd=work), timeout=30) as shell:
        run_task(
            "back up Documents weekly",
            Parts(
                backend=ScriptedBackend([BACKUP, SCHEDULE, DONE]),
                shell=shell,
                policy=PolicyEngine.load(workspace=work),
            ),
            Oversight(approver=person),
            Recording(sink=sink),
        )
    assert all(r.job is None for r in person.requests)
    assert all_jobs() == ([], []) and not fake_crontab.exists()
    observations = [e.content for e in sink.of_type(ChatMessage) if e.role == "user"]
    assert any("cannot be installed from here" in text for text in observations)
