"""The shipped recipes: each loads, renders, quotes hostile values safely, and the task
families are all covered."""

from __future__ import annotations

import re

import pytest

from shellagent.policy.parse import BashParser, Parsed
from shellagent.recipes import DATA_DIR, Recipe, SlotError, load, render, sed_re, sed_repl

CATALOG = load([DATA_DIR])
RECIPES = sorted(CATALOG.recipes.values(), key=lambda r: r.name)
HOSTILE = ["; rm -rf ~", "$(touch /tmp/pwned)", "`id`", "a\nb", "-rf", "'", '"', "a b|c&d>e"]
# A value of each type, for required slots no test gives a value to.
SAMPLES = {
    "dir": "/srv/x", "file": "/srv/x/f.txt", "path": "/srv/x/p", "output": "/tmp/out.txt",
    "archive": "/tmp/a.tar.gz", "glob": "*.log", "ext": "log", "pattern": "error",
    "text": "hello", "name": "app", "word": "word", "user": "alice", "group": "staff",
    "count": "3", "number": "3", "column": "2", "port": "8080", "pid": "123", "days": "7",
    "minutes": "30", "size": "10M", "mode": "644", "schedule": "@daily", "time": "02:30",
    "date": "2024-01-31", "key": "name", "branch": "main", "signal": "TERM",
}  # fmt: skip


def test_the_shipped_files_load_without_a_problem() -> None:
    assert CATALOG.problems == ()
    assert len(RECIPES) >= 1


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda r: r.name)
def test_a_shipped_recipe_is_complete(recipe: Recipe) -> None:
    assert len(recipe.phrasings) >= 5, "at least 5 phrasings"
    assert len(set(recipe.phrasings)) == len(recipe.phrasings), "phrasings repeat"
    assert recipe.tests, "at least one test"
    used = {m for t in (*recipe.templates, *recipe.phrasings) for m in re.findall(r"\{(\w+)", t)}
    assert set(recipe.slots) <= used, "a declared slot is used nowhere"


def base_args(recipe: Recipe) -> dict[str, str]:
    args = dict(recipe.tests[0].args) if recipe.tests else {}
    for name, slot in recipe.slots.items():
        if slot.required and name not in args:
            args[name] = slot.choices[0] if slot.choices else SAMPLES[slot.type]
    return args


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda r: r.name)
def test_a_shipped_recipe_renders_its_defaults_and_test_args(recipe: Recipe) -> None:
    parser = BashParser("/home/u")
    for test in recipe.tests:
        for i in range(len(recipe.templates)):
            assert parser.parse(render(recipe, test.args, i)).errors == []
    if all(not s.required for s in recipe.slots.values()):
        for i in range(len(recipe.templates)):
            assert parser.parse(render(recipe, {}, i)).errors == []


def shape(parsed: Parsed) -> list[tuple[object, ...]]:
    return [
        (
            c.kind,
            len(c.words),
            sum(w.glob for w in c.words),
            sum(w.substitution or not w.static for w in c.words),
            tuple(r.op for r in c.redirects),
            len(c.assignments),
            c.context,
        )
        for c in parsed.commands
    ]


def texts(parsed: Parsed) -> list[str]:
    found = []
    for c in parsed.commands:
        found += [w.text for w in c.words]
        found += [r.target.text for r in c.redirects]
        found += [w.text for _, w in c.assignments]
    return found


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda r: r.name)
def test_hostile_slot_values_are_refused_or_stay_literal_data(recipe: Recipe) -> None:
    parser = BashParser("/home/u")
    base = base_args(recipe)
    for name in recipe.slots:
        for value in HOSTILE:
            try:
                recipe.args({**base, name: value})
            except SlotError as exc:
                assert exc.text() and "\n" not in exc.text()
                continue
            for i in range(len(recipe.templates)):
                benign = parser.parse(render(recipe, base, i))
                try:  # a validating filter (jq_filter, arithmetic) refuses it here
                    hostile = parser.parse(render(recipe, {**base, name: value}, i))
                except SlotError as exc:
                    assert exc.text() and "\n" not in exc.text()
                    continue
                where = f"{name}={value!r} in template {i}"
                assert hostile.errors == benign.errors, where
                assert shape(hostile) == shape(benign), where
                forms = {value, "./" + value, sed_re(value), sed_repl(value)}
                assert any(f in t for t in texts(hostile) for f in forms), where


def test_every_task_family_is_the_family_of_a_recipe() -> None:
    import shellagent.taskgen.families  # noqa: F401 - registers the families
    from shellagent.taskgen.family import FAMILIES
    from shellagent.taskgen.saving import SUFFIX

    families = {name for name in FAMILIES if not name.endswith(SUFFIX)}
    names = {r.name for r in RECIPES}
    covered = {r.family for r in RECIPES if r.family}
    # a family that asks what the recipe step composes from a recipe (a sort's count)
    covered |= {n for n in families if FAMILIES[n].composed_from in names}
    missing = sorted(families - covered)
    assert not missing, f"{len(missing)} families without a recipe: {', '.join(missing)}"


def test_a_recipe_family_is_a_real_family() -> None:
    import shellagent.taskgen.families  # noqa: F401 - registers the families
    from shellagent.taskgen.family import FAMILIES

    unknown = sorted({r.family for r in RECIPES if r.family and r.family not in FAMILIES})
    assert not unknown
