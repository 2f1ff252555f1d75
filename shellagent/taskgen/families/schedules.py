"""Cron-style schedules: add, read, move and disable jobs in /etc/cron.d files."""

from __future__ import annotations

from shellagent.taskgen.family import Draw, Instance, family
from shellagent.taskgen.sh import all_of, has, join, lacks, mkdir, path, q, write

# (how a user says it, the five cron fields, which values of field 5 mean the same)
WHEN = (
    ("every day at {h}:{m:02d}", "{m} {h} * * *"),
    ("every Monday at {h}:{m:02d}", "{m} {h} * * 1"),
    ("every Sunday at {h}:{m:02d}", "{m} {h} * * 0"),
    ("on the first day of every month at {h}:{m:02d}", "{m} {h} 1 * *"),
    ("every hour at {m} minutes past", "{m} * * * *"),
    ("every 15 minutes", "*/15 * * * *"),
)
DAY_NAMES = {"1": ("1", "mon"), "0": ("0", "7", "sun")}
SCRIPTS = ("backup.sh", "cleanup.sh", "report.sh", "sync.sh", "rotate-logs.sh", "healthcheck.sh")


def _when(d: Draw) -> tuple[str, list[str]]:
    spoken, fields = d.pick(WHEN)
    h, m = d.num(0, 23), d.pick((0, 5, 15, 30, 45, 10, 20))
    return spoken.format(h=h, m=m), fields.format(h=h, m=m).split()


def _matches(fields: list[str], user: str | None, command: str) -> str:
    """awk conditions: a line whose schedule, user and command are these."""
    conds = []
    for i, value in enumerate(fields, start=1):
        if i == 5 and value in DAY_NAMES:
            conds.append(
                "(" + " || ".join(f'tolower(${i}) == "{v}"' for v in DAY_NAMES[value]) + ")"
            )
        elif value.isdigit():
            conds.append(f"${i} + 0 == {value}")
        else:
            conds.append(f'${i} == "{value}"')
    n = 6
    if user is not None:
        conds.append(f'$6 == "{user}"')
        n = 7
    conds.append(f'${n} == "{command}"')
    return " && ".join(conds)


def _jobs(d: Draw, k: int, app: str) -> list[tuple[list[str], str]]:
    scripts = d.sample(SCRIPTS, k)
    jobs = []
    for script in scripts:
        _, fields = _when(d)
        jobs.append((fields, f"/opt/{app}/bin/{script}"))
    return jobs


@family("cron_add_job", "schedules", "schedule a script in /etc/cron.d")
def cron_add_job(d: Draw) -> Instance:
    app = d.service()
    script = f"/opt/{app}/bin/{d.pick(SCRIPTS)}"
    spoken, fields = _when(d)
    user = d.pick(("root", "www-data", "backup"))
    file = f"/etc/cron.d/{app}"
    task = d.phrase(
        (
            "Schedule {script} to run {when} as {user}, in a cron file {file}.",
            "Add a cron job in {file} that runs {script} {when} (user {user}).",
            "I want {script} run {when} by {user}. Put the job in {file}.",
        ),
        script=script,
        when=spoken,
        user=user,
        file=file,
    )
    found = "{ found = 1 } END { exit !found }"
    awk = f"awk '!/^[[:space:]]*#/ && {_matches(fields, user, script)} {found}'"
    use = d.recipe("cron_add_job", schedule=" ".join(fields), user=user, script=script, file=file)
    return Instance(
        task=task,
        setup=(mkdir("/etc/cron.d", f"/opt/{app}/bin"), f"printf '#!/bin/sh\\n' > {path(script)}"),
        gold=(use.command, f"cat {path(file)}"),
        check=all_of(f"[ -f {path(file)} ]", f"{awk} {path(file)}"),
        answer=f"Added to {file}: {{out}}",
        slots={"file": file, "script": script, "user": user},
        recipes=(use,),
    )


@family("cron_which_script", "schedules", "which job runs at a given time")
def cron_which_script(d: Draw) -> Instance:
    app = d.service()
    file = f"/etc/cron.d/{app}"
    scripts = [f"/opt/{app}/bin/{s}" for s in d.sample(SCRIPTS, d.num(3, 5))]
    times = d.sample([(h, m) for h in range(24) for m in (0, 15, 30, 45)], len(scripts))
    lines = ["SHELL=/bin/sh", "# m h dom mon dow user command"]
    lines += [f"{m} {h} * * * root {s}" for (h, m), s in zip(times, scripts, strict=True)]
    (h, m), script, others = times[0], scripts[0], scripts[1:]
    clock = f"{h:02d}:{m:02d}"
    task = d.phrase(
        (
            "Which script does {file} run every day at {clock}?",
            "According to {file}, what runs daily at {clock}?",
            "What's scheduled for {clock} in the cron file {file}?",
        ),
        file=file,
        clock=clock,
    )
    use = d.recipe("cron_which_script", time=clock, file=file)
    return Instance(
        task=task,
        setup=(mkdir("/etc/cron.d"), write(file, *d.shuffled(lines[2:]))),
        gold=(use.command,),
        check=all_of(has(script), lacks(*others)),
        answer=f"At {clock} every day: {{out}}",
        slots={"file": file},
        wrong_answers=(", ".join(others),),
        kind="question",
        recipes=(use,),
    )


@family("cron_disable", "schedules", "comment out one cron job")
def cron_disable(d: Draw) -> Instance:
    app = d.service()
    file = f"/etc/cron.d/{app}"
    jobs = _jobs(d, d.num(2, 4), app)
    lines = [" ".join(f + ["root", s]) for f, s in jobs]
    target = jobs[0][1]
    task = d.phrase(
        (
            "Disable the cron job in {file} that runs {script}: comment it out and keep the "
            "other jobs.",
            "Turn off {script} in {file} (comment its line out, leave the rest).",
        ),
        file=file,
        script=target,
    )
    active = "grep -v '^[[:space:]]*#' " + path(file)
    use = d.recipe("cron_disable", script=target, file=file)
    return Instance(
        task=task,
        setup=(mkdir("/etc/cron.d"), write(file, *d.shuffled(lines))),
        gold=(use.command, f"cat {path(file)}"),
        check=all_of(
            f"! {active} | grep -qF -- {q(target)}",
            f"grep -q '^[[:space:]]*#.*{target}' {path(file)}",
            *(f"{active} | grep -qF -- {q(s)}" for _, s in jobs[1:]),
        ),
        answer=f"Commented out; {file} now reads: {{out|lines}}",
        slots={"file": file, "script": target},
        recipes=(use,),
    )


@family("cron_change_time", "schedules", "move a daily cron job to another time")
def cron_change_time(d: Draw) -> Instance:
    app = d.service()
    file = join("/etc/cron.d", app)
    script = f"/opt/{app}/bin/{d.pick(SCRIPTS)}"
    (h1, m1), (h2, m2) = [(d.num(0, 23), d.pick((0, 15, 30, 45))) for _ in range(2)]
    if (h1, m1) == (h2, m2):
        h2 = (h2 + 1) % 24
    other = f"/opt/{app}/bin/status.sh"
    lines = [f"{m1} {h1} * * * root {script}", f"*/10 * * * * root {other}"]
    task = d.phrase(
        (
            "In {file}, move the daily {script} job from {t1} to {t2}.",
            "{script} should run at {t2} every day instead of {t1}. Update {file}.",
        ),
        file=file,
        script=script,
        t1=f"{h1:02d}:{m1:02d}",
        t2=f"{h2:02d}:{m2:02d}",
    )
    moved = _matches([str(m2), str(h2), "*", "*", "*"], "root", script)
    awk = f"awk '!/^[[:space:]]*#/ && {moved} {{ n++ }} END {{ exit n != 1 }}'"
    use = d.recipe("cron_change_time", script=script, time=f"{h2:02d}:{m2:02d}", file=file)
    return Instance(
        task=task,
        setup=(mkdir("/etc/cron.d"), write(file, *lines)),
        gold=(
            use.command,
            f"cat {path(file)}",
        ),
        check=all_of(
            f"{awk} {path(file)}",
            f"[ \"$(grep -v '^[[:space:]]*#' {path(file)} | grep -cF -- {q(script)})\" -eq 1 ]",
            f"grep -qF -- {q(other)} {path(file)}",
        ),
        answer=f"{file} now reads: {{out|lines}}",
        slots={"file": file, "script": script},
        recipes=(use,),
    )
