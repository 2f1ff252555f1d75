"""Jobs end to end: the backup example, installed into a stand-in scheduler, run for real
in the sandbox, refused when changed or when the policy denies, removed cleanly."""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path

import pytest

from shellagent.errors import ConfigError
from shellagent.jobs import Schedule, install, load, make_job, run_job
from shellagent.jobs.store import job_path
from tests.jobs.conftest import shellagent

BACKUP = "tar czf backups/docs.tgz -C ../Documents ."


def test_backup_job_is_installed_as_a_systemd_timer_and_run_replays_it(
    user_home: Path, fake_systemd: Path
) -> None:
    work = user_home / "work"
    added = shellagent(
        "jobs",
        "add",
        "backup documents",
        "--every",
        "week",
        "--on",
        "sun",
        "--at",
        "03:00",
        "--write",
        str(work / "backups"),
        "-y",
        "--",
        BACKUP,
        cwd=work,
    )
    assert added.returncode == 0, added.stderr
    assert "every Sunday at 03:00" in added.stdout
    job_id = added.stdout.split()[1].rstrip(":")
    units = Path(os.environ["SHELLAGENT_SYSTEMD_UNIT_DIR"])
    timer = (units / f"shellagent-job-{job_id}.timer").read_text()
    service = (units / f"shellagent-job-{job_id}.service").read_text()
    assert "OnCalendar=Sun *-*-* 03:00:00" in timer and "Persistent=true" in timer
    assert f"-m shellagent jobs run {job_id}" in service
    assert f"enable --now shellagent-job-{job_id}.timer" in fake_systemd.read_text()

    ran = shellagent("jobs", "run", job_id, cwd=user_home)
    assert ran.returncode == 0, ran.stderr
    with tarfile.open(work / "backups/docs.tgz") as archive:
        assert "./letter.txt" in archive.getnames()
    listed = json.loads(shellagent("jobs", "list", "--json", cwd=work).stdout)
    assert listed["last_result"] == "ok" and listed["next_run"]

    removed = shellagent("jobs", "rm", job_id, cwd=work)
    assert removed.returncode == 0
    assert list(units.iterdir()) == []
    assert f"disable --now shellagent-job-{job_id}.timer" in fake_systemd.read_text()
    assert not job_path(job_id).exists()


def test_a_job_writing_outside_its_grants_fails_loudly(user_home: Path, fake_crontab: Path) -> None:
    work = user_home / "work"
    job = make_job(
        "backup",
        ["tar czf ../elsewhere.tgz -C ../Documents ."],
        Schedule.parse("daily"),
        workdir=work,
        writable=[work / "backups"],
    )
    install(job)
    result = run_job(load(job.id))
    assert not result.success and "exited with" in result.reason
    assert not (user_home / "elsewhere.tgz").exists()
    listed = shellagent("jobs", "list", cwd=work).stdout
    assert "FAILED" in listed


def test_crontab_lines_are_added_once_and_removed_leaving_others(
    user_home: Path, fake_crontab: Path
) -> None:
    fake_crontab.write_text("0 1 * * * /usr/bin/true # the user's own line\n")
    job = make_job(
        "backup",
        [BACKUP],
        Schedule.parse("daily", "04:30"),
        workdir=user_home / "work",
        writable=[user_home / "work/backups"],
    )
    install(job)
    install(job)  # idempotent
    lines = fake_crontab.read_text().splitlines()
    ours = [ln for ln in lines if ln.endswith(f"# shellagent-job:{job.id}")]
    assert len(ours) == 1 and ours[0].startswith("30 4 * * * ")
    assert f"-m shellagent jobs run {job.id}" in ours[0]
    assert shellagent("jobs", "rm", job.id, cwd=user_home).returncode == 0
    assert fake_crontab.read_text() == "0 1 * * * /usr/bin/true # the user's own line\n"


def test_a_job_every_few_hours_or_on_weekdays_keeps_its_schedule_in_its_file(
    user_home: Path, fake_crontab: Path
) -> None:
    for schedule, cron in (
        (Schedule.parse("hour", "10", step=3), "10 */3 * * * "),
        (Schedule.parse("weekday", "08:15"), "15 8 * * 1-5 "),
    ):
        job = make_job("x", ["true"], schedule, workdir=user_home, writable=[])
        install(job)
        assert load(job.id).schedule.schedule() == schedule
        line = next(ln for ln in fake_crontab.read_text().splitlines() if job.id in ln)
        assert line.startswith(cron)


def test_a_hand_edited_job_does_not_run_until_approved_again(
    user_home: Path, fake_crontab: Path
) -> None:
    work = user_home / "work"
    job = make_job(
        "backup", [BACKUP], Schedule.parse("daily"), workdir=work, writable=[work / "backups"]
    )
    path, *_ = install(job)
    text = Path(str(path)).read_text().replace(BACKUP, BACKUP + '",\n    "touch extra')
    Path(str(path)).write_text(text)
    result = run_job(load(job.id))
    assert not result.success and "changed since they were approved" in result.reason
    assert not (work / "backups/docs.tgz").exists()  # nothing ran
    approved = shellagent("jobs", "approve", job.id, "-y", cwd=work)
    assert approved.returncode == 0 and "touch extra" in approved.stdout
    assert run_job(load(job.id)).success


def test_a_command_the_policy_denies_is_refused_at_run_time_even_if_approved(
    user_home: Path, fake_crontab: Path
) -> None:
    work = user_home / "work"
    job = make_job("cleanup", ["rm -rf ~"], Schedule.parse("daily"), workdir=work, writable=[])
    install(job)
    result = run_job(load(job.id))
    assert not result.success and "policy now denies `rm -rf ~`" in result.reason
    assert (user_home / "Documents/letter.txt").exists()
    ran = shellagent("jobs", "run", job.id, cwd=work)
    assert ran.returncode == 1 and "FAILED" in ran.stderr


def test_a_malformed_job_file_names_the_file_and_line(user_home: Path, fake_crontab: Path) -> None:
    job = make_job("x", ["true"], Schedule.parse("daily"), workdir=user_home, writable=[])
    path, *_ = install(job)
    Path(str(path)).write_text("commands = [\n  'unterminated\n")
    with pytest.raises(ConfigError, match=r"\.toml"):
        load(job.id)
    listed = shellagent("jobs", "list", cwd=user_home)
    assert listed.returncode == 0 and "warning:" in listed.stderr


def test_jobs_add_refuses_without_a_terminal_unless_yes(
    user_home: Path, fake_crontab: Path
) -> None:
    proc = shellagent("jobs", "add", "x", "--every", "day", "--", "true", cwd=user_home)
    assert proc.returncode == 2 and "pass -y" in proc.stderr
    assert not fake_crontab.exists()


def test_jobs_add_says_there_is_no_scheduler_before_asking_anything(
    user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHELLAGENT_SCHEDULER", "none")
    # no terminal and no -y: it would have asked (and refused to), had it got that far
    proc = shellagent("jobs", "add", "x", "--every", "day", "--", "true", cwd=user_home)
    assert proc.returncode == 3 and "no scheduler" in proc.stderr
    assert "sudo apt-get install cron" in proc.stderr and "install this job?" not in proc.stdout
    from shellagent.jobs import all_jobs

    assert all_jobs() == ([], [])


def test_preview_runs_on_a_copy_shows_the_changes_and_records_no_run(
    user_home: Path, fake_crontab: Path
) -> None:
    work = user_home / "work"
    job = make_job(
        "backup", [BACKUP, "rm -f backups/old.tgz"], Schedule.parse("daily"),
        workdir=work, writable=[work / "backups"],
    )  # fmt: skip
    (work / "backups" / "old.tgz").write_text("old")
    install(job)
    done = shellagent("jobs", "run", "--preview", job.id, cwd=work)
    assert done.returncode == 0, done.stderr
    assert "new  " in done.stdout and "docs.tgz" in done.stdout
    assert "DEL" in done.stdout and "old.tgz" in done.stdout
    assert "preview: nothing was applied" in done.stdout
    assert not (work / "backups" / "docs.tgz").exists()
    assert (work / "backups" / "old.tgz").exists()
    assert "never" in shellagent("jobs", "list", cwd=work).stdout  # no run recorded
