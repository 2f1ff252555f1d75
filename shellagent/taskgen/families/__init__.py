"""The families, one module per area of shell work; importing this registers them all."""

from __future__ import annotations

from shellagent.taskgen.families import (  # noqa: F401 - imported to register
    archives,
    backups,
    data,
    dedup,
    disk,
    everyday_kinds,
    files,
    git,
    logs,
    misc,
    one_file,
    perms,
    procs,
    renames,
    schedules,
    selection,
    text,
    users,
)
from shellagent.taskgen.saving import register_twins

register_twins()  # "… and save it to FILE" for every family that asks questions
