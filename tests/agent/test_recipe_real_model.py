"""The embedded model under the per-task ``use`` grammar: its reply is a valid ``use`` of an
offered recipe whose values the recipe renders (run with the model lock held:
``flock /tmp/shellagent-model.lock pytest -m model …``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from shellagent.agent import AgentConfig, AutoApprover, Oversight, Parts, Recording, run_task
from shellagent.agent.actions import UseAction, parse_action
from shellagent.agent.recipe_step import RecipeBook
from shellagent.events import ModelTurn
from shellagent.policy import PolicyEngine
from shellagent.recipes import DATA_DIR, load, render
from shellagent.recipes.reading import read_task
from shellagent.recipes.shortlist import POOL, _with_endings
from shellagent.sandbox import Sandbox, get_profile
from shellagent.testing import MemorySink

pytestmark = [pytest.mark.model, pytest.mark.slow]

TASKS = [
    "which 2 files in the logs folder are the biggest?",
    "how many lines does notes.txt have",
    "count the .log files under logs",
]


@pytest.fixture(scope="module")
def backend() -> Iterator[Any]:
    from shellagent.model import load_backend

    model: Any = load_backend(None)
    yield model
    model.close()


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> RecipeBook:
    from shellagent.recipes.rank import Ranker

    recipes = dict(load([DATA_DIR]).recipes)
    cache = tmp_path_factory.mktemp("cache")
    return RecipeBook(recipes, Ranker.build(list(recipes.values()), cache), fits=-99.0)


@pytest.mark.parametrize("task", TASKS)
def test_the_embedded_model_fills_an_offered_recipe(
    backend: Any, book: RecipeBook, tmp_path: Path, task: str
) -> None:
    work = tmp_path / "work"
    (work / "logs").mkdir(parents=True)
    (work / "logs" / "a.log").write_text("x\n" * 300)
    (work / "logs" / "b.log").write_text("y\n")
    (work / "notes.txt").write_text("one\ntwo\nthree\n")
    sink = MemorySink()
    with Sandbox(get_profile("default", cwd=work), timeout=10) as shell:
        run_task(
            task,
            Parts(
                backend=backend,
                shell=shell,
                policy=PolicyEngine.load(workspace=work),
                config=AgentConfig(max_turns=2, dry_run=True, examples=0),
                recipes=book,
            ),
            Oversight(approver=AutoApprover()),
            Recording(sink=sink),
        )
    turn = sink.of_type(ModelTurn)[0]
    assert turn.valid is True and turn.stop == "end", turn.raw
    action = parse_action(turn.raw)
    assert isinstance(action, UseAction), turn.raw
    # the ranker's recipes, and those composed for the task ("how many .log files": a count)
    reading = read_task(task)
    ranked_words = book.ranker.rank(task, POOL, asked=reading.request)
    full, ranked = _with_endings(book, book.recipes, ranked_words, reading)
    assert action.use in [c.name for c in ranked]
    command = render(full[action.use], action.arguments)
    assert turn.action is not None and turn.action["cmd"] == command
