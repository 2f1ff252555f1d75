"""The ``use`` action: its parser, and the per-task grammar run by llama.cpp's own grammar
engine over the embedded model's vocabulary (no weights loaded): only the offered recipes,
only typed values, free text only where a pattern or text goes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from shellagent.agent.actions import RunAction, UseAction, parse_action
from shellagent.agent.recipe_grammar import use_format
from shellagent.errors import InputError
from shellagent.recipes.offer import Offer, offer_slot


def reply(recipe: str, **args: Any) -> str:
    return json.dumps({"use": recipe, "args": args}, ensure_ascii=False, separators=(", ", ": "))


def test_a_use_reply_parses_with_its_arguments_as_text() -> None:
    action = parse_action(reply("largest_files", dir="~/Downloads", count=5))
    assert isinstance(action, UseAction)
    assert action.use == "largest_files"
    assert action.arguments == {"dir": "~/Downloads", "count": "5"}
    assert parse_action(action.to_json()) == action
    assert json.loads(action.to_dict()["args"]) == {"dir": "~/Downloads", "count": "5"}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"use": "Largest Files", "args": {}}', "not a recipe name"),
        ('{"use": "x", "args": {"dir": ["a"]}}', "must be a string or a number"),
        ('{"use": "x", "args": {"dir": true}}', "must be a string or a number"),
        ('{"use": "x", "args": {"a b": "1"}}', "not a slot name"),
        ('{"use": "x", "args": {"dir": "a\\u0007b"}}', "argument dir"),
        ('{"use": "x", "args": {"dir": "a\\nb"}}', "argument dir"),
        ('{"use": "x", "args": [], "cmd": "ls"}', "bad field"),
    ],
)
def test_a_bad_use_reply_is_an_input_error(text: str, says: str) -> None:
    with pytest.raises(InputError, match=says):
        parse_action(text)


def test_a_cmd_reply_still_parses_as_before() -> None:
    assert parse_action('{"cmd": "ls", "why": "look"}') == RunAction("ls", "look")


OFFERS = [
    Offer(
        "largest_files",
        "the N largest files",
        (
            offer_slot("dir", "dir", ["Downloads", "~/logs"], "."),
            offer_slot("count", "count", ["5"], 5),
        ),
    ),
    Offer(
        "count_matching_lines",
        "how many lines mention a text",
        (offer_slot("file", "file", []), offer_slot("pattern", "pattern", ["ERROR"])),
    ),
    Offer(
        "kill_process",
        "stop a program",
        (offer_slot("name", "name", []), offer_slot("signal", "signal", [], "TERM")),
    ),
    Offer(
        "cron_add_job",
        "add a cron job",
        (
            offer_slot("schedule", "schedule", []),
            offer_slot("at", "time", ["03:00"]),
            offer_slot("on", "date", []),
            offer_slot("mode", "mode", []),
        ),
    ),
]


@pytest.mark.model
def test_the_grammar_admits_only_the_offered_recipes_and_typed_values(accepts: Any) -> None:
    gbnf = use_format(OFFERS).gbnf
    good = [
        reply("largest_files", dir="Downloads", count="5"),
        reply("largest_files", dir=".", count="5"),  # the default
        reply("count_matching_lines", file="/var/log/app.log", pattern="ERROR"),
        reply("count_matching_lines", file="app.log", pattern="disk full; retry"),
        reply("kill_process", name="nginx", signal="HUP"),
        reply("cron_add_job", schedule="0 3 * * *", at="03:00", on="2024-05-01", mode="u+x"),
        reply("cron_add_job", schedule="@daily", at="03:00", on="2024-05-01", mode="644"),
    ]
    for text in good:
        assert accepts(gbnf, text), text
    bad = [
        reply("rm_everything"),  # not offered
        reply("largest_files", dir="/etc", count="5"),  # not a candidate, not the default
        reply("largest_files", dir="Downloads", count="7"),
        reply("largest_files", count="5", dir="Downloads"),  # slots in declared order only
        reply("largest_files", dir="Downloads"),  # every slot present
        reply("count_matching_lines", file="$(id)", pattern="x"),  # not a path
        reply("count_matching_lines", file="a b ", pattern="x"),
        reply("count_matching_lines", file="app.log", pattern=" "),  # blank text
        reply("kill_process", name="-9", signal="TERM"),  # a name cannot start with -
        reply("kill_process", name="nginx; reboot", signal="TERM"),
        reply("kill_process", name="nginx", signal="SEGV"),
        reply("cron_add_job", schedule="daily", at="03:00", on="2024-05-01", mode="644"),
        reply("cron_add_job", schedule="@daily", at="25:00", on="2024-05-01", mode="644"),
        reply("cron_add_job", schedule="@daily", at="03:00", on="May 1", mode="644"),
        reply("cron_add_job", schedule="@daily", at="03:00", on="2024-05-01", mode="u+s"),
        reply("largest_files", dir="Downloads", count="5") + " and more",
    ]
    for text in bad:
        assert not accepts(gbnf, text), text


@pytest.mark.model
def test_a_grammar_of_one_offer_admits_only_that_recipe(accepts: Any) -> None:
    gbnf = use_format(OFFERS[:1]).gbnf
    assert accepts(gbnf, reply("largest_files", dir="~/logs", count="5"))
    assert not accepts(gbnf, reply("count_matching_lines", file="a.log", pattern="x"))


def test_a_slot_offers_only_candidates_its_type_admits() -> None:
    slot = offer_slot("count", "count", ["5", "0", "abc", "12"], None)
    assert slot.values() == ("5", "12")
    assert not slot.free
    assert offer_slot("count", "count", [], None).free  # required, nothing named: free
    assert not offer_slot("count", "count", [], 5).free  # the default will do
    assert offer_slot("pattern", "pattern", ["ERROR"]).free  # text is always free
    path = offer_slot("dir", "dir", ["Downloads", 'a"b', "x\\y"], ".")
    assert path.values() == ("Downloads", ".")


def test_the_json_schema_enumerates_names_and_values() -> None:
    schema = use_format(OFFERS[:2]).json_schema
    first, second = schema["anyOf"]
    assert first["properties"]["use"] == {"const": "largest_files"}
    assert first["properties"]["args"]["properties"]["dir"] == {
        "enum": ["Downloads", "~/logs", "."]
    }
    pattern = second["properties"]["args"]["properties"]["pattern"]
    assert pattern["anyOf"][0] == {"enum": ["ERROR"]}
    file = second["properties"]["args"]["properties"]["file"]
    assert file["type"] == "string" and "pattern" in file


def test_a_port_the_task_names_replaces_the_default_a_count_does_not() -> None:
    from shellagent.recipes.offer import offer_slot

    port = offer_slot("port", "port", ["5173"], default=80)
    assert port.values() == ("5173",)
    assert offer_slot("port", "port", [], default=80).values() == ("80",)
    # a task's numbers are often for another slot: a count keeps its default beside them
    assert offer_slot("count", "count", ["500"], default=10).values() == ("500", "10")


@pytest.mark.model
def test_the_tools_grammar_admits_an_offered_recipe_beside_the_loop_s_own_actions(
    accepts: Any,
) -> None:
    from shellagent.agent.tools import tools_format

    fmt = tools_format(OFFERS[:2])
    assert accepts(fmt.gbnf, '{"cmd": "ls -la", "why": "look"}')
    assert accepts(fmt.gbnf, '{"done": "listed"}')
    assert accepts(fmt.gbnf, reply("largest_files", dir="Downloads", count="5"))
    assert not accepts(fmt.gbnf, reply("kill_process", name="nginx", signal="HUP"))  # not offered
    names = {
        v["properties"]["use"]["const"]
        for v in fmt.json_schema["anyOf"]
        if "use" in v["properties"]
    }
    assert names == {"largest_files", "count_matching_lines"}


def test_a_choice_the_task_says_is_offered_first_then_the_default() -> None:
    levels = ("ERROR", "WARN", "DEBUG")
    said = offer_slot("level", "choice", ["DEBUG"], "ERROR", choices=levels)
    assert said.values() == ("DEBUG", "ERROR", "WARN")
    unsaid = offer_slot("level", "choice", [], "WARN", choices=levels)
    assert unsaid.values()[0] == "WARN"
    assert set(unsaid.values()) == set(levels)
