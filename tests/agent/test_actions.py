from __future__ import annotations

import json

import pytest

from shellagent.agent.actions import (
    ACTION_GBNF,
    ACTION_JSON_SCHEMA,
    CMD_MAX,
    FinishAction,
    RunAction,
    parse_action,
)
from shellagent.errors import InputError


def test_run_action_parses_from_its_canonical_json() -> None:
    action = parse_action('{"cmd": "ls -la", "why": "list files"}')
    assert action == RunAction(cmd="ls -la", why="list files")
    assert action.kind == "run"


def test_finish_action_parses_with_its_summary() -> None:
    assert parse_action('{"done": "3 files backed up"}') == FinishAction(done="3 files backed up")


def test_reason_is_optional_when_a_server_leaves_it_out() -> None:
    assert parse_action('{"cmd": "pwd"}') == RunAction(cmd="pwd", why="")


@pytest.mark.parametrize(
    "action",
    [
        RunAction(cmd='grep -n "a\\tb" f | head', why="find tabs"),
        RunAction(cmd="printf 'x\\ny\\n' > /tmp/é", why=""),
        FinishAction(done="done: line1\nline2"),
    ],
)
def test_to_json_round_trips_through_the_parser(action: RunAction | FinishAction) -> None:
    assert parse_action(action.to_json()) == action


def test_to_json_writes_escaped_newlines_never_raw_ones() -> None:
    assert "\n" not in FinishAction(done="a\nb").to_json()


@pytest.mark.parametrize(
    "reply",
    [
        '```json\n{"cmd": "ls", "why": "w"}\n```',
        'Sure! Here is the action: {"cmd": "ls", "why": "w"}',
        '  {"cmd": "ls", "why": "w"}  \n',
    ],
)
def test_wrapped_replies_from_a_server_still_parse(reply: str) -> None:
    assert parse_action(reply) == RunAction(cmd="ls", why="w")


@pytest.mark.parametrize(
    ("reply", "says"),
    [
        ("", "not an action"),
        ("you should run ls", "not an action"),
        ('{"cmd": "ls", "why": ', "not valid JSON"),
        ("[1, 2]", "not an action"),
        ('{"cmd": 3, "why": "x"}', "must be a string"),
        ('{"cmd": "   ", "why": "x"}', "empty command"),
        ('{"done": ""}', "empty summary"),
        ('{"thought": "hmm"}', "unknown action (thought)"),
        ('{"cmd": "ls", "done": "x"}', "unknown action (cmd, done)"),
        ('"just a string"', "not an action"),
    ],
)
def test_garbage_is_an_input_error_that_shows_the_expected_shape(reply: str, says: str) -> None:
    with pytest.raises(InputError) as info:
        parse_action(reply)
    assert says in info.value.message
    assert info.value.hint is not None and '{"done": "..."}' in info.value.hint
    assert info.value.exit_code == 2


def test_grammar_bounds_every_string_and_forbids_raw_control_characters() -> None:
    assert f"word{{0,{CMD_MAX - 1}}}" in ACTION_GBNF
    assert "*" not in ACTION_GBNF and "+" not in ACTION_GBNF
    # allowed characters are listed from U+0020 up; no \u escape can name a control
    assert r"[\x20-\x21\x23-\x5B" in ACTION_GBNF and '"u"' not in ACTION_GBNF


def test_json_schema_matches_the_action_keys() -> None:
    schema = json.loads(json.dumps(ACTION_JSON_SCHEMA))  # as a server receives it
    shapes = [set(branch["properties"]) for branch in schema["anyOf"]]
    assert shapes == [{"cmd", "why"}, {"done"}, {"every", "on", "at", "name"}]
    assert all(branch["additionalProperties"] is False for branch in schema["anyOf"])


def test_a_schedule_reply_parses_and_round_trips() -> None:
    from shellagent.agent.actions import ScheduleAction

    text = '{"every": "week", "on": "sun", "at": "03:00", "name": "backup documents"}'
    action = parse_action(text)
    assert action == ScheduleAction(every="week", on="sun", at="03:00", name="backup documents")
    assert action.to_json() == text


@pytest.mark.parametrize(
    "text",
    [
        '{"every": "fortnight", "on": "sun", "at": "03:00", "name": "x"}',
        '{"every": "week", "on": "sun", "at": "noon", "name": "x"}',
    ],
)
def test_a_schedule_with_bad_fields_is_an_input_error(text: str) -> None:
    with pytest.raises(InputError, match="schedule action"):
        parse_action(text)
