"""A recurring request through the real daemon, answered at the prompts as a person would
(the approval protocol, never -y): the note comes before anything is asked, the first run
is a command to approve, the job a second question; with no scheduler, no job is asked
about at all. A scripted model fills the recipe's slots."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path

import pytest

from shellagent.events import ApprovalNeeded, Note
from tests.daemon.conftest import (
    DaemonProc,
    Run,
    ask_inprocess,
    start_daemon,
    stop,
    write_config,
)

pytestmark = pytest.mark.slow

FILL = {"use": "backup_rotating_tarball", "args": {"dir": "Documents"}}


@pytest.fixture(scope="module")
def trained_ranker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped recipes' ranker, trained once for the module (the daemon reads it from
    its cache directory instead of training it in the background)."""
    from shellagent.recipes import DATA_DIR, load
    from shellagent.recipes.rank import Ranker

    cache = tmp_path_factory.mktemp("ranker")
    recipes = list(load([DATA_DIR]).recipes.values())
    Ranker.build(recipes, cache)
    return Ranker.cache_path(recipes, cache)


@pytest.fixture
def home(outside_tmp: Path, monkeypatch: pytest.MonkeyPatch, trained_ranker: Path) -> Path:
    home = outside_tmp / "home"
    (home / "Documents").mkdir(parents=True)
    (home / "Documents/letter.txt").write_text("dear reader\n")
    monkeypatch.setenv("HOME", str(home))
    cache = Path(os.environ["SHELLAGENT_CACHE_DIR"])
    cache.mkdir(parents=True, exist_ok=True)
    shutil.copy(trained_ranker, cache / trained_ranker.name)
    write_config('[ask]\nconfirm = false\nrecipes = "auto"\n')  # as installed, unasked
    return home


@pytest.fixture
def crontab(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    table = home.parent / "crontab.txt"
    tool = home.parent / "crontab"
    tool.write_text(
        f'#!/bin/sh\ncase "$1" in -l) cat {table} 2>/dev/null ;; -) cat > {table} ;; esac\n'
    )
    tool.chmod(0o755)
    monkeypatch.setenv("SHELLAGENT_SCHEDULER", "cron")
    monkeypatch.setenv("SHELLAGENT_CRONTAB", str(tool))
    return table


@pytest.fixture
def running(home: Path) -> Iterator[DaemonProc]:
    d = start_daemon()
    yield d
    stop(d)


def before_any_question(run: Run, text: str) -> bool:
    """Whether a note holding ``text`` came before the first approval request."""
    asked = next(i for i, e in enumerate(run.events) if isinstance(e, ApprovalNeeded))
    return any(isinstance(e, Note) and text in e.message for e in run.events[:asked])


def test_a_weekly_backup_asked_in_ask_becomes_an_installed_job_that_backs_up(
    crontab: Path, running: DaemonProc, home: Path, script: Callable[..., str]
) -> None:
    model = script(json.dumps(FILL))
    run = ask_inprocess("back up Documents weekly", model, home, keys=["y", "y", "n"])
    assert before_any_question(run, "a recurring job, every Monday at 09:00: it runs once now")
    assert [a.job for a in run.of(ApprovalNeeded)] == [False, True]
    assert "Backups" in run.of(ApprovalNeeded)[1].why
    assert run.summary.reason == "finished" and "Scheduled job" in run.summary.summary
    job_id = run.summary.summary.split("Scheduled job ")[1].split(":")[0]
    said = [e.message for e in run.of(Note) if e.message.startswith(f"installed job {job_id}")]
    assert said and "every Monday at 09:00, as a line in your crontab" in said[0]
    assert (
        crontab.read_text().startswith("0 9 * * 1 ") and f"jobs run {job_id}" in crontab.read_text()
    )
    archive = home / f"Backups/Documents-{date.today():%F}.tar.gz"
    assert not archive.exists()  # the first run's archive was on the copy, discarded

    ran = subprocess.run(
        [sys.executable, "-m", "shellagent", "jobs", "run", job_id],
        capture_output=True, text=True, timeout=120, cwd=home,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    with tarfile.open(archive) as packed:
        assert "Documents/letter.txt" in packed.getnames()


def test_without_a_scheduler_ask_says_so_before_asking_and_asks_about_no_job(
    home: Path, monkeypatch: pytest.MonkeyPatch, script: Callable[..., str]
) -> None:
    monkeypatch.setenv("SHELLAGENT_SCHEDULER", "none")
    daemon = start_daemon()
    try:
        model = script(json.dumps(FILL))
        run = ask_inprocess("back up Documents every Sunday", model, home, keys=["y", "n"])
    finally:
        stop(daemon)
    assert before_any_question(run, "recurring job, which cannot run here")
    assert before_any_question(run, "sudo apt-get install cron")
    assert [a.job for a in run.of(ApprovalNeeded)] == [False]
    assert "Not scheduled: no scheduler" in run.summary.summary


def test_a_dry_run_or_yes_runs_it_once_and_installs_nothing(
    crontab: Path, running: DaemonProc, home: Path, script: Callable[..., str]
) -> None:
    dry = ask_inprocess(
        "back up Documents weekly", script(json.dumps(FILL)), home, keys=["y"], dry_run=True
    )
    assert before_any_question(dry, "a dry run: the recurring job is run once on a copy")
    assert [a.job for a in dry.of(ApprovalNeeded)] == [False]
    assert dry.summary.summary.startswith("Not scheduled: a dry run installs nothing")

    yes = ask_inprocess("back up Documents weekly", script(json.dumps(FILL)), home, yes=True)
    notes = [e.message for e in yes.of(Note)]
    assert any("never with -y" in n for n in notes)
    assert not yes.of(ApprovalNeeded)
    assert yes.summary.summary.startswith("Not scheduled: a recurring job needs your own")
    assert not crontab.exists()
