"""Running the tests of recipes in the throwaway root, as task-set verification does.

Each test × each template becomes a task in the ``shell-tasks`` format: the test's setup,
its check as the success condition, and the rendered command as the one gold command. It
is verified by ``verify.verify_task``: the setup must exit 0, the check must fail before
(with no answer, and with the do-nothing agent's), the command must exit 0, and the check
must pass after, with ``$LAST_OUTPUT`` holding what the command printed. The final answer
is built from the output (``{out|count} lines of output``) so that it is never empty; a
check of a question reads ``$LAST_OUTPUT`` and must then refuse the task's own text given
back as the output (a check that does not look at the result fails there).

A recipe that names its task ``family`` and maps the family's instance slots to its own
(``family_args``) is also tried on ``instances`` drawn instances of that family: the
instance's setup and check, the recipe's command rendered with the mapped values (each
template in turn), and the instance's answer template when it fits one command (else the
count of output lines, for a check that looks at the state).
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from shellagent.eval.tasks import Gold, Task
from shellagent.recipes import Recipe, SlotError, phrase, render
from shellagent.taskgen.answers import TemplateError, check_template
from shellagent.taskgen.family import FAMILIES, Draw
from shellagent.taskgen.verify import Verdict, verify_all, verify_task

__all__ = ["Failure", "RecipeResult", "family_tasks", "recipe_tasks", "run_recipe_tests"]

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


def family_tasks(recipe: Recipe, instances: int, seed: int = 0) -> tuple[list[Task], list[Failure]]:
    """Tasks from ``instances`` drawn instances of the recipe's family (see the module
    docstring); none when the recipe maps no family slots."""
    import shellagent.taskgen.families  # noqa: F401 - registers the families

    if not recipe.family or not recipe.family_args or instances < 1:
        return [], []
    family = FAMILIES.get(recipe.family)
    if family is None:
        return [], [Failure(recipe.name, "family", f"no task family {recipe.family!r}")]
    tasks: list[Task] = []
    failed: list[Failure] = []
    for n in range(instances):
        drawn = family.make(Draw(random.Random(f"{seed}:{recipe.name}:{n}")))
        for i in range(len(recipe.templates)):
            ident = f"{recipe.name}/{recipe.family}#{n + 1}/{i + 1}"
            try:
                args = {k: form.format_map(drawn.slots) for k, form in recipe.family_args.items()}
                command = render(recipe, args, i)
            except KeyError as exc:
                failed.append(Failure(ident, "family", f"the instance has no slot {exc}"))
                continue
            except SlotError as exc:
                failed.append(Failure(ident, "render", exc.text()))
                continue
            try:
                check_template(drawn.answer, 1)
                answer, wrong = drawn.answer, drawn.wrong_answers
            except TemplateError:
                answer, wrong = ANSWER, ()
            gold = Gold(commands=(command,), answer_template=answer, wrong_answers=wrong)
            tasks.append(
                Task(
                    id=ident,
                    task=drawn.task,
                    setup_commands=drawn.setup,
                    success_condition=drawn.check,
                    family=recipe.family,
                    gold=gold,
                )
            )
    return tasks, failed


def run_recipe_tests(
    recipes: Sequence[Recipe],
    *,
    jobs: int = 2,
    instances: int = 0,
    cancel: threading.Event | None = None,
    on_result: Callable[[RecipeResult], None] | None = None,
    verify: Callable[[Task], Verdict] = verify_task,
) -> list[RecipeResult]:
    """Run every test of ``recipes`` (``jobs`` sandboxes at once), and ``instances`` drawn
    instances of each family a recipe maps; one result per recipe, in order. ``on_result``
    hears of each recipe as soon as all its runs are known."""
    owner: list[int] = []
    tasks: list[Task] = []
    early: dict[int, list[Failure]] = {}
    for n, recipe in enumerate(recipes):
        made, failed = recipe_tasks(recipe)
        drawn, bad = family_tasks(recipe, instances)
        made, failed = made + drawn, failed + bad
        tasks += made
        owner += [n] * len(made)
        early[n] = failed
    left = [0] * len(recipes)
    for n in owner:
        left[n] += 1
    counts = [left[n] + len(early[n]) for n in range(len(recipes))]
    fails: dict[int, list[Failure]] = {n: list(f) for n, f in early.items()}
    lock = threading.Lock()
    results: dict[int, RecipeResult] = {}

    def finish(n: int) -> None:
        recipe = recipes[n]
        runs = counts[n]
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
