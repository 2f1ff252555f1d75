"""Plain commands for worked examples (``taskgen/plain.py``): a recipe's plain form in
place of its general command, kept in a library line only when it passed that line's
check with the same output, and what the free loop's examples show from the shipped
library."""

from __future__ import annotations

import gzip
import json
import random
from typing import Any

import pytest

from shellagent.agent.examples import SHIPPED_LIBRARY, Example, ExampleLibrary
from shellagent.eval.tasks import Gold, Task
from shellagent.recipes import render_plain
from shellagent.taskgen import plain
from shellagent.taskgen.family import Draw, shipped_recipes
from shellagent.taskgen.generate import families
from shellagent.taskgen.library import read_library
from shellagent.taskgen.verify import task_key, verify_task


def test_a_recipe_with_a_plain_form_gives_its_instances_plain_gold() -> None:
    family = next(f for f in families(["rename_extension"]))
    instance = family.make(Draw(random.Random("plain/1")))
    (use,) = instance.recipes
    expected = render_plain(shipped_recipes().get(use.recipe), use.args)
    assert expected and len(expected) < len(use.command)
    gold = plain.candidate(instance)
    assert gold == tuple(expected if c == use.command else c for c in instance.gold)


def test_a_family_whose_recipe_has_no_plain_form_has_none() -> None:
    family = next(f for f in families(["largest_files"]))
    instance = family.make(Draw(random.Random("plain/2")))
    assert instance.recipes and not any(u.plain for u in instance.recipes)
    assert plain.candidate(instance) == ()


def test_a_twin_saves_the_plain_form_to_its_file_too() -> None:
    family = next(f for f in families(["json_get_field_to_file"]))
    instance = family.make(Draw(random.Random("plain/3")))
    gold = plain.candidate(instance)
    (use,) = instance.recipes
    assert gold[-2].startswith(use.plain + " > "), gold  # `plain > out`, then `cat out`
    assert gold[-1] == instance.gold[-1]


def test_the_plain_commands_do_not_change_what_verification_is_keyed_by() -> None:
    task = Task(
        id="t",
        task="x",
        setup_commands=(),
        success_condition="true",
        gold=Gold(commands=("long command",)),
    )
    with_plain = task.model_copy(update={"gold": Gold(commands=("long command",), plain=("x",))})
    assert task_key(task) == task_key(with_plain)
    assert "plain" not in task.to_line()  # a line without them is written as before


def _task(plain_commands: tuple[str, ...]) -> Task:
    return Task(
        id="sum-1",
        task="How many lines does /srv/notes.txt have?",
        setup_commands=("mkdir -p /srv && printf 'a\\nb\\nc\\n' > /srv/notes.txt",),
        success_condition='grep -qx 3 "$LAST_OUTPUT"',
        gold=Gold(
            commands=("awk 'END { print NR }' /srv/notes.txt",),
            answer_template="{out}",
            plain=plain_commands,
        ),
    )


@pytest.mark.slow
def test_plain_commands_are_kept_only_where_they_pass_the_check_with_the_same_output() -> None:
    tasks = [_task(("wc -l < /srv/notes.txt",)), _task(("cat /srv/notes.txt",))]
    tasks[1] = tasks[1].model_copy(update={"id": "sum-2"})
    verified = []
    for task in tasks:
        verdict = verify_task(task)
        assert verdict.ok, verdict.detail
        gold = task.gold.model_copy(update={"observations": verdict.observations})  # type: ignore[union-attr]
        verified.append(task.model_copy(update={"gold": gold}))
    variants = [plain.variant(t) for t in verified]
    verdicts = {v.id.removesuffix("/plain"): verify_task(v) for v in variants if v is not None}
    kept = plain.settle(verified, verdicts)
    assert kept[0].gold is not None and kept[0].gold.plain == ("wc -l < /srv/notes.txt",)
    # `cat` exits 0 but fails the check (and prints something else): not shown
    assert kept[1].gold is not None and kept[1].gold.plain == ()


def _shipped_lines() -> list[dict[str, Any]]:
    with gzip.open(SHIPPED_LIBRARY, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def test_the_shipped_library_shows_plain_commands_that_are_shorter() -> None:
    lines = [line for line in _shipped_lines() if line["gold"].get("plain")]
    assert lines, "no line of the shipped library has plain commands"
    for line in lines:
        gold = line["gold"]
        example = Example.from_record(line)
        shown = [s.command for s in example.steps]
        assert shown == gold["plain"]
        assert len(shown) == len(gold["commands"])
        assert sum(map(len, shown)) < sum(map(len, gold["commands"]))
    # each recipe's plain form is shown somewhere: it passed at least one line's check
    shown_by = {line["family"] for line in lines}
    for recipe in shipped_recipes().recipes.values():
        if recipe.plain and recipe.family:
            assert recipe.family in shown_by, recipe.name


def test_a_rename_task_retrieves_the_plain_loop_not_the_recipes_general_one() -> None:
    library = ExampleLibrary.load([SHIPPED_LIBRARY])
    examples = library.search("Change the extension of every .text file in /etc/nimbus to .txt", 1)
    assert examples and examples[0].family == "rename_extension"
    command = examples[0].steps[0].command
    assert "read -r -d ''" not in command and command.startswith("cd "), command


def test_the_library_read_back_keeps_the_plain_commands() -> None:
    with_plain = [t for t in read_library() if t.gold is not None and t.gold.plain]
    assert with_plain and all(len(t.gold.plain) == len(t.gold.commands) for t in with_plain)  # type: ignore[union-attr]
