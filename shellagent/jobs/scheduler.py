"""Handing jobs to the operating system's scheduler: systemd user timers, else cron.

shellagent never runs its own clock. A systemd user timer (``Persistent=true``, so a run
missed while the machine was off happens at the next boot) or a crontab line calls
``shellagent jobs run ID``. Installing and removing are idempotent and done by shellagent
itself, outside any sandbox. ``SHELLAGENT_SCHEDULER`` (systemd | cron | none),
``SHELLAGENT_SYSTEMD_UNIT_DIR``, ``SHELLAGENT_SYSTEMCTL`` and ``SHELLAGENT_CRONTAB``
point it elsewhere (tests use them; so can a user with an unusual setup).

Nothing a model or a user named goes into these files: a unit or a crontab line names the
job by its id (a slug of ``[a-z0-9-]``) and carries only the Python path, the id and the
``SHELLAGENT_*`` variables. Those are written with each format's own quoting: in a unit,
double quotes with ``\\`` and ``\"`` escaped, ``%`` doubled (specifiers) and, in
``ExecStart=`` arguments, ``$`` doubled (variable expansion); in a crontab line, shell quoting with
``%`` escaped (cron turns a bare ``%`` into a newline). A value holding a control
character cannot be written in either and is refused with the variable's name.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Protocol

from shellagent.chars import kind
from shellagent.errors import EnvironmentProblem
from shellagent.jobs.store import ID_PATTERN, Job

UNIT_PREFIX = "shellagent-job-"
CRON_MARK = "# shellagent-job:"
_PLAIN = re.compile(r"[A-Za-z0-9_./:@+,=-]+")
_ENV_NAME = re.compile(r"SHELLAGENT_[A-Z0-9_]+")


def run_argv(job_id: str) -> list[str]:
    """How the scheduler starts a run: this Python, this package, no PATH lookup."""
    if not re.fullmatch(ID_PATTERN, job_id):
        raise EnvironmentProblem(f"{job_id[:70]!r} is not a job id")
    return [_writable("the Python path", sys.executable), "-m", "shellagent", "jobs", "run", job_id]


def _writable(what: str, value: str) -> str:
    """``value`` if a unit file or a crontab line can carry it (no control characters)."""
    if any(kind(ch) in ("control", "newline", "tab", "return", "escape") for ch in value):
        raise EnvironmentProblem(
            f"{what} holds a control character, which a unit file or crontab cannot carry",
            hint="fix or unset it, then add the job again",
        )
    return value


def _env_overrides() -> dict[str, str]:
    found = {}
    for key, value in sorted(os.environ.items()):
        if not key.startswith("SHELLAGENT_"):
            continue
        if not _ENV_NAME.fullmatch(key):
            raise EnvironmentProblem(
                f"the variable {key[:40]!r} is not a name a unit file or crontab can carry",
                hint="unset it, then add the job again",
            )
        found[key] = _writable(key, value)
    return found


def unit_word(arg: str, *, dollars: bool = False) -> str:
    """One word of a systemd unit setting: as is when plain, else double-quoted with
    systemd's escapes and ``%`` doubled (specifiers). ``dollars`` also doubles ``$``: an
    ``ExecStart=`` argument after the first is expanded by systemd, the executable and an
    ``Environment=`` value are not."""
    if _PLAIN.fullmatch(arg):
        return arg
    quoted = arg.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    if dollars:
        quoted = quoted.replace("$", "$$")
    return f'"{quoted}"'


def exec_line(argv: list[str]) -> str:
    """``argv`` as the value of ``ExecStart=``: an absolute executable, then its arguments."""
    if not argv[0].startswith("/"):
        raise EnvironmentProblem(
            f"the Python path {argv[0][:60]!r} is not absolute",
            hint="run shellagent by its full path",
        )
    if set(argv[0]) & set("\"'\\"):
        raise EnvironmentProblem(  # systemd refuses these in an executable's name
            f"systemd cannot run {argv[0][:60]!r}: its path holds a quote or a backslash",
            hint="install shellagent under a plainer path, or SHELLAGENT_SCHEDULER=cron",
        )
    return " ".join([unit_word(argv[0]), *(unit_word(a, dollars=True) for a in argv[1:])])


def cron_word(arg: str) -> str:
    """One word of a crontab command: shell-quoted, with ``%`` escaped for cron.

    cron reads ``\\%`` as ``%`` and keeps every other backslash, so a backslash right
    before a ``%`` cannot be written at all: such a value is refused."""
    if "\\%" in arg:
        raise EnvironmentProblem(
            f"{arg[:60]!r} holds a backslash before a %, which a crontab line cannot carry",
            hint="change that value, or use systemd timers (SHELLAGENT_SCHEDULER=systemd)",
        )
    return shlex.quote(arg).replace("%", "\\%")


class Scheduler(Protocol):
    name: str

    def install(self, job: Job) -> list[Path | str]: ...
    def remove(self, job_id: str) -> None: ...
    def describe(self) -> str: ...


class SystemdScheduler:
    name = "systemd"

    def __init__(self, unit_dir: Path | None = None, systemctl: str | None = None) -> None:
        default = Path.home() / ".config/systemd/user"
        self.unit_dir = unit_dir or Path(os.environ.get("SHELLAGENT_SYSTEMD_UNIT_DIR", default))
        self.systemctl = systemctl or os.environ.get("SHELLAGENT_SYSTEMCTL", "systemctl")

    def _ctl(self, *args: str) -> None:
        proc = subprocess.run(
            [self.systemctl, "--user", *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        if proc.returncode != 0:
            raise EnvironmentProblem(
                f"systemctl --user {' '.join(args)} failed: {proc.stderr.strip()}",
                hint="check `systemctl --user status`",
            )

    def unit_texts(self, job: Job) -> dict[str, str]:
        spec = job.schedule.schedule()
        argv = run_argv(job.id)
        env = "".join(f"Environment={unit_word(f'{k}={v}')}\n" for k, v in _env_overrides().items())
        service = (
            "[Unit]\n"
            f"Description=shellagent job {job.id}\n\n"
            "[Service]\n"
            "Type=oneshot\n"
            f"{env}"
            f"ExecStart={exec_line(argv)}\n"
        )
        timer = (
            "[Unit]\n"
            f"Description=shellagent job {job.id}: {spec.words()}\n\n"
            "[Timer]\n"
            f"OnCalendar={spec.on_calendar()}\n"
            "Persistent=true\n\n"
            "[Install]\n"
            "WantedBy=timers.target\n"
        )
        return {f"{UNIT_PREFIX}{job.id}.service": service, f"{UNIT_PREFIX}{job.id}.timer": timer}

    def install(self, job: Job) -> list[Path | str]:
        texts = self.unit_texts(job)  # refused values leave nothing behind
        self.unit_dir.mkdir(parents=True, exist_ok=True)
        written: list[Path | str] = []
        for name, text in texts.items():
            path = self.unit_dir / name
            if not path.exists() or path.read_text() != text:
                path.write_text(text)
            written.append(path)
        self._ctl("daemon-reload")
        self._ctl("enable", "--now", f"{UNIT_PREFIX}{job.id}.timer")
        return written

    def remove(self, job_id: str) -> None:
        timer = self.unit_dir / f"{UNIT_PREFIX}{job_id}.timer"
        if timer.exists():
            self._ctl("disable", "--now", timer.name)
        for suffix in (".timer", ".service"):
            (self.unit_dir / f"{UNIT_PREFIX}{job_id}{suffix}").unlink(missing_ok=True)
        self._ctl("daemon-reload")

    def describe(self) -> str:
        return f"systemd user timers in {self.unit_dir}"


class CronScheduler:
    name = "cron"

    def __init__(self, crontab: str | None = None) -> None:
        self.crontab = crontab or os.environ.get("SHELLAGENT_CRONTAB", "crontab")

    def _read(self) -> list[str]:
        proc = subprocess.run(
            [self.crontab, "-l"], capture_output=True, text=True, check=False, timeout=30
        )
        return proc.stdout.splitlines() if proc.returncode == 0 else []

    def _write(self, lines: list[str]) -> None:
        text = "\n".join(lines) + "\n" if lines else ""
        proc = subprocess.run(
            [self.crontab, "-"], input=text, capture_output=True, text=True, check=False, timeout=30
        )
        if proc.returncode != 0:
            raise EnvironmentProblem(f"crontab could not be written: {proc.stderr.strip()}")

    def line(self, job: Job) -> str:
        env = " ".join(cron_word(f"{k}={v}") for k, v in _env_overrides().items())
        command = " ".join(cron_word(a) for a in run_argv(job.id))
        prefix = f"{env} " if env else ""
        return (
            f"{job.schedule.schedule().cron()} {prefix}{command} >/dev/null 2>&1 "
            f"{CRON_MARK}{job.id}"
        )

    def install(self, job: Job) -> list[Path | str]:
        mark = f"{CRON_MARK}{job.id}"
        lines = [ln for ln in self._read() if not ln.endswith(mark)]
        new = self.line(job)
        self._write([*lines, new])
        return [f"crontab: {new}"]

    def remove(self, job_id: str) -> None:
        lines = self._read()
        kept = [ln for ln in lines if not ln.endswith(f"{CRON_MARK}{job_id}")]
        if kept != lines:
            self._write(kept)

    def describe(self) -> str:
        return "cron (crontab lines marked with the job id)"


def _systemd_user_session() -> bool:
    if not shutil.which("systemctl"):
        return False
    proc = subprocess.run(
        ["systemctl", "--user", "is-system-running"],
        capture_output=True,
        text=True,
        check=False,
        timeout=10,
    )
    return proc.stdout.strip() in {"running", "degraded", "starting"}


NO_SCHEDULER_FIX = (
    "install cron (sudo apt-get install cron), or give yourself a systemd user session "
    "that runs when you are logged out (sudo loginctl enable-linger $USER)"
)


def detect() -> Scheduler:
    """The scheduler in use here, or EnvironmentProblem with what to install."""
    choice = os.environ.get("SHELLAGENT_SCHEDULER", "")
    if choice == "systemd" or (not choice and _systemd_user_session()):
        return SystemdScheduler()
    if choice == "cron" or (not choice and shutil.which("crontab")):
        return CronScheduler()
    raise EnvironmentProblem(
        "no scheduler: there is no systemd user session and no crontab command",
        hint=NO_SCHEDULER_FIX,
    )
