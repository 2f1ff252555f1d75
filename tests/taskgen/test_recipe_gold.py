"""A family that stands for a recipe takes its gold command from the shipped recipe, so the
command the training data teaches and the one a user's recipe runs cannot drift apart."""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

from shellagent.errors import InternalError
from shellagent.recipes import DATA_DIR, load, render, user_dir
from shellagent.taskgen.family import Draw, Family
from shellagent.taskgen.generate import families
from shellagent.taskgen.saving import SUFFIX

DRAWS = 12  # instances of each family: enough to reach every branch and template
CATALOG = load([DATA_DIR])  # read afresh, not through the families' own cache
NAMED: dict[str, list[str]] = defaultdict(list)  # family -> the shipped recipes naming it
for _recipe in CATALOG.recipes.values():
    if _recipe.family:
        NAMED[_recipe.family].append(_recipe.name)


def base_families() -> list[Family]:
    # Drawn when a test runs, not when tests are collected: importing the families package
    # rebinds ``shellagent.taskgen.families`` to it for the modules imported after.
    return [f for f in families() if not f.name.endswith(SUFFIX)]


def test_a_family_gold_command_is_its_recipe_rendered_now() -> None:
    for family in base_families():
        name = family.name
        for i in range(DRAWS):
            instance = family.make(Draw(random.Random(f"gold/{name}/{i}")))
            if name in NAMED:
                assert instance.recipes, f"{name} is named by {NAMED[name]}, writes its own gold"
            for use in instance.recipes:
                recipe = CATALOG.get(use.recipe)
                assert recipe.family == name, f"{use.recipe} serves {recipe.family}, not {name}"
                assert use.command == render(recipe, use.args, use.template), name
                assert use.command in instance.gold, name
                if recipe.family_args:  # `recipes test --instances` and SFT calls run this
                    mapped = {
                        k: f.format_map(instance.slots) for k, f in recipe.family_args.items()
                    }
                    assert recipe.args(mapped) == recipe.args(use.args), (
                        use.recipe,
                        instance.slots,
                    )


def test_every_family_a_recipe_names_is_registered() -> None:
    assert sorted(set(NAMED) - {f.name for f in base_families()}) == []


def test_a_family_naming_an_unknown_recipe_fails_loudly() -> None:
    with pytest.raises(InternalError, match="no shipped recipe named 'largest_file'"):
        Draw(random.Random(0)).recipe("largest_file", dir="/srv", count=3)


def test_a_family_leaving_out_a_slot_or_naming_a_wrong_one_fails_loudly() -> None:
    d = Draw(random.Random(0))
    with pytest.raises(InternalError, match="zip_folder needs a value for slot archive"):
        d.recipe("zip_folder", dir="/srv/site")
    with pytest.raises(InternalError, match="largest_files has no slot 'folder'"):
        d.recipe("largest_files", folder="/srv", count=3)
    with pytest.raises(InternalError, match="recipe largest_files: .*count") as refused:
        d.recipe("largest_files", dir="/srv", count="a few")
    assert refused.value.exit_code == 4  # a bug of the family, not the user's input
    with pytest.raises(InternalError, match="largest_files has no template number 2"):
        d.recipe("largest_files", template=2, dir="/srv", count=3)


def test_a_slot_left_out_that_has_a_default_takes_it() -> None:
    use = Draw(random.Random(0)).recipe("checksum_mismatch", template=0, dir="/srv/dl")
    assert use.args == {"dir": "/srv/dl"}
    assert (
        use.command == "cd /srv/dl && sha256sum -c SHA256SUMS 2>/dev/null | grep -v ': OK$' || true"
    )


def test_the_template_is_drawn_only_when_the_recipe_has_several() -> None:
    d = Draw(random.Random(7))
    d.recipe("dir_size", dir="/srv")  # one template: the family's stream is left as it was
    assert d.rng.random() == random.Random(7).random()
    used = {Draw(random.Random(s)).recipe("largest_files", dir="/srv").template for s in range(20)}
    assert used == {0, 1}


def test_only_the_shipped_recipes_make_gold(tmp_path: object) -> None:
    folder = user_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "mine.toml").write_text(
        'area = "files"\n[[recipe]]\nname = "my_listing"\nsummary = "list"\nkind = "question"\n'
        'phrasings = ["list {dir}"]\ntemplates = ["ls {dir}"]\n'
        '[recipe.slots]\ndir = { type = "dir" }\n',
        encoding="utf-8",
    )
    assert "my_listing" in load().recipes  # the user's recipe loads for the agent …
    with pytest.raises(InternalError, match="no shipped recipe named 'my_listing'"):
        Draw(random.Random(0)).recipe("my_listing", dir="/srv")  # … never for gold
