"""Jobs as files the user can read: one TOML per job in the state dir, plus its run history.

``<state>/jobs/<id>.toml`` holds exactly what the user approved: the commands, the
schedule, the sandbox grants, and a keyed seal of the commands and grants at approval time
(``seal``). Run results go to ``<id>.runs.jsonl`` beside it, so the job file only changes
when the user changes it. A job file edited by hand no longer matches its seal and will not
run until ``shellagent jobs approve ID`` has shown the new commands and the user said yes.

A job's name is one line of visible text (``shellagent.chars``), at most ``NAME_MAX``
characters; it is shown to the user and kept out of every scheduler file (those name the
job by its id, a slug). The TOML is written by ``toml_string``, which escapes every
control and hidden character, so no value can add a line, a key or a table to the file.
"""

from __future__ import annotations

import hmac
import json
import os
import re
import secrets
import time
import tomllib
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, Required, TypedDict

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from shellagent import paths
from shellagent.agent.proposal import JobProposal
from shellagent.chars import check_text, kind
from shellagent.errors import ConfigError, InputError
from shellagent.jobs import seal
from shellagent.schedule import Schedule, Unit

JOB_VERSION = 1
NAME_MAX = 100
ID_PATTERN = r"[a-z0-9][a-z0-9-]{0,60}"


class ScheduleSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    every: Unit
    at: str = "09:00"
    on: str = "mon"
    day: int = 1
    step: int = 1  # hours between runs of an hourly job (written only when not 1)

    def schedule(self) -> Schedule:
        return Schedule.parse(self.every, self.at, self.on, self.day, self.step)


def check_name(name: str) -> str:
    """A job name, or ``InputError``: one line of visible text, at most ``NAME_MAX``."""
    return check_text(
        name,
        what="the job name",
        limit=NAME_MAX,
        hint="a job name is one line of visible text, e.g. 'backup documents'",
    )


def check_value(value: str, what: str) -> str:
    """A command or path the job keeps: text a file can hold (no NUL, no lone surrogate,
    as from a command line that was not UTF-8)."""
    if "\0" in value:
        raise InputError(f"{what} contains a NUL byte", hint="remove it")
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in value):
        raise InputError(f"{what} is not valid UTF-8 text", hint="write it as UTF-8")
    return value


def _as_value_error(check: Any, value: Any, *args: Any) -> Any:
    try:
        return check(value, *args)
    except InputError as exc:
        raise ValueError(exc.message) from None


class Job(BaseModel):
    model_config = ConfigDict(extra="forbid")
    v: int = JOB_VERSION
    id: str = Field(pattern=f"^{ID_PATTERN}$")
    name: str
    commands: list[str] = Field(min_length=1)
    schedule: ScheduleSpec
    workdir: str
    writable: list[str] = []
    network: bool = False
    profile: Literal["default"] = "default"
    created: str
    created_from: str = ""  # transcript id of the conversation that made the job
    approved_digest: str = ""

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return str(_as_value_error(check_name, value))

    @field_validator("commands", "writable")
    @classmethod
    def _values(cls, values: list[str]) -> list[str]:
        return [_as_value_error(check_value, v, "a command or path") for v in values]

    @field_validator("workdir")
    @classmethod
    def _workdir(cls, value: str) -> str:
        return str(_as_value_error(check_value, value, "the working directory"))

    def digest(self) -> str:
        """The seal of what the user approved: the job's id, its commands and every grant
        that shapes them, under this user's job key."""
        material = json.dumps(
            {
                "v": 1,
                "id": self.id,
                "commands": self.commands,
                "workdir": self.workdir,
                "writable": sorted(self.writable),
                "network": self.network,
                "profile": self.profile,
            },
            sort_keys=True,
        )
        return seal.seal(material.encode())

    def unapproved(self) -> str | None:
        """Why the job may not run as it is, or None when its seal matches."""
        if not self.approved_digest:
            return f"the job was never approved; review it with `shellagent jobs approve {self.id}`"
        if not seal.is_keyed(self.approved_digest):
            return (
                "the job was approved by an older shellagent, whose unkeyed digest anyone "
                f"could recompute; review it with `shellagent jobs approve {self.id}`"
            )
        if not hmac.compare_digest(self.approved_digest, self.digest()):
            return (
                "the job's commands or grants changed since they were approved (or the job "
                f"key was replaced); review them with `shellagent jobs approve {self.id}`"
            )
        return None

    @property
    def approved(self) -> bool:
        return self.unapproved() is None

    def approve(self) -> None:
        """Seal the job as it is now: the user has seen it and said yes."""
        self.approved_digest = self.digest()

    def proposal(self) -> JobProposal:
        """The job as it is shown to a person (``describe_job``)."""
        return JobProposal(
            name=self.name,
            commands=tuple(self.commands),
            schedule=self.schedule.schedule(),
            workdir=Path(self.workdir),
            writable=tuple(Path(w) for w in self.writable),
            network=self.network,
            created_from=self.created_from,
        )


def jobs_dir() -> Path:
    return paths.ensure_private_dir(paths.state_dir() / "jobs")


def new_id(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:32] or "job"
    return f"{slug}-{secrets.token_hex(3)}"


def make_job(
    name: str,
    commands: list[str],
    schedule: Schedule,
    *,
    workdir: Path,
    writable: list[Path],
    network: bool = False,
    created_from: str = "",
) -> Job:
    """A new job, sealed as approved; ``InputError`` for a name or command it cannot hold."""
    check_name(name)
    if not commands:
        raise InputError("a job needs at least one command")
    for number, command in enumerate(commands, 1):
        check_value(command, f"command {number}")
    for path in [workdir, *writable]:
        check_value(str(path), f"the path {str(path)!r:.60}")
    job = Job(
        id=new_id(name),
        name=name,
        commands=commands,
        schedule=ScheduleSpec(
            every=schedule.every,
            at=schedule.at,
            on=schedule.on,
            day=schedule.day,
            step=schedule.step,
        ),
        workdir=str(workdir),
        writable=[str(p) for p in writable],
        network=network,
        created=datetime.now().astimezone().isoformat(timespec="seconds"),
        created_from=created_from,
    )
    job.approve()
    return job


_TOML_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\f": "\\f",
    "\r": "\\r",
}


def toml_string(value: str) -> str:
    """``value`` as a TOML basic string that reads back exactly (``tomllib``).

    TOML forbids raw control characters in strings; every other character a terminal or
    an editor would hide (bidi controls, zero-width characters, separators, unusual
    spaces) is escaped too, as ``\\uXXXX`` or ``\\UXXXXXXXX``, so the file reads the
    same in ``cat`` as it does to shellagent. Written by hand rather than with a TOML
    library: the job file holds only strings, lists of strings, booleans and integers in a
    fixed layout with comments, and escaping a string is this one function, held to
    ``tomllib`` by a property test.
    """
    out = ['"']
    for ch in value:
        code = ord(ch)
        if ch in _TOML_ESCAPES:
            out.append(_TOML_ESCAPES[ch])
        elif 0xD800 <= code <= 0xDFFF:
            raise InputError("a job value is not valid UTF-8 text", hint="write it as UTF-8")
        elif kind(ch) is not None:
            out.append(f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def dumps(job: Job) -> str:
    spec = job.schedule.schedule()
    lines = [
        f"# shellagent job {job.id}",
        f"# runs {spec.words()} (systemd OnCalendar={spec.on_calendar()}, cron {spec.cron()})",
        "# Edit freely; changed commands or grants must be re-approved: shellagent jobs approve "
        + job.id,
        f"v = {job.v}",
        f"id = {toml_string(job.id)}",
        f"name = {toml_string(job.name)}",
        "commands = [",
        *[f"    {toml_string(c)}," for c in job.commands],
        "]",
        f"workdir = {toml_string(job.workdir)}",
        f"writable = [{', '.join(toml_string(w) for w in job.writable)}]",
        f"network = {'true' if job.network else 'false'}",
        f"profile = {toml_string(job.profile)}",
        f"created = {toml_string(job.created)}",
        f"created_from = {toml_string(job.created_from)}",
        f"approved_digest = {toml_string(job.approved_digest)}",
        "",
        "[schedule]",
        f"every = {toml_string(job.schedule.every)}",
        f"at = {toml_string(job.schedule.at)}",
        f"on = {toml_string(job.schedule.on)}",
        f"day = {job.schedule.day}",
        *([f"step = {job.schedule.step}"] if job.schedule.step != 1 else []),
        "",
    ]
    return "\n".join(lines)


def job_path(job_id: str) -> Path:
    if not re.fullmatch(ID_PATTERN, job_id):
        raise InputError(f"{job_id[:70]!r} is not a job id", hint="see `shellagent jobs list`")
    return jobs_dir() / f"{job_id}.toml"


def save(job: Job) -> Path:
    path = job_path(job.id)
    tmp = path.with_suffix(".toml.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(dumps(job))
    os.replace(tmp, path)
    return path


def load(job_id: str) -> Job:
    path = job_path(job_id)
    if not path.exists():
        raise InputError(f"no job {job_id!r}", hint="see `shellagent jobs list`")
    return load_file(path)


def load_file(path: Path) -> Job:
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(exc), path=str(path), hint="fix the file or remove the job") from exc
    try:
        job = Job.model_validate(data)
        job.schedule.schedule()
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        message = str(first["msg"]).removeprefix("Value error, ")
        raise ConfigError(
            f"{where}: {message}", path=str(path), hint="fix the file or remove the job"
        ) from exc
    except InputError as exc:
        raise ConfigError(f"schedule: {exc.message}", path=str(path)) from exc
    if job.v > JOB_VERSION:
        raise ConfigError(
            f"job format v{job.v} is newer than this shellagent understands",
            path=str(path),
            hint="upgrade shellagent",
        )
    return job


def all_jobs() -> tuple[list[Job], list[str]]:
    """Every readable job, and one line per job file that could not be read."""
    jobs, problems = [], []
    for path in sorted(jobs_dir().glob("*.toml")):
        try:
            jobs.append(load_file(path))
        except ConfigError as exc:
            problems.append(exc.message)
    return jobs, problems


class JobRun(TypedDict, total=False):
    """One line of a job's run history (``ID.runs.jsonl``), as ``record_run`` wrote it."""

    at: Required[float]  # when it ended (epoch seconds)
    success: Required[bool]
    reason: Required[str]
    transcript: str
    exit_codes: list[int]
    duration_s: float


def record_run(job_id: str, run: Mapping[str, object]) -> None:
    """Add ``run`` (a ``JobRun`` but its time, which is added) to the job's history."""
    path = jobs_dir() / f"{job_id}.runs.jsonl"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    from shellagent.transcript.redact import Redactor

    line = Redactor.from_environment().redact_record({"at": time.time(), **run})
    with os.fdopen(fd, "a") as f:
        f.write(json.dumps(line) + "\n")


def last_run(job_id: str) -> JobRun | None:
    path = jobs_dir() / f"{job_id}.runs.jsonl"
    if not path.exists():
        return None
    for line in reversed(path.read_text().splitlines()):
        try:
            run: JobRun = json.loads(line)
            return run
        except json.JSONDecodeError:
            continue
    return None


def remove(job_id: str) -> None:
    for path in (job_path(job_id), jobs_dir() / f"{job_id}.runs.jsonl"):
        path.unlink(missing_ok=True)
