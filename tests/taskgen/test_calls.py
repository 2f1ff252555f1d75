"""Recipe calls as training data: drawn from the task families, prompted exactly as the
recipe step prompts, answered with a reply its grammar admits and that renders the gold
command; the held-out draws are not the training ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shellagent.agent.actions import UseAction, parse_action
from shellagent.agent.recipe_grammar import use_format
from shellagent.agent.recipe_step import RecipeBook, prompt
from shellagent.cli.main import main
from shellagent.recipes import load, render
from shellagent.recipes.rank import Ranker
from shellagent.taskgen.calls import (
    Call,
    admits,
    check_reply,
    conversation,
    family_calls,
    offer_for,
    offered,
    phrasing_calls,
    records,
)

NAMES = (
    "largest_files",
    "largest_files_tree",
    "count_processes",
    "count_all_processes",
    "newest_file",
    "config_set_value",
    "change_shell",
    "count_matching_lines",
    "replace_in_file",
    "user_shell",
)


@pytest.fixture(scope="module")
def book() -> RecipeBook:
    catalog = load()
    recipes = {name: catalog.get(name) for name in NAMES}
    return RecipeBook(recipes, Ranker.train(list(recipes.values())))


def test_family_calls_are_draws_with_every_value_and_a_seed_of_their_own(
    book: RecipeBook,
) -> None:
    recipes = list(book.recipes.values())
    calls = list(family_calls(recipes, 3, "train"))
    mapped = [r for r in recipes if r.family and r.family_args]
    assert len(calls) == 3 * len(mapped) and len(mapped) >= 5
    for call in calls:
        recipe = book.recipes[call.recipe]
        assert set(call.args) == set(recipe.slots)  # defaults written out too
        assert call.source.startswith(f"family {recipe.family}#")
        render(recipe, call.args)
        assert "{" not in call.task
    other = {c.task for c in family_calls(recipes, 3, "heldout")}
    assert other != {c.task for c in calls}


def test_phrasing_calls_write_out_every_phrasing_with_the_tests_values(
    book: RecipeBook,
) -> None:
    recipe = book.recipes["largest_files"]
    calls = [c for c in phrasing_calls([recipe])]
    assert len(calls) == len(recipe.phrasings) * len(recipe.tests)
    assert all(c.args == recipe.args(recipe.tests[0].args) for c in calls[: len(recipe.phrasings)])
    assert all("{" not in c.task for c in calls)


@pytest.mark.model
def test_a_record_is_the_run_time_prompt_and_a_reply_its_grammar_admits(
    book: RecipeBook, accepts: Any
) -> None:
    recipes = list(book.recipes.values())
    calls = list(family_calls(recipes, 2, "t")) + list(phrasing_calls(recipes))[::7]
    written = 0
    for call in calls:
        record = conversation(book, call)
        if record is None:
            continue
        written += 1
        gold = offer_for(book, call)
        listed = offered(book, call)
        assert gold is not None and listed is not None
        if listed.offers[0].name == call.recipe:
            assert [gold] == listed.offers[:1]  # what the recipe step asks the model to fill
        offers = [gold]
        messages = record["messages"]
        assert messages[:-1] == prompt(call.task, offers)
        reply = messages[-1]
        assert reply["role"] == "assistant" and record["recipe"] == call.recipe
        action = parse_action(reply["content"])
        assert isinstance(action, UseAction) and action.use == call.recipe
        assert accepts(use_format(offers).gbnf, reply["content"]), reply["content"]
        recipe = book.recipes[call.recipe]
        assert render(recipe, dict(action.arguments)) == render(recipe, call.args)
        assert check_reply(book, call, reply["content"]) == (True, True)
    assert written >= len(calls) // 2


def test_the_gold_recipe_is_offered_alone_even_when_the_ranker_prefers_another(
    book: RecipeBook,
) -> None:
    task = "What are the 5 largest files in ~/Documents?"
    call = Call(task, "user_shell", {"user": "root"}, "test")
    listed = offered(book, call)
    assert listed is not None and listed.offers[0].name != "user_shell"
    record = conversation(book, call)
    assert record is not None
    system = record["messages"][0]["content"]
    lines = [line for line in system.splitlines() if line.startswith("- ")]
    assert len(lines) == 1 and lines[0].startswith("- user_shell:")
    assert json.loads(record["messages"][-1]["content"]) == {
        "use": "user_shell",
        "args": {"user": "root"},
    }
    assert list(records(book, [call, call])) == [record, record]


def test_a_drawn_task_is_offered_what_its_working_directory_holds(book: RecipeBook) -> None:
    """The setup runs in a throwaway sandbox and the offers name the file where it is, as
    the recipe step's listing names it at run time; the words alone cannot."""
    task = "How many lines of notes.txt mention alpha?"
    setup = ("mkdir -p docs", "printf 'alpha\\nbeta\\nalpha two\\n' > docs/notes.txt")
    args = {"file": "docs/notes.txt", "pattern": "alpha"}
    drawn = Call(task, "count_matching_lines", args, "test", setup)
    gold = offer_for(book, drawn)
    assert gold is not None
    assert next(s for s in gold.slots if s.name == "file").values() == ("docs/notes.txt",)
    record = conversation(book, drawn)
    assert record is not None and "one of: docs/notes.txt" in record["messages"][0]["content"]
    # without the directory the file is offered as the task writes it, which is not the gold
    assert conversation(book, Call(task, "count_matching_lines", args, "test")) is None
    # a setup that fails leaves the words alone
    broken = Call(task, "count_matching_lines", args, "test", ("exit 3",))
    assert conversation(book, broken) is None


def test_values_the_grammar_would_not_admit_are_left_out(book: RecipeBook) -> None:
    task = "What are the 5 largest files in ~/Documents?"
    good = Call(task, "largest_files", {"dir": "~/Documents", "count": "5"}, "test")
    assert conversation(book, good) is not None
    # a count the task never says, for a slot offered only what the task says
    assert (
        conversation(book, Call(task, "largest_files", {"dir": "~/Documents", "count": "7"}, "t"))
        is None
    )
    offer = offer_for(book, good)
    assert offer is not None
    assert admits(offer, good.args) and not admits(offer, {"dir": "~/Documents"})
    # a task no recipe fits has no call to learn
    assert (
        conversation(book, Call("compile the kernel with clang", "largest_files", {}, "t")) is None
    )


def test_a_wrong_or_broken_reply_is_scored_as_such(book: RecipeBook) -> None:
    call = Call("t", "largest_files", {"dir": "/srv", "count": "5"}, "t")
    right = '{"use": "largest_files", "args": {"dir": "/srv", "count": "5"}}'
    assert check_reply(book, call, right) == (True, True)
    assert check_reply(book, call, right.replace('"5"', '"3"')) == (True, False)
    assert check_reply(book, call, right.replace("largest_files", "newest_file")) == (False, False)
    assert check_reply(book, call, "not json") == (False, False)
    assert check_reply(book, call, '{"use": "largest_files", "args": {"dir": "/srv; rm -rf ~"') == (
        False,
        False,
    )


@pytest.mark.slow  # trains the ranker of every shipped recipe (about a minute)
def test_shellagent_recipes_sft_writes_what_the_trainer_reads(tmp_path: Path) -> None:
    from shellagent.taskgen.generate import families
    from shellagent.training.data import load_conversations

    out = tmp_path / "calls.jsonl"
    code = main(
        [
            "recipes",
            "sft",
            "-o",
            str(out),
            "--instances",
            "1",
            "--phrasings",
            "20",
        ]
    )
    assert code == 0
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    # the 20 phrasings, and at most one draw of each family that maps a recipe
    assert 20 <= len(lines) <= 20 + len(families())
    sources = {r["source"].split()[0] for r in lines}
    assert sources == {"family", "phrasing"}
    assert len(load_conversations([out])) == len(lines)
    assert main(["recipes", "sft", "-o", str(out), "--instances", "-1"]) == 2
