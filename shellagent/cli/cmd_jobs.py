"""``shellagent jobs``: recurring jobs run by the OS scheduler.

Everything printed from a job file or its run history (the name, commands, paths, the
reason a run failed, which ends with the command's own output) goes through
``shellagent.cli.display`` first: a job file is text anyone with access to it may have
edited, and a command's output is whatever the command printed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shellagent.cli.display import reveal, shown
from shellagent.errors import TaskFailed, UsageError

if TYPE_CHECKING:
    pass


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "jobs",
        help="recurring jobs (list, show, add, approve, run, rm)",
        description="Recurring jobs: approved commands that systemd timers or cron replay\n"
        "in the sandbox.\n\nexample: shellagent jobs list",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="jobs_command", metavar="ACTION", required=True)
    ls = sub.add_parser("list", help="every job with its last and next run")
    ls.add_argument("--json", action="store_true", help="one JSON object per job")
    ls.set_defaults(func=cmd_list)
    for name, func, text in (
        ("show", cmd_show, "what a job runs, when, with which grants"),
        ("rm", cmd_rm, "remove a job and its timer or crontab line"),
        ("run", cmd_run, "run a job now, as the scheduler would"),
        ("approve", cmd_approve, "review and approve a changed job"),
    ):
        p = sub.add_parser(
            name,
            help=text,
            description=f"{text[0].upper()}{text[1:]}.\n\n"
            f"example: shellagent jobs {name} backup-documents-1a2b3c",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        p.add_argument("job_id", metavar="ID")
        if name == "approve":
            p.add_argument("-y", "--yes", action="store_true", help="approve without asking")
        if name == "run":
            p.add_argument(
                "--preview",
                action="store_true",
                help="run on a copy of the job's writable paths and show what it would change; "
                "apply nothing",
            )
        p.set_defaults(func=func)
    add = sub.add_parser(
        "add",
        help="make a job from commands you give",
        description="Make a job from commands you give (the agent makes them from a\n"
        "conversation). Shows the job and asks before installing it.\n\nexample: shellagent "
        "jobs add backup --every week --on sun --at 03:00 --write ~/Backups -- \\\n"
        "    'tar czf ~/Backups/docs-$(date +%F).tgz -C ~ Documents'",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add.add_argument("name")
    add.add_argument("--every", required=True, help="hour, day, weekday, week or month")
    add.add_argument(
        "--hours",
        type=int,
        default=None,
        help="with --every hour: every N hours (2, 3, 4, 6, 8, 12)",
    )
    add.add_argument("--at", default="09:00", help="HH:MM (minute for hourly jobs)")
    add.add_argument("--on", default="mon", help="weekday for weekly jobs")
    add.add_argument("--day", type=int, default=1, help="day of month (1-28) for monthly jobs")
    add.add_argument(
        "--write",
        action="append",
        type=Path,
        default=[],
        metavar="PATH",
        help="a path the job may write (repeatable)",
    )
    add.add_argument("--network", action="store_true", help="the job needs the network")
    add.add_argument("-y", "--yes", action="store_true", help="install without asking")
    add.add_argument("commands", nargs="+", metavar="CMD")
    add.set_defaults(func=cmd_add)


def describe(job: Any) -> str:
    """A job as the user reviews it: every command shown exactly, hidden characters as
    flagged markers."""
    spec = job.schedule.schedule()
    lines = [
        f"job {job.id}: {shown(job.name)}",
        f"  runs      {spec.words()} (systemd OnCalendar={spec.on_calendar()}; cron {spec.cron()})",
        f"  in        {shown(job.workdir)}",
        f"  writes    {shown(', '.join(job.writable)) or 'nothing outside its sandbox'}",
        f"  network   {'yes' if job.network else 'no'}",
        "  commands:",
    ]
    for i, command in enumerate(job.commands, 1):
        text, flags = reveal(command)
        lines.append(f"    {i}. {text}")
        lines += [f"       ! warning: contains {flag}" for flag in flags]
    unapproved = job.unapproved()
    if unapproved:
        lines.append(f"  NOT APPROVED, it will not run: {unapproved}")
    return "\n".join(lines)


def _confirm(question: str, yes: bool) -> bool:
    if yes:
        return True
    if not sys.stdin.isatty():
        raise UsageError("no terminal to ask on", hint="pass -y to approve")
    return input(f"{question} [y/N] ").strip().lower() in {"y", "yes"}


def cmd_add(args: argparse.Namespace) -> int:
    from shellagent.jobs import Schedule, detect, install, make_job
    from shellagent.sandbox import validate_command

    for command in args.commands:
        validate_command(command)
    schedule = Schedule.parse(args.every, args.at, args.on, args.day, args.hours)
    scheduler = detect()  # no scheduler: said with the fix before anything is asked
    job = make_job(
        args.name,
        args.commands,
        schedule,
        workdir=Path.cwd(),
        writable=[p.resolve() for p in args.write],
        network=args.network,
    )
    print(describe(job))
    if not _confirm("install this job?", args.yes):
        print("not installed")
        return 1
    for item in install(job, scheduler):
        print(f"wrote {item}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from shellagent.jobs import all_jobs
    from shellagent.jobs.store import last_run

    jobs, problems = all_jobs()
    rows = []
    for job in jobs:
        last = last_run(job.id)
        rows.append(
            {
                "id": job.id,
                "name": job.name,
                "schedule": job.schedule.schedule().words(),
                "approved": job.approved,
                "last_run": last
                and datetime.fromtimestamp(last["at"]).isoformat(timespec="minutes"),
                "last_result": last and ("ok" if last["success"] else f"FAILED: {last['reason']}"),
                "next_run": job.schedule.schedule()
                .next_run(datetime.now())
                .isoformat(timespec="minutes"),
            }
        )
    for problem in problems:
        print(f"warning: {shown(problem)}", file=sys.stderr)
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return 0
    if not rows:
        print("no jobs (ask for something recurring, or see `shellagent jobs add --help`)")
        return 0
    for row in rows:
        state = "" if row["approved"] else "  NOT APPROVED"
        print(
            f"{row['id']}  {row['schedule']}  next {row['next_run']}  "
            f"last {row['last_run'] or 'never'} {row['last_result'] or ''}".rstrip()
            + state
        )
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from shellagent.jobs import load
    from shellagent.jobs.store import last_run

    job = load(args.job_id)
    print(describe(job))
    last = last_run(job.id)
    if last:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(last["at"]))
        print(
            f"  last run  {when}: {'ok' if last['success'] else 'FAILED'} "
            f"({shown(last['reason'])}); transcript {shown(last['transcript'])}"
        )
    return 0


def cmd_rm(args: argparse.Namespace) -> int:
    from shellagent.jobs import load, uninstall

    load(args.job_id)
    uninstall(args.job_id)
    print(f"removed job {args.job_id} and its schedule")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from shellagent.jobs import load, run_job

    result = run_job(load(args.job_id), preview=args.preview)
    if args.preview:
        # File names were written by the job's commands: shown, never obeyed.
        print(shown("\n".join(result.changes), lines=True))
        print("preview: nothing was applied")
    status = "ok" if result.success else "FAILED"
    print(
        f"job {result.job_id}: {status}: {shown(result.reason)} (transcript {result.transcript})",
        file=sys.stdout if result.success else sys.stderr,
    )
    return 0 if result.success else TaskFailed.exit_code


def cmd_approve(args: argparse.Namespace) -> int:
    from shellagent.jobs import load, save

    job = load(args.job_id)
    print(describe(job))
    if job.approved:
        print("already approved")
        return 0
    if not _confirm("approve these commands and grants?", args.yes):
        print("not approved")
        return 1
    job.approve()
    save(job)
    print("approved")
    return 0
