"""Plain commands for worked examples: a recipe's plain form in a library line, kept only
where it passed the line's own check with the same output.

A family takes its gold command from the recipe it stands for, and a recipe's command is
written to be right everywhere (``-print0 | while IFS= read -r -d '' f``, ``mktemp``,
``realpath``): the 135M model shown it as a worked example copies it badly. A recipe may
therefore carry a ``plain`` template, a shorter command of the same meaning. A task's
``gold.plain`` is its gold commands with each recipe command in them replaced by the plain
form with the same values; the build verifies it as a task of its own and keeps it only
when it passed the check and printed what the gold commands printed (``settle``), so what
an example shows is always a command verified against that line's check, from the one
place the recipe is written.
"""

from __future__ import annotations

from collections.abc import Sequence

from shellagent.eval.tasks import Task
from shellagent.taskgen.family import Instance
from shellagent.taskgen.verify import Verdict

__all__ = ["candidate", "settle", "variant"]


def candidate(instance: Instance) -> tuple[str, ...]:
    """The instance's gold commands with each recipe command replaced by the recipe's
    plain form, or ``()`` when none of its recipes has one."""
    from shellagent.taskgen.saving import plain_output

    gold = instance.gold
    for use in instance.recipes:
        if not use.plain or use.plain == use.command:
            continue
        # a command saved to a file (``cmd > out``, a ``_to_file`` twin) stays one
        # command only if the plain form is one command or one pipeline too
        inside = any(use.command in c and use.command != c for c in gold)
        if inside and not plain_output(use.plain):
            continue
        gold = tuple(c.replace(use.command, use.plain) for c in gold)
    return gold if gold != instance.gold else ()


def variant(task: Task) -> Task | None:
    """The task with its plain commands as its gold, to verify (None: it has none)."""
    if task.gold is None or not task.gold.plain:
        return None
    gold = task.gold.model_copy(
        update={"commands": task.gold.plain, "plain": (), "observations": (), "answer": ""}
    )
    return task.model_copy(update={"id": f"{task.id}/plain", "gold": gold})


def settle(tasks: Sequence[Task], verdicts: dict[str, Verdict]) -> list[Task]:
    """``tasks`` (verified) with ``gold.plain`` kept where its variant's verdict (by task
    id) passed with the same observations as the gold commands, and dropped elsewhere."""
    settled = []
    for task in tasks:
        gold = task.gold
        if gold is not None and gold.plain:
            verdict = verdicts.get(task.id)
            same = verdict is not None and verdict.ok and verdict.observations == gold.observations
            if not same:
                task = task.model_copy(update={"gold": gold.model_copy(update={"plain": ()})})
        settled.append(task)
    return settled
