"""Generating a task set: every family drawn ``per_family`` times, reproducibly from a seed.

Instance ``i`` of family ``f`` comes from ``random.Random(f"{seed}/{f}/{attempt}")``: a
string seed is hashed the same way on every machine and Python version, and each family has
its own stream, so adding or changing one family leaves the others' instances as they
were. A draw whose task text was already drawn is skipped (the next attempt is tried), so
a set holds no two tasks worded the same; a family that runs out of new wordings after
``MAX_ATTEMPTS_PER_INSTANCE`` draws per instance asked for gives fewer instances.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

from shellagent.errors import InputError
from shellagent.eval.tasks import Gold, Task
from shellagent.taskgen.answers import check_template
from shellagent.taskgen.family import FAMILIES, Draw, Family, Instance
from shellagent.taskgen.plain import candidate

DEFAULT_SEED = 14
DEFAULT_PER_FAMILY = 60
MAX_ATTEMPTS_PER_INSTANCE = 20


def families(names: Sequence[str] | None = None) -> list[Family]:
    """The registered families (all, or those named), sorted by name."""
    import shellagent.taskgen.families  # noqa: F401 - registers them

    if not names:
        return [FAMILIES[n] for n in sorted(FAMILIES)]
    unknown = [n for n in names if n not in FAMILIES]
    if unknown:
        raise InputError(
            f"no task family {', '.join(unknown)}",
            hint="`shellagent tasks families` lists them",
        )
    return [FAMILIES[n] for n in sorted(set(names))]


def to_task(instance: Instance, family: Family, id: str) -> Task:
    """The task-set line of an instance (unverified: no observations, no answer yet)."""
    check_template(instance.answer, len(instance.gold))
    return Task(
        id=id,
        task=instance.task,
        setup_commands=instance.setup,
        success_condition=instance.check,
        family=family.name,
        slots=dict(instance.slots),
        gold=Gold(
            commands=instance.gold,
            answer_template=instance.answer,
            wrong_answers=instance.wrong_answers,
            plain=candidate(instance),  # kept only if it passes the check (``plain.settle``)
        ),
    )


def draw(family: Family, seed: int, count: int) -> Iterator[Task]:
    """Up to ``count`` instances of ``family`` with distinct task texts."""
    seen: set[str] = set()
    attempt = 0
    made = 0
    while made < count and attempt < MAX_ATTEMPTS_PER_INSTANCE * count:
        instance = family.make(Draw(random.Random(f"{seed}/{family.name}/{attempt}")))
        attempt += 1
        key = " ".join(instance.task.lower().split())
        if key in seen:
            continue
        seen.add(key)
        made += 1
        yield to_task(instance, family, f"{family.name}-{made:04d}")


def generate(
    seed: int = DEFAULT_SEED,
    per_family: int = DEFAULT_PER_FAMILY,
    names: Sequence[str] | None = None,
) -> list[Task]:
    """The task set: ``per_family`` instances of each family (times its share), families in
    name order."""
    if per_family < 1:
        raise InputError("--per-family must be 1 or more")
    return [task for fam in families(names) for task in draw(fam, seed, count(fam, per_family))]


def count(family: Family, per_family: int) -> int:
    """How many instances of ``family`` a set with ``per_family`` holds."""
    return max(1, round(per_family * family.share))
