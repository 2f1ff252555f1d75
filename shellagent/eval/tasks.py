"""Task sets: the ``shell-tasks`` JSONL format, read and validated line by line.

One task per line::

    {"id": "st-0000", "task": "...", "setup_commands": ["mkdir -p /logs", ...],
     "success_condition": "[ -f /tmp/out.txt ]"}

Optional fields carry what a generated or hand-written task knows about itself: ``family``
(the generator family it came from), ``slots`` (the paths and names it was made with) and
``gold`` (commands that solve it, how the final answer is built from their output, answers
its check must refuse, and once verified what the commands printed and the answer built).
The success check may read the agent's final answer and the last command's output from
the files named by ``$ANSWER`` and ``$LAST_OUTPUT`` (see ``runner.py``).

A bad line (not JSON, a missing or unknown field, a wrong type, a repeated id) never stops a
run: it becomes a ``TaskProblem`` naming its line number and is skipped. A file whose name
ends in ``.gz`` is read through gzip.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from shellagent.errors import InputError


def _lists_to_tuples(value: object) -> object:
    # JSON has lists; strict mode would refuse to turn one into a tuple.
    return tuple(value) if isinstance(value, list) else value


class Observation(BaseModel):
    """What one gold command printed (stdout and stderr together) and its exit status."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    output: str
    exit_code: int


class Gold(BaseModel):
    """A known solution. ``answer_template`` builds the final answer from the commands'
    output (``{out}``, ``{out2|lines}``: see ``shellagent.taskgen.answers``);
    ``wrong_answers`` are answers the check must refuse. ``observations`` and ``answer``
    are filled in when the task is verified: the answer is the template applied to what
    the commands printed, never written by hand."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    commands: tuple[str, ...]
    answer_template: str = ""
    wrong_answers: tuple[str, ...] = ()
    observations: tuple[Observation, ...] = ()
    answer: str = ""
    plain: tuple[str, ...] = ()
    """Shorter commands of the same meaning (a recipe's plain form in place of its general
    one), kept only when they passed the check with the same output as ``commands``: what
    a worked example shows a small model (``shellagent.taskgen.plain``)."""

    @field_validator("commands")
    @classmethod
    def _some_commands(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value or not all(c.strip() for c in value):
            raise ValueError("must be a list of non-empty commands")
        return value

    @field_validator("commands", "wrong_answers", "observations", "plain", mode="before")
    @classmethod
    def _list_to_tuple(cls, value: object) -> object:
        return _lists_to_tuples(value)


class Task(BaseModel):
    """One task: an instruction, the commands that prepare the sandbox, and the check."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    id: str
    task: str
    setup_commands: tuple[str, ...]
    success_condition: str
    family: str | None = None
    slots: dict[str, str] = {}
    gold: Gold | None = None

    def to_line(self) -> str:
        """The task as one JSONL line (optional fields only when set), keys in field order."""
        return json.dumps(self.model_dump(mode="json", exclude_defaults=True), ensure_ascii=False)

    @field_validator("id", "task", "success_condition")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("setup_commands", mode="before")
    @classmethod
    def _list_to_tuple(cls, value: object) -> object:
        return _lists_to_tuples(value)


@dataclass(frozen=True)
class TaskProblem:
    """A line that was skipped, and why."""

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass(frozen=True)
class TaskSet:
    """The valid tasks of a file, in file order, and the lines that were skipped."""

    path: Path
    tasks: tuple[Task, ...]
    problems: tuple[TaskProblem, ...]


def _describe(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"]) or "line"
        message = "unknown field" if error["type"] == "extra_forbidden" else error["msg"]
        parts.append(f"{where}: {message}")
    return "; ".join(parts)


def parse_task_lines(lines: Sequence[str]) -> tuple[list[Task], list[TaskProblem]]:
    """Parse JSONL text lines (numbered from 1); blank lines are ignored."""
    tasks: list[Task] = []
    problems: list[TaskProblem] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(lines, start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except ValueError as exc:
            problems.append(TaskProblem(number, f"not valid JSON: {exc}"))
            continue
        if not isinstance(data, dict):
            problems.append(TaskProblem(number, "not a JSON object"))
            continue
        try:
            task = Task.model_validate(data)
        except ValidationError as exc:
            problems.append(TaskProblem(number, _describe(exc)))
            continue
        if task.id in seen:
            problems.append(
                TaskProblem(number, f"id {task.id!r} already used on line {seen[task.id]}")
            )
            continue
        seen[task.id] = number
        tasks.append(task)
    return tasks, problems


def load_tasks(path: Path | str) -> TaskSet:
    """Read a task file; an unreadable file is an ``InputError``, bad lines are problems."""
    path = Path(path)
    try:
        if path.name.endswith(".gz"):
            with gzip.open(path, "rt", encoding="utf-8") as f:
                text = f.read()
        else:
            text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(
            f"no task file {path}", hint="give the path of a .jsonl task set"
        ) from None
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise InputError(f"cannot read task file {path}: {exc}") from None
    tasks, problems = parse_task_lines(text.splitlines())
    return TaskSet(path=path, tasks=tuple(tasks), problems=tuple(problems))


def select_tasks(
    tasks: Sequence[Task],
    *,
    offset: int = 0,
    limit: int | None = None,
    ids: Sequence[str] | None = None,
) -> list[Task]:
    """Tasks named by ``ids`` (in file order; unknown ids are an error), then offset/limit."""
    if offset < 0 or (limit is not None and limit < 0):
        raise InputError("--offset and --limit must be 0 or more")
    chosen = list(tasks)
    if ids:
        known = {t.id for t in tasks}
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise InputError(
                f"no task with id {', '.join(unknown)}", hint='ids are the "id" field of a line'
            )
        wanted = set(ids)
        chosen = [t for t in chosen if t.id in wanted]
    chosen = chosen[offset:]
    return chosen if limit is None else chosen[:limit]
