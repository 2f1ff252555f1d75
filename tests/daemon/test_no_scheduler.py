"""A machine where recurring jobs cannot run: ``doctor`` warns, and a task that leads to a
schedule says so at that moment, with the fix, instead of asking to approve a job that
would fail to install."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from shellagent.cli.main import main
from shellagent.events import ApprovalNeeded, Note
from tests.daemon.conftest import DaemonProc, ask_inprocess, cmd, done, start_daemon, stop

SCHEDULE = '{"every": "week", "on": "sun", "at": "03:00", "name": "backup notes"}'


@pytest.fixture
def no_scheduler(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHELLAGENT_SCHEDULER", "none")  # neither systemd nor cron


@pytest.fixture
def daemon_without_scheduler(no_scheduler: None) -> Iterator[DaemonProc]:
    d = start_daemon()
    yield d
    stop(d)


def test_a_schedule_on_a_machine_without_a_scheduler_is_said_at_once_with_the_fix(
    daemon_without_scheduler: DaemonProc, script: Callable[..., str], workdir: Path
) -> None:
    model = script(
        cmd("cp notes.txt notes.bak", "back up"),
        SCHEDULE,
        done("Backed up notes.txt once; it was not scheduled"),
    )
    (workdir / "notes.txt").write_text("n\n")
    run = ask_inprocess("back up notes.txt every week", model, workdir, keys=["y", "k"])
    notes = [n.message for n in run.of(Note)]
    said = [n for n in notes if "recurring job, which cannot run here" in n]
    assert said and "sudo apt-get install cron" in said[0] and "enable-linger" in said[0]
    assert len(run.of(ApprovalNeeded)) == 1  # the copy only: no job to approve
    assert run.summary.reason == "finished"


@pytest.mark.slow
def test_doctor_warns_about_a_missing_scheduler(
    no_scheduler: None, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["doctor"])
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "scheduler:" in line)
    assert line.lstrip().startswith("warn"), line
    assert "enable-linger" in out
