"""Jobs as files the user can read: one TOML per job in the state dir, plus its run history.

``<state>/jobs/<id>.toml`` holds exactly what the user approved: the commands, the
schedule, the sandbox grants, and a digest of the commands at approval time. Run results
go to ``<id>.runs.jsonl`` beside it, so the job file only changes when the user changes it.
A job file edited by hand no longer matches its digest and will not run until
``shellagent jobs approve ID`` has shown the new commands and the user said yes.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import time
import tomllib
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from shellagent import paths
from shellagent.errors import ConfigError, InputError
from shellagent.jobs.schedule import Schedule

JOB_VERSION = 1


class ScheduleSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    every: Literal["hour", "day", "week", "month"]
    at: str = "09:00"
    on: str = "mon"
    day: int = 1

    def schedule(self) -> Schedule:
        return Schedule.parse(self.every, self.at, self.on, self.day)


class Job(BaseModel):
    model_config = ConfigDict(extra="forbid")
    v: int = JOB_VERSION
    id: str
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

    def digest(self) -> str:
        """What the user approved: the commands and every grant that shapes them."""
        material = json.dumps([self.commands, self.workdir, sorted(self.writable), self.network,
                               self.profile])
        return hashlib.sha256(material.encode()).hexdigest()

    @property
    def approved(self) -> bool:
        return self.approved_digest == self.digest()


def jobs_dir() -> Path:
    return paths.ensure_private_dir(paths.state_dir() / "jobs")


def new_id(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:32] or "job"
    return f"{slug}-{secrets.token_hex(3)}"


def make_job(name: str, commands: list[str], schedule: Schedule, *, workdir: Path,
             writable: list[Path], network: bool = False, created_from: str = "") -> Job:
    job = Job(
        id=new_id(name), name=name, commands=commands,
        schedule=ScheduleSpec(every=schedule.every,  # type: ignore[arg-type]
                              at=schedule.at, on=schedule.on, day=schedule.day),
        workdir=str(workdir), writable=[str(p) for p in writable], network=network,
        created=datetime.now().astimezone().isoformat(timespec="seconds"),
        created_from=created_from,
    )
    job.approved_digest = job.digest()
    return job


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def dumps(job: Job) -> str:
    spec = job.schedule.schedule()
    lines = [
        f"# shellagent job: {job.name}",
        f"# runs {spec.words()} (systemd OnCalendar={spec.on_calendar()}, cron {spec.cron()})",
        "# Edit freely; changed commands or grants must be re-approved: shellagent jobs approve "
        + job.id,
        f"v = {job.v}",
        f"id = {_toml_string(job.id)}",
        f"name = {_toml_string(job.name)}",
        "commands = [",
        *[f"    {_toml_string(c)}," for c in job.commands],
        "]",
        f"workdir = {_toml_string(job.workdir)}",
        f"writable = [{', '.join(_toml_string(w) for w in job.writable)}]",
        f"network = {'true' if job.network else 'false'}",
        f"profile = {_toml_string(job.profile)}",
        f"created = {_toml_string(job.created)}",
        f"created_from = {_toml_string(job.created_from)}",
        f"approved_digest = {_toml_string(job.approved_digest)}",
        "",
        "[schedule]",
        f"every = {_toml_string(job.schedule.every)}",
        f"at = {_toml_string(job.schedule.at)}",
        f"on = {_toml_string(job.schedule.on)}",
        f"day = {job.schedule.day}",
        "",
    ]
    return "\n".join(lines)


def job_path(job_id: str) -> Path:
    if not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,60}", job_id):
        raise InputError(f"{job_id!r} is not a job id", hint="see `shellagent jobs list`")
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
        raise ConfigError(f"{where}: {first['msg']}", path=str(path),
                          hint="fix the file or remove the job") from exc
    except InputError as exc:
        raise ConfigError(f"schedule: {exc.message}", path=str(path)) from exc
    if job.v > JOB_VERSION:
        raise ConfigError(f"job format v{job.v} is newer than this shellagent understands",
                          path=str(path), hint="upgrade shellagent")
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


def record_run(job_id: str, run: dict[str, Any]) -> None:
    path = jobs_dir() / f"{job_id}.runs.jsonl"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    with os.fdopen(fd, "a") as f:
        f.write(json.dumps({"at": time.time(), **run}) + "\n")


def last_run(job_id: str) -> dict[str, Any] | None:
    path = jobs_dir() / f"{job_id}.runs.jsonl"
    if not path.exists():
        return None
    for line in reversed(path.read_text().splitlines()):
        try:
            run: dict[str, Any] = json.loads(line)
            return run
        except json.JSONDecodeError:
            continue
    return None


def remove(job_id: str) -> None:
    for path in (job_path(job_id), jobs_dir() / f"{job_id}.runs.jsonl"):
        path.unlink(missing_ok=True)
