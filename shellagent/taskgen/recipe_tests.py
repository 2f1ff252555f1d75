"""Running the tests of recipes in the throwaway root, as task-set verification does.

Each test × each template becomes a task in the ``shell-tasks`` format: the test's setup,
its check as the success condition, and the rendered command as the one gold command. It
is verified by ``verify.verify_task``: the setup must exit 0, the check must fail before
(with no answer, and with the do-nothing agent's), the command must exit 0, and the check
must pass after, with ``$LAST_OUTPUT`` holding what the command printed. The final answer
is built from the output (``{out|count} lines of output``) so that it is never empty; a
check of a question reads ``$LAST_OUTPUT`` and must then refuse the task's own text given
back as the output (a check that does not look at the result fails there).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from shellagent.eval.tasks import Gold, Task
from shellagent.recipes import Recipe, SlotError, phrase, render
from shellagent.taskgen.verify import Verdict, verify_all, verify_task

__all__ = ["RecipeResult", "recipe_tasks", "run_recipe_tests"]

ANSWER = "{out|count} lines of output"


@dataclass(frozen=True)
class Failure:
    task: str  # recipe/test/template, numbered from 1
    step: str
    detail: str


@dataclass(frozen=True)
class RecipeResult:
    name: str
    runs: int
    failures: tuple[Failure, ...] = ()

    @property
    def ok(self) -> bool:
        return self.runs > 0 and not self.failures


def recipe_tasks(recipe: Recipe) -> tuple[list[Task], list[Failure]]:
    """The tasks of ``recipe``'s tests, and the failures of those that cannot be rendered."""
    tasks: list[Task] = []
    failed: list[Failure] = []
    for t, test in enumerate(recipe.tests, start=1):
        for i in range(len(recipe.templates)):
            ident = f"{recipe.name}/{t}/{i + 1}"
            try:
                command = render(recipe, test.args, i)
                text = phrase(recipe, test.args)
            except SlotError as exc:
                failed.append(Failure(ident, "render", exc.text()))
                continue
            tasks.append(
                Task(
                    id=ident,
                    task=text,
                    setup_commands=test.setup,
                    success_condition=test.check,
                    family=recipe.family,
                    gold=Gold(commands=(command,), answer_template=ANSWER),
                )
            )
    return tasks, failed


def run_recipe_tests(
    recipes: Sequence[Recipe],
    *,
    jobs: int = 2,
    cancel: threading.Event | None = None,
    on_result: Callable[[RecipeResult], None] | None = None,
    verify: Callable[[Task], Verdict] = verify_task,
) -> list[RecipeResult]:
    """Run every test of ``recipes`` (``jobs`` sandboxes at once); one result per recipe,
    in order. ``on_result`` hears of each recipe as soon as all its runs are known."""
    owner: list[int] = []
    tasks: list[Task] = []
    early: dict[int, list[Failure]] = {}
    for n, recipe in enumerate(recipes):
        made, failed = recipe_tasks(recipe)
        tasks += made
        owner += [n] * len(made)
        early[n] = failed
    left = [0] * len(recipes)
    for n in owner:
        left[n] += 1
    fails: dict[int, list[Failure]] = {n: list(f) for n, f in early.items()}
    lock = threading.Lock()
    results: dict[int, RecipeResult] = {}

    def finish(n: int) -> None:
        recipe = recipes[n]
        runs = len(recipe.tests) * len(recipe.templates)
        results[n] = RecipeResult(recipe.name, runs, tuple(fails[n]))
        if on_result is not None:
            on_result(results[n])

    for n in range(len(recipes)):
        if left[n] == 0:
            finish(n)
    index = {id(task): n for task, n in zip(tasks, owner, strict=True)}

    def heard(task: Task, verdict: Verdict, cached: bool) -> None:
        n = index[id(task)]
        with lock:
            if not verdict.ok:
                fails[n].append(Failure(task.id, verdict.step, verdict.detail))
            left[n] -= 1
            if left[n] == 0:
                finish(n)

    run = verify_all(tasks, jobs=jobs, cancel=cancel, on_verdict=heard, verify=verify)
    for n in range(len(recipes)):
        if n not in results:  # cut short: the runs not made count as failures
            fails[n].append(Failure(recipes[n].name, "not_run", "the run was interrupted"))
            finish(n)
    del run
    return [results[n] for n in range(len(recipes))]
