"""A recurring request becomes a job: the what through the recipes, run once on the copy,
then proposed as a job the user approves; a later `jobs run` replays it without a model.
A scripted model fills the recipe's slots; nothing else of it is used."""

from __future__ import annotations

import json
import tarfile
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from shellagent.agent import Agent, Approval, ApprovalRequest, AutoApprover, Hooks
from shellagent.agent.proposal import job_grants
from shellagent.agent.recipe_step import RecipeBook
from shellagent.events import ChangesDecision, EndReason, JobInstalled
from shellagent.jobs import Installer, all_jobs, load, run_job
from shellagent.policy import PolicyEngine
from shellagent.recipes import load as load_recipes
from shellagent.recipes.rank import Ranker
from shellagent.recipes.reading import read_task as reading_of
from shellagent.recipes.shortlist import make_offer, shortlist
from shellagent.recipes.values import TaskValues, task_values
from shellagent.testing import ScriptedBackend
from shellagent.transaction.changeset import ChangeSet
from shellagent.transaction.review import Review
from shellagent.transcript import new_session_id

# the shipped recipes a recurring backup could be taken for, and the cron-file ones
NAMES = (
    "backup_rotating_tarball",
    "backup_file_rotating",
    "backup_copy_dir",
    "backup_dated_tarball",
    "copy_file",
    "cron_add_daily_at",
    "cron_add_weekly_at",
    "cron_add_job",
)
WEEKLY = "back up Documents weekly"


def read_task(task: str, listing: list[str] | tuple[str, ...] = ()) -> TaskValues:
    """What ``task`` names, with ``listing`` as the working directory's."""
    return task_values(reading_of(task), listing)


@pytest.fixture(scope="module")
def book() -> RecipeBook:
    shipped = load_recipes().recipes
    recipes = {name: shipped[name] for name in NAMES}
    return RecipeBook(recipes, Ranker.train(list(recipes.values())))


class Person:
    """Answers every question as told, and remembers what it was asked."""

    automatic = False

    def __init__(self, run: str = "approve", job: str = "approve") -> None:
        self.answers = {False: run, True: job}
        self.requests: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> Approval:
        self.requests.append(request)
        return Approval(self.answers[request.job is not None], reason="not now")  # type: ignore[arg-type]


def fill(reply: dict[str, Any]) -> str:
    return json.dumps(reply)


def ask(home: Path, book: RecipeBook, approver: Any, task: str = WEEKLY, **args: str) -> Any:
    """``task`` through the front door on overlays of ``home`` (the change set discarded,
    as ``n`` at the end of ``ask``), with the scripted model filling the recipe."""
    reply = {"use": "backup_rotating_tarball", "args": {"dir": "Documents", **args}}
    agent = Agent(
        ScriptedBackend([fill(reply), *['{"done": "I did not do it"}'] * 3]),
        cwd=home,
        approver=approver,
        job_installer=Installer(),
        recipes=book,
        policy=PolicyEngine.load(workspace=home),
    )
    review = Review.create(new_session_id(), agent.profile)
    decided: list[list[str]] = []

    def decide(changes: ChangeSet, reason: EndReason) -> ChangesDecision:
        decided.append(sorted(str(c.path) for c in changes))
        return "discard"

    review.decide = decide
    outcome = agent.run(task, hooks=Hooks(review=review))
    return outcome, decided


def test_a_weekly_backup_runs_once_on_the_copy_then_becomes_a_job_that_backs_up(
    user_home: Path, fake_crontab: Path, book: RecipeBook
) -> None:
    person = Person()
    outcome, decided = ask(user_home, book, person)
    archive = user_home / f"Backups/Documents-{date.today():%F}.tar.gz"
    # the first run made the archive on the copy, shown in the change set, not on disk
    assert decided == [[str(user_home / "Backups"), str(archive)]]
    assert not archive.exists()
    first, job_request = person.requests
    assert first.job is None and "tar -czf" in first.command
    job = job_request.job
    assert job is not None and job.commands == (first.command,)
    assert job.schedule.words() == "every Monday at 09:00"
    assert job.writable == (user_home / "Backups",)
    assert "every Monday at 09:00" in job_request.why and "Backups" in job_request.why
    assert outcome.reason == "finished" and "Scheduled job" in outcome.summary

    (installed,) = all_jobs()[0]
    assert installed.commands == [first.command]
    assert f"jobs run {installed.id}" in fake_crontab.read_text()
    assert fake_crontab.read_text().startswith("0 9 * * 1 ")

    assert not (user_home / "Backups").exists()  # the change set was discarded
    assert run_job(load(installed.id)).success  # the folder it writes is made first
    with tarfile.open(archive) as packed:
        assert "Documents/letter.txt" in packed.getnames()


def test_a_job_the_user_refuses_is_not_installed_and_the_ending_says_so(
    user_home: Path, fake_crontab: Path, book: RecipeBook
) -> None:
    outcome, _ = ask(user_home, book, Person(job="refuse"))
    assert all_jobs() == ([], []) and not fake_crontab.exists()
    assert outcome.summary.startswith("Not scheduled: The user did not want this job: not now")
    assert outcome.claimed is False


def test_automatic_approval_runs_it_once_and_never_installs_a_job(
    user_home: Path, fake_crontab: Path, book: RecipeBook
) -> None:
    outcome, decided = ask(user_home, book, AutoApprover())
    assert decided  # it ran once, on the copy
    assert all_jobs() == ([], []) and not fake_crontab.exists()
    assert "Not scheduled" in outcome.summary and "without -y" in outcome.summary


def test_without_a_scheduler_no_job_is_asked_about(
    user_home: Path, book: RecipeBook, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHELLAGENT_SCHEDULER", "none")
    person = Person()
    outcome, _ = ask(user_home, book, person)
    assert [r.job for r in person.requests] == [None]
    assert outcome.summary.startswith("Not scheduled: no scheduler")
    assert "sudo apt-get install cron" in outcome.summary
    assert all_jobs() == ([], [])


def test_a_refused_first_run_makes_no_job(
    user_home: Path, fake_crontab: Path, book: RecipeBook
) -> None:
    person = Person(run="refuse")
    ask(user_home, book, person)
    assert all(r.job is None for r in person.requests)
    assert all_jobs() == ([], []) and not fake_crontab.exists()


def test_a_request_that_names_no_cron_file_is_never_offered_a_recipe_writing_cron_lines(
    book: RecipeBook,
) -> None:
    task = "every day at 18:00 copy todo.txt to ~/Backups"
    chosen = shortlist(
        book, reading_of(task), lambda: read_task(task, ["./todo.txt", "./Backups/"])
    )
    assert chosen is not None
    assert not [c.name for c in chosen.usable if c.name.startswith("cron_add")]
    named = "add a line to /etc/cron.d/shop that runs backup.sh every day at 07:05"
    values = read_task(named, ["./backup.sh", "./todo.txt"])
    chosen = shortlist(book, reading_of(named), lambda: values)
    assert chosen is not None and chosen.usable[0].name.startswith("cron_add")
    # even then, a cron line goes only into a cron file, never into a data file
    offer = make_offer(book.recipes["cron_add_daily_at"], read_task(f"{named} in todo.txt"))
    assert {s.name: s.values() for s in offer.slots}["file"] == ("/etc/cron.d/local",)


def test_a_backup_whose_destination_the_task_does_not_say_goes_to_the_default(
    book: RecipeBook,
) -> None:
    offer = make_offer(book.recipes["backup_rotating_tarball"], read_task(WEEKLY, ["./Documents/"]))
    values = {s.name: s.values() for s in offer.slots}
    assert values["dir"][0] == "Documents" and values["dest"][0] == "~/Backups"
    said = "back up Documents weekly to /mnt/usb"
    offer = make_offer(book.recipes["backup_rotating_tarball"], read_task(said, ["./Documents/"]))
    assert {s.name: s.values() for s in offer.slots}["dest"][0] == "/mnt/usb"


def test_a_job_may_write_only_the_folders_its_command_writes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "Documents").mkdir(parents=True)
    policy = PolicyEngine.load(workspace=home)
    command = (
        'mkdir -p ~/Backups/daily && tar -czf ~/Backups/daily/"$(date +%F)".tgz -C ~ Documents'
        " && cp notes.txt ../shared/notes.txt"
    )
    read = policy.check(command.replace("~", str(home)))
    grants = job_grants([read], home, home=home)
    assert set(grants) == {home / "Backups/daily", tmp_path / "shared"}


def test_a_job_is_not_made_from_a_throwaway_sandbox(
    user_home: Path, fake_crontab: Path, book: RecipeBook
) -> None:
    from shellagent.agent import Oversight, Parts, Recording, run_task
    from shellagent.sandbox import Sandbox, get_profile
    from shellagent.testing import MemorySink

    person = Person()
    sink = MemorySink()
    reply = fill({"use": "backup_rotating_tarball", "args": {"dir": "/root"}})
    with Sandbox(get_profile("ephemeral"), timeout=30) as shell:
        run_task(
            WEEKLY,
            Parts(
                backend=ScriptedBackend([reply, '{"done": "ok"}'] * 3),
                shell=shell,
                policy=PolicyEngine.load(workspace=user_home),
                recipes=book,
            ),
            Oversight(approver=person, job_installer=Installer()),
            Recording(sink=sink),
        )
    assert all(r.job is None for r in person.requests)
    assert not sink.of_type(JobInstalled) and all_jobs() == ([], [])


UNPRIVILEGED_RUN = """
from pathlib import Path
from shellagent.agent.proposal import JobProposal
from shellagent.jobs import Installer, load, run_job
from shellagent.recipes import load as recipes, render
from shellagent.schedule import Schedule

command = render(recipes().recipes["backup_rotating_tarball"], {"dir": "Documents"})
home = Path.home()
week = Schedule.parse("week")
proposal = JobProposal("back up Documents", (command,), week, home, (home / "Backups",))
installed = Installer().install(proposal)
result = run_job(load(installed.job_id))
print(result.success, result.reason)
"""


def test_as_an_unprivileged_user_the_job_makes_its_folder_in_their_home_and_backs_up(
    outside_tmp: Path,
) -> None:
    """The same job as ``nobody``: the folder it writes is made in their home (which it may
    not write), and the run enters the home and backs up into that folder."""
    import os
    import subprocess
    import sys

    from tests.unprivileged import AS_NOBODY, NOBODY, give_to_nobody, make_traversable

    if os.getuid() != 0:
        pytest.skip("already unprivileged: the tests above run as this user")
    home = outside_tmp / "home"
    (home / "Documents").mkdir(parents=True)
    (home / "Documents/letter.txt").write_text("dear reader\n")
    tool = home / "crontab"
    tool.write_text(
        f'#!/bin/sh\ncase "$1" in -l) cat {home}/t 2>/dev/null ;; -) cat > {home}/t ;; esac\n'
    )
    tool.chmod(0o755)
    give_to_nobody(home)
    make_traversable(home)
    env = {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "SHELLAGENT_SCHEDULER": "cron",
        "SHELLAGENT_CRONTAB": str(tool),
        **{
            f"SHELLAGENT_{d}_DIR": str(home / f".sa-{d.lower()}")
            for d in ("STATE", "DATA", "CONFIG", "CACHE", "RUNTIME")
        },
    }
    probe = subprocess.run(
        [*AS_NOBODY, sys.executable, "-c", "import shellagent"], env=env, capture_output=True
    )
    if probe.returncode != 0:
        pytest.skip(f"nobody cannot run {sys.executable}: {probe.stderr.decode()[-200:]}")
    proc = subprocess.run(
        [*AS_NOBODY, sys.executable, "-c", UNPRIVILEGED_RUN],
        env=env, cwd=home, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("True"), proc.stdout
    archive = home / f"Backups/Documents-{date.today():%F}.tar.gz"
    assert archive.stat().st_uid == NOBODY and (home / "Backups").stat().st_uid == NOBODY
    with tarfile.open(archive) as packed:
        assert "Documents/letter.txt" in packed.getnames()
