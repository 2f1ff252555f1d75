"""The everyday answer-checked set: 50+ questions, judged on the answer, with controls."""

from __future__ import annotations

from pathlib import Path

import pytest

from shellagent.eval import NothingAgent, RunConfig, Task, load_tasks, run_eval
from shellagent.taskgen import GoldAgent, everyday_path, everyday_tasks
from shellagent.taskgen.everyday_home import home_setup
from shellagent.taskgen.verify import NOTHING_ANSWER

from .conftest import answer_passes


def shipped() -> list[Task]:
    task_set = load_tasks(everyday_path())
    assert task_set.problems == ()
    return list(task_set.tasks)


def test_the_shipped_set_is_the_hand_written_set_verified() -> None:
    built = everyday_tasks()
    tasks = shipped()
    assert len(tasks) == len(built) >= 50
    for task, source in zip(tasks, built, strict=True):
        assert task.gold is not None and task.gold.answer and task.gold.observations
        bare = task.model_copy(
            update={"gold": task.gold.model_copy(update={"observations": (), "answer": ""})}
        )
        assert bare == source


def test_every_task_is_judged_on_what_the_agent_reports() -> None:
    for task in shipped():
        assert "$ANSWER" in task.success_condition, task.id
        assert task.gold is not None and len(task.gold.wrong_answers) >= 2, task.id
        assert task.setup_commands[:4] == home_setup(), task.id


def test_the_verified_answer_passes_and_wrong_or_invented_answers_fail() -> None:
    for task in shipped():
        gold = task.gold
        assert gold is not None
        last = gold.observations[-1].output
        assert answer_passes(task.success_condition, gold.answer, last), task.id
        assert answer_passes(task.success_condition, gold.answer, ""), task.id
        for wrong in ("", NOTHING_ANSWER, task.task, *gold.wrong_answers):
            assert not answer_passes(task.success_condition, wrong, wrong), (task.id, wrong)


@pytest.mark.slow
def test_the_do_nothing_agent_solves_none_and_the_gold_agent_all(tmp_path: Path) -> None:
    tasks = shipped()
    nothing = run_eval(tasks, NothingAgent(), RunConfig(transcripts_dir=tmp_path / "n"), jobs=2)
    assert [r.status for r in nothing.results] == ["failed"] * len(tasks), [
        (r.id, r.detail) for r in nothing.results if r.status != "failed"
    ]
    gold = run_eval(tasks, GoldAgent(), RunConfig(transcripts_dir=tmp_path / "g"), jobs=2)
    unsolved = [(r.id, r.status, r.detail) for r in gold.results if r.status != "solved"]
    assert not unsolved and len(gold.results) == len(tasks), unsolved
