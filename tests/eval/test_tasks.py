from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from shellagent.errors import InputError
from shellagent.eval import load_tasks, parse_task_lines, select_tasks

from .conftest import make_task

GOOD = {"id": "a", "task": "t", "setup_commands": ["true"], "success_condition": "false"}


def test_every_dev_task_loads_without_problems(dev_tasks: Path) -> None:
    task_set = load_tasks(dev_tasks)
    assert len(task_set.tasks) == 300 and task_set.problems == ()
    assert task_set.tasks[0].id == "st-0000"
    assert isinstance(task_set.tasks[0].setup_commands, tuple)


def test_bad_lines_are_skipped_and_named_by_line_number(
    write_tasks: Callable[..., Path],
) -> None:
    path = write_tasks(
        GOOD,
        "{not json",
        {"id": "b", "task": "t", "setup_commands": []},
        {**GOOD, "id": "c", "setup_commands": "mkdir /x"},
        {**GOOD, "id": "d", "extra": 1},
        "[1, 2]",
        {**GOOD, "id": 5},
        "",
        GOOD,
        {**GOOD, "id": "e", "setup_commands": ["ok", 3]},
        {**GOOD, "id": "f"},
    )
    task_set = load_tasks(path)
    assert [t.id for t in task_set.tasks] == ["a", "f"]
    problems = {p.line: p.message for p in task_set.problems}
    assert sorted(problems) == [2, 3, 4, 5, 6, 7, 9, 10]
    assert "not valid JSON" in problems[2]
    assert "success_condition" in problems[3] and "required" in problems[3].lower()
    assert "setup_commands" in problems[4]
    assert "extra: unknown field" in problems[5]
    assert problems[6] == "not a JSON object"
    assert problems[7].startswith("id:")
    assert "already used on line 1" in problems[9]
    assert "setup_commands.1" in problems[10]
    assert str(task_set.problems[0]).startswith("line 2: ")


def test_blank_fields_are_refused() -> None:
    tasks, problems = parse_task_lines(
        ['{"id": "x", "task": " ", "setup_commands": [], "success_condition": "true"}']
    )
    assert tasks == [] and "task: " in problems[0].message


def test_a_missing_task_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no task file"):
        load_tasks(tmp_path / "nope.jsonl")


def test_selection_by_ids_keeps_file_order_then_applies_offset_and_limit() -> None:
    tasks = [make_task(f"t{i}") for i in range(6)]
    assert [t.id for t in select_tasks(tasks, offset=1, limit=2)] == ["t1", "t2"]
    chosen = select_tasks(tasks, ids=["t4", "t1", "t5"], offset=1)
    assert [t.id for t in chosen] == ["t4", "t5"]
    with pytest.raises(InputError, match="no task with id nine"):
        select_tasks(tasks, ids=["nine"])


GENERATED = {
    **GOOD,
    "id": "g",
    "family": "largest_files",
    "slots": {"dir": "~/Downloads"},
    "gold": {
        "commands": ["ls -S ~/Downloads | head -1"],
        "answer_template": "The largest file is {out}.",
        "wrong_answers": ["notes.txt"],
        "observations": [{"output": "movie.mkv\n", "exit_code": 0}],
        "answer": "The largest file is movie.mkv.",
    },
}


def test_a_line_with_family_slots_and_gold_loads_and_writes_back_unchanged(
    write_tasks: Callable[..., Path],
) -> None:
    task_set = load_tasks(write_tasks(GENERATED))
    (task,) = task_set.tasks
    assert task.gold is not None and task.gold.observations[0].output == "movie.mkv\n"
    assert task.slots == {"dir": "~/Downloads"} and task.family == "largest_files"
    assert json.loads(task.to_line()) == GENERATED
    plain = load_tasks(write_tasks(GOOD, name="plain.jsonl")).tasks[0]
    assert json.loads(plain.to_line()) == GOOD


def test_bad_gold_fields_are_problems_of_their_line(write_tasks: Callable[..., Path]) -> None:
    gold = GENERATED["gold"]
    assert isinstance(gold, dict)
    path = write_tasks(
        {**GENERATED, "id": "no-commands", "gold": {**gold, "commands": []}},
        {**GENERATED, "id": "typo", "gold": {**gold, "answr": "x"}},
        {**GENERATED, "id": "slot", "slots": {"n": 5}},
        {**GENERATED, "id": "bad-obs", "gold": {**gold, "observations": [{"output": 1}]}},
        GENERATED,
    )
    task_set = load_tasks(path)
    assert [t.id for t in task_set.tasks] == ["g"]
    messages = [p.message for p in task_set.problems]
    assert "gold.commands" in messages[0] and "gold.answr: unknown field" in messages[1]
    assert "slots.n" in messages[2] and "gold.observations" in messages[3]


def test_a_gzipped_task_file_is_read_and_a_broken_one_is_an_input_error(
    tmp_path: Path,
) -> None:
    path = tmp_path / "set.jsonl.gz"
    path.write_bytes(gzip.compress((json.dumps(GENERATED) + "\n").encode()))
    assert [t.id for t in load_tasks(path).tasks] == ["g"]
    broken = tmp_path / "broken.jsonl.gz"
    broken.write_bytes(b"not gzip at all")
    with pytest.raises(InputError, match="cannot read task file"):
        load_tasks(broken)
