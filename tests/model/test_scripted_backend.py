from __future__ import annotations

import pytest

from shellagent.agent.actions import ACTION_FORMAT, RunAction, parse_action
from shellagent.errors import ModelUnavailable
from shellagent.model import Backend
from shellagent.model.backend import LOOP_SPAN
from shellagent.testing import ScriptedBackend, ScriptExhausted


def test_scripted_backend_is_a_backend() -> None:
    assert isinstance(ScriptedBackend([]), Backend)


def test_replies_come_back_in_order_and_every_turn_is_recorded() -> None:
    backend = ScriptedBackend(['{"cmd": "ls", "why": "look"}', '{"done": "ok"}'])
    messages = [{"role": "user", "content": "list"}]
    first = backend.generate(messages, max_tokens=64, reply_format=ACTION_FORMAT)
    messages += [{"role": "assistant", "content": first.text}, {"role": "user", "content": "a b"}]
    second = backend.generate(messages)
    assert parse_action(first.text) == RunAction(cmd="ls", why="look")
    assert second.text == '{"done": "ok"}'
    assert backend.calls == [messages[:1], messages]
    assert backend.options[0]["max_tokens"] == 64 and backend.options[1]["reply_format"] is None
    assert backend.remaining == 0


def test_an_extended_conversation_reports_only_new_tokens_as_evaluated() -> None:
    backend = ScriptedBackend(["a", "b"])
    messages = [{"role": "user", "content": "x" * 40}]
    first = backend.generate(messages, reply_format=ACTION_FORMAT)
    second = backend.generate(
        [*messages, {"role": "user", "content": "y" * 40}], reply_format=ACTION_FORMAT
    )
    assert first.evaluated_prompt_tokens == first.prompt_tokens
    assert second.evaluated_prompt_tokens == second.prompt_tokens - first.prompt_tokens


def test_streaming_and_logprobs_follow_the_text() -> None:
    backend = ScriptedBackend([lambda messages: messages[-1]["content"].upper()])
    pieces: list[str] = []
    generation = backend.generate(
        [{"role": "user", "content": "echo me back"}],
        on_token=pieces.append,
        capture_logprobs=True,
        reply_format=ACTION_FORMAT,
    )
    assert "".join(pieces) == generation.text == "ECHO ME BACK"
    assert generation.logprobs is not None and len(generation.logprobs) == len(pieces)


def test_a_scripted_exception_is_raised_like_a_failing_backend() -> None:
    backend = ScriptedBackend([ModelUnavailable("server went away")])
    with pytest.raises(ModelUnavailable, match="went away"):
        backend.generate([{"role": "user", "content": "hi"}], reply_format=ACTION_FORMAT)


def test_running_out_of_script_fails_the_test_loudly() -> None:
    backend = ScriptedBackend([])
    with pytest.raises(ScriptExhausted, match="turn 1"):
        backend.generate([{"role": "user", "content": "hi"}], reply_format=ACTION_FORMAT)


def test_a_reply_is_cut_at_max_tokens_or_when_it_loops_like_a_real_backend() -> None:
    looping = '{"cmd": "ls ' + "-rw-" * 100
    backend = ScriptedBackend(['{"done": "finished the task"}', looping, '{"done": "ok"}'])
    messages = [{"role": "user", "content": "x"}]
    cut = backend.generate(messages, max_tokens=3, reply_format=ACTION_FORMAT)
    assert (cut.text, cut.generated_tokens, cut.stop) == ('{"done": ', 3, "length")
    stuck = backend.generate(messages, reply_format=ACTION_FORMAT)
    assert stuck.stop == "repeat" and stuck.generated_tokens == LOOP_SPAN + 5
    assert backend.generate(messages, reply_format=ACTION_FORMAT).stop == "end"
