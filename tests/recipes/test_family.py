"""Recipes tried on drawn instances of their task family (without running them)."""

from __future__ import annotations

from shellagent.recipes import DATA_DIR, load, render
from shellagent.taskgen.recipe_tests import family_tasks, recipe_tasks

CATALOG = load([DATA_DIR])


def test_a_mapped_recipe_gets_the_instances_setup_and_check_with_its_own_command() -> None:
    recipe = CATALOG.get("largest_files")
    tasks, failed = family_tasks(recipe, 2)
    assert failed == []
    assert len(tasks) == 2 * len(recipe.templates)
    first = tasks[0]
    assert first.gold is not None
    assert first.gold.commands[0].startswith("find ")
    assert first.setup_commands and "largest" in first.gold.answer_template
    again, _ = family_tasks(recipe, 2)
    assert again == tasks  # drawn from a fixed seed


def test_an_unmapped_recipe_has_only_its_own_tests() -> None:
    recipe = CATALOG.get("largest_files_tree")
    assert family_tasks(recipe, 3) == ([], [])
    tasks, failed = recipe_tasks(recipe)
    assert failed == [] and len(tasks) == len(recipe.tests) * len(recipe.templates)
    assert tasks[0].gold is not None
    assert tasks[0].gold.commands[0] == render(recipe, recipe.tests[0].args)
